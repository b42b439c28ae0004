"""``airflow.providers.standard.operators.hitl``: Human-in-the-loop operators, as Airflow 3.3 defines them.

``HITLOperator`` asks a person to choose among ``options`` (several with ``multiple``) and fill ``params``; it runs
its ``notifiers``, then defers to ``HITLTrigger`` (``updraft.triggers.hitl``: no poll, a response through the REST
API resumes it at once; ``response_timeout`` ends the wait with the ``defaults``, or fails the task with
``HITLTimeoutError`` when there are none). ``execute_complete`` validates the response and returns it (the XCom:
``chosen_options``, ``params_input``, ``responded_at``, ``responded_by_user``). ``ApprovalOperator`` offers
Approve/Reject (Reject skips downstream tasks, or fails with ``fail_on_reject``); ``HITLBranchOperator`` follows the
chosen options (through ``options_mapping``) as a branch; ``HITLEntryOperator`` collects ``params`` with one "OK".
"""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import urlencode, urlparse, urlunparse

from updraft.operators.branch import BranchMixIn
from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.exceptions import AirflowException
from updraft.sdk.notifier import BaseNotifier
from updraft.sdk.param import ParamsDict
from updraft.sdk.timezone import utcnow
from updraft.triggers.hitl import HITLTrigger, HITLTriggerEventSuccessPayload

log = logging.getLogger(__name__)


class HITLTriggerEventError(AirflowException):
    """A Human-in-the-loop event reported an error (Airflow's)."""


class HITLTimeoutError(HITLTriggerEventError):
    """The response timeout passed without a response and without defaults (Airflow's)."""


class HITLRejectException(AirflowException):
    """``ApprovalOperator(fail_on_reject=True)`` received "Reject" (Airflow's)."""


def _task_params(params: ParamsDict, dag: Any) -> ParamsDict:
    """The task's own params: Airflow's ``filter_params_by_source(params, source="task")``; the DAG's params (those
    the task did not set itself) are no form field of the request."""
    dag_params = getattr(dag, "params", None)
    if not isinstance(dag_params, ParamsDict):
        return params
    own = {key: params.get_param(key) for key in params
           if key not in dag_params or params.get_param(key) != dag_params.get_param(key)}
    return ParamsDict(own)


