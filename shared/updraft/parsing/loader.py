"""Run one DAG file and turn what it defined into serialized DAGs (inside the child).

This is Airflow's ``DagBag.process_file`` + ``_process_modules`` for a single
file: a unique module name so two ``dag.py`` files in different folders never
collide, the DAGs folder on ``sys.path`` so sibling modules import, DAGs found
in module globals *and* those auto-registered by ``with DAG(...)`` / ``@dag``
calls while the file ran, each validated on its own so one broken DAG does not
hide the others of the same file.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from updraft.model.parse_results import ImportErrorRecord, ParsedFile, PluginsReport
from updraft.parsing.errors import ParseTimeout, format_exception_message, record_from_exception
from updraft.parsing.options import FileJob, ParseOptions

if TYPE_CHECKING:
    from types import ModuleType

    from updraft.sdk.dag import DAG

UNUSUAL_MODULE_PREFIX = "unusual_prefix_"


def unique_module_name(path: str) -> str:
    """Airflow's ``get_unique_dag_module_name``: ``unusual_prefix_<sha1 of path>_<stem>``.

    Kept identical so that code which looks at ``__name__`` (or pickles by
    module name) behaves the way it does under Airflow.
    """
    path_hash = hashlib.sha1(path.encode("utf-8"), usedforsecurity=False).hexdigest()
    stem = re.sub(r"[.-]", "_", Path(path).stem)
    return f"{UNUSUAL_MODULE_PREFIX}{path_hash}_{stem}"


def _exec_module(mod_name: str, path: str, source: bytes) -> ModuleType:
    """Import the file from the bytes already read (and hashed).

    Compiling those exact bytes, rather than letting the import system re-read
    the file, guarantees that the hash stored with the DAGs is the hash of the
    code that produced them, even if the file changes while it is parsed.
    """
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None:  # pragma: no cover - only for paths the import system refuses
        raise ImportError(f"cannot build a module spec for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    code = compile(source, path, "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module


def collect_dags(module: ModuleType | None, registered: list[DAG]) -> list[DAG]:
    """The DAGs Airflow 3 would keep for this file, in a deterministic order.

    Globals first, then auto-registered ones (as Airflow's ``_process_modules``
    merges them); the same object reached both ways counts once. Registration
    is reset right before the file runs in a fresh child, so everything in
    ``registered`` was created while this file ran, including DAGs built by
    factory helpers in sibling modules (Airflow attributes those to the file
    that was being imported too). Two distinct objects with one dag_id in the
    same file: the one defined last wins, as in Airflow's bag.
    """
    # lazy: the parse child imports only what it runs (the SDK's DAG comes with the DAG file)
    from updraft.sdk.dag import DAG

    found: dict[int, DAG] = {}
    if module is not None:
        for value in list(vars(module).values()):
            if isinstance(value, DAG):
                found.setdefault(id(value), value)
    for dag in registered:
        found.setdefault(id(dag), dag)
    by_id: dict[str, DAG] = {}
    for dag in found.values():
        by_id[dag.dag_id] = dag
    return [by_id[k] for k in sorted(by_id)]


def _guess_dag_line(source: bytes, dag_id: str) -> int | None:
    """Where the DAG is probably defined: the first line quoting its dag_id.

    Validation errors happen after the file ran, so there is no frame to point
    at; this is usually the ``DAG(...)``/``@dag(...)`` line, which is where the
    user wants to look.
    """
    needles = (f'"{dag_id}"'.encode(), f"'{dag_id}'".encode())
    for lineno, line in enumerate(source.splitlines(), start=1):
        if any(n in line for n in needles):
            return lineno
    return None


def _resource_hint(exc: BaseException, options: ParseOptions) -> str | None:
    if isinstance(exc, MemoryError) and options.memory_limit_mb:
        return f"the DAG file used more than the parse memory limit of {options.memory_limit_mb} MiB"
    if isinstance(exc, ParseTimeout):
        return "DAG files must finish their top-level code within the parse timeout, which is configurable"
    return None


def _load_plugins(folder: str | None) -> PluginsReport:
    """Register the plugins folder's plugins in this (child) process and report them.

    Plugins are user code too, so they are loaded here and never in the
    parent; a broken plugin is reported in the file's captured output, as
    Airflow logs plugin errors rather than failing every DAG file, and in the
    report (Airflow's plugin import errors).
    """
    # lazy: the parse child imports only what it runs (plugins only with a plugins folder)
    from updraft.parsing.plugin_info import plugin_info
    from updraft.plugins import load_plugins_folder

    if not folder:
        return PluginsReport()
    result = load_plugins_folder(folder)
    for path, error in result.import_errors.items():
        print(f"Failed to import plugin {path}: {error}", file=sys.stderr)
    return PluginsReport(plugins=[plugin_info(cls, folder) for cls in result.plugins],
                         import_errors=dict(result.import_errors))


def load_dag_file(job: FileJob, options: ParseOptions) -> ParsedFile:
    """Run ``job.path`` in this process and return what it produced.

    Meant to run in a throw-away child (see ``child``): it imports user
    code into this interpreter and leaves it there.
    """
    # lazy: the parse child imports only what it runs (the SDK's registry comes with the DAG file)
    from updraft.sdk._internal import dag_registry
    from updraft.sdk._internal.bundle_root import use_dags_folder

    started = time.perf_counter()
    path = job.path
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as exc:
        record = ImportErrorRecord(
            filename=job.relative_path,
            lineno=None,
            message=format_exception_message(exc),
            stacktrace=traceback.format_exc(),
        )
        return ParsedFile(job.relative_path, "", [], [record], time.perf_counter() - started)
    digest = hashlib.sha256(source).hexdigest()

    folder = job.dags_folder
    if folder and folder not in sys.path:
        # Appended, as Airflow does with the DAGs folder: installed packages win
        # over a same-named file in the folder.
        sys.path.append(folder)
    if folder:
        use_dags_folder(folder)

    plugins = _load_plugins(options.plugins_folder)

    errors: list[ImportErrorRecord] = []
    dag_registry.reset()
    module = None
    try:
        module = _exec_module(unique_module_name(path), path, source)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and pytest.skip included, as in Airflow
        dag_registry.reset()
        errors.append(
            record_from_exception(
                exc, path=path, relative_path=job.relative_path, hint=_resource_hint(exc, options)
            )
        )
    dags = collect_dags(module, dag_registry.registered_dags()) if module is not None else []
    dag_registry.reset()

    serialized = [] if module is None else _validate_and_serialize(dags, job, options, digest, source, errors)
    return ParsedFile(
        relative_path=job.relative_path,
        file_hash=digest,
        dags=serialized,
        import_errors=errors,
        duration_s=time.perf_counter() - started,
        file_version=job.file_version,
        plugins=plugins,
    )


def _validate_and_serialize(
    dags: list[DAG], job: FileJob, options: ParseOptions, digest: str, source: bytes, errors: list[ImportErrorRecord]
) -> list[dict[str, Any]]:
    # lazy: the parse child imports only what it runs (horizons and serialization after the file ran)
    from updraft.parsing.timetable_horizons import TimetableContext, add_horizon
    from updraft.serialization import serialize_dag

    context = TimetableContext.from_json(job.timetable_context or options.timetable_context)
    out: list[dict[str, Any]] = []
    for dag in dags:
        # Airflow points every DAG at the module that was imported, even one
        # built by a helper in a sibling module.
        with contextlib.suppress(AttributeError):
            dag.fileloc = job.path
        try:
            dag.validate()
            dag.resolve_template_files()
        except Exception as exc:
            message = format_exception_message(exc)
            errors.append(
                ImportErrorRecord(
                    filename=job.relative_path,
                    lineno=_guess_dag_line(source, dag.dag_id),
                    message=message,
                    stacktrace=message,
                    dag_id=dag.dag_id,
                )
            )
            continue
        try:
            document = serialize_dag(dag, relative_fileloc=job.relative_path, file_hash=digest)
            add_horizon(document, dag, context)
            out.append(document)
        except Exception as exc:
            record = record_from_exception(
                exc, path=job.path, relative_path=job.relative_path, dag_id=dag.dag_id
            )
            record.message = f"Updraft could not serialize DAG {dag.dag_id}: {record.message}"
            errors.append(record)
    return out


# A DAG file written by Updraft (not by a user) that touches the common paths:
# operators, TaskFlow, groups, params, a cron timetable. Running it once in the
# parent fills every lazy import and cache those paths have, so each child
# inherits them instead of rebuilding them per file.
_WARM_UP_SOURCE = """
from datetime import datetime, timedelta
from airflow.sdk import DAG, Param, TaskGroup, chain, dag, task
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator

with DAG(
    dag_id="updraft_warm_up_classic",
    schedule="0 3 * * *",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    tags=["warm"],
    default_args={"retries": 1, "retry_delay": timedelta(minutes=1)},
    params={"n": Param(1, type="integer")},
):
    with TaskGroup("group"):
        first = EmptyOperator(task_id="first")
        bash = BashOperator(task_id="bash", bash_command="echo {{ ds }}")
    py = PythonOperator(task_id="py", python_callable=print)
    chain(first, bash, py)


@task
def produce(k: int):
    return k


@dag(dag_id="updraft_warm_up_taskflow", schedule=None, start_date=datetime(2024, 1, 1))
def warm():
    chain(*[produce.override(task_id=f"t{k}")(k) for k in range(3)])


warm()
"""


def warm_up_dry_run() -> None:
    """Parse Updraft's own sample DAG file in this process (the warm parent).

    Best effort: if the sample stops matching the SDK, parsing real files
    still works, only each child pays for the first use of those paths.
    """
    import json
    import tempfile

    # lazy: the parse child imports only what it runs (the SDK's registry only in a dry run)
    from updraft.sdk._internal import dag_registry

    with tempfile.TemporaryDirectory(prefix="updraft-warm-") as folder:
        path = os.path.join(folder, "updraft_warm_up.py")
        with open(path, "w") as f:
            f.write(_WARM_UP_SOURCE)
        job = FileJob(path=path, relative_path="updraft_warm_up.py", dags_folder="")
        try:
            parsed = load_dag_file(job, ParseOptions())
            json.dumps(parsed.to_dict())
        finally:
            sys.modules.pop(unique_module_name(path), None)
            dag_registry.reset()
