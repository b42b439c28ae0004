"""Attacks a DAG file can make on the parser, each refused (issue 18, parse child hygiene).

A DAG file runs arbitrary code at every parse: it must not outlive its parse, reach another file's result,
read Updraft's or AWS's secrets, or start processes without limit.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from tests.escapees import ESCAPE, gone_within, kill_survivors, new_marker
from updraft.parsing.isolation import IsolatedParser
from updraft.parsing.options import FileJob, ParseOptions

DAG = 'from airflow.sdk import DAG\nwith DAG(dag_id="{0}", schedule=None):\n    pass\n'


def job(folder: Path, name: str, body: str) -> FileJob:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return FileJob(str(path), name, str(folder))


def with_dag(code: str, dag: str) -> str:
    return textwrap.dedent(code) + dag


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that never comes in a container's init counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_dead(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_a_process_started_by_a_dag_file_does_not_survive_its_parse(tmp_path):
    pidfile = tmp_path / "sleep.pid"
    dag = job(tmp_path, "spawner.py", f"""\
        import subprocess
        from airflow.sdk import DAG
        proc = subprocess.Popen(["sleep", "1000"])
        open({str(pidfile)!r}, "w").write(str(proc.pid))
        with DAG(dag_id="spawner", schedule=None):
            pass
        """)
    with IsolatedParser(ParseOptions(timeout_s=5.0)) as parser:
        [result] = parser.parse([dag])
    assert result.dag_ids == ["spawner"] and result.import_errors == []
    assert wait_dead(int(pidfile.read_text())), "the DAG file's subprocess outlived the parse"


def test_a_forked_child_holding_the_result_pipe_does_not_turn_a_valid_dag_into_a_timeout(tmp_path):
    pidfile = tmp_path / "fork.pid"
    dag = job(tmp_path, "forker.py", f"""\
        import os, time
        from airflow.sdk import DAG
        pid = os.fork()
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        open({str(pidfile)!r}, "w").write(str(pid))
        with DAG(dag_id="forker", schedule=None):
            pass
        """)
    with IsolatedParser(ParseOptions(timeout_s=3.0)) as parser:
        [result] = parser.parse([dag])
    # Waiting for the grandchild's end of the pipe would run into the timeout: an import error, not the DAG
    # (how long the parse takes is bench/parse_hygiene_bench.py's figure, not asserted here).
    assert result.import_errors == [] and result.dag_ids == ["forker"]
    assert wait_dead(int(pidfile.read_text()))


def test_a_dag_file_cannot_forge_the_result_of_another_file_through_the_fork_servers_pipes(tmp_path):
    """The attack of issue 18: the child wrote a reply for another file's index down the server's reply pipe."""
    forged = json.dumps({"relative_path": "victim.py", "file_hash": "x", "dags": [], "import_errors": []}).encode()
    meta = {"r": 1, "i": 1, "status": 0, "timeout": False, "rss": 1, "elapsed": 0.0, "logs": "", "n": len(forged)}
    message = json.dumps(meta).encode() + b"\n" + forged
    attacker = job(tmp_path, "attacker.py", f"""\
        import os
        from airflow.sdk import DAG
        for fd in range(3, 256):
            try:
                os.write(fd, {message!r})
            except OSError:
                pass
        print("open:", sorted(int(fd) for fd in os.listdir("/proc/self/fd")))
        """)
    victim = job(tmp_path, "victim.py", "import time\n" + "time.sleep(0.5)\n" + DAG.format("victim"))
    with IsolatedParser(ParseOptions(timeout_s=5.0, parallelism=2)) as parser:
        results = parser.parse([attacker, victim])
    assert results[1].dag_ids == ["victim"]
    # stdio, the result pipe and the descriptor listdir itself opens: nothing of the server's or the siblings'
    opened = json.loads(results[0].logs.split("open:", 1)[1].strip().splitlines()[0])
    assert len(opened) == 5 and opened[:3] == [0, 1, 2]


def test_a_result_naming_another_file_is_refused(tmp_path):
    """Even on its own result pipe, a file reports only for itself."""
    forged = {"relative_path": "other.py", "file_hash": "x", "dags": [], "import_errors": []}
    liar = job(tmp_path, "liar.py", f"""\
        import json, os
        from airflow.sdk import DAG
        fds = [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2]
        for fd in fds:
            try:
                os.write(fd, json.dumps({forged!r}).encode())
            except OSError:
                pass
        os._exit(0)
        """)
    with IsolatedParser(ParseOptions(timeout_s=5.0)) as parser:
        [result] = parser.parse([liar])
    assert result.relative_path == "liar.py"
    [error] = result.import_errors
    assert "reported a result for 'other.py'" in error.message and "refused" in error.message


def test_parse_time_code_sees_no_aws_or_updraft_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "parser-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "parser-token")
    monkeypatch.setenv("UPDRAFT_TABLE", "updraft-table")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AIRFLOW_VAR_TEAM", "data")
    snoop = job(tmp_path, "snoop.py", with_dag("""\
        import os
        from airflow.sdk import DAG
        seen = sorted(k for k in os.environ if k.startswith(("AWS_", "UPDRAFT_", "AIRFLOW_VAR_")))
        raw = open("/proc/self/environ", "rb").read()
        print("seen:", seen, "raw:", b"parser-secret" in raw or b"UPDRAFT_TABLE" in raw)
        """, DAG.format("snoop")))
    with IsolatedParser(ParseOptions(timeout_s=5.0)) as parser:  # started after the environment is set
        [result] = parser.parse([snoop])
    seen = result.logs.split("seen:", 1)[1].split(" raw:")[0]
    assert not {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "UPDRAFT_TABLE"} & set(eval(seen))
    assert {"AIRFLOW_VAR_TEAM", "AWS_REGION"} <= set(eval(seen))
    assert "raw: False" in result.logs


def test_a_forked_parse_scrubs_the_environment_too(tmp_path, monkeypatch):
    """Forking from the caller's process (no fork server), the child still removes the secrets."""
    from updraft.parsing.child import default_target

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "parser-secret")
    monkeypatch.setenv("UPDRAFT_TABLE", "updraft-table")
    snoop = job(tmp_path, "snoop.py", "import os\nprint('seen:', sorted(k for k in os.environ "
                "if k.startswith(('AWS_SECRET', 'UPDRAFT_'))))\n" + DAG.format("snoop"))
    parser = IsolatedParser(ParseOptions(timeout_s=5.0), target=default_target, fork_server=False)
    [result] = parser.parse([snoop])
    assert "seen: []" in result.logs
    assert os.environ["UPDRAFT_TABLE"] == "updraft-table"  # the caller's own environment is untouched