class HITLOperator(BaseOperator):
    """Base class of the Human-in-the-loop operators (Airflow's; see the module docstring)."""

    template_fields: ClassVar[tuple[str, ...]] = ("subject", "body")

    def __init__(self, *, subject: str, options: list[str], body: str | None = None,
                 defaults: str | list[str] | None = None, multiple: bool = False,
                 params: ParamsDict | dict[str, Any] | None = None,
                 notifiers: Sequence[BaseNotifier] | BaseNotifier | None = None,
                 assigned_users: dict[str, str] | list[dict[str, str]] | None = None,
                 response_timeout: dt.timedelta | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.execution_timeout and not response_timeout:
            warnings.warn("Passing `execution_timeout` to HITLOperator to control the human response wait is "
                          "deprecated. Use `response_timeout` instead. `execution_timeout` will be cleared to "
                          "prevent it from killing the task before defer() is reached.", DeprecationWarning,
                          stacklevel=2)
            response_timeout = self.execution_timeout
            self.execution_timeout = None
        self.response_timeout = response_timeout
        self.subject = subject
        self.body = body
        self.options = options
        self.defaults = [defaults] if isinstance(defaults, str) else defaults
        self.multiple = multiple
        merged = params if isinstance(params, ParamsDict) else ParamsDict(params or {})
        self.params = _task_params(merged, self.dag if self.has_dag() else None)
        self.notifiers: Sequence[BaseNotifier] = (
            [notifiers] if isinstance(notifiers, BaseNotifier) else notifiers or [])
        self.assigned_users = [assigned_users] if isinstance(assigned_users, dict) else assigned_users
        self.validate_options()
        self.validate_params()
        self.validate_defaults()
        self.hitl_summary_extra: dict[str, Any] = {}

    @property
    def hitl_summary(self) -> dict[str, Any]:
        """The request (and, once answered, the response), a fresh dict per read (Airflow's)."""
        return {"subject": self.subject, "body": self.body, "options": self.options, "defaults": self.defaults,
                "multiple": self.multiple, "assigned_users": self.assigned_users,
                "serialized_params": self.serialized_params or None, **self.hitl_summary_extra}

    def validate_options(self) -> None:
        if not self.options:
            raise ValueError('"options" cannot be empty.')

    def validate_params(self) -> None:
        if "_options" in self.params:
            raise ValueError('"_options" is not allowed in params')

    def validate_defaults(self) -> None:
        if self.defaults is not None:
            if not set(self.defaults).issubset(self.options):
                raise ValueError(f'defaults "{self.defaults}" should be a subset of options "{self.options}"')
            if self.multiple is False and len(self.defaults) > 1:
                raise ValueError('More than one defaults given when "multiple" is set to False.')

    @property
    def serialized_params(self) -> dict[str, dict[str, Any]]:
        return {key: {"value": param.value, "description": param.description, "schema": param.schema}
                for key, param in ((k, self.params.get_param(k)) for k in self.params)}

    def execute(self, context: Any) -> Any:
        """Notify, then wait for the response (the REST API's PATCH resumes ``execute_complete``)."""
        timeout_datetime = utcnow() + self.response_timeout if self.response_timeout else None
        self.hitl_summary_extra["timeout_datetime"] = timeout_datetime.isoformat() if timeout_datetime else None
        self.log.info("Waiting for response")
        for notifier in self.notifiers:
            notifier(context)
        self.defer(trigger=HITLTrigger(options=self.options, defaults=self.defaults, params=self.serialized_params,
                                       multiple=self.multiple, timeout_datetime=timeout_datetime,
                                       subject=self.subject, body=self.body,
                                       assigned_users=list(self.assigned_users or [])),
                   method_name="execute_complete")

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        if "error" in event:
            self.hitl_summary_extra["error_type"] = event["error_type"]
            self.process_trigger_event_error(event)
        chosen_options = event["chosen_options"]
        params_input = event["params_input"] or {}
        self.validate_chosen_options(chosen_options)
        self.validate_params_input(params_input)
        responded_at = event["responded_at"]
        if isinstance(responded_at, str):
            responded_at = dt.datetime.fromisoformat(responded_at)
        self.hitl_summary_extra.update({"chosen_options": chosen_options, "params_input": params_input,
                                        "responded_at": responded_at.isoformat(),
                                        "responded_by_user": event["responded_by_user"]})
        return HITLTriggerEventSuccessPayload(chosen_options=chosen_options, params_input=params_input,
                                              responded_at=responded_at,
                                              responded_by_user=event["responded_by_user"])

    def process_trigger_event_error(self, event: dict[str, Any]) -> None:
        if event["error_type"] == "timeout":
            raise HITLTimeoutError(event)
        raise HITLTriggerEventError(event)

    def validate_chosen_options(self, chosen_options: list[str]) -> None:
        if diff := set(chosen_options) - set(self.options):
            raise ValueError(f"Responses {diff} not in {self.options}")

    def validate_params_input(self, params_input: Mapping[str, Any]) -> None:
        if self.params and params_input and set(self.serialized_params) ^ set(params_input):
            raise ValueError(f"params_input {params_input} does not match params {self.params}")
        for key, value in params_input.items():
            self.params[key] = value

    def generate_link_to_ui(self, *, task_instance: Any, base_url: str | None = None,
                            options: str | list[str] | None = None,
                            params_input: dict[str, Any] | None = None) -> str:
        """The "required actions" page of the task instance, with the chosen options and params in its query."""
        query: dict[str, Any] = {}
        options = [options] if isinstance(options, str) else options
        if options:
            if diff := set(options) - set(self.options):
                raise ValueError(f"options {diff} are not valid options")
            query["_options"] = options
        if params_input:
            if diff := set(params_input) - set(self.params):
                raise ValueError(f"params {diff} are not valid params")
            query.update(params_input)
        if not base_url:
            # lazy: import cost (Updraft's config only for the UI link)
            from updraft.config import UpdraftConfig

            base_url = UpdraftConfig.from_env().base_url
        if not base_url:
            raise ValueError("Not able to retrieve base_url")
        query["map_index"] = task_instance.map_index
        parsed = urlparse(base_url)
        path = (f"/dags/{task_instance.dag_id}/runs/{task_instance.run_id}/tasks/{task_instance.task_id}"
                "/required_actions")
        return urlunparse((parsed.scheme, parsed.netloc, path, "", urlencode(query) if query else "", ""))

    @staticmethod
    def generate_link_to_ui_from_context(*, context: Any, base_url: str | None = None,
                                         options: list[str] | None = None,
                                         params_input: dict[str, Any] | None = None) -> str:
        hitl_op = context["task"]
        if not isinstance(hitl_op, HITLOperator):
            raise ValueError("This method only supports HITLOperator")
        return hitl_op.generate_link_to_ui(task_instance=context["task_instance"], base_url=base_url,
                                           options=options, params_input=params_input)


class ApprovalOperator(HITLOperator):
    """Approve or Reject: Reject skips the downstream tasks (all with ``ignore_downstream_trigger_rules``, else the
    direct ones, leaving the rest to their trigger rules), or fails the task with ``fail_on_reject``."""

    inherits_from_skipmixin: ClassVar[bool] = True
    _can_skip_downstream: ClassVar[bool] = True
    FIXED_ARGS: ClassVar[list[str]] = ["options", "multiple"]
    APPROVE = "Approve"
    REJECT = "Reject"

    def __init__(self, *, ignore_downstream_trigger_rules: bool = False, fail_on_reject: bool = False,
                 **kwargs: Any) -> None:
        for arg in self.FIXED_ARGS:
            if arg in kwargs:
                raise ValueError(f"Passing {arg} to ApprovalOperator is not allowed.")
        self.ignore_downstream_trigger_rules = ignore_downstream_trigger_rules
        self.fail_on_reject = fail_on_reject
        super().__init__(options=[self.APPROVE, self.REJECT], multiple=False, **kwargs)
        self.hitl_summary_extra["ignore_downstream_trigger_rules"] = ignore_downstream_trigger_rules
        self.hitl_summary_extra["fail_on_reject"] = fail_on_reject

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        ret = super().execute_complete(context=context, event=event)
        chosen_option = ret["chosen_options"][0]
        self.hitl_summary_extra["approved"] = chosen_option == self.APPROVE
        if chosen_option == self.APPROVE:
            self.log.info("Approved. Proceeding with downstream tasks...")
            return ret
        if self.fail_on_reject:
            raise HITLRejectException('Receive "Reject"')
        if not self.downstream_task_ids:
            self.log.info("No downstream tasks; nothing to do.")
            return ret
        self.log.info("Skipping downstream tasks")
        context["ti"].skip_downstream(ignore_downstream_trigger_rules=self.ignore_downstream_trigger_rules)
        return ret


class HITLBranchOperator(HITLOperator, BranchMixIn):
    """Follows the chosen options as branches (each mapped through ``options_mapping`` to a task id, else taken as
    one); every other direct downstream task is skipped, as a branch operator's."""

    inherits_from_skipmixin: ClassVar[bool] = True
    _can_skip_downstream: ClassVar[bool] = True

    def __init__(self, *, options_mapping: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.options_mapping = options_mapping or {}
        self.validate_options_mapping()
        self.hitl_summary_extra["options_mapping"] = self.options_mapping

    def validate_options_mapping(self) -> None:
        if not self.options_mapping:
            return
        invalid_keys = set(self.options_mapping) - set(self.options)
        if invalid_keys:
            raise ValueError(f"`options_mapping` contains keys that are not in `options`: {sorted(invalid_keys)}")
        invalid = {k: (v, type(v).__name__) for k, v in self.options_mapping.items() if not isinstance(v, str)}
        if invalid:
            raise ValueError(f"`options_mapping` values must be strings (task_ids).\nInvalid entries: {invalid}")

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        ret = super().execute_complete(context=context, event=event)
        branches = [self.options_mapping.get(option, option) for option in ret["chosen_options"]]
        self.hitl_summary_extra["branches_to_execute"] = branches
        return self.do_branch(context, branches)


class HITLEntryOperator(HITLOperator):
    """Collects ``params`` with a single "OK" option (also the default unless options are given)."""

    OK = "OK"

    def __init__(self, **kwargs: Any) -> None:
        if "options" not in kwargs:
            kwargs["options"] = [self.OK]
            if "defaults" not in kwargs:
                kwargs["defaults"] = [self.OK]
        super().__init__(**kwargs)
