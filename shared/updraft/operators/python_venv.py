"""PythonVirtualenvOperator, ExternalPythonOperator and their branch variants: the callable runs in another
interpreter, as Airflow 3.3's standard provider does it (``providers/standard/operators/python.py``).

The callable's source (task decorators stripped) is written into Airflow's script template with a call to it; its
arguments go to the script pickled by the ``serializer`` (pickle, cloudpickle or dill), the script pickles the
return value back, and ``string_args`` reach it as the global ``virtualenv_string_args``. Only the context keys
the target interpreter can unpickle are offered to the callable (Airflow's three key sets). The script runs with
the task process's own environment (``inherit_env``): on AWS that is the credential-less task child's, holding
only the DAG-code role's credentials, never Updraft's.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, ClassVar

from updraft.operators.branch import BranchMixIn
from updraft.operators.python import PythonOperator
from updraft.sdk.context import Context
from updraft.sdk.exceptions import AirflowException, AirflowSkipException

SERIALIZERS = ("pickle", "cloudpickle", "dill")
CACHE_KEY_VARIABLE = "python_virtualenv_operator_cache_key"


class DeserializingResultError(ValueError):
    """Airflow's: the serializer could not read the callable's result back."""

    def __str__(self) -> str:
        return ("Error deserializing result. Note that result deserialization is not supported across major "
                "Python versions. Cause: " + str(self.__cause__))


def _serializer_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        raise AirflowException(f"serializer={name!r} needs the {name} package installed where the task "
                               "runs") from None


def _dags_folder_paths(fileloc: str | None) -> list[str]:
    """The ``sys.path`` entries that hold the DAG file (its DAGs folder): Airflow adds the DAG bundle's path to the
    script's PYTHONPATH so modules beside the DAG import there too."""
    if not fileloc:
        return []
    return [entry for entry in dict.fromkeys(sys.path)
            if entry and fileloc.startswith(os.path.join(os.path.abspath(entry), ""))]


_REQUIREMENT_NAME = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@(]|$)")


def _requirement_names(requirements: Iterable[str]) -> Iterator[str]:
    """The project names of requirement lines (comments, blank lines and pip options skipped), as Airflow reads
    them; a line that is no PEP 508 requirement is Airflow's ValueError."""
    for raw in chain.from_iterable(str(req).splitlines() for req in requirements):
        line = re.sub(r"#.*$", "", raw).strip()
        if not line or line.startswith("-"):
            continue
        match = _REQUIREMENT_NAME.match(line)
        if match is None:
            raise ValueError(f"Invalid requirement '{raw}': not a PEP 508 requirement")
        yield match.group(1)


