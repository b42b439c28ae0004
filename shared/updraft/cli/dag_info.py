"""What the CLI shows about a serialized DAG, read without importing any DAG file.

The CLI parent only ever sees serialized DAGs (the children ran the files),
exactly like the API and the scheduler will; this module is the small bridge
from that JSON to Airflow's CLI fields.
"""

from __future__ import annotations

import os
from typing import Any

from updraft.model.parse_results import HORIZON_KEY

# Airflow's [core] dags_are_paused_at_creation default: a DAG that does not
# set is_paused_upon_creation starts paused.
PAUSED_AT_CREATION_DEFAULT = True


def _dag_part(serialized: dict[str, Any]) -> dict[str, Any]:
    inner = serialized.get("dag")
    return inner if isinstance(inner, dict) else serialized


def dag_summary(serialized: dict[str, Any], dags_folder: str) -> dict[str, Any]:
    """The fields ``updraft dags list`` prints (Airflow's default columns, plus tags)."""
    dag = _dag_part(serialized)
    rel = dag.get("relative_fileloc") or ""
    owners = dag.get("owner")
    if owners is None:
        owners = ", ".join(sorted({t.get("owner", "airflow") for t in dag.get("tasks", [])})) or "airflow"
    paused = dag.get("is_paused_upon_creation")
    return {
        "dag_id": dag["dag_id"],
        "fileloc": os.path.join(dags_folder, rel) if rel else dags_folder,
        "owners": owners,
        "is_paused": PAUSED_AT_CREATION_DEFAULT if paused is None else bool(paused),
        "tags": sorted(dag.get("tags") or []),
    }


def next_runs(serialized: dict[str, Any], n: int, *, plugins_folder: str | None = None) -> list[str | None]:
    """Logical dates (ISO 8601) of the DAG's next ``n`` runs; a trailing None when the schedule ends.

    The runs are the ones the scheduler would create for a DAG that has never
    run (start_date, end_date and catchup applied), as computed by
    ``updraft.timetables.planning.next_dagruns``. The timetable is rebuilt
    from its serialized form; a custom one is its own class when a plugin registers it here, else the parser's
    evaluation of it (the document's horizon).
    """
    # lazy: CLI start (the serializer and timetables only to preview next runs)
    from updraft.scheduling import timetable_of
    from updraft.serialization import deserialize_dag
    from updraft.timetables.planning import next_dagruns

    if plugins_folder:
        # A preview on the author's machine may run the plugin's own class, which answers beyond the 32 runs
        # the parser evaluated.
        # lazy: only with a plugins folder (user plugins load here)
        from updraft.plugins import load_plugins_folder

        load_plugins_folder(plugins_folder)
    dag = deserialize_dag(serialized)
    infos = next_dagruns(
        timetable_of(dag, serialized.get(HORIZON_KEY)),  # a custom timetable: the parser's evaluation of it
        start_date=dag.start_date,
        end_date=dag.end_date,
        catchup=dag.catchup,
        n=n,
    )
    out: list[str | None] = [info.logical_date.isoformat() for info in infos]
    if len(out) < n:
        out.append(None)
    return out
