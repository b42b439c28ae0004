"""The fork server: user code never reaches the caller, and a killed server costs only its in-flight files."""

from __future__ import annotations

import os
import sys

import pytest

from updraft.parsing.isolation import IsolatedParser
from updraft.parsing.options import FileJob, ParseOptions

DAG = 'from airflow.sdk import DAG\nwith DAG(dag_id="{0}", schedule=None):\n    pass\n'


def jobs_for(folder, bodies: dict[str, str]) -> list[FileJob]:
    jobs = []
    for name, body in bodies.items():
        path = folder / name
        path.write_text(body)
        jobs.append(FileJob(str(path), name, str(folder)))
    return jobs


@pytest.mark.slow
def test_a_file_that_kills_the_server_fails_alone_and_the_server_comes_back(tmp_path):
    jobs = jobs_for(
        tmp_path,
        {
            "a.py": DAG.format("a"),
            "b_killer.py": "import os, signal\nfrom airflow.sdk import DAG\nos.kill(os.getppid(), signal.SIGKILL)\n",
            "c.py": DAG.format("c"),
        },
    )
    with IsolatedParser(ParseOptions(timeout_s=2.0, parallelism=1)) as parser:
        results = parser.parse(jobs)
        assert results[0].dag_ids == ["a"]
        assert results[1].dags == []
        assert "parse server stopped" in results[1].import_errors[0].message
        assert results[2].dag_ids == ["c"]
        # and it keeps working afterwards
        assert parser.parse_one(jobs[0]).dag_ids == ["a"]


@pytest.mark.slow
def test_an_abandoned_run_does_not_leak_into_the_next(tmp_path):
    jobs = jobs_for(tmp_path, {f"f{i}.py": DAG.format(f"d{i}") for i in range(6)})
    with IsolatedParser(ParseOptions(timeout_s=2.0, parallelism=2)) as parser:
        for _index, _parsed in parser.iter_parse(jobs):
            break  # the caller stops listening half-way
        again = parser.parse(jobs[:2])
        assert [r.dag_ids for r in again] == [["d0"], ["d1"]]


def test_user_code_runs_in_neither_caller_nor_server(tmp_path):
    marker = tmp_path / "pids.txt"
    jobs = jobs_for(
        tmp_path,
        {"who.py": f"import os\nfrom airflow.sdk import DAG\nopen({str(marker)!r}, 'w').write(f'{{os.getpid()}} {{os.getppid()}}')\n"},
    )
    before = set(sys.modules)
    with IsolatedParser(ParseOptions(timeout_s=2.0)) as parser:
        parser.parse(jobs)
        server_pid = parser._client.proc.pid
    child_pid, parent_pid = map(int, marker.read_text().split())
    assert parent_pid == server_pid
    assert child_pid not in (os.getpid(), server_pid)
    # Other tests (the task runtime) legitimately import DAG files in this process; this parse added none.
    assert not [m for m in set(sys.modules) - before if m.startswith("unusual_prefix")]
