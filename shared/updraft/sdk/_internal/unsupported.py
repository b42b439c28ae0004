"""Turn every Airflow import Updraft cannot honour into an ImportError that names the feature.

A DAG file that imports something Updraft lacks must fail to parse with a message saying what is missing and
what to do instead; a half-working substitute would build a DAG that silently behaves differently. Two holes
are covered:

* modules: ``UnsupportedModuleFinder`` sits at the end of ``sys.meta_path`` and answers any ``airflow.*``
  module the shim package does not contain, so it never shadows a real shim module or anything outside
  ``airflow``;
* names: shim modules route unknown attributes through ``module_getattr``, which raises for names Airflow
  has there but Updraft does not (``from airflow.sdk import conf``) and gives a plain AttributeError
  otherwise, so ``hasattr`` and ``from pkg import submodule`` keep working.

This module is imported by ``import airflow`` and must stay stdlib-only and cheap.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader
    from types import FrameType

_FARGATE = ('run the task in its own container on Fargate instead: set executor="fargate" '
            '(and executor_config={"cpu": ..., "memory": ...}) on the task')
_NO_METADATA_DB = ("Updraft has no metadata database that DAG files can query; read run state through the "
                   "task context (get_current_context) or the REST API")
# Provider namespaces whose distribution name has two parts (airflow.providers.common.sql: common-sql).
_TWO_PART_PROVIDERS = frozenset({"apache", "common", "microsoft", "cncf", "dbt", "atlassian"})
_NOT_YET = "not implemented in Updraft yet"
_NO_SMTP = ("Updraft has no SMTP backend; email goes through Amazon SES from the environment's sender: call "
            "airflow.utils.email.send_email, or set email/email_on_failure on the task")
_AIRFLOW1 = "this Airflow 1 module path was removed; import from {} instead"

# Module prefixes with a specific hint; the longest matching prefix wins. Anything else under ``airflow.``
# that the shim lacks gets the generic "module not available" message.
MODULE_HINTS: dict[str, str] = {
    "airflow.operators.subdag": "SubDAGs were removed in Airflow 3; group the tasks with a TaskGroup",
    "airflow.providers.cncf.kubernetes": f"Updraft has no Kubernetes cluster; {_FARGATE}",
    "airflow.providers.docker": f"Updraft runs no Docker daemon; {_FARGATE}",
    "airflow.providers.celery": 'Updraft has no Celery workers; choose executor="lambda" or "fargate" per task',
    "airflow.executors": 'Updraft chooses per task between executor="lambda" and executor="fargate"',
    "airflow.operators.email": ("EmailOperator moved to the SMTP provider in Airflow 3: add "
                                "apache-airflow-providers-smtp to the environment's requirements (README: "
                                "Providers), or " + _NO_SMTP + " from a @task"),
    "airflow.providers.standard": f"this operator or sensor of the standard provider is {_NOT_YET}",
    "airflow.providers.smtp": ("add apache-airflow-providers-smtp to the environment's requirements (README: "
                               "Providers), or " + _NO_SMTP + " from a @task"),
    "airflow.providers.amazon.aws.triggers": (
        "add apache-airflow-providers-amazon to the environment's requirements (README: Providers); an AssetWatcher "
        "on SQS needs no provider: MessageQueueTrigger(scheme='sqs', sqs_queue=...) from "
        "airflow.providers.common.messaging.triggers.msg_queue"),
    "airflow.utils.weekday": "removed in Airflow 3; import WeekDay from airflow.providers.standard.utils.weekday",
    "airflow.sdk.definitions.deadline": f"deadline alerts are {_NOT_YET}",
    "airflow.triggers": ("of airflow.triggers only base (BaseTrigger, TriggerEvent) and temporal (DateTimeTrigger, "
                         "TimeDeltaTrigger) are available; deferrable waits run on Step Functions"),
    "airflow.providers.standard.triggers": ("of the standard provider's triggers only temporal (DateTimeTrigger, "
                                            "TimeDeltaTrigger), external_task (DagStateTrigger, "
                                            "WorkflowTrigger), file (FileTrigger, FileDeleteTrigger, "
                                            "DirectoryFileDeleteTrigger) and hitl (HITLTrigger) are available"),
    "airflow.timetables.datasets": "removed in Airflow 3; import AssetOrTimeSchedule from airflow.timetables.assets",
    "airflow.models.dagbag": _NO_METADATA_DB,
    "airflow.models.pool": _NO_METADATA_DB,
    "airflow.models.serialized_dag": _NO_METADATA_DB,
    "airflow.settings": _NO_METADATA_DB,
    "airflow.utils.session": _NO_METADATA_DB,
    "airflow.utils.db": _NO_METADATA_DB,
    "airflow.macros": f"importing macros is {_NOT_YET}",
    # Airflow calls listeners inside its scheduler (DAG run events), API server and workers (task instance events):
    # Updraft's scheduler and API run no user code, so only some events could ever reach a listener, silently.
    "airflow.listeners": ("listeners are not supported: Airflow calls them inside its scheduler and API server "
                          "(DAG run and task state changes), where Updraft runs no user code; use on_*_callback "
                          "on the DAG or task (run in a worker) instead"),
    # Airflow's examples import their helpers from Airflow's own package (airflow/example_dags/plugins/); Updraft
    # maps airflow.example_dags to the DAGs folder (updraft.sdk._internal.bundle_root), so this is a helper missing.
    "airflow.example_dags": ("airflow.example_dags is your DAGs folder in Updraft: put the example's plugins folder "
                             "(plugins/workday.py, ...) in the DAGs folder beside the example file, as Airflow's "
                             "example layout has it"),
    "airflow.contrib": "Airflow 1 contrib modules were removed; most moved to provider packages",
    "airflow.operators.python_operator": _AIRFLOW1.format("airflow.operators.python"),
    "airflow.operators.bash_operator": _AIRFLOW1.format("airflow.operators.bash"),
    "airflow.operators.dummy_operator": _AIRFLOW1.format("airflow.operators.empty"),
    "airflow.sensors.base_sensor_operator": _AIRFLOW1.format("airflow.sensors.base"),
    "airflow.sensors.time_delta_sensor": _AIRFLOW1.format("airflow.sensors.time_delta"),
}

_S3_ONLY_KEY = ("of the Amazon provider's S3 sensors and triggers only S3KeySensor/S3KeyTrigger are available; "
                "call boto3 from a @task for the others")
_MODELS_NAMES = {name: _NO_METADATA_DB for name in (
    "DagBag", "DagModel", "DagTag", "DagWarning", "Pool", "XCom", "Log",
    "Trigger", "TaskFail", "SlaMiss", "ImportError", "DbCallbackRequest", "Deadline",
)}
_SDK_NAMES = {
    "DeadlineAlert": MODULE_HINTS["airflow.sdk.definitions.deadline"],
    "DeadlineReference": MODULE_HINTS["airflow.sdk.definitions.deadline"],
    "AsyncCallback": MODULE_HINTS["airflow.sdk.definitions.deadline"],
    "SyncCallback": MODULE_HINTS["airflow.sdk.definitions.deadline"],
    "BaseXCom": "custom XCom backends are not supported; XComs are stored by Updraft",
    "ResumableJobMixin": f"resumable jobs are {_NOT_YET}",
    "TaskInstance": _NO_METADATA_DB,
    "macros": MODULE_HINTS["airflow.macros"],
    "lineage": "lineage is not supported",
    "SecretCache": "the secrets cache is internal to Airflow",
    "literal": f"literal() template values are {_NOT_YET}",
}

# What airflow.providers.common.compat.sdk exports that Updraft lacks (the rest it re-exports). Only Updraft's
# built-in stand-in of that module uses these: an installed common-compat provider resolves its names itself.
_COMPAT_SDK_NAMES = {
    **{name: _SDK_NAMES[name] for name in ("literal", "ResumableJobMixin")},
    "io": "the io module is not re-exported here; import airflow.sdk.io (attach, ObjectStoragePath) directly",
    **{name: MODULE_HINTS["airflow.listeners"] for name in ("hookimpl", "get_listener_manager")},
    "timeout": f"the timeout context manager is {_NOT_YET}; set execution_timeout on the task",
    "DecoratedMappedOperator": f"mapping a provider's decorated operator is {_NOT_YET}",
    **{name: f"the AIRFLOW_CTX_* environment helpers are {_NOT_YET}" for name in (
        "AIRFLOW_VAR_NAME_FORMAT_MAPPING", "context_to_airflow_vars",
    )},
    "DagRunTriggerException": ("Updraft's TriggerDagRunOperator creates the run itself and never raises "
                               "DagRunTriggerException; subclass TriggerDagRunOperator or use it as it is"),
    "DownstreamTasksSkipped": f"raising DownstreamTasksSkipped is {_NOT_YET}; use @task.branch or @task.short_circuit",
}

# Names Airflow defines in a module the shim does provide, but which Updraft does not support.
NAME_HINTS: dict[str, dict[str, str]] = {
    "airflow.sdk": _SDK_NAMES,
    "airflow.models": _MODELS_NAMES,
    "airflow.providers.common.compat.sdk": _COMPAT_SDK_NAMES,
    "airflow.providers.amazon.aws.sensors.s3": {"S3KeysUnchangedSensor": _S3_ONLY_KEY},
    "airflow.providers.amazon.aws.triggers.s3": {"S3KeysUnchangedTrigger": _S3_ONLY_KEY},
    "airflow.utils.email": {name: _NO_SMTP for name in ("send_email_smtp", "send_mime_email")},
    "airflow.utils.dates": {
        "date_range": "removed in Airflow 3; compute dates with the DAG's timetable or pendulum",
        "round_time": "removed in Airflow 3; compute dates with the DAG's timetable or pendulum",
    },
}

GENERIC_MODULE_HINT = "module not available in Updraft"


def provider_distribution(fullname: str) -> str | None:
    """``apache-airflow-providers-<name>`` for a module under ``airflow.providers.<name>`` (None otherwise)."""
    parts = fullname.split(".")
    if len(parts) < 3 or parts[:2] != ["airflow", "providers"]:
        return None
    name = parts[2:4] if parts[2] in _TWO_PART_PROVIDERS and len(parts) > 3 else parts[2:3]
    return "apache-airflow-providers-" + "-".join(name).replace("_", "-")


def module_hint(fullname: str) -> str:
    """The most specific hint for a missing ``airflow.*`` module: a provider that is not installed is named with
    how to add it."""
    parts = fullname.split(".")
    for end in range(len(parts), 0, -1):
        hint = MODULE_HINTS.get(".".join(parts[:end]))
        if hint:
            return hint
    distribution = provider_distribution(fullname)
    if distribution is not None:
        return f"add {distribution} to the environment's requirements (README: Providers)"
    return GENERIC_MODULE_HINT


def unsupported_module_error(fullname: str) -> ImportError:
    """The error for a missing module: below ``airflow.providers`` also a ModuleNotFoundError (a provider that is not
    installed is a missing module to the code probing for it, as under Airflow)."""
    # lazy: `import updraft.sdk` loads this module; the error classes wait for the first refusal
    from updraft.sdk.exceptions import UnsupportedFeatureError, UnsupportedModuleError

    kind = UnsupportedModuleError if provider_distribution(fullname) else UnsupportedFeatureError
    err = kind(fullname, module_hint(fullname))
    err.name = fullname
    return err


def unsupported_name_error(module: str, name: str) -> ImportError | None:
    """The error for ``from module import name`` when Airflow has ``name`` there and Updraft does not."""
    hint = NAME_HINTS.get(module, {}).get(name)
    if hint is None:
        return None
    # lazy: `import updraft.sdk` loads this module; the error classes wait for the first refusal
    from updraft.sdk.exceptions import UnsupportedFeatureError

    err = UnsupportedFeatureError(f"{module}.{name}", hint)
    err.name = module
    return err


def _requested_name(fullname: str) -> str:
    """The full dotted name the import statement asked for, when ``fullname`` is only its first missing parent.

    ``import airflow.providers.amazon.aws.operators.s3`` fails on ``airflow.providers.amazon``; naming the module
    the author wrote makes the error match their line. The import machinery keeps the requested name in the
    outermost ``_find_and_load`` frame; if that ever changes, the parent's name is still a correct answer.
    """
    best = fullname
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_find_and_load" and code.co_filename.startswith("<frozen importlib"):
            name = frame.f_locals.get("name")
            if isinstance(name, str) and name.startswith(fullname + ".") and len(name) > len(best):
                best = name
        frame = frame.f_back
    return best


def _forget_empty_partial_parents(fullname: str) -> None:
    """A provider Updraft has only part of (``PARTIAL_PROVIDER`` in its package, as the Amazon one): an import of a
    module it lacks fails as if the provider were absent, so the packages that import pulled in are forgotten
    again unless a module Updraft does provide below them is loaded."""
    parts = fullname.split(".")
    for end in range(len(parts) - 1, 2, -1):
        name = ".".join(parts[:end])
        module = sys.modules.get(name)
        if module is None or not getattr(module, "PARTIAL_PROVIDER", False):
            continue
        if any(other.startswith(name + ".") for other in sys.modules):
            return  # something below is in use: its parents stay
        del sys.modules[name]
        parent = sys.modules.get(name.rpartition(".")[0])
        if parent is not None and getattr(parent, parts[end - 1], None) is module:
            delattr(parent, parts[end - 1])


def _in_installed_provider(fullname: str) -> bool:
    """Whether ``fullname`` lies below a provider package installed from a wheel: a module such a provider lacks is
    a plain ModuleNotFoundError, as under Airflow (Updraft has nothing to say about it)."""
    distribution = provider_distribution(fullname)
    if distribution is None:
        return False
    depth = 4 if fullname.split(".")[2] in _TWO_PART_PROVIDERS else 3
    top = sys.modules.get(".".join(fullname.split(".")[:depth]))
    return (top is not None and top.__name__ != fullname and not getattr(top, "PARTIAL_PROVIDER", False)
            and not any(p.startswith(_UPDRAFT_PROVIDERS) for p in getattr(top, "__path__", [])))


_UPDRAFT_PROVIDERS = __file__.rsplit("/sdk/", 1)[0] + "/airflow_providers/"


class _UnsupportedLoader:
    # Plain classes, not importlib.abc subclasses: importlib.abc pulls in importlib.resources (~8 ms).

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        _forget_empty_partial_parents(spec.name)
        raise unsupported_module_error(_requested_name(spec.name))

    def exec_module(self, module: Any) -> None:  # pragma: no cover - create_module always raises
        raise unsupported_module_error(module.__name__)


class UnsupportedModuleFinder:
    """Last on ``sys.meta_path``: only asked about modules no other finder could locate."""

    _loader = _UnsupportedLoader()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("airflow.") or _in_installed_provider(fullname):
            return None
        # The import system needs only the two methods the plain loader has; typeshed asks for the ABC.
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self._loader))


def install_finder() -> None:
    """Append the finder once (idempotent, so reloading ``airflow`` does not stack copies)."""
    if not any(isinstance(f, UnsupportedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(UnsupportedModuleFinder())


def module_getattr(module: str, namespace: dict[str, Any], lazy: dict[str, str] | None = None):
    """Build a shim module's ``__getattr__``: lazy re-exports first, then unsupported names, then AttributeError.

    ``lazy`` maps a public name to ``"package.module"`` (same attribute name) or ``"package.module:attr"``.
    The value is cached in the module namespace so each name is resolved once, as Airflow's own lazy
    ``airflow.sdk`` does.
    """
    targets = dict(lazy or {})

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is not None:
            mod_name, _, attr = target.partition(":")
            value = getattr(importlib.import_module(mod_name), attr or name)
            namespace[name] = value
            return value
        err = unsupported_name_error(module, name)
        if err is not None:
            raise err
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def module_dir(namespace: dict[str, Any], lazy: dict[str, str] | None = None):
    """Build a shim module's ``__dir__`` so editors and ``dir()`` list the lazy names too."""

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(lazy or {}))

    return __dir__
