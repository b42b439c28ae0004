"""PythonOperator and the operators built on it that may skip downstream work (branch, short-circuit)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator, _assign
from updraft.sdk.exceptions import AirflowException


class PythonOperator(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("templates_dict", "op_args", "op_kwargs")
    template_fields_renderers: ClassVar[dict[str, str]] = {"templates_dict": "json", "op_args": "py",
                                                           "op_kwargs": "py"}
    ui_color: ClassVar[str] = "#ffefeb"
    python_callable: Callable[..., Any]
    op_args: list[Any]
    op_kwargs: dict[str, Any]
    templates_dict: dict[str, Any] | None
    show_return_value_in_logs: bool

    def __init__(
        self,
        *,
        python_callable: Callable,
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        templates_dict: dict[str, Any] | None = None,
        templates_exts: list[str] | None = None,
        show_return_value_in_logs: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not callable(python_callable):
            raise AirflowException("`python_callable` param must be callable")
        _assign(self, {"python_callable": python_callable, "op_args": list(op_args or []),
                       "op_kwargs": dict(op_kwargs or {}), "templates_dict": templates_dict,
                       "show_return_value_in_logs": show_return_value_in_logs})
        if templates_exts:
            self.template_ext = tuple(templates_exts)

    def execute(self, context: Any) -> Any:
        """Airflow's: op_kwargs and templates_dict join the context, the callable gets what it declares."""
        # lazy: the task child only (DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import determine_kwargs

        context.update(self.op_kwargs, templates_dict=self.templates_dict)
        self.op_kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        self._outlet_events = context.get("outlet_events")
        return_value = self.execute_callable()
        if self.show_return_value_in_logs:
            self.log.info("Done. Returned value was: %s", return_value)
        else:
            self.log.info("Done. Returned value not shown")
        return return_value

    def execute_callable(self) -> Any:
        """The callable's result; an ``async def`` callable is run to its end on an event loop of its own, as
        Airflow 3.3's PythonOperator runs one (``aexecute``), not returned as an unawaited coroutine."""
        import inspect

        # lazy: the task child only (assets when the callable runs)
        from updraft.sdk.assets import call_collecting_metadata

        result = call_collecting_metadata(self.python_callable, self.op_args, self.op_kwargs,
                                          getattr(self, "_outlet_events", None))
        if inspect.iscoroutine(result):
            import asyncio

            result = asyncio.run(result)
        return result


class BranchPythonOperator(PythonOperator):
    """The callable returns the task_id(s) to follow; every other direct downstream task is skipped."""

    _can_skip_downstream: ClassVar[bool] = True

    def execute(self, context: Any) -> Any:
        branches = super().execute(context)
        self.log.info("Branch into %s", branches)
        context["ti"].skip_all_except(branches)
        return sorted(branches) if isinstance(branches, (set, frozenset)) else branches


class ShortCircuitOperator(PythonOperator):
    """A falsy result skips everything downstream (or only direct downstream tasks, honouring their rules)."""

    _can_skip_downstream: ClassVar[bool] = True
    ui_color: ClassVar[str] = "#e6f1f2"
    extra_serialized_fields: ClassVar[tuple[str, ...]] = ("ignore_downstream_trigger_rules",)

    def __init__(self, *, ignore_downstream_trigger_rules: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ignore_downstream_trigger_rules = ignore_downstream_trigger_rules

    def execute(self, context: Any) -> Any:
        condition = super().execute(context)
        self.log.info("Condition result is %s", condition)
        if condition:
            self.log.info("Proceeding with downstream tasks...")
            return condition
        self.log.info("Skipping downstream tasks")
        context["ti"].skip_downstream(ignore_downstream_trigger_rules=self.ignore_downstream_trigger_rules)
        return condition
