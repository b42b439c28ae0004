"""`updraft variables ...` and `updraft connections ...` against a running system, in Airflow's CLI shapes and
file formats; values reach the store as given and come back as the API shows them (sensitive ones masked)."""

from __future__ import annotations

import json

import pytest

from tests.functional.cli_system.cli_helpers import invoke

pytestmark = pytest.mark.slow


def test_variables_set_get_list_delete_import_export(local_system, tmp_path):
    assert invoke("variables", "set", "region", "eu-west-1", "--description", "where").stdout == \
        "Variable region created\n"
    assert invoke("variables", "set", "cfg", '{"a": 1}', "--json").exit_code == 0
    assert invoke("variables", "set", "api_token", "tok-123456").exit_code == 0
    assert local_system.store.get_variable("api_token").value == "tok-123456"
    assert invoke("variables", "get", "region").stdout == "eu-west-1\n"
    assert invoke("variables", "get", "api_token").stdout == "***\n"
    assert json.loads(invoke("variables", "get", "cfg", "--json").stdout.replace("'", '"')) == {"a": 1}
    missing = invoke("variables", "get", "nope")
    assert (missing.exit_code, missing.stderr) == (1, "Error: Variable nope does not exist\n")
    assert invoke("variables", "get", "nope", "--default", "d").stdout == "d\n"
    assert json.loads(invoke("variables", "list", "-o", "json").stdout) == [
        {"key": "api_token"}, {"key": "cfg"}, {"key": "region"}]

    exported = tmp_path / "vars.json"
    assert invoke("variables", "export", str(exported)).exit_code == 0
    assert json.loads(exported.read_text()) == {"api_token": "***", "cfg": {"a": 1},
                                                "region": {"value": "eu-west-1", "description": "where"}}
    source = tmp_path / "in.json"
    source.write_text(json.dumps({"region": "us-east-1", "new": {"value": [1, 2], "description": "list"}}))
    skipped = invoke("variables", "import", str(source), "-a", "skip")
    assert "1 of 2 variables successfully updated." in skipped.stdout and "['region']" in skipped.stdout
    assert json.loads(local_system.store.get_variable("new").value) == [1, 2]
    assert invoke("variables", "import", str(source), "-a", "fail").exit_code == 1
    assert invoke("variables", "import", str(source)).exit_code == 0
    assert local_system.store.get_variable("region").value == "us-east-1"
    assert invoke("variables", "delete", "region").stdout == "Variable region deleted\n"
    assert local_system.store.get_variable("region") is None


def test_connections_add_get_list_delete_import_export(local_system, tmp_path):
    added = invoke("connections", "add", "db", "--conn-uri", "postgres://etl:p%40ss@db.example.com:5432/dw")
    assert added.stdout == "Successfully added `conn_id`=db\n", added.output
    stored = local_system.store.get_connection("db")
    assert (stored.conn_type, stored.login, stored.password, stored.port) == ("postgres", "etl", "p@ss", 5432)
    assert invoke("connections", "add", "db", "--conn-type", "http").exit_code == 1
    conflicting = invoke("connections", "add", "x", "--conn-uri", "http://h", "--conn-host", "h")
    assert "not compatible with the --conn-uri flag: ['conn_host']" in conflicting.stderr
    assert invoke("connections", "add", "api", "--conn-json",
                  '{"conn_type": "http", "host": "api.example.com", "extra": {"token": "t-123456"}}').exit_code == 0
    shown = json.loads(invoke("connections", "get", "api", "-o", "json").stdout)[0]
    assert shown["extra_dejson"] == {"token": "***"} and shown["host"] == "api.example.com"
    assert json.loads(invoke("connections", "list", "-o", "json").stdout) == [
        {"conn_id": "api", "conn_type": "http"}, {"conn_id": "db", "conn_type": "postgres"}]

    exported = tmp_path / "conns.json"
    assert invoke("connections", "export", str(exported)).exit_code == 0
    assert json.loads(exported.read_text())["db"]["password"] == "***"
    source = tmp_path / "in.json"
    source.write_text(json.dumps({"db": {"conn_type": "mysql", "host": "h"}, "s3": "aws://?region_name=eu-west-1"}))
    imported = invoke("connections", "import", str(source))
    assert "Could not import connection db: connection already exists." in imported.stdout
    assert json.loads(local_system.store.get_connection("s3").extra) == {"region_name": "eu-west-1"}
    assert invoke("connections", "import", str(source), "--overwrite").exit_code == 0
    assert local_system.store.get_connection("db").conn_type == "mysql"
    # Airflow's import rule: an object may repeat its key as conn_id; another id is refused, naming both.
    source.write_text(json.dumps({"same": {"conn_id": "same", "conn_type": "http"},
                                  "other": {"conn_id": "elsewhere", "conn_type": "http"}}))
    imported = invoke("connections", "import", str(source))
    assert local_system.store.get_connection("same").conn_type == "http"
    assert ("Could not import connection other: Mismatch conn_id. The dictionary key has the value: elsewhere. "
            "The item has the value: other.") in imported.stdout
    assert local_system.store.get_connection("other") is None
    assert invoke("connections", "delete", "db").stdout == "Successfully deleted connection with `conn_id`=db\n"
    assert invoke("connections", "delete", "db").exit_code == 1