class _BasePythonVirtualenvOperator(PythonOperator):
    """Run ``python_callable`` in the interpreter ``_python_path()`` gives, through the generated script."""

    BASE_SERIALIZABLE_CONTEXT_KEYS: ClassVar[frozenset[str]] = frozenset({
        "ds", "ds_nodash", "expanded_ti_count", "inlets", "outlets", "run_id", "task_instance_key_str",
        "test_mode", "ts", "ts_nodash", "ts_nodash_with_tz", "next_ds", "next_ds_nodash", "prev_ds",
        "prev_ds_nodash", "tomorrow_ds", "tomorrow_ds_nodash", "yesterday_ds", "yesterday_ds_nodash",
        "task_reschedule_count", "partition_key",
    })
    PENDULUM_SERIALIZABLE_CONTEXT_KEYS: ClassVar[frozenset[str]] = frozenset({
        "data_interval_end", "data_interval_start", "logical_date", "prev_data_interval_end_success",
        "prev_data_interval_start_success", "prev_start_date_success", "prev_end_date_success", "execution_date",
        "next_execution_date", "prev_execution_date", "prev_execution_date_success", "partition_date",
    })
    AIRFLOW_SERIALIZABLE_CONTEXT_KEYS: ClassVar[frozenset[str]] = frozenset({
        "macros", "conf", "dag", "dag_run", "task", "params", "triggering_asset_events",
        "triggering_dataset_events",
    })

    def __init__(
        self,
        *,
        python_callable: Callable,
        serializer: str | None = None,
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        string_args: Iterable[str] | None = None,
        templates_dict: dict | None = None,
        templates_exts: list[str] | None = None,
        expect_airflow: bool = True,
        skip_on_exit_code: int | Container[int] | None = None,
        env_vars: dict[str, str] | None = None,
        inherit_env: bool = True,
        **kwargs: Any,
    ) -> None:
        if (not isinstance(python_callable, types.FunctionType)
                or python_callable.__name__ == "<lambda>"):
            raise ValueError(f"{type(self).__name__} only supports functions for python_callable arg")
        if inspect.isgeneratorfunction(python_callable):
            raise ValueError(f"{type(self).__name__} does not support using 'yield' in python_callable")
        super().__init__(python_callable=python_callable, op_args=op_args, op_kwargs=op_kwargs,
                         templates_dict=templates_dict, templates_exts=templates_exts, **kwargs)
        self.string_args = list(string_args or [])
        # No use_dill: Airflow 3.3's provider dropped it (serializer="dill"), so it is an invalid argument here too.
        serializer = serializer or "pickle"
        if serializer not in SERIALIZERS:
            raise AirflowException(f"Unsupported serializer {serializer!r}. Expected one of "
                                   f"{', '.join(map(repr, SERIALIZERS))}")
        self.serializer = serializer
        self.expect_airflow = expect_airflow
        if skip_on_exit_code is None:
            self.skip_on_exit_code: Container[int] = []
        elif isinstance(skip_on_exit_code, Container):
            self.skip_on_exit_code = skip_on_exit_code
        else:
            self.skip_on_exit_code = [skip_on_exit_code]
        self.env_vars = env_vars
        self.inherit_env = inherit_env

    def _iter_serializable_context_keys(self) -> Iterator[str]:
        raise NotImplementedError

    def execute(self, context: Any) -> Any:
        """Only the context keys the target interpreter can unpickle reach the callable (Airflow's filter)."""
        keys = set(self._iter_serializable_context_keys())
        return super().execute(Context({k: v for k, v in context.items() if k in keys}))

    def get_python_source(self) -> str:
        """The source of the callable, dedented (the decorated variants also strip their task decorator)."""
        return textwrap.dedent(inspect.getsource(self.python_callable))

    def _write_args(self, file: Path) -> None:
        if not (self.op_args or self.op_kwargs):
            return
        self.log.info("Use %r as serializer.", self.serializer)
        library = _serializer_module(self.serializer)
        try:
            file.write_bytes(library.dumps({"args": self.op_args, "kwargs": self.op_kwargs}))
        except Exception:
            bad_keys = [key for key, value in self.op_kwargs.items() if not _dumps_ok(library, value)]
            if bad_keys:
                raise AirflowException(
                    f"Failed to serialize op_kwargs. The following keys contain objects that cannot be pickled: "
                    f"{bad_keys}. This often happens when render_template_as_native_obj=True and templates like "
                    "'{{ ti }}' resolve to live Airflow objects instead of strings. Use string representations or "
                    "pass only the specific attributes you need (e.g. '{{ ti.task_id }}', '{{ ti.run_id }}')."
                ) from None
            raise

    def _read_result(self, path: Path) -> Any:
        if not path.exists() or path.stat().st_size == 0:
            return None
        try:
            return _serializer_module(self.serializer).loads(path.read_bytes())
        except ValueError as err:
            raise DeserializingResultError() from err

    def _jinja_context(self, op_kwargs: dict[str, Any]) -> dict[str, Any]:
        context: dict[str, Any] = {
            "op_args": self.op_args,
            "op_kwargs": op_kwargs,
            "expect_airflow": self.expect_airflow,
            "pickling_library": self.serializer,
            "python_callable": self.python_callable.__name__,
            "python_callable_source": self.get_python_source(),
        }
        fileloc = getattr(self.dag, "fileloc", None) if self.has_dag() else None
        module = self.python_callable.__module__
        if fileloc and inspect.getfile(self.python_callable) == fileloc and module.isidentifier():
            # The DAG file's module, named as Airflow names it (unusual_prefix_<sha1>_<stem>) by the loader: the
            # script registers the function under it so pickled references to it resolve.
            context["modified_dag_module_name"] = module
        return context

    def _subprocess_env(self) -> dict[str, str]:
        env = dict(os.environ) if self.inherit_env else {}
        env.update(self.env_vars or {})
        extra = _dags_folder_paths(getattr(self.dag, "fileloc", None) if self.has_dag() else None)
        if extra:
            env["PYTHONPATH"] = os.pathsep.join([p for p in [env.get("PYTHONPATH", "")] if p] + extra)
        return env

    def _execute_python_callable_in_subprocess(self, python_path: Path) -> Any:
        # lazy: the task child only (the venv is built where the task runs)
        from updraft.operators.python_virtualenv import execute_in_subprocess, write_python_script

        with TemporaryDirectory(prefix="venv-call") as tmp:
            tmp_dir = Path(tmp)
            op_kwargs = dict(self.op_kwargs)
            if self.templates_dict:
                op_kwargs["templates_dict"] = self.templates_dict
            paths = {name: tmp_dir / name for name in ("script.in", "script.out", "string_args.txt",
                                                       "termination.log", "airflow_context.json")}
            script_path = tmp_dir / "script.py"
            self._write_args(paths["script.in"])
            paths["string_args.txt"].write_text("\n".join(map(str, self.string_args)))
            write_python_script(jinja_context=self._jinja_context(op_kwargs), filename=os.fspath(script_path),
                                render_template_as_native_obj=bool(
                                    self.has_dag() and self.dag.render_template_as_native_obj))
            termination_log = paths["termination.log"]
            try:
                execute_in_subprocess([os.fspath(python_path), os.fspath(script_path),
                                       *(os.fspath(p) for p in paths.values())], env=self._subprocess_env())
            except subprocess.CalledProcessError as err:
                if err.returncode in self.skip_on_exit_code:
                    raise AirflowSkipException(f"Process exited with code {err.returncode}. Skipping.") from None
                if termination_log.exists() and termination_log.stat().st_size > 0:
                    raise AirflowException(f"Process returned non-zero exit status {err.returncode}.\n"
                                           + termination_log.read_text()) from None
                raise
            if 0 in self.skip_on_exit_code:
                raise AirflowSkipException("Process exited with code 0. Skipping.")
            return self._read_result(paths["script.out"])


