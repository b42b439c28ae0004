"""Asset-events Lambda: S3 uploads under the asset-events prefix (EventBridge "Object Created" events), or
messages on the queue ``asset_events_queue_arn`` names (infra/config.py), become asset events
(``updraft.scheduling.asset_sources``), and the runs they complete are created at once.

Settings: ``UPDRAFT_TABLE``, ``UPDRAFT_BUCKET`` (only objects in it count), ``UPDRAFT_ASSET_EVENTS_PREFIX``
(default ``asset-events/``). Idempotent: a redelivered notification records nothing twice (event ids come from
their source), and run creation is the scheduler's conditional claim.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from aws_lambda_powertools import Logger

from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

logger = Logger(service="updraft-asset-events")


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    from updraft.resources import ASSET_EVENTS_PREFIX
    from updraft.scheduling import create_asset_triggered_runs, handle_source_event

    svc = services()
    now = dt.datetime.now(dt.UTC)
    outcome = handle_source_event(svc.store, event, bucket=svc.config.bucket or "", now=now,
                                  prefix=os.environ.get("UPDRAFT_ASSET_EVENTS_PREFIX") or ASSET_EVENTS_PREFIX)
    scheduler = svc.scheduler
    runs = create_asset_triggered_runs(svc.store, scheduler.dag, now=now, dag_ids=sorted(outcome.consumers))
    for run in runs:
        scheduler.schedule_run(run.dag_id, run.run_id)
    result = {"recorded": outcome.recorded, "unmatched": outcome.unmatched,
              "runs_created": [f"{r.dag_id}/{r.run_id}" for r in runs]}
    logger.info("asset events", extra=result)
    return result
