"""Local users mode's inputs: Airflow's ``simple_auth_manager_users`` list and its passwords file."""

from __future__ import annotations

import json

import pytest

from updraft.api.auth.roles import Role
from updraft.local.users import parse_users, passwords_for


def test_users_are_airflows_name_role_list() -> None:
    assert parse_users("alice:viewer, bob:OP,") == {"alice": Role.VIEWER, "bob": Role.OP}


@pytest.mark.parametrize(("spec", "message"), [
    ("alice:OWNER", "has role 'OWNER'"), ("alice", "is not 'name:role'"), ("a:OP:team1", "no multi-team"),
    (" , ", "no users given"),
])
def test_a_bad_user_list_is_refused_naming_the_entry(spec, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_users(spec)


def test_missing_passwords_are_generated_saved_and_printed_once(tmp_path) -> None:
    path = tmp_path / "passwords.json"
    path.write_text(json.dumps({"alice": "alice-secret"}))
    said: list[str] = []
    first = passwords_for({"alice": Role.VIEWER, "bob": Role.OP}, path, said.append)
    assert first["alice"] == "alice-secret" and len(first["bob"]) == 16
    assert said == [f"Password for user 'bob': {first['bob']}"]
    assert json.loads(path.read_text()) == first and path.stat().st_mode & 0o777 == 0o600
    assert passwords_for({"alice": Role.VIEWER, "bob": Role.OP}, path, said.append) == first and len(said) == 1


def test_updraft_local_refuses_a_bad_users_list_before_starting(tmp_path) -> None:
    from click.testing import CliRunner

    from updraft.cli.app import cli

    result = CliRunner().invoke(cli, ["local", "--dags-folder", str(tmp_path), "--users", "alice:OWNER"])
    assert result.exit_code == 2 and "--users" in result.output and "'OWNER'" in result.output
