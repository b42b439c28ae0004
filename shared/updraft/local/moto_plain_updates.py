"""moto's UpdateItem for the plain updates Updraft writes, applied without moto's validation passes.

moto 5.2 applies an update expression by copying its parsed tree, walking the copy eight times (each walk a check
or a substitution: clause counts, overlapping paths, key attributes, values, names, functions, missing paths,
arithmetic, types), then walking it once more to execute it; before that it deep-copies the item for a stream
that Updraft's table does not have. With every earlier speed-up of ``moto_speedups`` in place that was still ~27%
of local mode's embedded AWS in a fan-out (a replay of one run's requests, ``bench/request_replay.py``), and the
embedded AWS, which answers one request at a time, is what a busy local run waits on.

Almost every update Updraft sends is *plain*: ``SET #n = :v``, ``SET #n = #m + :v`` (or ``-``), ``REMOVE #n`` and
``ADD #n :v`` of a number, every path one placeholder for a top-level attribute, each clause at most once. For
those, what moto's passes decide can be read off the parsed tree once per expression text (``plan``) and the
request's names, values and item: an update whose every check passes is applied directly, with the same values
moto would store (built by the same ``DynamoType`` constructor and operators), new attributes in moto's order.
Whenever any of moto's checks could fail or any part is not plain (a missing name or value, a key attribute, two
actions on one attribute, arithmetic on a missing or non-number attribute, an ADD of a set, an item near DynamoDB's
size limit, a table with a stream, ``Expected`` or ``AttributeUpdates``), the request goes to moto's own
``update_item`` untouched, which refuses it (or applies it) as before: nothing is written before that choice, so
moto's errors and messages are its own. ``tests/unit/local/test_moto_speedups.py`` compares both on every such case.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

# Below moto's item size limit (405,000 bytes) by more than a new item's keys can add (DynamoDB's keys are at most
# 2,048 + 1,024 bytes): an update whose item stays under it cannot meet moto's size refusal at any of its writes.
SIZE_WELL_BELOW_LIMIT = 400_000


@dataclass(frozen=True)
class Action:
    """One plain action: ``kind`` (SET, REMOVE or ADD) of the attribute named by placeholder ``target``; the value
    placeholder ``value`` (SET, ADD), and for a SET of ``#operand <operator> :value`` the operand and operator."""

    kind: str
    target: str
    value: str | None = None
    operand: str | None = None
    operator: str | None = None


class NotPlain(Exception):
    """The expression (or, for one request, its names, values or item) needs moto's own validation."""


@functools.lru_cache(maxsize=4096)
def plan(expression: str) -> tuple[Action, ...] | None:
    """The actions of a plain update expression in its own order, None if it is not plain. moto executes them in
    that order but for its REMOVEs, which it sorts; a plain update's actions name distinct attributes, so either order
    leaves the same item, its attributes in the same order (a REMOVE adds none)."""
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]

    try:
        tree = UpdateExpressionParser.make(expression)
        actions: list[Action] = []
        _clauses(tree, actions, set())
    except Exception:  # not plain, or not even valid: moto answers it
        return None
    return tuple(actions)


def _ast() -> Any:
    """moto's AST node classes (its module is untyped)."""
    from moto.dynamodb.parsing import ast_nodes

    return ast_nodes


def _clauses(node: Any, actions: list[Action], seen: set[str]) -> None:
    ast = _ast()
    kinds = {ast.UpdateExpressionSetClause: "SET", ast.UpdateExpressionRemoveClause: "REMOVE",
             ast.UpdateExpressionAddClause: "ADD"}
    for child in node.children:
        if type(child) is ast.UpdateExpression:
            _clauses(child, actions, seen)
            continue
        kind = kinds.get(type(child))
        if kind is None or kind in seen:  # a DELETE, or a clause twice (moto refuses that)
            raise NotPlain
        seen.add(kind)
        (listed,) = child.children
        while listed is not None:  # X-Actions: [X-Action] or [X-Action, X-Actions]
            action, *rest = listed.children
            actions.append(_action(kind, action))
            listed = rest[0] if rest else None


def _action(kind: str, node: Any) -> Action:
    ast = _ast()
    wanted = {"SET": ast.UpdateExpressionSetAction, "REMOVE": ast.UpdateExpressionRemoveAction,
              "ADD": ast.UpdateExpressionAddAction}[kind]
    if type(node) is not wanted:
        raise NotPlain
    target, *rest = node.children
    name = _placeholder(target)
    if kind == "REMOVE" and not rest:
        return Action(kind, name)
    if kind == "ADD" and len(rest) == 1:
        return Action(kind, name, value=_value(rest[0]))
    if kind == "SET" and len(rest) == 1 and type(rest[0]) is ast.UpdateExpressionValue:
        parts = rest[0].children
        if len(parts) == 1:
            return Action(kind, name, value=_value(parts[0]))
        if len(parts) == 3 and type(parts[1]) is ast.ExpressionValueOperator and parts[1].children[0] in "+-":
            return Action(kind, name, value=_value(parts[2]), operand=_placeholder(parts[0]),
                          operator=parts[1].children[0])
    raise NotPlain


