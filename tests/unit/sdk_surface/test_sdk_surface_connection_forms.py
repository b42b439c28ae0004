"""``AIRFLOW_CONN_*`` values parsed as Airflow 3.3's task SDK parses them (``Connection.from_uri`` /
``from_json`` behind its ``EnvironmentVariablesBackend``), corner by corner.

Each expected value below is what ``airflow.sdk.definitions.connection.Connection`` (task SDK 1.3.2) answers for
the same input, checked against that source; the cases cover URL-encoded parts, ``__extra__``, query parameters
into ``extra`` (kept as strings: the SDK, unlike core's model, does not JSON-decode them), schemes with ``-`` and
``_``, hosts with their own protocol, and the JSON form's ``port``, ``extra`` and key rules.
"""

from __future__ import annotations

import json

import pytest

from airflow.sdk import Connection
from updraft.sdk import connection as connection_module
from updraft.sdk.exceptions import AirflowException

FIELDS = ("conn_type", "host", "schema", "login", "password", "port", "extra")


@pytest.fixture(autouse=True)
def _env_only_backends():
    connection_module.reset_backends()
    yield
    connection_module.reset_backends()


def fields(conn: Connection) -> dict[str, object]:
    return {name: getattr(conn, name) for name in FIELDS if getattr(conn, name) not in (None, "")}


@pytest.mark.parametrize(("value", "expected"), [
    ("postgresql://user:pass@host:5432/schema",
     {"conn_type": "postgres", "host": "host", "schema": "schema", "login": "user", "password": "pass", "port": 5432}),
    ("my-type://h", {"conn_type": "my_type", "host": "h"}),
    ("my_type://h", {"schema": "y_type//h"}),  # "_" is no URI scheme character: get_uri() writes "-"
    ("My-Type://Host.Example.COM", {"conn_type": "my_type", "host": "host.example.com"}),
    ("aws://AKIA:secret%2Fwith%2Fslash@", {"conn_type": "aws", "login": "AKIA", "password": "secret/with/slash"}),
    ("http://u%3Ax:p%3Ay@h", {"conn_type": "http", "host": "h", "login": "u:x", "password": "p:y"}),
    ("http://%2Ftmp%2Fsock/db", {"conn_type": "http", "host": "/tmp/sock", "schema": "db"}),
    ("http://host/a%2Fb", {"conn_type": "http", "host": "host", "schema": "a/b"}),
    ("sqlite:///%2Ftmp%2Fdb.sqlite", {"conn_type": "sqlite", "schema": "/tmp/db.sqlite"}),
    ("http://https://api.example.com/path", {"conn_type": "http", "host": "https://api.example.com",
                                             "schema": "path"}),
    ("aws://?region_name=eu-west-1&num=1&flag=true",
     {"conn_type": "aws", "extra": json.dumps({"region_name": "eu-west-1", "num": "1", "flag": "true"})}),
    ("http://h?a=1&a=2&b", {"conn_type": "http", "host": "h", "extra": json.dumps({"a": "2", "b": ""})}),
    ("aws://?__extra__=%7B%22region_name%22%3A+%22eu-west-1%22%7D&other=1",
     {"conn_type": "aws", "extra": '{"region_name": "eu-west-1"}'}),
    ("  http://h  ", {"conn_type": "http", "host": "h"}),
    ('{"conn_type": "google-cloud-platform", "port": "443", "extra": {"k": 1}}',
     {"conn_type": "google_cloud_platform", "port": 443, "extra": '{"k": 1}'}),
    ('{"conn_type": "aws", "extra": "{\\"region_name\\": \\"x\\"}"}',
     {"conn_type": "aws", "extra": '{"region_name": "x"}'}),
    ('{"conn_type": "http", "host": "h", "port": 0}', {"conn_type": "http", "host": "h"}),
    ('{"conn_type": "http", "host": "h", "port": ""}', {"conn_type": "http", "host": "h"}),
    ('{"conn_type": "http", "host": "h", "port": 1.5}', {"conn_type": "http", "host": "h", "port": 1}),
    ('{"conn_type": "http", "host": "h", "port": true}', {"conn_type": "http", "host": "h", "port": 1}),
    ('{"conn_type": "aws", "extra": {}}', {"conn_type": "aws"}),
])
def test_environment_value_parsed_as_airflow(monkeypatch, value, expected):
    monkeypatch.setenv("AIRFLOW_CONN_THE_CONN", value)
    conn = Connection.get("the_conn")
    assert conn.conn_id == "the_conn"
    assert fields(conn) == expected


def test_json_form_with_its_own_conn_id_is_refused_as_in_airflow(monkeypatch):
    """Airflow's ``from_json`` passes every key to the constructor: ``conn_id`` beside the backend's id is a
    TypeError there (the value is no connection), so the id can never disagree with the variable's name."""
    with pytest.raises(TypeError, match="conn_id"):
        Connection.from_json('{"conn_type": "aws", "conn_id": "other"}', conn_id="mine")
    monkeypatch.setenv("AIRFLOW_CONN_MINE", '{"conn_type": "aws", "conn_id": "other"}')
    with pytest.raises(AirflowException, match="neither a connection URI nor Airflow's JSON"):
        Connection.get("mine")


def test_blank_environment_value_is_no_connection(monkeypatch):
    """Airflow skips an empty ``AIRFLOW_CONN_*`` and fails on a blank one, asking the next backend either way."""
    monkeypatch.setenv("AIRFLOW_CONN_DB", "   ")
    connection_module.register_backend(lambda cid: "postgres://stored-host/db" if cid == "db" else None)
    assert Connection.get("db").host == "stored-host"


def test_uri_of_port_zero_has_no_port():
    assert Connection(conn_id="c", conn_type="http", host="h", port=0).get_uri() == "http://h"
    assert Connection(conn_id="c", conn_type="http", port=0).get_uri() == "http://"


def test_a_missing_aws_default_is_the_not_found_error_the_aws_hook_falls_back_on(monkeypatch):
    """The amazon provider's ``AwsGenericHook.conn_config`` catches ``AirflowNotFoundException`` (imported through
    ``common.compat.sdk``: ``airflow.sdk.exceptions``, else ``airflow.exceptions``) from ``BaseHook.get_connection``,
    warns and uses boto3's default credentials, which in a task child are the DAG-code role's. So a missing
    ``aws_default`` must raise exactly that class, and an ``aws://`` connection carries no keys."""
    import airflow.exceptions
    import airflow.sdk.exceptions
    from airflow.sdk import BaseHook

    monkeypatch.delenv("AIRFLOW_CONN_AWS_DEFAULT", raising=False)
    with pytest.raises(airflow.sdk.exceptions.AirflowNotFoundException) as info:
        BaseHook.get_connection("aws_default")
    assert isinstance(info.value, airflow.exceptions.AirflowNotFoundException)
    assert str(info.value) == "The conn_id `aws_default` isn't defined"
    monkeypatch.setenv("AIRFLOW_CONN_AWS_DEFAULT", "aws://?region_name=eu-west-1")
    conn = BaseHook.get_connection("aws_default")
    assert (conn.login, conn.password, conn.extra_dejson) == (None, None, {"region_name": "eu-west-1"})
