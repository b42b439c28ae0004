"""The operator classes behind each TaskFlow decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from updraft.operators.bash import BashOperator
from updraft.operators.python import BranchPythonOperator, PythonOperator, ShortCircuitOperator
from updraft.operators.python_venv import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
)
from updraft.sdk.decorators.base import DecoratedOperator
from updraft.sdk.decorators.source import decorated_function_source


class PythonDecoratedOperator(DecoratedOperator, PythonOperator):
    custom_operator_name: ClassVar[str] = "@task"
    template_fields: ClassVar[tuple[str, ...]] = PythonOperator.template_fields


class BranchPythonDecoratedOperator(DecoratedOperator, BranchPythonOperator):
    custom_operator_name: ClassVar[str] = "@task.branch"
    template_fields: ClassVar[tuple[str, ...]] = PythonOperator.template_fields


class ShortCircuitDecoratedOperator(DecoratedOperator, ShortCircuitOperator):
    custom_operator_name: ClassVar[str] = "@task.short_circuit"
    template_fields: ClassVar[tuple[str, ...]] = PythonOperator.template_fields


class _SubprocessDecoratedOperator(DecoratedOperator):
    """The function runs from its source in another interpreter: its task decorator is stripped first."""

    python_callable: Callable[..., Any]

    def get_python_source(self) -> str:
        return decorated_function_source(self.python_callable, self.custom_operator_name)


class PythonVirtualenvDecoratedOperator(_SubprocessDecoratedOperator, PythonVirtualenvOperator):
    custom_operator_name: ClassVar[str] = "@task.virtualenv"
    template_fields: ClassVar[tuple[str, ...]] = PythonVirtualenvOperator.template_fields


class BranchPythonVirtualenvDecoratedOperator(_SubprocessDecoratedOperator, BranchPythonVirtualenvOperator):
    custom_operator_name: ClassVar[str] = "@task.branch_virtualenv"
    template_fields: ClassVar[tuple[str, ...]] = PythonVirtualenvOperator.template_fields


class ExternalPythonDecoratedOperator(_SubprocessDecoratedOperator, ExternalPythonOperator):
    custom_operator_name: ClassVar[str] = "@task.external_python"
    template_fields: ClassVar[tuple[str, ...]] = ExternalPythonOperator.template_fields


class BranchExternalPythonDecoratedOperator(_SubprocessDecoratedOperator, BranchExternalPythonOperator):
    custom_operator_name: ClassVar[str] = "@task.branch_external_python"
    template_fields: ClassVar[tuple[str, ...]] = ExternalPythonOperator.template_fields


class BashDecoratedOperator(DecoratedOperator, BashOperator):
    """The function returns the command to run; it is called at run time, so the command is unknown here."""

    custom_operator_name: ClassVar[str] = "@task.bash"
    overwrite_rtif_after_execution: ClassVar[bool] = True  # the command is known once execute rendered it
    template_fields: ClassVar[tuple[str, ...]] = (*DecoratedOperator.template_fields,
                                                  *BashOperator.template_fields)
    forwards_callable: ClassVar[bool] = False
    # BashOperator takes no callable: DecoratedOperator sets these on the instance instead of forwarding them.
    python_callable: Callable[..., Any]
    op_args: list[Any]
    op_kwargs: dict[str, Any]

    def __init__(self, **kwargs: Any) -> None:
        # multiple_outputs is honoured as in the 3.3 provider: each key of output_processor's dict is its own XCom.
        super().__init__(bash_command="", **kwargs)

    def execute(self, context: Any) -> Any:
        """Call the function for the command, render it like a template field, then run it as BashOperator."""
        # lazy: the task child only (DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import determine_kwargs, render_value

        context.update(self.op_kwargs)
        kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        command = self.python_callable(*self.op_args, **kwargs)
        if not isinstance(command, str) or not command.strip():
            raise TypeError("The returned value from the TaskFlow callable must be a non-empty string.")
        self.bash_command = render_value(self, command, context)
        return super().execute(context)


def SensorDecoratedOperator() -> type:
    """``@task.sensor``: the function is the poke; its class is built on first use of the decorator."""
    global _sensor_class
    if _sensor_class is None:
        # lazy: import cost (the sensor layer only for @task.sensor)
        from updraft.sensors.python import PythonSensor

        class _SensorDecoratedOperator(DecoratedOperator, PythonSensor):
            custom_operator_name: ClassVar[str] = "@task.sensor"
            template_fields: ClassVar[tuple[str, ...]] = PythonSensor.template_fields

            def __init__(self, **kwargs: Any) -> None:
                kwargs.pop("multiple_outputs", None)
                super().__init__(**kwargs)

        _sensor_class = _SensorDecoratedOperator
    return _sensor_class


_sensor_class: type | None = None
