"""PythonSensor: pokes a Python callable until it returns something truthy (or a done PokeReturnValue)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from updraft.sdk.exceptions import AirflowException
from updraft.sensors.base import BaseSensorOperator, PokeReturnValue


class PythonSensor(BaseSensorOperator):
    """``op_args``/``op_kwargs``/``templates_dict`` are template fields, rendered before each poke."""

    template_fields: ClassVar[tuple[str, ...]] = ("templates_dict", "op_args", "op_kwargs")

    def __init__(
        self,
        *,
        python_callable: Callable,
        op_args: list | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        templates_dict: dict | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # Airflow's PythonOperator check; Airflow's PythonSensor would only fail on the first poke.
        if not callable(python_callable):
            raise AirflowException("`python_callable` param must be callable")
        self.python_callable = python_callable
        self.op_args = op_args or []
        self.op_kwargs = op_kwargs or {}
        self.templates_dict = templates_dict

    def poke(self, context: Any) -> Any:
        # lazy: the task child only (DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import determine_kwargs

        context.update(self.op_kwargs, templates_dict=self.templates_dict)
        kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        self.log.info("Poking callable: %s", getattr(self.python_callable, "__name__", self.python_callable))
        value = self.python_callable(*self.op_args, **kwargs)
        return value if isinstance(value, PokeReturnValue) else PokeReturnValue(bool(value))
