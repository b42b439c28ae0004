"""The parser's side of custom timetables: evaluate each one in the child, from where its DAG's runs stand.

A DAG on a user ``Timetable`` subclass is serialized with :class:`~updraft.timetables.evaluated.EvaluatedTimetable`
in its place, and the child adds the timetable's :class:`~updraft.timetables.evaluated.Horizon` to the document under
``HORIZON_KEY`` (outside the versioned ``dag`` body: registration moves it onto the DAG's row). What the horizon
starts from travels with the file's job (:class:`TimetableContext`): each DAG's last automated data interval as the
parent read it from the store, and the instants a manual run's interval is wanted at (``dags test``'s logical date).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

from updraft.model.parse_results import HORIZON_KEY

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.store.api import DagMeta


@dataclass(frozen=True)
class TimetableContext:
    """Per DAG id, the last automated data interval to chain from; the instants to infer manual intervals at."""

    anchors: dict[str, tuple[str, str]] = field(default_factory=dict)
    manual_at: tuple[str, ...] = ()

    def to_json(self) -> str:
        if not self.anchors and not self.manual_at:
            return ""
        return json.dumps({"anchors": self.anchors, "manual_at": list(self.manual_at)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TimetableContext:
        if not text:
            return cls()
        data = json.loads(text)
        return cls({k: (v[0], v[1]) for k, v in data.get("anchors", {}).items()}, tuple(data.get("manual_at", ())))

    @classmethod
    def of_metas(cls, metas: dict[str, DagMeta | None], *, manual_at: tuple[dt.datetime, ...] = ()) -> TimetableContext:
        """From DAG rows as the store has them: the anchors of those whose timetable is evaluated (custom)."""
        anchors = {}
        for dag_id, meta in metas.items():
            if meta is None or meta.timetable_horizon is None:
                continue
            start, end = meta.last_automated_data_interval_start, meta.last_automated_data_interval_end
            if start is not None and end is not None:
                anchors[dag_id] = (start.isoformat(), end.isoformat())
        return cls(anchors, tuple(at.isoformat() for at in manual_at))


def contexts_for(store: Any, relative_paths: list[str]) -> dict[str, str]:
    """Per file, where its custom timetables are evaluated from now: the last automated data interval of each DAG
    it defined last time whose row carries a horizon (one file read, and one batch read of its DAGs' rows)."""
    contexts = {}
    for path in relative_paths:
        record = store.get_file_record(path)
        if record is None or not record.dag_ids:
            continue
        if context := TimetableContext.of_metas(store.get_dag_metas(record.dag_ids)).to_json():
            contexts[path] = context
    return contexts


def reparse_event(bucket: str, dags_prefix: str, relative_fileloc: str) -> dict[str, Any]:
    """The S3 notification that has the parser run one DAG file again (its latest object, as any event)."""
    key = f"{dags_prefix.rstrip('/')}/{relative_fileloc}" if dags_prefix.strip("/") else relative_fileloc
    return {"Records": [{"eventName": "ObjectCreated:Put", "eventSource": "updraft:timetable-evaluation",
                         "s3": {"bucket": {"name": bucket}, "object": {"key": quote_plus(key, safe="/")}}}]}


def is_custom(dag: DAG) -> bool:
    # lazy: cold start (the timetable registry and croniter only when a DAG is checked)
    from updraft.timetables.registry import is_builtin_timetable

    return dag.timetable is not None and not is_builtin_timetable(type(dag.timetable))


def add_horizon(document: dict[str, Any], dag: DAG, context: TimetableContext) -> None:
    """Evaluate ``dag``'s custom timetable (live, in the child) into ``document``; built-in schedules need none."""
    if not is_custom(dag):
        return
    # lazy: cold start (run creation and pendulum only for a custom timetable's horizon)
    from updraft.scheduling import time_restriction
    from updraft.timetables._time import coerce_datetime
    from updraft.timetables.base import DataInterval
    from updraft.timetables.evaluated import evaluate_horizon

    anchor = context.anchors.get(dag.dag_id)
    interval = (DataInterval(coerce_datetime(dt.datetime.fromisoformat(anchor[0])),
                             coerce_datetime(dt.datetime.fromisoformat(anchor[1]))) if anchor else None)
    horizon = evaluate_horizon(dag.timetable, time_restriction(dag),  # type: ignore[arg-type]
                               anchor=interval, now=dt.datetime.now(dt.UTC),
                               manual_at=[dt.datetime.fromisoformat(at) for at in context.manual_at])
    document[HORIZON_KEY] = horizon.to_dict()
