"""Variable and Connection lookups: environment variables first (Airflow's names and formats), then the store."""

from __future__ import annotations

import json

import pytest

from airflow.models import Connection as ModelsConnection
from airflow.models import Variable as ModelsVariable
from airflow.sdk import Connection, Variable
from updraft.sdk import connection as connection_module
from updraft.sdk import variable as variable_module
from updraft.sdk.exceptions import AirflowException, AirflowNotFoundException


@pytest.fixture(autouse=True)
def _env_only_backends():
    variable_module.reset_backends()
    connection_module.reset_backends()
    yield
    variable_module.reset_backends()
    connection_module.reset_backends()


def test_one_class_for_both_import_paths():
    assert ModelsVariable is Variable
    assert ModelsConnection is Connection


def test_variable_from_environment(monkeypatch):
    monkeypatch.setenv("AIRFLOW_VAR_SOURCE_BUCKET", "raw-data")
    monkeypatch.setenv("AIRFLOW_VAR_SETTINGS", '{"retries": 3}')
    assert Variable.get("source_bucket") == "raw-data"
    assert Variable.get("settings", deserialize_json=True) == {"retries": 3}


def test_missing_variable_raises_airflows_keyerror_or_returns_default():
    with pytest.raises(KeyError) as info:
        Variable.get("nope")
    assert info.value.args == ("Variable nope does not exist.",)
    assert Variable.get("nope", "fallback") == "fallback"
    assert Variable.get("nope", default=None) is None
    assert Variable.get("nope", default_var=[]) == []  # Airflow 2's keyword


def test_store_backend_is_asked_after_the_environment(monkeypatch):
    store = {"shared": "from-store", "only_store": '{"a": 1}'}
    written = []
    variable_module.register_backend(store.get, setter=lambda k, v, d: written.append((k, v, d)))
    monkeypatch.setenv("AIRFLOW_VAR_SHARED", "from-env")
    assert Variable.get("shared") == "from-env"
    assert Variable.get("only_store", deserialize_json=True) == {"a": 1}
    Variable.set("k", {"x": 1}, description="d", serialize_json=True)
    Variable.set("n", 5)
    assert written == [("k", json.dumps({"x": 1}, indent=2), "d"), ("n", "5", None)]


def test_a_failing_backend_does_not_hide_the_next():
    def broken(key):
        raise RuntimeError("store down")

    variable_module.register_backend(broken)
    variable_module.register_backend({"k": "v"}.get)
    assert Variable.get("k") == "v"


def test_set_without_a_store_is_a_clear_error():
    with pytest.raises(AirflowException, match="no variable store"):
        Variable.set("k", "v")


def test_setdefault():
    store: dict[str, str] = {}
    variable_module.register_backend(store.get, setter=lambda k, v, d: store.__setitem__(k, v))
    assert Variable.setdefault("k", "first") == "first"
    assert Variable.setdefault("k", "second") == "first"


def test_connection_from_uri_environment_variable(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_WAREHOUSE",
                       "postgresql://etl%40corp:p%40ss%2Fword@db.example.com:5432/analytics?sslmode=require")
    conn = Connection.get("warehouse")
    assert conn.conn_id == "warehouse"
    assert conn.conn_type == "postgres"
    assert (conn.host, conn.port, conn.schema) == ("db.example.com", 5432, "analytics")
    assert (conn.login, conn.password) == ("etl@corp", "p@ss/word")
    assert conn.extra_dejson == {"sslmode": "require"}
    assert "p@ss" not in repr(conn)


def test_connection_from_json_environment_variable(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_API", json.dumps({
        "conn_type": "http", "host": "api.example.com", "port": "443", "login": "me",
        "extra": {"timeout": 5},
    }))
    conn = Connection.get("api")
    assert (conn.conn_type, conn.host, conn.port, conn.login) == ("http", "api.example.com", 443, "me")
    assert conn.extra_dejson == {"timeout": 5}


def test_missing_connection_raises_airflows_error():
    with pytest.raises(AirflowNotFoundException) as info:
        Connection.get("nope")
    assert str(info.value) == "The conn_id `nope` isn't defined"


def test_connection_store_backend():
    connection_module.register_backend({"db": "mysql://u:p@h:3306/s"}.get)
    connection_module.register_backend(lambda cid: Connection(conn_id=cid, conn_type="aws") if cid == "aws" else None)
    assert Connection.get("db").conn_type == "mysql"
    assert Connection.get("aws").conn_type == "aws"


@pytest.mark.parametrize("uri", [
    "postgres://user:pass@host:5432/schema",
    "mysql://user:p%40ss@host/db?charset=utf8&ssl=1",
    "http://host",
    "google-cloud-platform://?key_path=%2Fkeys%2Fkey.json",
    "aws://?region_name=eu-west-1",
    "sqlite:///%2Ftmp%2Fdb.sqlite",
])
def test_uri_round_trip(uri):
    conn = Connection(conn_id="c", uri=uri)
    again = Connection(conn_id="c", uri=conn.get_uri())
    assert again == conn


def test_get_uri_matches_airflow():
    conn = Connection(conn_id="c", conn_type="google_cloud_platform", host="h", login="a b", password="p@ss",
                      port=1, schema="s", extra=json.dumps({"k": "v"}))
    assert conn.get_uri() == "google-cloud-platform://a%20b:p%40ss@h:1/s?k=v"
    nested = Connection(conn_id="c", conn_type="http", extra=json.dumps({"nested": {"a": 1}}))
    assert nested.get_uri() == "http:///?__extra__=%7B%22nested%22%3A+%7B%22a%22%3A+1%7D%7D"
    assert Connection(conn_id="c", uri=nested.get_uri()).extra_dejson == {"nested": {"a": 1}}


def test_host_with_protocol():
    conn = Connection(conn_id="c", uri="http://https://api.example.com/path")
    assert conn.host == "https://api.example.com"
    assert conn.schema == "path"


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"uri": "http://h", "host": "x"}, AirflowException, "You can't mix these two ways to create this object."),
    ({"port": "80"}, ValueError, "Expected integer value for `port`, but got '80' instead."),
    ({"port": 70000}, ValueError, "Expected value for `port` in the range 0-65535, but got 70000 instead."),
    ({"uri": "a://b://c://d"}, AirflowException, "Invalid connection string: a://b://c://d."),
])
def test_connection_validation(kwargs, error, message):
    with pytest.raises(error) as info:
        Connection(conn_id="c", **kwargs)
    assert message in str(info.value)


def test_as_json_round_trip():
    conn = Connection(conn_id="c", conn_type="http", host="h", port=80, extra={"a": 1})
    assert json.loads(conn.as_json()) == {"conn_type": "http", "host": "h", "port": 80, "extra": {"a": 1}}
    assert Connection.from_json(conn.as_json(), conn_id="c") == conn
