"""Builders for the store tests: serialized DAGs and parsed files without running the parser."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from typing import Any

import pendulum

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.serialization import serialize_dag

T0 = pendulum.datetime(2024, 1, 1, tz="UTC")


def dag_doc(dag_id: str, *, path: str = "a.py", schedule: Any = None, start_date: dt.datetime | None = T0,
            tasks: tuple[str, ...] = ("t",), file_hash: str = "0" * 64, **kwargs: Any) -> dict[str, Any]:
    with DAG(dag_id, schedule=schedule, start_date=start_date, **kwargs) as dag:
        for task_id in tasks:
            EmptyOperator(task_id=task_id)
    return serialize_dag(dag, relative_fileloc=path, file_hash=file_hash)


def parsed_file(path: str, *docs: dict[str, Any], errors: tuple[str, ...] = (),
                version: str | None = "v1") -> ParsedFile:
    content = "".join(sorted(str(d) for d in docs)) + "".join(errors)
    return ParsedFile(
        relative_path=path,
        file_hash=hashlib.sha256(content.encode()).hexdigest(),
        dags=list(docs),
        import_errors=[ImportErrorRecord(filename=path, lineno=1, message=m, stacktrace=f"Traceback\n{m}")
                       for m in errors],
        file_version=version,
    )


def race(n: int, action) -> list:
    """Run ``action(i)`` in ``n`` threads released together; their results in thread order."""
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = action(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
