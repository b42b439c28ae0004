"""Identifier rules shared by dag_id, task_id and group_id (Airflow's KEY_REGEX and length limit)."""

from __future__ import annotations

import re

KEY_REGEX = re.compile(r"^[\w.-]+$")
GROUP_KEY_REGEX = re.compile(r"^[\w-]+$")
ID_MAX_LEN = 250
# Airflow caps group ids lower than task ids: a group id is a prefix of its tasks' ids.
GROUP_ID_MAX_LEN = 200


def validate_key(key: object, *, kind: str = "key", max_length: int = ID_MAX_LEN) -> str:
    """Reject ids Airflow rejects, with Airflow's wording, so a DAG that parses here also parses there."""
    if not isinstance(key, str):
        raise TypeError(f"The {kind} has to be made of alphanumeric characters, dashes, dots and underscores "
                        f"exclusively; got a {type(key).__name__}: {key!r}")
    if len(key) > max_length:
        raise ValueError(f"The {kind} cannot be longer than {max_length} characters: {key!r}")
    if not KEY_REGEX.match(key):
        raise ValueError(f"The {kind} '{key}' has to be made of alphanumeric characters, dashes, "
                         "dots and underscores exclusively")
    return key


def validate_group_key(key: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"The key has to be a string and is {type(key)}:{key}")
    if len(key) > GROUP_ID_MAX_LEN:
        raise ValueError(f"The key has to be less than {GROUP_ID_MAX_LEN} characters, not {len(key)}")
    if not GROUP_KEY_REGEX.match(key):
        raise ValueError(f"The key '{key}' has to be made of alphanumeric characters, dashes and underscores "
                         "exclusively")
    return key
