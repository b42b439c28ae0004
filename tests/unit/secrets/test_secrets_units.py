"""The masker's rules (Airflow's), the Amazon provider backends' naming rules, and the lookup chain's order,
caching and error messages, without AWS."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from updraft.sdk import connection, variable
from updraft.sdk._internal.backends import try_cache
from updraft.sdk.connection import Connection
from updraft.sdk.exceptions import AirflowException, AirflowNotFoundException
from updraft.sdk.execution import use_secrets
from updraft.sdk.variable import Variable
from updraft.secrets import masker
from updraft.secrets.aws_backends import (
    SecretsBackendError,
    SecretsManagerBackend,
    SystemsManagerParameterStoreBackend,
    build_backend,
)


@pytest.fixture(autouse=True)
def clean():
    masker.reset_masker()
    yield
    masker.reset_masker()
    variable.reset_backends()
    connection.reset_backends()


# -- masker -----------------------------------------------------------------------------------------------------
def test_masker_hides_secrets_their_url_forms_and_sensitive_keys_only():
    masker.mask_secret("p@ss w0rd!")
    masker.mask_secret("abcd")  # below Airflow's minimum length: not masked
    masker.mask_secret("not-a-secret-value", name="region")  # a named value is masked only under a sensitive name
    masker.mask_secret({"api_token": "tok-123456", "region": "eu-west-1"})
    text = "p@ss w0rd! p%40ss%20w0rd%21 p%40ss+w0rd%21 abcd not-a-secret-value tok-123456 eu-west-1"
    assert masker.redact_text(text) == "*** *** *** abcd not-a-secret-value *** eu-west-1"
    assert masker.redact({"password": "anything", "nested": {"my_secret": ["a", "b"]}, "x": "tok-123456"}) == {
        "password": "***", "nested": {"my_secret": ["***", "***"]}, "x": "***"}


def test_a_value_under_a_sensitive_key_keeps_its_shape_as_airflow_redacts_it():
    """Airflow's ``_redact_all``: strings hidden at any depth, numbers, booleans and None kept, a set a tuple."""
    value = {"nested": {"a": "x", "n": 42, "ok": True, "none": None}, "list": ["y", 3], "set": {"z"}}
    assert masker.redact(value, "api_key") == {
        "nested": {"a": "***", "n": 42, "ok": True, "none": None}, "list": ["***", 3], "set": ("***",)}
    assert masker.redact({"password": 1234, "token": "t0ken-value"}) == {"password": 1234, "token": "***"}


def test_sensitive_names_extend_with_the_airflow_setting(monkeypatch):
    assert not masker.should_hide_value_for_key("customer_pin")
    monkeypatch.setenv("AIRFLOW__CORE__SENSITIVE_VAR_CONN_NAMES", "pin, iban")
    assert masker.should_hide_value_for_key("customer_PIN") and masker.should_hide_value_for_key("api-key")


def test_minimum_length_follows_the_airflow_setting(monkeypatch):
    monkeypatch.setenv("AIRFLOW__LOGGING__MIN_LENGTH_MASKED_SECRET", "3")
    masker.mask_secret("abc")
    assert masker.redact_text("abc abcd") == "*** ***d"


# -- backends ---------------------------------------------------------------------------------------------------
class FakeClient:
    class exceptions:
        class ResourceNotFoundException(Exception):
            pass

        class ParameterNotFound(Exception):
            pass

    def __init__(self, values: dict[str, str], denied: bool = False) -> None:
        self.values = values
        self.denied = denied
        self.asked: list[str] = []

    def _check(self, name: str) -> str:
        self.asked.append(name)
        if self.denied:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "Get")
        return name

    def get_secret_value(self, SecretId: str) -> dict:
        if self._check(SecretId) not in self.values:
            raise self.exceptions.ResourceNotFoundException()
        return {"SecretString": self.values[SecretId]}

    def get_parameter(self, Name: str, WithDecryption: bool) -> dict:
        if self._check(Name) not in self.values:
            raise self.exceptions.ParameterNotFound()
        return {"Parameter": {"Value": self.values[Name]}}


def test_secrets_manager_prefixes_separator_lookup_pattern_and_field_words():
    client = FakeClient({"team:vars:a": "1", "airflow/connections:db": json.dumps(
        {"user": "u", "pass": "p", "server": "h", "engine": "postgres", "database": "d"})})
    made = []
    backend = SecretsManagerBackend(lambda service, kwargs: made.append((service, kwargs)) or client,
                                    variables_prefix="team:vars:", sep=":", variables_lookup_pattern="^a",
                                    config_prefix=None, region_name="eu-west-1")
    assert backend.get_variable("a") == "1" and backend.get_variable("b") is None
    assert client.asked == ["team:vars:a"]  # "b" does not match the lookup pattern: never asked
    assert backend.get_config("x") is None and made == [("secretsmanager", {"region_name": "eu-west-1"})]
    conn = Connection.deserialize("db", backend.get_conn_value("db"))
    assert (conn.login, conn.password, conn.host, conn.conn_type, conn.schema) == ("u", "p", "h", "postgres", "d")


