"""Which ids are accepted: Airflow's rules, and the one place that says so.

Airflow's ids (dag, task, run ids, partition keys, variable keys) are at most 250 characters (``ID_LEN``, the
width of its id columns); every length check on them reads ``ID_LEN`` from here.

Dag and task ids follow ``airflow.utils.helpers.validate_key``: alphanumerics, dashes, dots and underscores
(``KEY_REGEX``), at most ``ID_LEN`` characters; a task group's id drops the dot (it joins its tasks' ids) and is
at most 200 characters. Connection ids use ``KEY_REGEX`` too (Airflow's ``ConnectionBody`` pattern).

Airflow's ``DagRun.validate_run_id`` accepts the ids it generates (``RUN_ID_REGEX``) and ids matching
``[scheduler] allowed_run_id_pattern`` (default ``^[A-Za-z0-9_.~:+-]+$``, which the generated ones match too),
refuses ``..`` (a path traversal), and the column holds 250 characters (``ID_LEN``). A run id ends up in log
paths, S3 keys and CloudWatch stream names, so ``/``, ``..`` and newlines must never get in: a log file was
written outside its folder, and a 3,000-character id failed with a raw DynamoDB error.
"""

from __future__ import annotations

import re

ID_LEN = 250
KEY_REGEX = re.compile(r"^[\w.-]+$")
GROUP_KEY_REGEX = re.compile(r"^[\w-]+$")
# Airflow caps group ids lower than task ids: a group id is a prefix of its tasks' ids.
GROUP_ID_MAX_LEN = 200
ALLOWED_RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9_.~:+-]+")


def run_id_problem(run_id: object) -> str | None:
    """Why ``run_id`` is refused, or None when it is a valid run id."""
    if not isinstance(run_id, str) or not run_id:
        return "a run id must be a non-empty string"
    if len(run_id) > ID_LEN:
        return f"the run id is {len(run_id)} characters long; at most {ID_LEN} are allowed"
    if not ALLOWED_RUN_ID_PATTERN.fullmatch(run_id):
        return (f"the run id {run_id!r} does not match the allowed pattern "
                f"'^{ALLOWED_RUN_ID_PATTERN.pattern}$' (letters, digits and _.~:+-)")
    if ".." in run_id:
        return f"the run id {run_id!r} must not contain '..'"
    return None


def path_component_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be one component of a file path or key built from ids, or None when it can."""
    if not isinstance(value, str) or value in ("", ".", ".."):
        return f"{name} {value!r} cannot name a folder"
    if "/" in value or "\\" in value or any(ord(c) < 32 for c in value):
        return f"{name} {value!r} contains a path separator or a control character"
    return None


def validate_key(key: object, *, kind: str = "key", max_length: int = ID_LEN) -> str:
    """``key`` when Airflow accepts it as a dag or task id (``kind`` names it in the error); Airflow's wording,
    so a DAG that parses here also parses there. TypeError for a non-string, ValueError otherwise."""
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
    """``key`` when Airflow accepts it as a task group id (no dots, at most ``GROUP_ID_MAX_LEN`` characters)."""
    if not isinstance(key, str):
        raise TypeError(f"The key has to be a string and is {type(key)}:{key}")
    if len(key) > GROUP_ID_MAX_LEN:
        raise ValueError(f"The key has to be less than {GROUP_ID_MAX_LEN} characters, not {len(key)}")
    if not GROUP_KEY_REGEX.match(key):
        raise ValueError(f"The key '{key}' has to be made of alphanumeric characters, dashes and underscores "
                         "exclusively")
    return key
