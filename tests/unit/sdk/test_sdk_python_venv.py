"""Virtualenv and external-Python tasks at parse time and around the subprocess: what Airflow 3.3's standard
provider accepts or refuses, the decorator stripping, the venv cache and the commands a venv is built with
(``tests/functional/test_dags_test_virtualenv.py`` runs them end to end)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from airflow.sdk import DAG, task
from updraft.operators import python_virtualenv
from updraft.operators.python_venv import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
)
from updraft.sdk.decorators.source import remove_task_decorator
from updraft.sdk.exceptions import AirflowException


def plain(x):
    return x


def test_every_airflow_import_path_gives_the_operators():
    from airflow.operators import python as airflow2
    from airflow.providers.standard.operators import python as provider

    for module in (airflow2, provider):
        assert (module.PythonVirtualenvOperator, module.BranchPythonVirtualenvOperator,
                module.ExternalPythonOperator, module.BranchExternalPythonOperator) == (
            PythonVirtualenvOperator, BranchPythonVirtualenvOperator, ExternalPythonOperator,
            BranchExternalPythonOperator)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"python_callable": lambda: 1}, ValueError, "only supports functions"),
    ({"python_callable": print}, ValueError, "only supports functions"),
    ({"serializer": "json"}, AirflowException, "Unsupported serializer 'json'"),
    ({"python_version": 3}, AirflowException, "non-string types"),
    ({"python_version": "2.7", "op_args": [1]}, AirflowException, "different Python major versions"),
])
def test_virtualenv_operator_refuses_what_airflow_refuses(kwargs, error, match):
    with pytest.raises(error, match=match):
        PythonVirtualenvOperator(task_id="t", **{"python_callable": plain, **kwargs})


def test_generators_and_a_missing_python_are_refused():
    def gen():
        yield 1

    with pytest.raises(ValueError, match="'yield'"):
        ExternalPythonOperator(task_id="t", python=sys.executable, python_callable=gen)
    with pytest.raises(ValueError, match="Python Path must be defined"):
        ExternalPythonOperator(task_id="t", python="", python_callable=plain)


def test_serializer_defaults_to_pickle_and_use_dill_is_gone_as_in_airflow_3():
    from updraft.sdk.baseoperator import InvalidOperatorArguments

    assert PythonVirtualenvOperator(task_id="a", python_callable=plain).serializer == "pickle"
    with pytest.raises(InvalidOperatorArguments, match="use_dill"):
        PythonVirtualenvOperator(task_id="b", python_callable=plain, use_dill=True)


def test_requirements_gain_the_serializer_only_without_system_site_packages():
    def make(**kw):
        return PythonVirtualenvOperator(task_id="t", python_callable=plain, **kw)

    assert make(requirements="b\na", serializer="dill")._requirements_list() == ["b\na"]
    assert make(requirements=["zz", "aa"], serializer="dill",
                system_site_packages=False)._requirements_list() == ["aa", "dill", "zz"]
    assert make(serializer="cloudpickle", system_site_packages=False)._requirements_list() == ["cloudpickle"]


@pytest.mark.parametrize(("requirements", "system_site_packages", "airflow_keys", "pendulum_keys"), [
    ([], True, True, True),
    ([], False, False, False),
    (["pendulum==3.0 # the dates"], False, False, True),
    (["# comment\nnumpy\napache-airflow[amazon]>=3"], False, True, True),
])
def test_context_keys_follow_what_the_venv_can_unpickle(requirements, system_site_packages, airflow_keys,
                                                         pendulum_keys):
    op = PythonVirtualenvOperator(task_id="t", python_callable=plain, requirements=requirements,
                                  system_site_packages=system_site_packages)
    keys = set(op._iter_serializable_context_keys())
    assert "ds" in keys
    assert ("dag_run" in keys, "logical_date" in keys) == (airflow_keys, pendulum_keys)


def test_an_invalid_requirement_is_airflows_value_error():
    op = PythonVirtualenvOperator(task_id="t", python_callable=plain, requirements=["!!nope"],
                                  system_site_packages=False)
    with pytest.raises(ValueError, match="Invalid requirement '!!nope'"):
        set(op._iter_serializable_context_keys())


def test_index_urls_from_package_index_connections(monkeypatch):
    """PackageIndexHook's URL: the connection's host with its login and password quoted into it, after index_urls."""
    from airflow.providers.standard.hooks.package_index import PackageIndexHook

    monkeypatch.setenv("AIRFLOW_CONN_MIRROR", '{"conn_type": "package_index", "host": '
                       '"https://old@mirror.example/simple", "login": "me", "password": "p@ss"}')
    monkeypatch.setenv("AIRFLOW_CONN_BARE", '{"conn_type": "package_index", "login": "me"}')
    op = PythonVirtualenvOperator(task_id="t", python_callable=plain, index_urls="https://a.example/simple",
                                  index_urls_from_connection_ids="mirror")
    op._retrieve_index_urls_from_connection_ids()
    assert op.index_urls == ["https://a.example/simple", "https://me:p%40ss@mirror.example/simple"]
    with pytest.raises(ValueError, match="Please provide an index URL"):
        PackageIndexHook("bare").get_conn()


def test_the_cache_hash_covers_the_cache_key_variable(monkeypatch):
    op = PythonVirtualenvOperator(task_id="t", python_callable=plain, requirements=["a"])
    before = op._calculate_cache_hash()[0]
    monkeypatch.setenv("AIRFLOW_VAR_PYTHON_VIRTUALENV_OPERATOR_CACHE_KEY", "v2")
    after = op._calculate_cache_hash()[0]
    assert before != after and len(after) == 8


def test_the_venv_cache_is_built_once_and_rebuilt_when_partial(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__STANDARD__VENV_INSTALL_METHOD", "pip")
    op = PythonVirtualenvOperator(task_id="t", python_callable=plain, system_site_packages=False)
    first = op._ensure_venv_cache_exists(tmp_path)
    assert first.name.startswith("venv-") and (first / "bin" / "python").exists()
    (first / "sentinel").write_text("kept")
    assert op._ensure_venv_cache_exists(tmp_path) == first and (first / "sentinel").exists()
    (first / "install_complete_marker.json").unlink()  # an interrupted build
    assert op._ensure_venv_cache_exists(tmp_path) == first and not (first / "sentinel").exists()


def test_commands_for_requirements_options_and_indexes(tmp_path, monkeypatch):
    """What pip or uv is asked to do (running them needs a package index)."""
    calls: list[list[str]] = []
    monkeypatch.setattr(python_virtualenv, "execute_in_subprocess", lambda cmd, env=None: calls.append(cmd))
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("numpy~=1.26.0\n")
    monkeypatch.setenv("AIRFLOW__STANDARD__VENV_INSTALL_METHOD", "pip")
    python_virtualenv.prepare_virtualenv(str(tmp_path), "/usr/bin/python3.11", False, str(requirements),
                                         ["--no-deps"], ["https://a.example/simple", "https://b.example/simple"])
    assert calls == [["/usr/bin/python3.11", "-m", "venv", str(tmp_path)],
                     [f"{tmp_path}/bin/pip", "install", "--no-deps", "-r", str(requirements)]]
    assert (tmp_path / "pip.conf").read_text() == ("[global]\nindex-url = https://a.example/simple\n"
                                                   "extra-index-url = https://b.example/simple")
    calls.clear()
    monkeypatch.setenv("AIRFLOW__STANDARD__VENV_INSTALL_METHOD", "uv")
    python_virtualenv.prepare_virtualenv(str(tmp_path), "python3", True, str(requirements), None, [])
    assert calls == [["uv", "venv", "--allow-existing", "--python", "python3", "--seed", "--system-site-packages",
                      str(tmp_path)],
                     ["uv", "pip", "install", "--python", f"{tmp_path}/bin/python", "-r", str(requirements)]]
    assert (tmp_path / "pip.conf").read_text() == "[global]\nno-index = true"


def test_install_method_setting(monkeypatch):
    monkeypatch.setenv("AIRFLOW__STANDARD__VENV_INSTALL_METHOD", "conda")
    with pytest.raises(ValueError, match="AIRFLOW__STANDARD__VENV_INSTALL_METHOD must be auto, uv or pip"):
        python_virtualenv.use_uv()
    with pytest.raises(FileNotFoundError, match=r"python2\.1"):
        python_virtualenv.python_binary("2.1")
    assert python_virtualenv.python_binary(None) == sys.executable


def test_remove_task_decorator_keeps_other_decorators():
    source = textwrap.dedent('''\
        @task.virtualenv(
            requirements=["x"],
        )
        @functools.cache
        @setup
        def f(a):
            @task.virtualenv
            def inner():
                pass
            return a
    ''')
    assert remove_task_decorator(source, "@task.virtualenv") == textwrap.dedent('''\
        @functools.cache
        def f(a):
            def inner():
                pass
            return a
    ''')


def test_decorated_tasks_run_their_function_without_the_decorator():
    with DAG("venv_decorators"):
        @task.virtualenv(requirements=["colorama"], system_site_packages=False, multiple_outputs=True)
        def in_venv(n):
            # a comment line, dropped as Airflow does
            return {"n": n}

        @task.external_python(sys.executable)
        def external():
            return 1

        @task.branch_virtualenv
        def branch_venv():
            return "x"

        @task.branch_external_python(python=sys.executable, expect_airflow=False)
        def branch_external():
            return "x"

        ops = [in_venv(1).operator, external().operator, branch_venv().operator, branch_external().operator]
    assert [op.custom_operator_name for op in ops] == [
        "@task.virtualenv", "@task.external_python", "@task.branch_virtualenv", "@task.branch_external_python"]
    assert ops[0].get_python_source() == 'def in_venv(n):\n    return {"n": n}\n'
    assert ops[0].requirements == ["colorama"] and ops[0].multiple_outputs
    assert ops[1].python == sys.executable and ops[3].expect_airflow is False
    assert isinstance(ops[2], BranchPythonVirtualenvOperator) and ops[2]._can_skip_downstream
    assert isinstance(ops[3], BranchExternalPythonOperator) and ops[3]._can_skip_downstream


def test_the_script_template_is_airflows(tmp_path):
    """Rendered for a call with arguments: the function, its call and the serializer's load and dump."""
    out = tmp_path / "script.py"
    python_virtualenv.write_python_script({
        "op_args": [1], "op_kwargs": {}, "expect_airflow": False, "pickling_library": "dill",
        "python_callable": "plain", "python_callable_source": "def plain(x):\n    return x\n",
    }, str(out))
    script = out.read_text()
    compile(script, str(out), "exec")
    assert "import dill" in script and "arg_dict = dill.load(file)" in script
    assert 'res = plain(*arg_dict["args"], **arg_dict["kwargs"])' in script
    assert "integrate_macros_plugins" not in script
    assert Path(python_virtualenv.__file__).with_name(python_virtualenv.SCRIPT_TEMPLATE).exists()