def test_a_parse_has_a_process_cap_and_a_cpu_time_cap(tmp_path):
    probe = job(tmp_path, "limits.py", with_dag("""\
        import resource
        from airflow.sdk import DAG
        print("nproc:", resource.getrlimit(resource.RLIMIT_NPROC), "cpu:", resource.getrlimit(resource.RLIMIT_CPU))
        """, DAG.format("limits")))
    with IsolatedParser(ParseOptions(timeout_s=5.0, max_processes=8)) as parser:
        [result] = parser.parse([probe])
    line = result.logs.split("nproc:", 1)[1].splitlines()[0]
    nproc, cpu = line.split("cpu:")
    soft, hard = eval(nproc)
    assert soft == hard and soft != -1
    assert eval(cpu) == (6, 7)


@pytest.mark.skipif(os.geteuid() == 0, reason="the kernel does not apply RLIMIT_NPROC to root")
def test_a_fork_bomb_is_stopped_by_the_process_cap(tmp_path):
    bomb = job(tmp_path, "bomb.py", with_dag("""\
        import os
        from airflow.sdk import DAG
        started = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    import time; time.sleep(60); os._exit(0)
                started += 1
        except OSError:
            pass
        print("started:", started)
        """, DAG.format("bomb")))
    with IsolatedParser(ParseOptions(timeout_s=5.0, max_processes=8)) as parser:
        [result] = parser.parse([bomb])
    assert int(result.logs.split("started:", 1)[1].split()[0]) < 200


ENDINGS = {
    "returns": "",
    "times out": "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(1000)\n",
    "exits": "import os\nos._exit(0)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("fork_server", [True, False], ids=["fork server", "forked from the caller"])
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_nothing_a_dag_file_starts_outlives_its_parse_setsid_and_double_forks_included(tmp_path, ending,
                                                                                      fork_server):
    """Issue 34: ``fork(); setsid(); fork()`` at a file's top level left a process running after the parse. The
    process ignores SIGTERM and keeps forking; the file then ends its parse normally, past its timeout (SIGALRM
    ignored: the parser kills it) or with ``os._exit`` (past the child's own sweep: the fork server's). The next
    parse on the same warm parser finds none of it, nor does the test."""
    from updraft.parsing.child import default_target

    if ending == "exits" and not fork_server:
        pytest.skip("forking from the caller's process, orphans of a child that skips its sweep go to init "
                    "(forker's module notes): the fork server closes that gap")
    marker = new_marker()
    escaper = job(tmp_path, "escaper.py", ESCAPE + f"escape({marker!r})\n" + ENDINGS[ending] + DAG.format("escaper"))
    looker = job(tmp_path, "looker.py", ESCAPE + f"print('survivors:', survivors({marker!r}))\n" + DAG.format("l"))
    options = ParseOptions(timeout_s=1.0 if ending == "times out" else 5.0)
    parser = (IsolatedParser(options) if fork_server
              else IsolatedParser(options, target=default_target, fork_server=False))
    try:
        with parser:
            [escaped] = parser.parse([escaper])
            [looked] = parser.parse([looker])
        assert (escaped.dag_ids == ["escaper"]) is (ending == "returns")
        assert "survivors: []" in looked.logs, looked.logs
        assert gone_within(marker, 2.0) is not None, "a process the DAG file started outlived its parse"
    finally:
        kill_survivors(marker)
