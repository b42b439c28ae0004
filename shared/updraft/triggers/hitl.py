"""``airflow.providers.standard.triggers.hitl``: what a Human-in-the-loop task waits on.

Airflow's ``HITLTrigger`` polls the ``hitl_detail`` row every ``poke_interval`` seconds in its triggerer. Updraft
has no triggerer and needs no poll: the REST route that records a response resumes the deferred try in the same
conditional write (``api.routes.hitl``), so a response wakes the task at once. The only wait left is the response
timeout: a pure Step Functions ``Wait`` to ``timeout_datetime`` (none at all without a timeout), whose end resumes
the try with the response, the defaults or the timeout error (``model.hitl.timeout_resume``). The kwargs carry the
whole request (``subject``, ``body`` and ``assigned_users`` besides Airflow's), which the deferral records on the
task instance (``model.hitl.request_record``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any, TypedDict

from updraft.model.hitl import CLASSPATH, TIMEOUT_ERROR
from updraft.sdk.timezone import utcnow
from updraft.triggers.base import BaseTrigger, TriggerEvent


class HITLTriggerEventSuccessPayload(TypedDict, total=False):
    """Minimum keys of a success Human-in-the-loop event (Airflow's)."""

    chosen_options: list[str]
    params_input: dict[str, Any]
    responded_by_user: dict[str, str] | None
    responded_at: dt.datetime
    timedout: bool


class HITLTriggerEventFailurePayload(TypedDict):
    """Minimum keys of a failed Human-in-the-loop event (Airflow's)."""

    error: str
    error_type: str


class HITLTrigger(BaseTrigger):
    """The wait of a Human-in-the-loop task (see the module docstring: a response resumes it, not this trigger)."""

    def __init__(self, *, options: list[str], params: dict[str, Any], ti_id: Any = None,
                 defaults: list[str] | None = None, multiple: bool = False,
                 timeout_datetime: dt.datetime | None = None, poke_interval: float = 5.0, subject: str = "",
                 body: str | None = None, assigned_users: list[dict[str, str]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ti_id = ti_id
        self.options = options
        self.params = params
        self.defaults = defaults
        self.multiple = multiple
        self.timeout_datetime = timeout_datetime
        self.poke_interval = poke_interval
        self.subject = subject
        self.body = body
        self.assigned_users = assigned_users or []

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return CLASSPATH, {"ti_id": None if self.ti_id is None else str(self.ti_id), "options": self.options,
                           "defaults": self.defaults, "params": self.params, "multiple": self.multiple,
                           "timeout_datetime": self.timeout_datetime, "poke_interval": self.poke_interval,
                           "subject": self.subject, "body": self.body, "assigned_users": self.assigned_users}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Only the timeout is this trigger's own event (a response resumes the try without it): wait for it and
        fire Airflow's timeout error; without a timeout there is nothing to fire."""
        if self.timeout_datetime is None:
            return
        await asyncio.sleep(max(0.0, (self.timeout_datetime - utcnow()).total_seconds()))
        yield TriggerEvent(HITLTriggerEventFailurePayload(error=TIMEOUT_ERROR, error_type="timeout"))
