"""Trigger-check Lambda: the deferral state machine's synchronous Task for a polling trigger. The event is the
execution's state (``kind``, ``resume_at``, ``resume`` and what earlier checks added); the answer is the next
state with ``outcome`` and ``poll_seconds`` (``updraft.runtime.trigger_check``). One look per invoke, so it is short;
Step Functions retries it on Lambda service errors, and a repeated check is harmless (a fired event is written
fenced by the deferred try's token). The trigger's code runs in a child without this function's credentials: a
trigger that reads AWS looks with the DAG-code role's."""

from __future__ import annotations

import datetime as dt
from typing import Any

from aws_lambda_powertools import Logger

from updraft.process_guard import make_undumpable
from updraft.services import shared_services as services

make_undumpable()  # before this process holds a client or runs user code: see updraft.process_guard

logger = Logger(service="updraft-trigger-check")


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    from updraft.runtime.trigger_check import check

    svc = services()
    credentials = svc.dag_code_credentials  # the trigger's code runs in a child with the DAG-code role's
    state = check(event, store=svc.store, now=dt.datetime.now(dt.UTC),
                  credentials=credentials.environment() if credentials is not None else None,
                  plugins_folder=svc.config.plugins_folder)
    logger.info("trigger check", extra={"outcome": state["outcome"], "resume": state.get("resume")})
    return state
