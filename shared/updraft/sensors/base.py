"""BaseSensorOperator: Airflow 3's sensor arguments, coerced and validated at parse time as Airflow does.

Sensors are the tasks whose scheduling differs most (poke vs reschedule, deferrable waits on Step Functions),
so every argument the scheduler acts on is normalised here and listed in ``extra_serialized_fields``: the
scheduler reads them from the serialized DAG and never imports the DAG file.
"""

from __future__ import annotations

import datetime
import hashlib
import time
import traceback
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, ClassVar

from updraft.sdk import timezone
from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.exceptions import (
    AirflowFailException,
    AirflowRescheduleException,
    AirflowSensorTimeout,
    AirflowSkipException,
    AirflowTaskTimeout,
)

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

    ``mode="reschedule"`` frees the worker and the slot between pokes (the scheduler claims the same try again
    at the reschedule date); a sensor with ``deferrable=True`` hands the wait to a trigger.
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
        """Airflow's poke loop. In poke mode the worker sleeps between pokes; in reschedule mode a poke that is not
        done ends the try with ``AirflowRescheduleException`` (``up_for_reschedule``: worker and slots freed, the
        scheduler claims it again at ``reschedule_date``), and ``timeout`` counts from the try's first poke.

        A timeout is ``AirflowSensorTimeout`` (failed, no retry) unless ``soft_fail`` makes it a skip; an exception
        of the poke fails the try, is logged and counts as not done (``silent_fail``) or is a skip
        (``never_fail``), as in Airflow.
        """
        started_at: datetime.datetime | float
        run_duration: Callable[[], float]
        if self.reschedule:
            # The try's first poke started when the try did (the scheduler records that start as the first
            # reschedule's); as one pendulum value, so the backoff's hash of it is the same at every poke.
            ti = context["ti"]
            first = ti.get_first_reschedule_date(context) or getattr(ti, "start_date", None)
            start_date = timezone.convert_to_utc(first) if first is not None else timezone.utcnow()
            started_at = start_date

            def run_duration() -> float:  # pokes are separate processes: wall time from the first one
                return (timezone.utcnow() - start_date).total_seconds()
        else:
            started_at = start_monotonic = time.monotonic()

            def run_duration() -> float:
                return time.monotonic() - start_monotonic

        poke_count = 1
        xcom_value = None
        while True:
            poke_return = self._poke_once(context)
            if poke_return:
                if isinstance(poke_return, PokeReturnValue):
                    xcom_value = poke_return.xcom_value
                break
            if run_duration() > self.timeout:
                message = (f"Sensor has timed out; run duration of {run_duration()} seconds exceeds the specified "
                           f"timeout of {self.timeout}.")
                if self.soft_fail:
                    raise AirflowSkipException(message)
                raise AirflowSensorTimeout(message)
            interval = self._get_next_poke_interval(started_at, run_duration, poke_count)
            if self.reschedule:
                raise AirflowRescheduleException(timezone.utcnow() + timedelta(seconds=interval))
            time.sleep(interval)
            poke_count += 1
        self.log.info("Success criteria met. Exiting.")
        return xcom_value

    def _poke_once(self, context: Any) -> bool | PokeReturnValue:
        """One poke, its exceptions turned into Airflow's outcomes (see ``execute``)."""
        try:
            return self.poke(context)
        except (AirflowSensorTimeout, AirflowTaskTimeout, AirflowFailException) as exc:
            if self.soft_fail:
                raise AirflowSkipException("Skipping due to soft_fail is set to True.") from exc
            if self.never_fail:
                raise AirflowSkipException("Skipping due to never_fail is set to True.") from exc
            raise
        except AirflowSkipException:
            raise
        except Exception as exc:
            if self.silent_fail:
                self.log.error("Sensor poke failed: \n %s", traceback.format_exc())
                return False
            if self.never_fail:
                raise AirflowSkipException("Skipping due to never_fail is set to True.") from exc
            raise

    def _get_next_poke_interval(self, started_at: datetime.datetime | float, run_duration: Callable[[], float],
                                poke_count: int) -> float:
        """Airflow's interval: ``poke_interval``, or with ``exponential_backoff`` a doubling interval with a jitter
        hashed from the DAG, task, start and poke number (so a reschedule-mode sensor, which restarts for every
        poke, finds its poke number again from the time elapsed), capped by what is left of ``timeout`` and by
        ``max_wait``."""
        if not self.exponential_backoff:
            return self.poke_interval
        if self.reschedule:
            elapsed_time = run_duration()
            cumulative_time = 0.0
            estimated_poke_count = 0
            while cumulative_time <= elapsed_time:
                estimated_poke_count += 1
                cumulative_time += self._backoff(started_at, estimated_poke_count)
            poke_count = estimated_poke_count or poke_count
        new_interval = min(self.timeout - int(run_duration()), self._backoff(started_at, poke_count))
        if self.max_wait:
            new_interval = min(self.max_wait.total_seconds(), new_interval)
        self.log.info("new %s interval is %s", self.mode, new_interval)
        return new_interval

    def _backoff(self, started_at: datetime.datetime | float, poke_count: int) -> float:
        min_backoff = max(int(self.poke_interval * (2 ** (poke_count - 2))), 1)
        run_hash = int(hashlib.sha1(f"{self.dag_id}#{self.task_id}#{started_at}#{poke_count}".encode(),
                                    usedforsecurity=False).hexdigest(), 16)
        modded_hash = min_backoff + run_hash % min_backoff
        return min(modded_hash, timedelta.max.total_seconds() - 1)


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
