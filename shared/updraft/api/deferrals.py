"""A deferred task instance's ``trigger``, as Airflow's ``TriggerResponse`` (``triggerer_job`` stays null: the
wait is a Step Functions execution, there is no triggerer)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from updraft.model.records import TaskInstance

if TYPE_CHECKING:
    from updraft.api.models import TriggerResponse


def trigger_response(ti: TaskInstance) -> TriggerResponse | None:
    record = ti.trigger
    if not record:
        return None
    # Airflow's trigger id is a row id; Updraft's trigger is the deferral of one try, named by its token.
    trigger_id = int(hashlib.sha256(str(ti.try_id).encode()).hexdigest()[:8], 16)
    # Airflow requires classpath and created_date: the runtime records both with every deferral (runtime.deferral).
    return {"id": trigger_id, "classpath": record["classpath"],
            "kwargs": json.dumps(record.get("kwargs") or {}, sort_keys=True),
            "created_date": record["created_at"], "queue": None, "triggerer_id": None}
