"""`updraft dags list|list-import-errors|next-execution|pause|unpause|upload` against a running system."""

from __future__ import annotations

import json
from urllib.parse import unquote_plus

import pytest

from tests.functional.cli_system.cli_helpers import chain_dag, invoke, params_dag
from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused

pytestmark = pytest.mark.slow


def test_list_reads_the_store_not_a_folder(local_system):
    local_system.add_dags(chain_dag("zeta"), chain_dag("alpha"), unpause=False)
    set_paused(local_system.store, "zeta", False)
    result = invoke("dags", "list", "-o", "json")
    assert result.exit_code == 0, result.output
    bucket = local_system.services.config.bucket
    assert json.loads(result.stdout) == [
        {"dag_id": "alpha", "fileloc": f"s3://{bucket}/dags/alpha.py", "owners": "data-eng", "is_paused": True,
         "tags": ["cli", "demo"]},
        {"dag_id": "zeta", "fileloc": f"s3://{bucket}/dags/zeta.py", "owners": "data-eng", "is_paused": False,
         "tags": ["cli", "demo"]},
    ]
    assert result.stderr == ""


# The API carries an import error's stack trace, not its line: the CLI reads the line from the trace, as the
# parser writes it.
BROKEN_TRACE = ('Traceback (most recent call last):\n  File "/dags/broken.py", line 2, in <module>\n'
                "ValueError: no such bucket")


def test_list_table_and_the_import_error_hint(local_system):
    local_system.add_dags(chain_dag("alpha"))
    register_parsed_file(local_system.store, ParsedFile(relative_path="broken.py", file_hash="x", import_errors=[
        ImportErrorRecord(filename="broken.py", lineno=2, message="ValueError: no such bucket",
                          stacktrace=BROKEN_TRACE)]), now=_now())
    result = invoke("dags", "list")
    assert result.exit_code == 0
    header, rule, row = result.stdout.splitlines()
    assert header.split(" | ")[0].strip() == "dag_id" and set(rule) <= {"=", "+"}
    assert row.startswith("alpha") and "data-eng" in row and "cli, demo" in row
    assert "updraft dags list-import-errors" in result.stderr

    errors = invoke("dags", "list-import-errors", "-o", "json")
    assert errors.exit_code == 1
    assert json.loads(errors.stdout) == [{"filepath": "broken.py", "error": BROKEN_TRACE,
                                          "lineno": 2, "dag_id": None, "message": "ValueError: no such bucket"}]


def test_no_import_errors_exit_zero(local_system):
    result = invoke("dags", "list-import-errors", "-o", "json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_next_execution_from_the_stored_next_run(local_system):
    local_system.add_dags(chain_dag("daily"))
    result = invoke("dags", "next-execution", "daily", "-n", "3")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00",
                                          "2024-01-03T00:00:00+00:00"]
    assert result.stderr == ""


def test_next_execution_of_a_paused_and_an_unscheduled_dag(local_system):
    local_system.add_dags(chain_dag("daily"), params_dag("manual_only"), unpause=False)
    paused = invoke("dags", "next-execution", "daily")
    assert paused.stdout.strip() == "2024-01-01T00:00:00+00:00"
    assert "PAUSED" in paused.stderr
    manual = invoke("dags", "next-execution", "manual_only")
    assert manual.exit_code == 0 and manual.stdout.strip() == "None"
    assert "No following schedule" in manual.stderr


