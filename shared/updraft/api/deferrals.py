"""A deferred task instance's ``trigger``, as Airflow's ``TriggerResponse`` (``triggerer_job`` stays null: the
wait is a Step Functions execution, there is no triggerer)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from updraft.api.formats import iso
from updraft.model.records import TaskInstance

if TYPE_CHECKING:
    from updraft.api.models import TriggerResponse


def trigger_response(ti: TaskInstance) -> TriggerResponse | None:
    record = ti.trigger
    if not record:
        return None
    # Airflow's trigger id is a row id; Updraft's trigger is the deferral of one try, named by its token.
    trigger_id = int(hashlib.sha256(str(ti.try_id).encode()).hexdigest()[:8], 16)
    # Airflow requires classpath and created_date. A deferral records when it was made (runtime.deferral); a
    # record without it (an older release's, a hand-written one) answers the try's start, never a 500.
    response: TriggerResponse = {"id": trigger_id, "classpath": str(record.get("classpath") or ""),
                                 "kwargs": json.dumps(record.get("kwargs") or {}, sort_keys=True),
                                 "created_date": "", "queue": None, "triggerer_id": None}
    # null only for a record that knows no time at all, as before the response was typed
    response["created_date"] = record.get("created_at") or iso(ti.start_date or ti.queued_at)  # type: ignore[typeddict-item]
    return response
