"""The names provider packages import from Airflow's core and task SDK behave as Airflow's (issue 31): conf,
LoggingMixin, the helpers, ProvidersManager and get_hook, the operator metaclass, provider task decorators, and the
server-side names that import but refuse use."""

from __future__ import annotations

import abc
import logging
import sys
import textwrap
from pathlib import Path

import pytest

from updraft.sdk.exceptions import AirflowConfigException, AirflowException, UnsupportedFeatureError

# -- conf ---------------------------------------------------------------------------------------------------------

def test_conf_reads_the_environment_then_airflow_defaults_then_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.configuration import conf
    from airflow.sdk.configuration import conf as sdk_conf

    assert sdk_conf is conf
    monkeypatch.delenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", raising=False)
    assert conf.getboolean("operators", "default_deferrable") is False  # Airflow's core default
    assert conf.get("email", "email_conn_id") == "smtp_default"
    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", "True")
    assert conf.getboolean("operators", "default_deferrable") is True
    assert conf.get("nosuch", "key", fallback=None) is None
    with pytest.raises(AirflowConfigException, match=r"section/key \[nosuch/key\] not found in config"):
        conf.get("nosuch", "key")
    monkeypatch.setenv("AIRFLOW__CORE__PARALLELISM_X", "3.0")
    assert conf.getint("core", "parallelism_x") == 3
    monkeypatch.setenv("AIRFLOW__CORE__BAD", "maybe")
    with pytest.raises(AirflowConfigException, match="Failed to convert value to bool"):
        conf.getboolean("core", "bad")
    monkeypatch.setenv("AIRFLOW__CORE__JSON_OPT", '{"a": 1}')
    assert conf.getjson("core", "json_opt") == {"a": 1}
    assert conf.has_option("core", "json_opt") and not conf.has_option("core", "absent_opt")
    assert conf.getimport("core", "absent_opt", fallback=None) is None
    with pytest.raises(ValueError, match="core/absent_opt should be set"):
        conf.get_mandatory_value("core", "absent_opt", fallback=None)


def test_conf_runs_cmd_only_for_sensitive_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.configuration import conf

    monkeypatch.setenv("AIRFLOW__SENTRY__SENTRY_DSN_CMD", "echo -n from-command")
    assert conf.get("sentry", "sentry_dsn") == "from-command"  # sensitive in Airflow's config.yml
    monkeypatch.setenv("AIRFLOW__CORE__DAGS_FOLDER_CMD", "echo -n ignored")
    assert conf.get("core", "dags_folder", fallback="unset") == "unset"  # not sensitive: _CMD is not read


def test_conf_section_and_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.configuration import conf

    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_CPUS", "4")
    section = conf.getsection("operators")
    assert section is not None and section["default_cpus"] == 4 and section["default_deferrable"] is False
    assert conf.getsection("nosuch") is None
    with pytest.raises(UnsupportedFeatureError, match="AIRFLOW__CORE__X"):
        conf.set("core", "x", "1")


# -- a fake installed provider: its distribution's entry point, config, hook and task decorator -----------------------

