"""One home per concept: a rule that several modules need lives in one module, and the others import it.

Read with ``ast`` over ``shared/updraft``, so a copy that creeps back in fails here instead of drifting apart from
its home later (a limit raised in one copy and not another, a key prefix spelt twice).
"""

from __future__ import annotations

import ast
import re

from tests.package_source import PACKAGE, modules, tree, walk


def _trees() -> dict[str, ast.Module]:
    """Each module's path below ``shared/updraft`` -> its syntax tree."""
    return {path.relative_to(PACKAGE).as_posix(): tree(path) for path in modules()}


# Where the literal 250 means something other than Airflow's id length, and why (none today).
OTHER_250S: dict[str, str] = {}


def test_airflow_s_id_length_is_written_only_in_model_identifiers():
    """Airflow's 250-character id limit is ``model.identifiers.ID_LEN``; every other check imports it."""
    found = {f"{path}:{node.lineno}" for path, tree in _trees().items() for node in walk(tree)
             if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 250}
    assert {where.partition(":")[0] for where in found} - set(OTHER_250S) == {"model/identifiers.py"}, found


KEYS_HOME = "store/keys.py"
KEY_PREFIX = re.compile(r"^[A-Z][A-Z_]*#")  # "RUN#", "ASSET_QUEUE#": how every item key's first part begins
# Where such a string is not a DynamoDB key, and why (none today).
OTHER_KEY_PREFIXES: dict[str, str] = {}


def test_dynamodb_key_strings_are_built_only_in_store_keys():
    """Every ``pk``/``sk`` string is spelt in ``store/keys.py`` (a prefix, whole or inside an f-string), and no
    other store module names a key constant of its own: a key format has one place to change."""
    prefixes = {f"{path}:{node.lineno} {node.value!r}" for path, tree in _trees().items()
                if path != KEYS_HOME and path not in OTHER_KEY_PREFIXES for node in walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY_PREFIX.match(node.value)}
    constants = {f"{path}:{node.lineno} {target.id}" for path, tree in _trees().items()
                 if path.startswith("store/") and path != KEYS_HOME for node in tree.body
                 if isinstance(node, ast.Assign | ast.AnnAssign)
                 for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 if isinstance(target, ast.Name) and target.id.endswith(("_PK", "_SK"))}
    assert prefixes == set() and constants == set(), (prefixes, constants)


def test_the_key_scan_sees_prefixes_inside_f_strings():
    tree = ast.parse('key = f"RUN#{dag_id}#{run_id}"')
    assert [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and KEY_PREFIX.match(n.value)] == ["RUN#"]