def _dumps_ok(library: Any, value: Any) -> bool:
    try:
        library.dumps(value)
    except Exception:
        return False
    return True


class PythonVirtualenvOperator(_BasePythonVirtualenvOperator):
    """Run the callable in a virtualenv created for the task (or reused from ``venv_cache_path``)."""

    template_fields: ClassVar[tuple[str, ...]] = (
        "requirements", "index_urls", "index_urls_from_connection_ids", "venv_cache_path",
        *PythonOperator.template_fields)
    template_ext: tuple[str, ...] = (".txt",)

    def __init__(
        self,
        *,
        python_callable: Callable,
        requirements: Iterable[str] | str | None = None,
        python_version: str | None = None,
        serializer: str | None = None,
        system_site_packages: bool = True,
        pip_install_options: list[str] | None = None,
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        string_args: Iterable[str] | None = None,
        templates_dict: dict | None = None,
        templates_exts: list[str] | None = None,
        expect_airflow: bool = True,
        skip_on_exit_code: int | Container[int] | None = None,
        index_urls: Collection[str] | str | None = None,
        index_urls_from_connection_ids: Collection[str] | str | None = None,
        venv_cache_path: os.PathLike[str] | str | None = None,
        env_vars: dict[str, str] | None = None,
        inherit_env: bool = True,
        **kwargs: Any,
    ) -> None:
        if python_version and str(python_version)[0] != str(sys.version_info.major) and (op_args or op_kwargs):
            raise AirflowException(
                "Passing op_args or op_kwargs is not supported across different Python major versions for "
                "PythonVirtualenvOperator. Please use string_args."
                f"Sys version: {sys.version_info}. Virtual environment version: {python_version}")
        if python_version is not None and not isinstance(python_version, str):
            raise AirflowException("Passing non-string types (e.g. int or float) as python_version not supported")
        if not requirements:
            self.requirements: list[str] = []
        elif isinstance(requirements, str):
            self.requirements = [requirements]
        else:
            self.requirements = list(requirements)
        self.python_version = python_version
        self.system_site_packages = system_site_packages
        self.pip_install_options = pip_install_options
        if isinstance(index_urls, str):
            self.index_urls: list[str] | None = [index_urls]
        elif isinstance(index_urls, Collection):
            self.index_urls = list(index_urls)
        else:
            self.index_urls = None
        if isinstance(index_urls_from_connection_ids, str):
            self.index_urls_from_connection_ids: list[str] | None = [index_urls_from_connection_ids]
        elif isinstance(index_urls_from_connection_ids, Collection):
            self.index_urls_from_connection_ids = list(index_urls_from_connection_ids)
        else:
            self.index_urls_from_connection_ids = None
        self.venv_cache_path = venv_cache_path
        super().__init__(python_callable=python_callable, serializer=serializer, op_args=op_args,
                         op_kwargs=op_kwargs, string_args=string_args, templates_dict=templates_dict,
                         templates_exts=templates_exts, expect_airflow=expect_airflow,
                         skip_on_exit_code=skip_on_exit_code, env_vars=env_vars, inherit_env=inherit_env,
                         **kwargs)

    def _requirements_list(self, exclude_cloudpickle: bool = False) -> list[str]:
        """The requirements to install, with the serializer's package when the venv cannot see the task's."""
        requirements = [str(dependency) for dependency in self.requirements]
        if not self.system_site_packages:
            if self.serializer == "cloudpickle" and not exclude_cloudpickle and "cloudpickle" not in requirements:
                requirements.append("cloudpickle")
            elif self.serializer == "dill" and "dill" not in requirements:
                requirements.append("dill")
        return sorted(requirements)  # a stable cache hash

    def _prepare_venv(self, venv_path: Path) -> None:
        # lazy: the task child only (the venv is built where the task runs)
        from updraft.operators.python_virtualenv import prepare_virtualenv, python_binary

        requirements_file = venv_path / "requirements.txt"
        requirements_file.write_text("\n".join(self._requirements_list()))
        prepare_virtualenv(venv_directory=str(venv_path), python_bin=python_binary(self.python_version),
                           system_site_packages=self.system_site_packages,
                           requirements_file_path=str(requirements_file),
                           pip_install_options=self.pip_install_options, index_urls=self.index_urls)

    def _calculate_cache_hash(self, exclude_cloudpickle: bool = False) -> tuple[str, str]:
        """Airflow's cache key: requirements, pip options, index URLs, the cache-key Variable, the Python version
        and system_site_packages, hashed to ``venv-<8 hex>``."""
        # lazy: the task child only (the venv is built where the task runs)
        from updraft.sdk.variable import Variable

        hash_dict = {
            "requirements_list": self._requirements_list(exclude_cloudpickle=exclude_cloudpickle),
            "pip_install_options": self.pip_install_options,
            "index_urls": self.index_urls,
            "cache_key": str(Variable.get(CACHE_KEY_VARIABLE, "")),
            "python_version": self.python_version,
            "system_site_packages": self.system_site_packages,
        }
        hash_text = json.dumps(hash_dict, sort_keys=True)
        return hashlib.md5(hash_text.encode(), usedforsecurity=False).hexdigest()[:8], hash_text

    def _ensure_venv_cache_exists(self, venv_cache_path: Path) -> Path:
        """The cached venv for this hash, built under an exclusive lock unless a complete one is there."""
        import fcntl

        cache_hash, hash_data = self._calculate_cache_hash()
        venv_path = venv_cache_path / f"venv-{cache_hash}"
        self.log.info("Python virtual environment will be cached in %s", venv_path)
        venv_path.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{venv_path}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per cache entry; the others wait and reuse it
            hash_marker = venv_path / "install_complete_marker.json"
            try:
                if venv_path.exists():
                    if hash_marker.exists() and hash_marker.read_text(encoding="utf8") == hash_data:
                        self.log.info("Reusing cached Python virtual environment in %s", venv_path)
                        return venv_path
                    self.log.warning("Found a previous (partly installed or outdated) virtual environment in %s, "
                                     "deleting and re-creating.", venv_path)
                    shutil.rmtree(venv_path)
                venv_path.mkdir(parents=True)
                self._prepare_venv(venv_path)
                hash_marker.write_text(hash_data, encoding="utf8")
            except Exception as err:
                shutil.rmtree(venv_path, ignore_errors=True)
                raise AirflowException(f"Unable to create new virtual environment in {venv_path}") from err
            self.log.info("New Python virtual environment created in %s", venv_path)
            return venv_path

    def _retrieve_index_urls_from_connection_ids(self) -> None:
        """Each connection's index URL (credentials embedded) joins ``index_urls``, read when the task runs."""
        # lazy: the task child only (the venv is built where the task runs)
        from updraft.hooks.package_index import PackageIndexHook

        self.index_urls = [*(self.index_urls or []), *(
            PackageIndexHook(conn_id).get_connection_url() for conn_id in self.index_urls_from_connection_ids or [])]

    def execute_callable(self) -> Any:
        if self.index_urls_from_connection_ids:
            self._retrieve_index_urls_from_connection_ids()
        if self.venv_cache_path:
            venv_path = self._ensure_venv_cache_exists(Path(self.venv_cache_path))
            return self._execute_python_callable_in_subprocess(venv_path / "bin" / "python")
        with TemporaryDirectory(prefix="venv") as tmp_dir:
            self._prepare_venv(Path(tmp_dir))
            return self._execute_python_callable_in_subprocess(Path(tmp_dir) / "bin" / "python")

    def _iter_serializable_context_keys(self) -> Iterator[str]:
        yield from self.BASE_SERIALIZABLE_CONTEXT_KEYS
        found_airflow = found_pendulum = self.system_site_packages
        if not self.system_site_packages:
            for name in _requirement_names(self.requirements):
                if name == "apache-airflow":
                    found_airflow = found_pendulum = True
                    break
                if name == "pendulum":
                    found_pendulum = True
        if found_airflow:
            yield from self.AIRFLOW_SERIALIZABLE_CONTEXT_KEYS
            yield from self.PENDULUM_SERIALIZABLE_CONTEXT_KEYS
        elif found_pendulum:
            yield from self.PENDULUM_SERIALIZABLE_CONTEXT_KEYS