@pytest.fixture
def fake_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from updraft.sdk.providers_manager import ProvidersManager

    (tmp_path / "fakeprov-1.2.3.dist-info").mkdir()
    (tmp_path / "fakeprov-1.2.3.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: apache-airflow-providers-fake\nVersion: 1.2.3\n")
    (tmp_path / "fakeprov-1.2.3.dist-info" / "entry_points.txt").write_text(
        "[apache_airflow_provider]\nprovider_info = fakeprov:get_provider_info\n")
    (tmp_path / "fakeprov.py").write_text(textwrap.dedent('''
        from airflow.sdk import BaseHook
        from airflow.sdk.bases.decorator import DecoratedOperator, task_decorator_factory
        from airflow.sdk.bases.operator import BaseOperator

        def get_provider_info():
            return {
                "package-name": "apache-airflow-providers-fake", "name": "Fake",
                "connection-types": [{"connection-type": "fake", "hook-class-name": "fakeprov.FakeHook"},
                                     {"connection-type": "broken", "hook-class-name": "fakeprov.Missing"}],
                "dialects": [{"dialect-type": "fake", "dialect-class-name": "fakeprov.FakeDialect"}],
                "task-decorators": [{"name": "fakeq", "class-name": "fakeprov.fakeq_task"}],
                "config": {"fake": {"options": {"endpoint": {"default": "https://fake.example", "type": "string"},
                                                "token": {"default": None, "sensitive": True}}}},
            }

        class FakeHook(BaseHook):
            conn_name_attr = "fake_conn_id"
            hook_name = "Fake service"

            def __init__(self, fake_conn_id="fake_default", timeout=1):
                super().__init__()
                self.fake_conn_id, self.timeout = fake_conn_id, timeout

        class QueryOperator(BaseOperator):
            template_fields = ("query",)

            def __init__(self, *, query, **kwargs):
                super().__init__(**kwargs)
                self.query = query

        class _FakeDecorated(DecoratedOperator, QueryOperator):
            custom_operator_name = "@task.fakeq"

            def __init__(self, *, python_callable, op_args=None, op_kwargs=None, **kwargs):
                super().__init__(python_callable=python_callable, op_args=op_args, op_kwargs=op_kwargs,
                                 query="set during execution", **kwargs)

        def fakeq_task(python_callable=None, **kwargs):
            return task_decorator_factory(python_callable=python_callable, decorated_operator_class=_FakeDecorated,
                                          **kwargs)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    ProvidersManager._cleanup()
    from updraft.sdk import configuration

    monkeypatch.setattr(configuration, "conf", configuration.AirflowConfigParser())
    yield configuration.conf
    ProvidersManager._cleanup()
    sys.modules.pop("fakeprov", None)


def test_providers_manager_reads_the_installed_providers(fake_provider) -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert manager is ProvidersManager()
    assert manager.providers["apache-airflow-providers-fake"].version == "1.2.3"
    hook = manager.hooks["fake"]
    assert hook is not None
    assert (hook.hook_class_name, hook.connection_id_attribute_name, hook.hook_name, hook.package_name) == (
        "fakeprov.FakeHook", "fake_conn_id", "Fake service", "apache-airflow-providers-fake")
    assert manager.hooks["broken"] is None  # its class does not import: logged, no hook
    assert manager.dialects["fake"].dialect_class_name == "fakeprov.FakeDialect"


def test_conf_falls_back_to_the_providers_declared_defaults(fake_provider, monkeypatch) -> None:
    conf = fake_provider
    assert conf.get("fake", "endpoint") == "https://fake.example"
    monkeypatch.setenv("AIRFLOW__FAKE__ENDPOINT", "http://override")
    assert conf.get("fake", "endpoint") == "http://override"
    monkeypatch.setenv("AIRFLOW__FAKE__TOKEN_CMD", "echo -n secret-from-cmd")
    assert conf.get("fake", "token") == "secret-from-cmd"  # the provider marks it sensitive


def test_get_hook_builds_the_hook_of_the_connection_type(fake_provider, monkeypatch) -> None:
    from airflow.sdk import BaseHook, Connection

    monkeypatch.setenv("AIRFLOW_CONN_MY_FAKE", "fake://user:pw@host")
    hook = BaseHook.get_hook("my_fake", hook_params={"timeout": 7})
    assert type(hook).__name__ == "FakeHook" and hook.fake_conn_id == "my_fake" and hook.timeout == 7
    assert hook.log.name == "airflow.task.hooks.fakeprov.FakeHook"
    with pytest.raises(AirflowException, match='Unknown hook type "nohook"'):
        Connection(conn_id="x", conn_type="nohook").get_hook()


def test_a_provider_task_decorator_is_found_on_task(fake_provider) -> None:
    from airflow.sdk import DAG, task

    with DAG("d", schedule=None) as dag:
        @task.fakeq
        def make_query(n):
            return f"select {n}"

        make_query(3)
    op = dag.get_task("make_query")
    assert type(op).__name__ == "_FakeDecorated" and op.op_args == [3] and op.query == "set during execution"
    with pytest.raises(AttributeError):
        task.not_a_decorator  # noqa: B018


# -- LoggingMixin, helpers, metaclass, server-side names -------------------------------------------------------------

def test_logging_mixin_names_loggers_as_airflow() -> None:
    from airflow.sdk import BaseHook, BaseOperator
    from airflow.utils.log.logging_mixin import LoggingMixin

    class Thing(LoggingMixin):
        _log_config_logger_name = "airflow.task"

    assert Thing().log.name == f"airflow.task.{__name__}.Thing"
    assert BaseHook(logger_name="custom").log.name == "airflow.task.hooks.custom"
    assert isinstance(BaseHook(), LoggingMixin)
    op = BaseOperator(task_id="t")
    assert isinstance(op, LoggingMixin)
    assert op.log.name == "airflow.task.operators.updraft.sdk.baseoperator.BaseOperator"
    assert isinstance(op.log, logging.Logger)


def test_helpers_behave_as_airflow() -> None:
    from airflow.utils.helpers import at_most_one, chunks, exactly_one, merge_dicts, prune_dict
    from airflow.utils.module_loading import import_string, qualname
    from airflow.utils.strings import to_boolean

    assert prune_dict({"a": None, "b": [None, {"c": None}], "d": 0}) == {"b": [{}], "d": 0}
    assert prune_dict({"a": None, "b": [None, {"c": None}], "d": 0}, mode="truthy") == {}
    assert exactly_one(None, "x") and not exactly_one("x", "y")
    with pytest.raises(ValueError, match="unpack"):
        exactly_one([1, 2])
    assert at_most_one(None, None) and not at_most_one(1, 2)
    assert list(chunks([1, 2, 3], 2)) == [[1, 2], [3]]
    assert merge_dicts({"a": {"b": 1, "c": 2}}, {"a": {"b": 3}}) == {"a": {"b": 3, "c": 2}}
    assert import_string(qualname(Path)) is Path
    assert to_boolean("Yes") and not to_boolean(None)


def test_notset_sentinels() -> None:
    import copy

    from airflow.sdk.definitions._internal.types import NOTSET, SET_DURING_EXECUTION, ArgNotSet, is_arg_set

    assert isinstance(SET_DURING_EXECUTION, ArgNotSet) and SET_DURING_EXECUTION is not NOTSET
    assert copy.deepcopy(NOTSET) is NOTSET and not is_arg_set(SET_DURING_EXECUTION) and is_arg_set(None)


def test_an_operator_may_also_be_an_abc() -> None:
    from airflow.sdk import BaseOperator

    class TaskBase(BaseOperator, abc.ABC):
        @abc.abstractmethod
        def run_id_of(self) -> str: ...

    class Concrete(TaskBase):
        def run_id_of(self) -> str:
            return "r"

    with pytest.raises(TypeError, match="abstract"):
        TaskBase(task_id="a")
    assert Concrete(task_id="b").run_id_of() == "r"


def test_server_side_names_import_and_refuse_use() -> None:
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance, clear_task_instances
    from airflow.models.xcom import XCOM_RETURN_KEY

    assert XCOM_RETURN_KEY == "return_value"
    with pytest.raises(UnsupportedFeatureError, match=r"airflow\.models\.dagrun\.DagRun\.find"):
        DagRun.find(dag_id="x")
    with pytest.raises(UnsupportedFeatureError, match="TaskInstance"):
        TaskInstance()
    with pytest.raises(UnsupportedFeatureError, match="clear_task_instances"):
        clear_task_instances([], None)


def test_a_provider_that_is_not_installed_is_named_with_how_to_add_it() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"add apache-airflow-providers-common-io to the environment's "
                                                  r"requirements \(README: Providers\)"):
        import airflow.providers.common.io.operators.file_transfer
    with pytest.raises(ImportError, match="Fargate"):
        import airflow.providers.cncf.kubernetes.operators.pod  # noqa: F401


def test_stats_accepts_and_records_nothing() -> None:
    from airflow.sdk.observability.stats import Stats

    assert Stats.enabled is False
    Stats.incr("x", tags={"a": "b"})
    with Stats.timer("t"):
        pass
