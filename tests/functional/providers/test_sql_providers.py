"""The real common-sql operators (SQLExecuteQuery, SQLCheck, SQLValueCheck, SQLIntervalCheck, SQLThresholdCheck,
BranchSQL) and the sqlite and postgres hooks, run by `updraft dags test --requirements` on sqlite and on a real
PostgreSQL, with Airflow 3.3's states and try numbers. One DAG run per database; the tests read its outcome."""

from __future__ import annotations

import sqlite3

import pytest
from postgres_server import binaries, postgres_server
from service_runs import DagRun, dags_test

pytestmark = pytest.mark.slow

EXPECTED = {
    "create": ("success", 1), "select": ("success", 1), "select_many": ("success", 1),
    "record_rows": ("success", 1), "check": ("success", 1), "value_check": ("success", 1),
    "interval_check": ("success", 1), "threshold_check": ("success", 1), "through_hook": ("success", 1),
    # A check that finds a falsy value fails the try; its one retry fails for good.
    "check_fails": ("failed", 2),
    "value_check_fails": ("failed", 1),  # retries=0
    "bad_sql": ("failed", 1),
    # BranchSQLOperator followed many_rows and skipped few_rows (never started: try 0), whose downstream task is
    # skipped in turn; the join (none_failed_min_one_success) runs.
    "branch": ("success", 1), "many_rows": ("success", 1), "few_rows": ("skipped", 0), "after_few": ("skipped", 0),
    "joined": ("success", 1),
}


@pytest.fixture(scope="module")
def sqlite_run(tmp_path_factory) -> tuple[DagRun, str]:
    tmp = tmp_path_factory.mktemp("sqlite")
    database = str(tmp / "e2e.db")
    run = dags_test("sql", "sql_sqlite", tmp, {
        "AIRFLOW_CONN_SQLITE_E2E": f'{{"conn_type": "sqlite", "host": "{database}"}}'})
    print(f"sql_sqlite: {run.wall_s:.1f} s")
    return run, database


@pytest.fixture(scope="session")
def postgres_uri() -> str:
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (`make postgresql` installs Debian's package with apt)")
    with postgres_server(bin_dir) as uri:
        yield uri


@pytest.fixture(scope="module")
def postgres_run(tmp_path_factory, postgres_uri) -> DagRun:
    run = dags_test("sql", "sql_postgres", tmp_path_factory.mktemp("postgres"),
                    {"AIRFLOW_CONN_POSTGRES_E2E": postgres_uri})
    print(f"sql_postgres: {run.wall_s:.1f} s")
    return run


def _check_outcome(run: DagRun, hook: str) -> None:
    run.check(EXPECTED)
    assert run.run_state == "failed"
    selected = run.recorded("select")
    # The last statement's rows (return_last) and, with return_last=False, one result per statement.
    assert [list(row) for row in selected["rows"]] == [["north", 10], ["south", 32]]
    assert [[list(row) for row in result] for result in selected["many"]] == [[[2]], [[32]]]
    hooked = run.recorded("through_hook")
    assert hooked["hook"] == hook  # Connection.get_hook() found the provider's hook for the connection type
    assert hooked["records"] == [["east", 5], ["west", 7]]
    assert hooked["first"] == [5]  # the 3 rows `create` inserted and the 2 the hook did


def test_sql_operators_on_sqlite(sqlite_run):
    run, database = sqlite_run
    _check_outcome(run, "SqliteHook")
    with sqlite3.connect(database) as db:  # the operators' writes are in the file the connection names
        assert db.execute("SELECT ds, region, amount FROM sales ORDER BY ds, region").fetchall() == [
            ("2000-01-01", "east", 5), ("2000-01-01", "west", 7), ("2024-03-04", "north", 20),
            ("2024-03-05", "north", 10), ("2024-03-05", "south", 32)]


def test_sql_operators_on_postgres(postgres_run):
    _check_outcome(postgres_run, "PostgresHook")
    assert 'UndefinedTable: relation "no_such_table" does not exist' in postgres_run.log("bad_sql")


def test_query_rows_reach_the_next_task_as_tuples(sqlite_run):
    assert sqlite_run[0].recorded("select")["row_types"] == ["tuple"]
