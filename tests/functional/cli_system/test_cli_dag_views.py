"""`updraft tasks list [--tree]`, `dags show` and `dags details`: a DAG as the environment's API describes it."""

from __future__ import annotations

import json

import pytest

from tests.functional.cli_system.cli_helpers import START, chain_dag, invoke

pytestmark = pytest.mark.slow


def diamond():
    """a >> [b, c] >> d: d runs after both, so the tree shows it under each."""
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG

    with DAG("diamond", schedule=None, start_date=START) as dag:
        a, b, c, d = (EmptyOperator(task_id=t) for t in "abcd")
        a >> [b, c] >> d
    return dag


def test_tasks_list_its_tree_and_dags_show(local_system):
    local_system.add_dags(diamond())
    listed = invoke("tasks", "list", "diamond")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout == "a\nb\nc\nd\n"
    tree = invoke("tasks", "list", "diamond", "--tree")
    assert tree.stdout.splitlines() == [
        "<Task(EmptyOperator): a>",
        "    <Task(EmptyOperator): b>",
        "        <Task(EmptyOperator): d>",
        "    <Task(EmptyOperator): c>",
        "        <Task(EmptyOperator): d>",
    ]

    # `dags show`: the same graph as DOT.
    result = invoke("dags", "show", "diamond")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == 'digraph "diamond" {' and lines[-1] == "}"
    assert 'graph [label="diamond" labelloc=t rankdir=LR]' in lines[1]
    assert [line.strip() for line in lines if "->" in line] == [
        '"a" -> "b"', '"a" -> "c"', '"b" -> "d"', '"c" -> "d"']
    assert sum('shape=rectangle style="filled,rounded"' in line for line in lines) == 4


def test_dags_details_as_properties_and_as_json(local_system):
    local_system.add_dags(chain_dag("daily"))
    [found] = json.loads(invoke("dags", "details", "daily", "-o", "json").stdout)
    assert found["dag_id"] == "daily" and found["catchup"] is True and found["owners"] == ["data-eng"]
    assert found["next_dagrun_logical_date"] == "2024-01-01T00:00:00Z"
    table = invoke("dags", "details", "daily").stdout.splitlines()
    assert table[0].split(" | ")[0].strip() == "property_name"
    assert any(line.startswith("catchup ") and line.rstrip().endswith("true") for line in table)


def test_an_unknown_dag_is_one_line(local_system):
    for args in (("tasks", "list", "nope"), ("dags", "show", "nope"), ("dags", "details", "nope")):
        result = invoke(*args)
        assert (result.exit_code, result.stderr) == (1, "Error: Dag with dag_id: 'nope' not found\n"), args


def test_next_executions_beyond_the_next_need_a_cron_schedule(local_system):
    """The API gives the next run; later ones follow from a cron schedule, and only from one."""
    import datetime as dt

    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG

    with DAG("every_2h", schedule=dt.timedelta(hours=2), start_date=START, catchup=True) as dag:
        EmptyOperator(task_id="only")
    local_system.add_dags(dag, chain_dag("hourly", schedule="0 * * * *"))
    hourly = invoke("dags", "next-execution", "hourly", "-n", "2")
    assert hourly.stdout.splitlines() == ["2024-01-01T00:00:00+00:00", "2024-01-01T01:00:00+00:00"]
    assert invoke("dags", "next-execution", "every_2h").stdout == "2024-01-01T00:00:00+00:00\n"
    more = invoke("dags", "next-execution", "every_2h", "-n", "2")
    assert more.exit_code == 1 and "not a cron schedule" in more.stderr and "--dags-folder" in more.stderr


@pytest.mark.parametrize("args", [("tasks", "list", "d"), ("dags", "show", "d"), ("dags", "details", "d")])
def test_without_an_environment_it_says_so(no_system, args):
    result = invoke(*args)
    assert (result.exit_code, result.stderr) == (
        1, "Error: no local Updraft is running (start one with `updraft local`)\n")