def test_ssm_default_prefixes_and_an_empty_prefix():
    client = FakeClient({"/airflow/variables/a": "1", "b": "2"})
    assert SystemsManagerParameterStoreBackend(lambda *_: client).get_variable("a") == "1"
    assert SystemsManagerParameterStoreBackend(lambda *_: client, variables_prefix="").get_variable("b") == "2"


def test_a_denied_backend_names_the_key_and_lookups_go_on_to_the_next_source(monkeypatch):
    backend = SystemsManagerParameterStoreBackend(lambda *_: FakeClient({}, denied=True))
    with pytest.raises(SecretsBackendError, match=r"variable 'k' \(/airflow/variables/k\): AccessDeniedException"):
        backend.get_variable("k")
    use_secrets(None, backend)
    with pytest.raises(KeyError, match=r"Variable k does not exist.*AccessDeniedException"):
        Variable.get("k")
    monkeypatch.setenv("AIRFLOW_VAR_K", "from env")
    assert Variable.get("k") == "from env"


def test_unsupported_backend_or_arguments_are_refused_by_name():
    with pytest.raises(SecretsBackendError, match=r"airflow\.secrets\.local_filesystem\.LocalFilesystemBackend"):
        build_backend("airflow.secrets.local_filesystem.LocalFilesystemBackend", "", lambda *_: None)
    with pytest.raises(SecretsBackendError, match="profile_name"):
        build_backend("airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend",
                      '{"profile_name": "x"}', lambda *_: None)
    with pytest.raises(SecretsBackendError, match="not JSON"):
        build_backend("airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend", "{",
                      lambda *_: None)


# -- the chain ----------------------------------------------------------------------------------------------------
class Metastore:
    def __init__(self) -> None:
        self.variables: dict[str, str] = {}
        self.reads = 0

    def get_variable(self, key: str) -> str | None:
        self.reads += 1
        return self.variables.get(key)

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        self.variables[key] = value

    def delete_variable(self, key: str) -> bool:
        return self.variables.pop(key, None) is not None

    def get_connection(self, conn_id: str) -> str | None:
        return "mysql://user:pw@a://b://c" if conn_id == "bad" else None


def test_one_read_per_try_and_writes_are_seen_at_once():
    store = Metastore()
    use_secrets(store, None)
    Variable.set("k", {"a": 1}, serialize_json=True)
    with try_cache():
        assert Variable.get("k", deserialize_json=True) == {"a": 1}
        Variable.get("k")
        assert store.reads == 1
        Variable.set("k", "2")
        assert Variable.get("k") == "2" and store.reads == 2
        Variable.delete("k")
        assert Variable.get("k", default=None) is None
    Variable.get("k", default=None)
    Variable.get("k", default=None)
    assert store.reads == 5  # outside a try nothing is cached


def test_bad_values_are_clear_errors_naming_the_key_and_never_the_value():
    store = Metastore()
    store.variables["cfg"] = "not json"
    use_secrets(store, None)
    with pytest.raises(json.JSONDecodeError, match="Variable cfg is not valid JSON"):
        Variable.get("cfg", deserialize_json=True)
    with pytest.raises(AirflowException, match="conn_id `bad`") as info:
        Connection.get("bad")
    assert "://" not in str(info.value)
    with pytest.raises(AirflowNotFoundException, match="The conn_id `nope` isn't defined"):
        Connection.get("nope")
    use_secrets(None, None)
    with pytest.raises(AirflowException, match="Cannot set Variable x"):
        Variable.set("x", "1")


def test_a_sensitive_variable_and_a_connection_are_masked_once_read(monkeypatch):
    monkeypatch.setenv("AIRFLOW_VAR_MY_TOKEN", "tok-abcdef")
    monkeypatch.setenv("AIRFLOW_VAR_REGION", "eu-west-1")
    monkeypatch.setenv("AIRFLOW_CONN_DB", json.dumps({"conn_type": "http", "password": "hunter22",
                                                      "extra": {"api_key": "xyz-12345", "timeout": "30000"}}))
    Variable.get("my_token"), Variable.get("region"), Connection.get("db")
    assert masker.redact_text("tok-abcdef eu-west-1 hunter22 xyz-12345 30000") == "*** eu-west-1 *** *** 30000"
