"""Task retry policies (Airflow 3.3's ``airflow.sdk.definitions.retry_policy``, plus the common-compat provider's
``ChainRetryPolicy``): ``retry_policy=`` on a task decides, from the exception, whether a failed try is retried.

The policy runs in the worker, with the exception in hand; the scheduler only sees its outcome. ``FAIL`` fails at
once whatever retries are left; ``RETRY`` retries (still within ``retries``), optionally after its own delay;
``DEFAULT`` leaves the task's ``retries``/``retry_delay`` in charge. ``AirflowFailException`` and a sensor timeout
fail without asking the policy, and a policy that raises is logged and ignored, as in Airflow.
"""

from __future__ import annotations

import abc
import importlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import Enum
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["ChainRetryPolicy", "ExceptionRetryPolicy", "RetryAction", "RetryDecision", "RetryPolicy", "RetryRule"]


class RetryAction(Enum):
    """What should happen after a failure."""

    RETRY = "retry"
    FAIL = "fail"
    DEFAULT = "default"


@dataclass(frozen=True)
class RetryDecision:
    """The result of evaluating a :class:`RetryPolicy`."""

    action: RetryAction = RetryAction.DEFAULT
    retry_delay: timedelta | None = None  # this retry's delay; None: the task's own
    reason: str | None = None

    @classmethod
    def fail(cls, reason: str | None = None) -> RetryDecision:
        return cls(action=RetryAction.FAIL, reason=reason)

    @classmethod
    def retry(cls, delay: timedelta | None = None, reason: str | None = None) -> RetryDecision:
        return cls(action=RetryAction.RETRY, retry_delay=delay, reason=reason)

    @classmethod
    def default(cls) -> RetryDecision:
        return cls(action=RetryAction.DEFAULT)