def _placeholder(path: Any) -> str:
    """``#name`` of a path that is one name placeholder."""
    ast = _ast()
    if type(path) is not ast.UpdateExpressionPath or len(path.children) != 1:
        raise NotPlain
    (name,) = path.children
    if type(name) is not ast.ExpressionAttributeName:
        raise NotPlain
    return str(name.children[0])


def _value(node: Any) -> str:
    ast = _ast()
    if type(node) is not ast.ExpressionAttributeValue:
        raise NotPlain
    return str(node.children[0])


def writes(actions: tuple[Action, ...], table: Any, item: Any, names: dict[str, str],
           values: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (attribute, new value or None to remove) writes ``actions`` make to ``item`` (None: not stored yet),
    exactly as moto would make them; raises ``NotPlain`` where any of moto's checks could refuse them."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    keys = set(table.table_key_attrs)
    # moto's type and empty-key checks of a SET compare its placeholder text with the table's attribute names
    defined = set(table.attribute_keys) | {definition["AttributeName"] for definition in table.attr}
    attrs = item.attrs if item is not None else {}
    out: list[tuple[str, Any]] = []
    targets: set[str] = set()
    size = item.size() if item is not None else 0
    for action in actions:
        name = names.get(action.target)
        if name is None or name in keys or name in targets or action.target in defined:
            raise NotPlain
        targets.add(name)
        if action.kind == "REMOVE":
            out.append((name, None))
            continue
        given = values.get(action.value)  # type: ignore[arg-type]
        if given is None:
            raise NotPlain
        value = DynamoType(given)
        if action.kind == "ADD" or action.operand is not None:
            if action.kind == "ADD":
                base = attrs.get(name, DynamoType({"N": "0"}))
            else:
                operand = names.get(action.operand)  # type: ignore[arg-type]
                base = attrs.get(operand) if operand is not None else None
            if base is None or base.type != "N" or value.type != "N":
                raise NotPlain
            value = base - value if action.operator == "-" else base + value
        size += len(name.encode()) + value.size()
        out.append((name, value))
    if size > SIZE_WELL_BELOW_LIMIT:
        raise NotPlain
    return out


def apply() -> None:
    """Route moto's ``update_item`` through the plain path (called once, by ``moto_speedups.apply``)."""
    from moto.dynamodb.comparisons import create_condition_expression_parser
    from moto.dynamodb.exceptions import ConditionalCheckFailed
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType

    motos = DynamoDBBackend.update_item

    @functools.wraps(motos)
    def update_item(self: Any, table_name: str, key: dict[str, dict[str, Any]], update_expression: str,
                    expression_attribute_names: dict[str, Any], expression_attribute_values: dict[str, Any],
                    attribute_updates: dict[str, Any] | None = None, expected: dict[str, Any] | None = None,
                    condition_expression: str | None = None,
                    return_values_on_condition_check_failure: str | None = None) -> Any:
        def as_moto() -> Any:
            return motos(self, table_name, key, update_expression, expression_attribute_names,
                         expression_attribute_values, attribute_updates, expected, condition_expression,
                         return_values_on_condition_check_failure)

        actions = plan(update_expression) if update_expression and not attribute_updates and not expected else None
        table = self.get_table(table_name)
        if actions is None or table.stream_shard is not None or table.hash_key_attr not in key:
            return as_moto()
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr in key else None
        item = table.get_item(hash_value, range_value)
        try:
            changes = writes(actions, table, item, expression_attribute_names or {},
                             expression_attribute_values or {})
        except Exception:  # NotPlain, or a value moto's own passes fail on (a number that is not one): moto's answer
            return as_moto()
        # moto's condition test, as its update_item makes it (before creating the item)
        condition = create_condition_expression_parser(
            condition_expression, expression_attribute_names, expression_attribute_values).parse()
        if not condition.expr(item):
            if return_values_on_condition_check_failure == "ALL_OLD" and item is not None:
                raise ConditionalCheckFailed(item=item.to_json()["Attributes"])
            raise ConditionalCheckFailed
        if item is None:
            data = {table.hash_key_attr: {hash_value.type: hash_value.value}}
            if range_value:
                data[table.range_key_attr] = {range_value.type: range_value.value}
            table.put_item(data)
            item = table.get_item(hash_value, range_value)
        for name, value in changes:
            if value is None:
                item.attrs.pop(name, None)
            else:
                item.attrs[name] = value
        return item

    DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]
