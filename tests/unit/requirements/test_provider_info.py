"""The installed providers' connection types, read from ``providers.json`` (the installer's file) without
importing provider code: built-ins, Airflow's precedence and skipping rules, and a broken file named."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from updraft.requirements import provider_info
from updraft.requirements.provider_info import ProviderInfoError, connection_types, installed, load

FIXTURE = Path(__file__).with_name("providers.json")  # the real wheels' infos (bench/providers_fixture.py)
BUILTIN = ["email", "fs", "generic", "package_index"]


def by_type(providers):
    return {kind.connection_type: kind for kind in connection_types(providers)}


def test_without_providers_only_updrafts_own_types():
    assert installed({}) == []
    assert list(by_type([])) == BUILTIN
    fs = by_type([])["fs"]
    assert (fs.hook_name, fs.package_name) == ("File (path)", "apache-airflow-providers-standard")
    assert fs.extra_fields == {"path": {"value": None, "schema": {"type": ["string", "null"], "title": "Path"},
                                        "description": None, "source": None}}


def test_the_real_providers_types_and_form_hints():
    kinds = by_type(load(str(FIXTURE)))
    assert set(BUILTIN) < set(kinds) and {"aws", "http", "postgres", "snowflake", "slackwebhook"} < set(kinds)
    assert list(kinds) == sorted(kinds)
    aws = kinds["aws"]
    assert (aws.hook_name, aws.hook_class_name) == (
        "Amazon Web Services", "airflow.providers.amazon.aws.hooks.base_aws.AwsGenericHook")
    assert aws.field_behaviour is not None
    assert aws.field_behaviour.hidden_fields == ("host", "schema", "port")
    assert aws.field_behaviour.relabeling["login"] == "AWS Access Key ID"
    smtp = kinds["smtp"].extra_fields["auth_type"]
    assert smtp["value"] == "basic" and smtp["schema"]["enum"] == ["basic", "oauth2"]
    assert smtp["schema"]["title"] == "Auth Type"


def test_reading_the_types_imports_no_provider_or_airflow_code():
    """The API reads JSON only: the user's packages are DAG code and never run in the API."""
    script = ("import sys; from updraft.requirements.provider_info import connection_types, load; "
              f"kinds = connection_types(load({str(FIXTURE)!r})); "
              "print(len(kinds), sorted(m for m in sys.modules if m.split('.')[0] == 'airflow'))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) == 22 and out[1].strip() == "[]"


def test_first_declaration_owns_a_type_and_unusable_entries_are_skipped(caplog):
    providers = [
        {"package-name": "z-pkg", "version": "1", "connection-types": [
            {"connection-type": "mine", "hook-class-name": "z.Hook", "hook-name": "Z's"}]},
        {"package-name": "a-pkg", "version": "1", "connection-types": [
            {"connection-type": "mine", "hook-class-name": "a.Hook", "hook-name": "A's"},
            {"connection-type": "fs", "hook-class-name": "a.FsHook", "hook-name": "Not the built-in"},
            {"connection-type": "nohook", "hook-name": "skipped: no hook-class-name"},
            {"hook-class-name": "a.Other"},
            {"connection-type": "badui", "hook-class-name": "a.Bad", "ui-field-behaviour": {"hidden-fields": "host"}},
        ]},
    ]
    with caplog.at_level(logging.WARNING, logger=provider_info.__name__):
        kinds = by_type(providers)
    assert kinds["mine"].hook_name == "A's"  # providers in package-name order, as Airflow sorts them
    assert kinds["fs"].hook_name == "File (path)"
    assert "nohook" not in kinds
    assert kinds["badui"].field_behaviour is None and kinds["badui"].hook_name == "badui"
    assert "Failed to add field behaviour for badui in package a-pkg" in caplog.text


@pytest.mark.parametrize(("text", "message"), [
    ('{"package-name": "x"}', "expected a JSON list of provider infos, got dict"),
    ('[1]', "provider #0 is a int, not an object"),
    ('[{"package-name": "x"}]', "provider #0 has no string 'version'"),
    ('[{"package-name": "x", "version": "1", "connection-types": {}}]', "'connection-types' is not a list"),
    ("[", "not JSON"),
])
def test_a_broken_file_is_an_error_naming_it(tmp_path, text, message):
    path = tmp_path / "providers.json"
    path.write_text(text)
    with pytest.raises(ProviderInfoError, match=message) as info:
        installed({provider_info.VAR: str(path)})
    assert str(path) in str(info.value)


def test_a_named_file_that_is_missing_is_an_error(tmp_path):
    with pytest.raises(ProviderInfoError, match="named by UPDRAFT_PROVIDERS_INFO"):
        installed({provider_info.VAR: str(tmp_path / "gone.json")})


def test_a_changed_file_is_read_again(tmp_path):
    path = tmp_path / "providers.json"
    env = {provider_info.VAR: str(path)}
    path.write_text("[]")
    assert installed(env) == []
    one = [{"package-name": "p", "version": "1.0.0", "connection-types": []}]
    path.write_text(json.dumps(one))
    assert installed(env) == one
