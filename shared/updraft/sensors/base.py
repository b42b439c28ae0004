"""BaseSensorOperator: Airflow 3's sensor arguments, coerced and validated at parse time as Airflow does.

Sensors are the tasks whose scheduling differs most (poke vs reschedule, deferrable waits on Step Functions),
so every argument the scheduler acts on is normalised here and listed in ``extra_serialized_fields``: the
scheduler reads them from the serialized DAG and never imports the DAG file.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator

# [sensors] default_timeout: seven days, Airflow's default.
DEFAULT_SENSOR_TIMEOUT = 60 * 60 * 24 * 7
DEFAULT_POKE_INTERVAL = 60


class PokeReturnValue:
    """What ``poke`` may return instead of a bool, to finish and push an XCom value in one step."""

    def __init__(self, is_done: bool, xcom_value: Any | None = None) -> None:
        self.xcom_value = xcom_value
        self.is_done = is_done

    def __bool__(self) -> bool:
        return self.is_done

    def __repr__(self) -> str:
        return f"PokeReturnValue(is_done={self.is_done!r}, xcom_value={self.xcom_value!r})"


def _coerce_seconds(value: Any, name: str) -> timedelta:
    """Airflow accepts a timedelta or a non-negative number of seconds; anything else is the same ValueError."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, (int, float)) and value >= 0:
        return timedelta(seconds=value)
    raise ValueError(f"Operator arg `{name}` must be timedelta object or a non-negative number")


class BaseSensorOperator(BaseOperator):
    """Waits for a condition: poke every ``poke_interval`` seconds until it holds or ``timeout`` passes.

    ``mode="reschedule"`` frees the slot between pokes; a sensor with ``deferrable=True`` hands the wait to a
    Step Functions state machine. Both are scheduling decisions, hence decided from the serialized fields.
    """

    ui_color: ClassVar[str] = "#e6f1f2"
    valid_modes: ClassVar[Iterable[str]] = ["poke", "reschedule"]
    _is_sensor: ClassVar[bool] = True
    # Sensors that can hand their wait to a trigger set this per instance (TimeDeltaSensor(deferrable=True)).
    deferrable: bool = False
    extra_serialized_fields: ClassVar[tuple[str, ...]] = (
        "poke_interval",
        "timeout",
        "mode",
        "soft_fail",
        "exponential_backoff",
        "max_wait",
        "silent_fail",
        "never_fail",
        "deferrable",
    )

    def __init__(
        self,
        *,
        poke_interval: timedelta | float = DEFAULT_POKE_INTERVAL,
        timeout: timedelta | float | None = None,
        soft_fail: bool = False,
        mode: str = "poke",
        exponential_backoff: bool = False,
        max_wait: timedelta | float | None = None,
        silent_fail: bool = False,
        never_fail: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.poke_interval = _coerce_seconds(poke_interval, "poke_interval").total_seconds()
        self.soft_fail = soft_fail
        if timeout is None:
            timeout = DEFAULT_SENSOR_TIMEOUT
        self.timeout: int | float = _coerce_seconds(timeout, "timeout").total_seconds()
        self.mode = mode
        self.exponential_backoff = exponential_backoff
        self.max_wait = None if max_wait is None else _coerce_seconds(max_wait, "max_wait")
        if soft_fail is True and never_fail is True:
            raise ValueError("soft_fail and never_fail are mutually exclusive, you can not provide both.")
        self.silent_fail = silent_fail
        self.never_fail = never_fail
        self._validate_input_values()

    def _validate_input_values(self) -> None:
        if not isinstance(self.poke_interval, (int, float)) or self.poke_interval < 0:
            raise ValueError("The poke_interval must be a non-negative number")
        if not isinstance(self.timeout, (int, float)) or self.timeout < 0:
            raise ValueError("The timeout must be a non-negative number")
        if self.mode not in self.valid_modes:
            # Airflow's message, quirks included, so error text matches what authors search for.
            raise ValueError(
                f"The mode must be one of {self.valid_modes},'{self.dag.dag_id if self.has_dag() else ''} "
                f".{self.task_id}'; received '{self.mode}'."
            )

    @property
    def reschedule(self) -> bool:
        return self.mode == "reschedule"

    def poke(self, context: Any) -> bool | PokeReturnValue:
        raise NotImplementedError(f"{type(self).__name__} must implement poke()")

    def execute(self, context: Any) -> Any:
        """Poke until done or ``timeout`` (Airflow's poke mode), in the worker.

        Reschedule mode and deferral are scheduler features that are not wired yet; such sensors wait here, in
        poke mode, which gives the same outcome while holding the worker. A timeout is ``AirflowSensorTimeout``
        (failed, no retry) unless ``soft_fail`` / ``never_fail`` turn it into a skip, as in Airflow.
        """
        import time

        from updraft.sdk.exceptions import (
            AirflowFailException,
            AirflowSensorTimeout,
            AirflowSkipException,
            AirflowTaskTimeout,
        )

        started = time.monotonic()
        while True:
            try:
                result = self.poke(context)
            except (AirflowSensorTimeout, AirflowTaskTimeout, AirflowFailException) as exc:
                if self.soft_fail:
                    raise AirflowSkipException("Skipping due to soft_fail is set to True.") from exc
                if self.never_fail:
                    raise AirflowSkipException("Skipping due to never_fail is set to True.") from exc
                raise
            except AirflowSkipException:
                raise
            except Exception as exc:
                if self.never_fail:
                    raise AirflowSkipException("Skipping due to never_fail is set to True.") from exc
                if not self.silent_fail:
                    raise
                self.log.error("Sensor poke failed (silent_fail): %s", exc)
                result = False
            if result:
                self.log.info("Success criteria met. Exiting.")
                return result.xcom_value if isinstance(result, PokeReturnValue) else None
            duration = time.monotonic() - started
            if duration > self.timeout:
                message = (f"Sensor has timed out; run duration of {duration} seconds exceeds the specified "
                           f"timeout of {self.timeout}.")
                if self.soft_fail or self.never_fail:
                    raise AirflowSkipException(message)
                raise AirflowSensorTimeout(message)
            time.sleep(min(self.poke_interval, max(self.timeout - duration, 0) + 0.001))


def poke_mode_only(cls: type) -> type:
    """Class decorator for sensors that are only safe in poke mode: any other ``mode`` is rejected."""

    def mode_getter(_: Any) -> str:
        return "poke"

    def mode_setter(_: Any, value: str) -> None:
        if value != "poke":
            raise ValueError(f"Cannot set mode to '{value}'. Only 'poke' is acceptable")

    if not isinstance(cls, type) or not issubclass(cls, BaseSensorOperator):
        raise ValueError(
            f"poke_mode_only decorator should only be applied to subclasses of BaseSensorOperator, got:{cls}."
        )
    # Airflow's mechanism: a property on the class shadows the instance attribute ``mode``, which the checker
    # knows as a plain str.
    cls.mode = property(mode_getter, mode_setter)  # type: ignore[assignment]
    return cls
