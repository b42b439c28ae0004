"""Airflow's exception hierarchy, so DAG files and task code catch and raise the names they already know."""

from __future__ import annotations


class AirflowException(Exception):
    """Base class of every error Updraft raises about a DAG or a task."""

    status_code = 500


class AirflowBadRequest(AirflowException):
    status_code = 400


class DagRunAlreadyExists(AirflowBadRequest):
    """A run with that id already exists for the DAG (Airflow's ``airflow.exceptions.DagRunAlreadyExists``)."""

    status_code = 409


class AirflowNotFoundException(AirflowException):
    status_code = 404


class AirflowConfigException(AirflowException):
    pass


class AirflowSensorTimeout(AirflowException):
    """A sensor ran past its ``timeout``; the task fails without retrying, as in Airflow."""


class AirflowRescheduleException(AirflowException):
    """Raised by a sensor in ``reschedule`` mode to give up its slot until ``reschedule_date``."""

    def __init__(self, reschedule_date):
        super().__init__()
        self.reschedule_date = reschedule_date


class AirflowTaskTimeout(AirflowException):
    """The task ran past its ``execution_timeout``."""


class AirflowTaskTerminated(AirflowException):
    pass


class AirflowWebServerTimeout(AirflowException):
    pass


class AirflowSkipException(AirflowException):
    """Task code raises this to end as ``skipped`` instead of ``success``."""


class AirflowFailException(AirflowException):
    """Task code raises this to fail at once, without using the remaining retries."""


class AirflowOptionalProviderFeatureException(AirflowException):
    pass


class AirflowDagCycleException(AirflowException):
    """The task graph has a cycle; the message names it."""


class AirflowDagDuplicatedIdException(AirflowException):
    """A dag_id is defined in two files; the later file's DAG is ignored."""

    def __init__(self, dag_id: str, incoming: str, existing: str) -> None:
        super().__init__(dag_id, incoming, existing)
        self.dag_id = dag_id
        self.incoming = incoming
        self.existing = existing

    def __str__(self) -> str:
        return f"Ignoring DAG {self.dag_id} from {self.incoming} - also found in {self.existing}"


class AirflowDagInconsistent(AirflowException):
    """The DAG's definition contradicts itself (for example a mapped task with an invalid expansion)."""


class FailFastDagInvalidTriggerRule(AirflowException):
    """A ``fail_fast`` DAG has a task whose trigger rule would run after a failure."""

    def __str__(self) -> str:
        return "A 'fail_fast' dag can only have all_success trigger rule"


class AirflowClusterPolicyViolation(AirflowException):
    pass


class AirflowTimetableInvalid(AirflowException):
    """A timetable's arguments are invalid (for example a malformed cron expression)."""


class DuplicateTaskIdFound(AirflowException):
    """Two tasks of one DAG have the same task_id."""


class TaskAlreadyInTaskGroup(AirflowException):
    pass


class TaskNotFound(AirflowNotFoundException):
    pass


class DagNotFound(AirflowNotFoundException):
    pass


class DagRunNotFound(AirflowNotFoundException):
    pass


class ParamValidationError(AirflowException):
    """A param's value does not match its JSON schema."""


class UnmappableXComTypePushed(AirflowException):
    pass


class XComNotFound(AirflowException):
    pass


class TaskDeferred(BaseException):
    """Raised by a deferrable operator to hand its wait to a trigger and give up its slot.

    It derives from BaseException, as in Airflow, so generic ``except Exception`` in task code does not swallow it.
    """

    def __init__(self, *, trigger, method_name: str | None, kwargs: dict | None = None, timeout=None) -> None:
        super().__init__()
        self.trigger = trigger
        self.method_name = method_name
        self.kwargs = kwargs
        self.timeout = timeout


class TaskDeferralError(AirflowException):
    pass


class TaskDeferralTimeout(AirflowException):
    """A deferred task's trigger did not fire within the deferral's ``timeout`` (the try fails, and retries as
    any failure does)."""


class UnsupportedFeatureError(AirflowException, ImportError):
    """A DAG file used an Airflow feature Updraft does not implement.

    It is an ImportError so the parser reports the file as an import error naming the feature, instead of
    building a DAG that silently behaves differently from Airflow.
    """

    def __init__(self, feature: str, hint: str = "") -> None:
        msg = f"Updraft does not support {feature}"
        if hint:
            msg += f": {hint}"
        super().__init__(msg)
        self.feature = feature


class AirflowProviderDeprecationWarning(DeprecationWarning):
    """Issued by provider packages for their deprecated features (Airflow's class: providers import it)."""

    deprecated_provider_since: str | None = None


class RemovedInAirflow4Warning(DeprecationWarning):
    """Issued for deprecated features that Airflow 4 removes."""

    deprecated_since: str | None = None


class AirflowSecretsBackendAccessDenied(PermissionError):
    """An authoritative deny from a secrets backend: the lookup must not fall through to the next backend."""



class TaskInstanceNotFound(AirflowNotFoundException):
    """The task instance asked for does not exist."""


class PoolNotFound(AirflowNotFoundException):
    """The pool asked for does not exist."""


class SerializationError(AirflowException):
    """A value could not be serialized."""


class DeserializationError(Exception):
    """A DAG could not be deserialized (raised chained to the original error)."""

    def __init__(self, dag_id: str | None = None, message: str | None = None) -> None:
        self.dag_id = dag_id
        if message:
            super().__init__(message)
        elif dag_id is None:
            super().__init__("Missing Dag ID in serialized Dag")
        else:
            super().__init__(f"An unexpected error occurred while trying to deserialize Dag '{dag_id}'")


class UnsupportedModuleError(UnsupportedFeatureError, ModuleNotFoundError):
    """A module of a provider that is not installed: also a ModuleNotFoundError, so provider code that probes an
    optional provider with ``except ModuleNotFoundError`` takes its fallback as under Airflow."""