def test_pause_and_unpause_change_the_store(local_system):
    local_system.add_dags(chain_dag("daily"), unpause=False)
    result = invoke("dags", "unpause", "daily", "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"dag_id": "daily", "is_paused": False}]
    assert local_system.store.get_dag_meta("daily").is_paused is False
    result = invoke("dags", "pause", "daily")
    assert result.exit_code == 0 and "True" in result.stdout
    assert local_system.store.get_dag_meta("daily").is_paused is True


@pytest.mark.parametrize("args", [
    ("dags", "pause", "nope"), ("dags", "unpause", "nope"), ("dags", "next-execution", "nope"),
    ("dags", "trigger", "nope"), ("runs", "list", "nope"), ("dags", "list-runs", "nope"),
    ("tasks", "states", "nope", "run"),
])
def test_unknown_dag_is_one_line_and_non_zero(local_system, args):
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr == "Error: Dag with dag_id: 'nope' not found\n"
    assert "Traceback" not in result.output


def test_upload_puts_files_under_the_dags_prefix(local_system, tmp_path):
    folder = tmp_path / "src"
    (folder / "pkg" / "__pycache__").mkdir(parents=True)
    (folder / "one.py").write_text("# one\n")
    (folder / "pkg" / "two.py").write_text("# two\n")
    (folder / "pkg" / "__pycache__" / "two.cpython-312.pyc").write_bytes(b"\0")
    single = tmp_path / "single.py"
    single.write_text("# single\n")

    result = invoke("dags", "upload", str(single), str(folder), "--dest", "team")
    assert result.exit_code == 0, result.output
    config = local_system.services.config
    s3 = local_system.services.client("s3")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=config.bucket, Prefix="dags/")["Contents"])
    assert keys == ["dags/team/one.py", "dags/team/pkg/two.py", "dags/team/single.py"]
    body = s3.get_object(Bucket=config.bucket, Key="dags/team/pkg/two.py")["Body"].read()
    assert body == b"# two\n"
    assert len(result.stdout.splitlines()) == 3 and f"s3://{config.bucket}/dags/team/one.py" in result.stdout
    # The system's S3 notification (what makes the parser run) sees the upload.
    sqs = local_system.services.client("sqs")
    messages = sqs.receive_message(QueueUrl=local_system.resources.dag_events_queue_url,
                                   MaxNumberOfMessages=10)["Messages"]
    bodies = [json.loads(m["Body"]) for m in messages]
    notified = {unquote_plus(b["Records"][0]["s3"]["object"]["key"]) for b in bodies if "Records" in b}
    assert notified == set(keys)  # S3 events carry URL-encoded keys


def test_upload_refuses_to_leave_the_dags_folder(local_system, tmp_path):
    (tmp_path / "a.py").write_text("")
    result = invoke("dags", "upload", str(tmp_path / "a.py"), "--dest", "../elsewhere")
    assert result.exit_code == 2 and "--dest" in result.stderr


def test_a_dags_folder_still_means_parse_it_here(local_system, tmp_path):
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "local_only.py").write_text(
        "from datetime import datetime\nfrom airflow.sdk import DAG\n"
        "with DAG('local_only', schedule=None, start_date=datetime(2024, 1, 1)):\n    pass\n")
    local_system.add_dags(chain_dag("in_system"))
    parsed = invoke("dags", "list", "--dags-folder", str(folder), "-o", "json")
    assert [d["dag_id"] for d in json.loads(parsed.stdout)] == ["local_only"]
    from_system = invoke("dags", "list", "-o", "json")
    assert [d["dag_id"] for d in json.loads(from_system.stdout)] == ["in_system"]


def _now():
    import datetime as dt

    return dt.datetime.now(dt.UTC)


def _one_dag_folder(tmp_path, dag_id: str):
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / f"{dag_id}.py").write_text(
        f"from datetime import datetime\nfrom airflow.sdk import DAG\n"
        f"with DAG('{dag_id}', schedule=None, start_date=datetime(2024, 1, 1)):\n    pass\n")
    return folder


def test_the_env_folder_gives_way_to_a_running_system(local_system, tmp_path, monkeypatch):
    """UPDRAFT_DAGS_FOLDER is what `updraft local` syncs: while the system runs, its view is the answer."""
    monkeypatch.setenv("UPDRAFT_DAGS_FOLDER", str(_one_dag_folder(tmp_path, "local_only")))
    local_system.add_dags(chain_dag("in_system"))
    result = invoke("dags", "list", "-o", "json")
    assert [d["dag_id"] for d in json.loads(result.stdout)] == ["in_system"]


def test_the_env_folder_is_parsed_when_no_system_runs(no_system, tmp_path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_DAGS_FOLDER", str(_one_dag_folder(tmp_path, "local_only")))
    result = invoke("dags", "list", "-o", "json")
    assert result.exit_code == 0, result.output
    assert [d["dag_id"] for d in json.loads(result.stdout)] == ["local_only"]
