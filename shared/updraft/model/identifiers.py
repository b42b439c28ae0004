"""Which run ids are accepted: Airflow's rule, and the one place that says so.

Airflow's ``DagRun.validate_run_id`` accepts the ids it generates (``RUN_ID_REGEX``) and ids matching
``[scheduler] allowed_run_id_pattern`` (default ``^[A-Za-z0-9_.~:+-]+$``, which the generated ones match too),
refuses ``..`` (a path traversal), and the column holds 250 characters (``ID_LEN``). A run id ends up in log
paths, S3 keys and CloudWatch stream names, so ``/``, ``..`` and newlines must never get in: a log file was
written outside its folder, and a 3,000-character id failed with a raw DynamoDB error.
"""

from __future__ import annotations

import re

ID_LEN = 250
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
