"""Serializing a try's rendered template fields: Airflow's JSON-safe form, its truncation, the item budget."""

from __future__ import annotations

import json

import pytest

from updraft.runtime.rendered_fields import (
    TRUNCATE_PREFIX,
    TRUNCATE_SUFFIX,
    fit_budget,
    json_safe,
    serialize_rendered_fields,
    serialize_template_field,
    truncate_rendered_value,
)
from updraft.secrets.masker import mask_secret, reset_masker

MESSAGE_ONLY = TRUNCATE_PREFIX + TRUNCATE_SUFFIX


@pytest.fixture(autouse=True)
def _fresh_masker():
    reset_masker()
    yield
    reset_masker()


def test_truncation_keeps_airflows_message_and_as_much_content_as_fits():
    assert truncate_rendered_value("x" * 500, 0) == ""
    assert truncate_rendered_value("x" * 500, 10) == MESSAGE_ONLY  # too short for the message: the message
    assert truncate_rendered_value("x" * 500, len(MESSAGE_ONLY) + 6) == MESSAGE_ONLY  # < 7 characters of content
    cut = truncate_rendered_value("abcdefgh  ijklmnop", len(MESSAGE_ONLY) + 10)
    assert cut == f"{TRUNCATE_PREFIX}abcdefgh{TRUNCATE_SUFFIX}"  # trailing blanks of the cut dropped


def test_a_field_over_max_templated_field_length_is_truncated_after_redaction(monkeypatch):
    mask_secret("hunter22")
    long = "password hunter22 " + "y" * 200
    value = serialize_template_field(long, "bash_command", max_length=120)
    assert value.startswith(TRUNCATE_PREFIX + "password *** yyy") and len(value) == 120
    assert serialize_template_field("short hunter22", "bash_command", max_length=120) == "short ***"
    # The configured length applies to the whole task: AIRFLOW__CORE__MAX_TEMPLATED_FIELD_LENGTH.
    monkeypatch.setenv("AIRFLOW__CORE__MAX_TEMPLATED_FIELD_LENGTH", "100")

    class Task:
        template_fields = ("bash_command", "env")
        template_fields_renderers = {"bash_command": "bash", "env.API_KEY": "json"}
        bash_command = "z" * 300
        env = {"API_KEY": "k-123456", "B": 1}

    fields = serialize_rendered_fields(Task())
    assert fields == {"bash_command": truncate_rendered_value("z" * 300, 100),
                      "env": {"API_KEY": "***", "B": 1}, "env.API_KEY": "***"}


def test_values_become_json_as_airflow_serializes_them():
    class Shown:
        def __str__(self) -> str:
            return "shown"

    class Plain:
        pass

    value = {2: ("a", {"z", "y"}), "f": len, "o": Shown(), "p": Plain(), "n": float("nan")}
    assert json_safe(value) == {"2": ["a", ["y", "z"]], "f": "<callable builtins.len>", "n": "nan",
                                "o": "shown", "p": f"<{__name__}.{Plain.__qualname__} object>"}


def test_fields_together_are_held_within_the_items_budget():
    fields = {"small": "ok", "big": "b" * 50_000, "wide": "\u00e9" * 20_000, "listed": ["c" * 100] * 300}
    fitted = fit_budget(fields, 16_000)
    assert len(json.dumps(fitted)) <= 16_000
    assert fitted["small"] == "ok"
    assert fitted["big"].startswith(TRUNCATE_PREFIX + "bbb") and fitted["wide"].startswith(TRUNCATE_PREFIX + "\u00e9")
    assert fit_budget({"a": "x" * 10}, 16_000) == {"a": "x" * 10}
