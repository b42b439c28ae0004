"""Every Airflow import path DAG files use works under a plain ``python``, cheaply, and unsupported ones fail
with an ImportError that names the feature."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from updraft.sdk.exceptions import UnsupportedFeatureError

# module -> names a DAG file imports from it
IMPORT_PATHS: dict[str, list[str]] = {
    "airflow": ["DAG", "Asset", "Dataset", "XComArg", "AirflowException", "__version__"],
    "airflow.version": ["version"],
    "airflow.sdk": [
        "DAG", "dag", "task", "task_group", "TaskGroup", "Param", "ParamsDict", "chain", "chain_linear",
        "cross_downstream", "Label", "EdgeModifier", "BaseOperator", "BaseSensorOperator", "PokeReturnValue",
        "XComArg", "get_current_context", "get_parsing_context", "Context", "Variable", "Connection", "Asset",
        "AssetAlias", "AssetAll", "AssetAny", "Metadata", "TriggerRule", "WeightRule", "timezone",
        "CronDataIntervalTimetable", "DeltaDataIntervalTimetable", "CronTriggerTimetable",
        "DeltaTriggerTimetable", "MultipleCronTriggerTimetable", "EventsTimetable", "__version__",
    ],
    "airflow.sdk.timezone": ["utc", "utcnow", "datetime", "make_aware", "make_naive", "convert_to_utc", "parse"],
    "airflow.sdk.exceptions": ["AirflowException", "AirflowSkipException", "AirflowSensorTimeout"],
    "airflow.sdk.bases.operator": ["BaseOperator", "chain", "chain_linear", "cross_downstream"],
    "airflow.sdk.bases.sensor": ["BaseSensorOperator", "PokeReturnValue", "poke_mode_only"],
    "airflow.sdk.definitions.asset": ["Asset", "AssetAlias", "AssetAll", "AssetAny", "Dataset", "Model"],
    "airflow.sdk.definitions.asset.metadata": ["Metadata"],
    "airflow.sdk.definitions.dag": ["DAG", "dag"],
    "airflow.sdk.definitions.taskgroup": ["TaskGroup"],
    "airflow.sdk.definitions.param": ["Param", "ParamsDict"],
    "airflow.sdk.definitions.xcom_arg": ["XComArg"],
    "airflow.sdk.definitions.edges": ["EdgeModifier", "Label"],
    "airflow.sdk.definitions.context": ["Context", "get_current_context", "get_parsing_context"],
    "airflow.sdk.definitions.variable": ["Variable"],
    "airflow.sdk.definitions.connection": ["Connection"],
    "airflow.sdk.definitions.baseoperator": ["BaseOperator", "chain", "cross_downstream"],
    "airflow.sdk.definitions.mappedoperator": ["MappedOperator"],
    "airflow.sdk.definitions.decorators": ["task", "task_group"],
    "airflow.sdk.definitions.decorators.task_group": ["task_group"],
    "airflow.decorators": ["dag", "task", "task_group"],
    "airflow.models": ["DAG", "BaseOperator", "MappedOperator", "Connection", "Variable", "Param", "XComArg"],
    "airflow.models.dag": ["DAG", "dag"],
    "airflow.models.baseoperator": ["BaseOperator", "chain", "chain_linear", "cross_downstream"],
    "airflow.models.param": ["Param", "ParamsDict"],
    "airflow.models.variable": ["Variable"],
    "airflow.models.connection": ["Connection"],
    "airflow.models.xcom_arg": ["XComArg"],
    "airflow.models.mappedoperator": ["MappedOperator"],
    "airflow.operators.empty": ["EmptyOperator"],
    "airflow.operators.dummy": ["DummyOperator"],
    "airflow.operators.bash": ["BashOperator"],
    "airflow.operators.python": [
        "PythonOperator", "BranchPythonOperator", "ShortCircuitOperator", "get_current_context",
    ],
    "airflow.sensors": ["BaseSensorOperator"],
    "airflow.sensors.base": ["BaseSensorOperator", "PokeReturnValue", "poke_mode_only"],
    "airflow.sensors.time_delta": ["TimeDeltaSensor", "TimeDeltaSensorAsync", "WaitSensor"],
    "airflow.sensors.date_time": ["DateTimeSensor", "DateTimeSensorAsync"],
    "airflow.sensors.python": ["PythonSensor"],
    "airflow.utils.task_group": ["TaskGroup"],
    "airflow.utils.trigger_rule": ["TriggerRule"],
    "airflow.utils.weight_rule": ["WeightRule"],
    "airflow.utils.dates": ["days_ago", "cron_presets", "parse_execution_date"],
    "airflow.utils.edgemodifier": ["EdgeModifier", "Label"],
    "airflow.utils.helpers": ["chain", "cross_downstream"],
    "airflow.utils.timezone": ["utc", "utcnow", "datetime", "make_aware", "make_naive", "convert_to_utc", "parse"],
    "airflow.utils.context": ["Context", "get_current_context"],
    "airflow.utils.dag_parsing_context": ["get_parsing_context"],
    "airflow.utils.types": ["DagRunType", "NOTSET", "ArgNotSet"],
    "airflow.exceptions": [
        "AirflowException", "AirflowSkipException", "AirflowFailException", "AirflowSensorTimeout",
        "AirflowTaskTimeout", "AirflowRescheduleException", "TaskDeferred", "ParamValidationError",
    ],
    "airflow.datasets": ["Dataset", "DatasetAlias", "DatasetAll", "DatasetAny"],
    "airflow.datasets.metadata": ["Metadata"],
    "airflow.providers.standard.operators.empty": ["EmptyOperator"],
    "airflow.providers.standard.operators.bash": ["BashOperator"],
    "airflow.providers.standard.operators.python": [
        "PythonOperator", "BranchPythonOperator", "ShortCircuitOperator", "get_current_context",
    ],
    "airflow.providers.standard.sensors.time_delta": ["TimeDeltaSensor", "TimeDeltaSensorAsync", "WaitSensor"],
    "airflow.providers.standard.sensors.date_time": ["DateTimeSensor", "DateTimeSensorAsync"],
    "airflow.providers.standard.sensors.python": ["PythonSensor"],
    "airflow.timetables.base": ["Timetable", "DataInterval", "DagRunInfo", "TimeRestriction"],
    "airflow.timetables.interval": ["CronDataIntervalTimetable", "DeltaDataIntervalTimetable"],
    "airflow.timetables.trigger": ["CronTriggerTimetable", "DeltaTriggerTimetable", "MultipleCronTriggerTimetable"],
    "airflow.timetables.simple": ["NullTimetable", "OnceTimetable"],
    "airflow.timetables.events": ["EventsTimetable"],
    "airflow.plugins_manager": ["AirflowPlugin"],
}


def _run(code: str) -> subprocess.CompletedProcess:
    # A fresh interpreter with no pytest on the path: what a DAG file sees under plain `python`.
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60, cwd="/", check=False)


def test_every_import_path_works_in_a_fresh_interpreter():
    code = f"""
        import json
        failures = []
        for module, names in json.loads({json.dumps(json.dumps(IMPORT_PATHS))}).items():
            try:
                exec(f"from {{module}} import {{', '.join(names)}}", {{}})
            except Exception as exc:
                failures.append(f"{{module}}: {{type(exc).__name__}}: {{exc}}")
        print(json.dumps(failures))
    """
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_sdk_names_are_the_updraft_objects():
    import airflow
    import airflow.sdk
    from airflow.operators.python import PythonOperator as Airflow2Python
    from airflow.providers.standard.operators.python import PythonOperator as StandardPython
    from updraft.sdk.dag import DAG
    from updraft.sensors.base import BaseSensorOperator

    assert airflow.sdk.DAG is airflow.DAG is DAG
    assert airflow.sdk.BaseSensorOperator is BaseSensorOperator
    assert Airflow2Python is StandardPython
    assert airflow.__version__ == "3.3.2"
    assert "DAG" in dir(airflow.sdk)


def test_airflow_exceptions_reexports_every_updraft_exception():
    import airflow.exceptions
    import airflow.sdk.exceptions
    from updraft.sdk import exceptions

    classes = {n for n, v in vars(exceptions).items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert classes <= set(airflow.exceptions.__all__)
    assert classes <= set(airflow.sdk.exceptions.__all__)


def test_import_airflow_sdk_is_cheap_and_lazy():
    result = _run("""
        import sys
        import airflow.sdk
        heavy = sorted(m for m in ("jinja2", "jsonschema", "boto3", "botocore", "pendulum", "croniter")
                       if m in sys.modules)
        loaded = sorted(m for m in sys.modules if m.startswith(("airflow", "updraft")))
        print(heavy, loaded, sep="\\n")
    """)
    assert result.returncode == 0, result.stderr
    heavy, loaded = result.stdout.splitlines()
    assert heavy == "[]"
    # Only the shim entry points and the unsupported-import guard; no DAG model, no operators.
    assert eval(loaded) == ["airflow", "airflow.sdk", "updraft", "updraft.sdk", "updraft.sdk._internal",
                            "updraft.sdk._internal.unsupported"]


def test_authoring_a_dag_does_not_load_aws_or_validation_libraries():
    result = _run("""
        import sys
        from airflow.sdk import DAG, task, Variable, Connection, Asset
        from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor
        print(sorted(m for m in ("boto3", "botocore", "jsonschema") if m in sys.modules))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(("statement", "feature", "hint"), [
    ("import airflow.providers.amazon.aws.operators.s3", "airflow.providers.amazon.aws.operators.s3",
     "add apache-airflow-providers-amazon to the environment's requirements"),
    ("from airflow.providers.amazon.aws.operators.s3 import S3CreateBucketOperator",
     "airflow.providers.amazon.aws.operators.s3", "add apache-airflow-providers-amazon"),
    ("from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator",
     "airflow.providers.cncf.kubernetes.operators.pod", 'executor="fargate"'),
    ("from airflow.operators.subdag import SubDagOperator", "airflow.operators.subdag", "TaskGroup"),
    ("from airflow.hooks.dbapi import DbApiHook", "airflow.hooks.dbapi", "not available"),
    ("from airflow.sdk import DeadlineAlert", "airflow.sdk.DeadlineAlert", "deadline"),
    ("from airflow.providers.standard.operators.smooth import SmoothOperator",
     "airflow.providers.standard.operators.smooth", "standard provider"),
    ("from airflow.operators.python_operator import PythonOperator", "airflow.operators.python_operator",
     "airflow.operators.python"),
    ("from airflow.utils.dates import date_range", "airflow.utils.dates.date_range", "timetable"),
    ("import airflow.sdk.no_such_module", "airflow.sdk.no_such_module", "module not available in Updraft"),
    ("from airflow.example_dags.plugins.workday import AfterWorkdayTimetable",
     "airflow.example_dags.plugins.workday", "plugins folder"),
])
def test_unsupported_imports_name_the_feature(statement, feature, hint):
    with pytest.raises(UnsupportedFeatureError) as info:
        exec(statement, {})
    assert str(info.value).startswith(f"Updraft does not support {feature}: ")
    assert hint in str(info.value)
    assert info.value.feature == feature
    assert isinstance(info.value, ImportError)
    assert not any(m.startswith("airflow.providers.amazon") for m in sys.modules)


