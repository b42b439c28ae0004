"""A DAG whose file was removed can be stored again (issue 18, found by a new user).

Unpausing a catchup=False DAG without a schedule wrote its "no next run" as NULLs; the re-registration's
condition expects the next run absent, so the parser looped on "its row kept changing under 8 attempts".
"""

from __future__ import annotations

import pendulum
import pytest
from store_helpers import dag_doc, parsed_file

from updraft.scheduling.commands.dag_registration import register_parsed_file, remove_dag_file, set_paused

NOW = pendulum.datetime(2024, 1, 3, 12, tz="UTC")


@pytest.mark.parametrize("schedule", [None, "@daily"])
@pytest.mark.parametrize("catchup", [True, False])
def test_a_removed_dags_file_added_again_is_stored(store, schedule, catchup):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule=schedule, catchup=catchup)), now=NOW)
    set_paused(store, "d", False, now=NOW.add(minutes=1))
    assert remove_dag_file(store, "a.py") == ["d"]

    outcome = register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule=schedule, catchup=catchup)),
                                   now=NOW.add(hours=5))
    assert outcome.stored == ["d"]
    meta = store.get_dag_meta("d")
    assert meta.is_active and not meta.is_paused


def test_no_next_run_is_stored_absent_not_null(store):
    """A NULL in a sparse index's key attribute is also refused by DynamoDB itself (moto accepts it)."""
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule=None, catchup=False)), now=NOW)
    set_paused(store, "d", False, now=NOW.add(minutes=1))
    item = store.models.dag_meta._get_connection().get_item("DAG#d", range_key="META")["Item"]
    assert not {"next_dagrun_logical_date", "next_dagrun_run_after", "due_pk", "due_sk"} & set(item)


def test_a_row_with_a_null_next_run_from_before_the_fix_is_stored_again(store):
    """A kept --state-dir may hold rows written with NULLs: the condition accepts them as "no next run"."""
    from updraft.store.writes import update_quietly

    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule=None)), now=NOW)
    M = store.models.dag_meta
    update_quietly(M("DAG#d", "META"), [M.next_dagrun_logical_date.set(None)], None)
    remove_dag_file(store, "a.py")
    assert register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule=None)), now=NOW).stored == ["d"]
