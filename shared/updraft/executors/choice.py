"""Which executor runs a task's tries: the one rule the evaluation, the claim and a dispatch payload all apply.

A task's ``compute`` (from Airflow's per-task ``executor=`` argument, see ``sdk/compute.py``) names it; an
instance or payload that carries its own choice keeps it; otherwise Lambda.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_EXECUTOR = "lambda"


def executor_for(compute: Mapping[str, Any] | None, chosen: str | None = None) -> str:
    """The executor named by ``compute``, else the one already ``chosen`` (a task's or an instance's), else Lambda."""
    return (compute or {}).get("executor") or chosen or DEFAULT_EXECUTOR
