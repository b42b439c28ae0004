"""One home per concept: a rule that several modules need lives in one module, and the others import it.

Read with ``ast`` over ``shared/updraft``, so a copy that creeps back in fails here instead of drifting apart from
its home later (a limit raised in one copy and not another, a key prefix spelt twice).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "updraft"


def _trees() -> dict[str, ast.Module]:
    """Each module's path below ``shared/updraft`` -> its syntax tree."""
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text()) for path in PACKAGE.rglob("*.py")}


# Where the literal 250 means something other than Airflow's id length, and why (none today).
OTHER_250S: dict[str, str] = {}


def test_airflow_s_id_length_is_written_only_in_model_identifiers():
    """Airflow's 250-character id limit is ``model.identifiers.ID_LEN``; every other check imports it."""
    found = {f"{path}:{node.lineno}" for path, tree in _trees().items() for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 250}
    assert {where.partition(":")[0] for where in found} - set(OTHER_250S) == {"model/identifiers.py"}, found
