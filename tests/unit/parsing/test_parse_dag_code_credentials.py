"""Parse-time code gets the DAG-code role's credentials with its job, never the parser's (issue 18)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from updraft.parsing.isolation import IsolatedParser
from updraft.parsing.options import FileJob, ParseOptions
from updraft.parsing.scrub import use_dag_code_credentials

ROLE = {"AWS_ACCESS_KEY_ID": "ASIADAGCODEROLE00001", "AWS_SECRET_ACCESS_KEY": "dag-code-secret",
        "AWS_SESSION_TOKEN": "dag-code-token"}

PROBE = """\
import os
from airflow.sdk import DAG
creds = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
parent = open(f"/proc/{os.getppid()}/environ", "rb").read()
print("creds:", creds, "parent leaks:", b"parser-secret" in parent or b"AKIAPARSER" in parent)
with DAG(dag_id="probe", schedule=None):
    pass
"""


def test_parse_time_code_holds_the_dag_code_role_and_nothing_of_the_parser(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAPARSER0000000001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "parser-secret")
    (tmp_path / "probe.py").write_text(textwrap.dedent(PROBE))
    job = FileJob(str(tmp_path / "probe.py"), "probe.py", str(tmp_path))
    calls = []
    use_dag_code_credentials(lambda: calls.append(1) or dict(ROLE))
    try:
        with IsolatedParser(ParseOptions(timeout_s=5.0)) as parser:
            [with_role] = parser.parse([job])
            assert parser._client is not None and parser._client.proc is not None
            cmdline = Path(f"/proc/{parser._client.proc.pid}/cmdline").read_bytes()
            assert b"dag-code-secret" not in cmdline  # sent with the job, never in the server's argv
        use_dag_code_credentials(None)
        with IsolatedParser(ParseOptions(timeout_s=5.0)) as parser:
            [without] = parser.parse([job])
    finally:
        use_dag_code_credentials(None)
    assert f"creds: {ROLE!r} parent leaks: False" in with_role.logs
    assert with_role.dags and calls == [1]  # asked once per parse, not per file
    empty = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None}
    assert f"creds: {empty!r} parent leaks: False" in without.logs