def test_unsupported_import_fails_a_fresh_interpreter_with_the_message():
    result = _run("from airflow.providers.amazon.aws.operators.s3 import S3CreateBucketOperator")
    assert result.returncode == 1
    assert ("UnsupportedModuleError: Updraft does not support airflow.providers.amazon.aws.operators.s3: add "
            "apache-airflow-providers-amazon" in result.stderr)


def test_compat_try_except_importerror_still_falls_back():
    namespace: dict = {}
    exec(textwrap.dedent("""
        try:
            from airflow.providers.amazon.aws.hooks.s3 import S3Hook
        except ImportError:
            S3Hook = None
    """), namespace)
    assert namespace["S3Hook"] is None


def test_unknown_names_stay_attribute_errors_for_hasattr():
    import airflow.operators.python
    import airflow.sdk

    assert not hasattr(airflow.sdk, "no_such_name")
    assert not hasattr(airflow.operators.python, "no_such_name")
    # From a plain module: Python's own message.
    with pytest.raises(ImportError, match="cannot import name 'Nope'") as info:
        exec("from airflow.operators.python import Nope", {})
    assert not isinstance(info.value, UnsupportedFeatureError)
    # From a package Python also looks for a submodule, which the guard reports by its full name.
    with pytest.raises(UnsupportedFeatureError, match=r"does not support airflow\.sdk\.Nope"):
        exec("from airflow.sdk import Nope", {})


def test_finder_leaves_other_packages_alone():
    import importlib.machinery
    import importlib.util

    assert importlib.util.find_spec("updraft.no_such_module") is None
    assert importlib.util.find_spec("airflow_something_else") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("updraft.no_such_module")
    # Real shim modules are found by the normal path finder, never by the guard.
    assert importlib.import_module("airflow.timetables.base").__file__.endswith("timetables/base.py")
    from updraft.sdk._internal.unsupported import UnsupportedModuleFinder

    guards = [i for i, f in enumerate(sys.meta_path) if isinstance(f, UnsupportedModuleFinder)]
    assert len(guards) == 1
    assert sys.meta_path.index(importlib.machinery.PathFinder) < guards[0]