class RetryPolicy(abc.ABC):
    """Base class: ``evaluate`` runs in the worker when a try fails."""

    @abc.abstractmethod
    def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                 context: Any = None) -> RetryDecision:
        """Decide whether and how to retry given the failure (``try_number`` is 1-based)."""

    def serialize(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement serialize()")

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RetryPolicy:
        raise NotImplementedError


ExceptionSpec = type[BaseException] | str


def _import_string(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@dataclass
class RetryRule:
    """One exception (class, dotted path, or a list of either) mapped to an action."""

    exception: ExceptionSpec | list[ExceptionSpec]
    action: RetryAction = RetryAction.RETRY
    retry_delay: timedelta | None = None
    reason: str | None = None
    match_subclasses: bool = True
    _resolved_classes: list[type[BaseException]] | None = field(default=None, init=False, repr=False,
                                                               compare=False)

    def __post_init__(self) -> None:
        for spec in self._specs:
            if isinstance(spec, str):
                if not spec or "." not in spec:
                    raise ValueError("RetryRule exception string must be a dotted import path "
                                     f"(e.g. 'builtins.ValueError'), got {spec!r}")
                try:
                    _import_string(spec)
                except (ImportError, AttributeError):
                    log.warning("RetryRule: exception class %r could not be imported at parse time. It may "
                                "resolve on the worker, but check for typos.", spec)

    @property
    def _specs(self) -> list[ExceptionSpec]:
        return self.exception if isinstance(self.exception, list) else [self.exception]

    @property
    def exception_path(self) -> str:
        return ",".join(s if isinstance(s, str) else f"{s.__module__}.{s.__qualname__}" for s in self._specs)

    def matches(self, exc: BaseException) -> bool:
        resolved = self._resolve_exception_classes()
        if not resolved:
            return False
        if self.match_subclasses:
            return isinstance(exc, tuple(resolved))
        return type(exc) in resolved

    def _resolve_exception_classes(self) -> list[type[BaseException]]:
        if self._resolved_classes is None:
            resolved: list[type[BaseException]] = []
            for spec in self._specs:
                if isinstance(spec, type):
                    resolved.append(spec)
                    continue
                try:
                    resolved.append(_import_string(spec))
                except (ImportError, AttributeError):
                    log.warning("Could not import exception class %r, it will not match", spec)
            self._resolved_classes = resolved
        return self._resolved_classes

    def serialize(self) -> dict[str, Any]:
        paths = self.exception_path.split(",")
        result: dict[str, Any] = {"exception": paths if len(paths) > 1 else paths[0], "action": self.action.value,
                                  "match_subclasses": self.match_subclasses}
        if self.retry_delay is not None:
            result["retry_delay"] = self.retry_delay.total_seconds()
        if self.reason is not None:
            result["reason"] = self.reason
        return result

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RetryRule:
        return cls(exception=data["exception"], action=RetryAction(data["action"]),
                   retry_delay=timedelta(seconds=data["retry_delay"]) if "retry_delay" in data else None,
                   reason=data.get("reason"), match_subclasses=data.get("match_subclasses", True))


class ExceptionRetryPolicy(RetryPolicy):
    """Rules in order; the first that matches decides, else ``default``."""

    def __init__(self, rules: list[RetryRule], default: RetryAction = RetryAction.DEFAULT) -> None:
        self.rules = rules
        self.default = default

    def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                 context: Any = None) -> RetryDecision:
        for rule in self.rules:
            if rule.matches(exception):
                return RetryDecision(action=rule.action, retry_delay=rule.retry_delay,
                                     reason=rule.reason or f"Matched rule for {type(exception).__name__}")
        return RetryDecision(action=self.default)

    def serialize(self) -> dict[str, Any]:
        return {"__type": "ExceptionRetryPolicy", "rules": [r.serialize() for r in self.rules],
                "default": self.default.value}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> ExceptionRetryPolicy:
        return cls(rules=[RetryRule.deserialize(r) for r in data["rules"]],
                   default=RetryAction(data.get("default", "default")))


class ChainRetryPolicy(RetryPolicy):
    """Policies in order; the first decision other than DEFAULT wins (common-compat's backport for 3.3)."""

    def __init__(self, policies: Sequence[RetryPolicy]) -> None:
        if isinstance(policies, RetryPolicy):
            raise TypeError("ChainRetryPolicy takes a sequence of policies; wrap the single policy in a list.")
        policies = list(policies)
        if not policies:
            raise ValueError("ChainRetryPolicy needs at least one policy.")
        for position, policy in enumerate(policies):
            if not isinstance(policy, RetryPolicy):
                raise TypeError(f"ChainRetryPolicy policies[{position}] must be a RetryPolicy, got "
                                f"{type(policy).__name__}.")
        self.policies = policies

    def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                 context: Any = None) -> RetryDecision:
        trail: list[str] = []
        for policy in self.policies:
            name = type(policy).__name__
            try:
                decision = policy.evaluate(exception=exception, try_number=try_number, max_tries=max_tries,
                                           context=context)
            except Exception as exc:
                log.exception("%s raised while evaluating the retry policy; treated as no decision", name)
                trail.append(f"{name}: raised {type(exc).__name__}")
                continue
            if not isinstance(decision, RetryDecision):
                log.error("%s returned %r instead of a RetryDecision; treated as no decision", name, decision)
                trail.append(f"{name}: invalid decision")
                continue
            if decision.action is RetryAction.DEFAULT:
                trail.append(f"{name}: {decision.reason or 'no decision'}")
                continue
            reason = f"{name}: {decision.reason or decision.action.value}"
            if trail:
                reason = f"{reason} (after {'; '.join(trail)})"
            return replace(decision, reason=reason)
        return RetryDecision(action=RetryAction.DEFAULT, reason=f"no policy decided ({'; '.join(trail)})")


def evaluate_retry_policy(task: Any, exception: BaseException, try_number: int,
                          context: Any = None) -> RetryDecision | None:
    """The task's policy's decision for this failure; None without a policy, or when it raised (logged), as
    Airflow's ``_evaluate_retry_policy`` falls back to the standard retry logic."""
    policy = getattr(task, "retry_policy", None)
    if policy is None:
        return None
    try:
        decision = policy.evaluate(exception=exception, try_number=try_number,
                                   max_tries=getattr(task, "retries", 0) or 0, context=context)
    except Exception:
        logging.getLogger("airflow.task").exception("Retry policy evaluation failed, falling back to default "
                                                    "behaviour")
        return None
    if decision.reason:
        logging.getLogger("airflow.task").info("Retry policy decision: %s (%s)", decision.action.value,
                                               decision.reason)
    return decision