class ExternalPythonOperator(_BasePythonVirtualenvOperator):
    """Run the callable with an existing interpreter (``python``: an absolute path), created by nobody here."""

    template_fields: ClassVar[tuple[str, ...]] = ("python", *PythonOperator.template_fields)

    def __init__(self, *, python: str, python_callable: Callable, expect_pendulum: bool = False,
                 **kwargs: Any) -> None:
        if not python:
            raise ValueError("Python Path must be defined in ExternalPythonOperator")
        self.python = python
        self.expect_pendulum = expect_pendulum
        super().__init__(python_callable=python_callable, **kwargs)

    def execute_callable(self) -> Any:
        python_path = Path(self.python)
        if not python_path.exists():
            raise ValueError(f"Python Path '{python_path}' must exists")
        if not python_path.is_file():
            raise ValueError(f"Python Path '{python_path}' must be a file")
        if not python_path.is_absolute():
            raise ValueError(f"Python Path '{python_path}' must be an absolute path.")
        major = subprocess.check_output([self.python, "-c", "import sys; print(sys.version_info.major)"],
                                        text=True).strip()
        if major != str(sys.version_info.major) and (self.op_args or self.op_kwargs):
            raise AirflowException(
                "Passing op_args or op_kwargs is not supported across different Python major versions for "
                f"ExternalPythonOperator. Please use string_args.Sys version: {sys.version_info}. Virtual "
                f"environment version: {major}")
        return self._execute_python_callable_in_subprocess(python_path)

    def _iter_serializable_context_keys(self) -> Iterator[str]:
        yield from self.BASE_SERIALIZABLE_CONTEXT_KEYS
        if self.expect_airflow and self._get_airflow_version_from_target_env():
            yield from self.AIRFLOW_SERIALIZABLE_CONTEXT_KEYS
            yield from self.PENDULUM_SERIALIZABLE_CONTEXT_KEYS
        elif self._is_pendulum_installed_in_target_env():
            yield from self.PENDULUM_SERIALIZABLE_CONTEXT_KEYS

    def _is_pendulum_installed_in_target_env(self) -> bool:
        try:
            subprocess.check_call([self.python, "-c", "import pendulum"], env=self._subprocess_env())
        except Exception as err:
            if self.expect_pendulum:
                self.log.warning("When checking for Pendulum installed in virtual environment got %s", err)
                self.log.warning("Pendulum is not properly installed in the virtual environment Pendulum context "
                                 "keys will not be available. Please Install Pendulum or Airflow in your virtual "
                                 "environment to access them.")
            return False
        return True

    def _get_airflow_version_from_target_env(self) -> str | None:
        """Airflow's check that the target has the same Airflow: Updraft is no Airflow distribution, so the target
        has the matching one only when it reports Updraft's ``airflow.__version__``."""
        from airflow import __version__ as airflow_version

        script = "from importlib.metadata import version; print(version('apache-airflow'))"
        try:
            target = subprocess.check_output([self.python, "-c", script], text=True,
                                             stderr=subprocess.DEVNULL, env=self._subprocess_env()).strip()
            if target != airflow_version:
                raise AirflowException(
                    f"The version of Airflow installed for the {self.python} ({target}) is different than the "
                    f"runtime Airflow version: {airflow_version}. Make sure your environment has the same Airflow "
                    "version installed as the Airflow runtime.")
            return target
        except Exception as err:
            self.log.warning("When checking for Airflow installed in virtual environment got %s", err)
            self.log.warning("This means that Airflow is not properly installed by %s. Airflow context keys will "
                             "not be available. Please Install Airflow %s in your environment to access them.",
                             self.python, airflow_version)
            return None


class BranchPythonVirtualenvOperator(BranchMixIn, PythonVirtualenvOperator):
    """The callable, run in a virtualenv, returns the task id(s) to follow; the other direct downstream tasks are
    skipped (Airflow's ``choose_branch`` over ``PythonVirtualenvOperator.execute``)."""

    inherits_from_skipmixin: ClassVar[bool] = True

    def execute(self, context: Any) -> Any:
        return self.do_branch(context, PythonVirtualenvOperator.execute(self, context))


class BranchExternalPythonOperator(BranchMixIn, ExternalPythonOperator):
    """The callable, run by the given interpreter, returns the task id(s) to follow."""

    inherits_from_skipmixin: ClassVar[bool] = True

    def execute(self, context: Any) -> Any:
        return self.do_branch(context, ExternalPythonOperator.execute(self, context))
