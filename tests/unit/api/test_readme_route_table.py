"""The README's route table is the one ``bench/route_table.py`` generates from the served routes."""

from __future__ import annotations

from bench.route_table import README, readme_with_table, rows


def test_the_readme_route_table_is_current():
    text = README.read_text()
    assert readme_with_table(text) == text, "run: python bench/route_table.py --write"


def test_every_served_route_of_airflow_s_is_a_yes_row():
    served = {route for route, yes, _why in rows() if yes == "yes"}
    assert "`DELETE /dags/{dag_id}`" in served and "`GET /eventLogs`" in served
    assert all(why for _route, yes, why in rows() if yes == "no")
