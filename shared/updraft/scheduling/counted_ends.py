"""Which ends the mini scheduler may count instead of reading the run, decided from the DAG alone.

A count on the run's ENDS item (``store.count_ends``) stands in for reading instances only where it is exact:
no setup or teardown in the DAG (their rules look beyond the direct upstream), and, for a mapped task, a plain
one (not in a mapped task group, whose instances follow their group's indexes one by one; no depends_on_past or
wait_for_downstream, which look at another run) whose downstream tasks all wait for every upstream instance to end
before a success can decide them. ``one_success`` and ``one_done`` run, ``all_failed`` and ``all_skipped`` are
skipped, at the first success: Airflow decides those at once, so each end of such a task's instances still reads
the whole run. A counted mapped task's expansion records how many instances it has (``store.record_expansions``,
written by the scheduler before it creates them): its last instance to end reads the whole run, which decides
its downstream (a reduce over every mapped output) and, for a leaf, the run's end.
"""

from __future__ import annotations

from updraft.sdk.trigger_rule import TriggerRule
from updraft.serialization.model import SerializedDAG, SerializedTask

# Rules a success of one upstream instance can decide before the others end (see ``deps.trigger_rule``).
DECIDED_EARLY = frozenset({TriggerRule.ONE_SUCCESS, TriggerRule.ONE_DONE, TriggerRule.ALL_FAILED,
                           TriggerRule.ALL_SKIPPED})


def ends_countable(dag: SerializedDAG) -> bool:
    """Whether any count in ``dag`` is exact: no setup or teardown (whose scopes reach past the direct upstream)."""
    return not any(t.is_setup or t.is_teardown for t in dag.tasks)


def counts_mapped_ends(dag: SerializedDAG, task: SerializedTask) -> bool:
    """Whether the ends of ``task``'s mapped instances are counted against its expansion (see the module)."""
    return bool(task.is_mapped and not task.map_group_id and not task.depends_on_past
                and not task.wait_for_downstream and ends_countable(dag)
                and not any(dag.task_dict[d].trigger_rule in DECIDED_EARLY for d in task.downstream_task_ids))
