"""Airflow's bulk ``PATCH`` of a collection (``BulkBody``): create, update and delete actions, each with its
``action_on_existence`` / ``action_on_non_existence``, answered as ``BulkResponse``.

Shared by variables and connections; each gives its id field and its single-item operations. The whole body is
validated first (a bad entity is a 422 and nothing is written), then each action runs; an action's conflict or
missing entities become its ``errors`` entry, as in Airflow, and the other actions still run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from updraft.api.body import load_json
from updraft.api.errors import Unprocessable, issue
from updraft.api.routing import Call

if TYPE_CHECKING:
    from updraft.api.models import BulkActionResponse, BulkResponse

# (call, entity, overwrite) -> whether it was written
Create = Callable[[Call, dict[str, Any], bool], bool]


@dataclass(frozen=True)
class BulkHandlers:
    kind: str  # "Variable" / "Connection": Airflow's messages say "variables" / "connections"
    id_field: str
    exists: Callable[[Call, str], bool]
    create: Create
    update: Callable[[Call, dict[str, Any], set[str]], Any]
    delete: Callable[[Call, str], bool]
    validate: Callable[[dict[str, Any]], Any] | None = None  # raises the 422 of one entity


ACTIONS = {"create": {"action", "entities", "action_on_existence"},
           "update": {"action", "entities", "update_mask", "action_on_non_existence"},
           "delete": {"action", "entities", "action_on_non_existence"}}


def _actions(raw: str | None, handlers: BulkHandlers) -> list[dict[str, Any]]:
    body = load_json(raw or "")
    if not isinstance(body, dict) or set(body) != {"actions"} or not isinstance(body["actions"], list):
        raise Unprocessable([issue("missing", ("body", "actions"), "Field required", body)])
    problems = []
    for index, action in enumerate(body["actions"]):
        loc = ("body", "actions", index)
        kind = action.get("action") if isinstance(action, dict) else None
        if kind not in ACTIONS:
            problems.append(issue("union_tag_invalid", loc, "Input tag does not match any of the expected tags "
                                  "'create', 'update', 'delete'", action))
            continue
        extra = set(action) - ACTIONS[kind]
        if extra or not isinstance(action.get("entities"), list):
            problems.append(issue("extra_forbidden" if extra else "missing", loc,
                                  "Extra inputs are not permitted" if extra else "Field required", action))
            continue
        choices = ("fail", "skip", "overwrite") if kind == "create" else ("fail", "skip")
        option = "action_on_existence" if kind == "create" else "action_on_non_existence"
        if action.get(option, "fail") not in choices:
            problems.append(issue("enum", (*loc, option), f"Input should be {', '.join(map(repr, choices))}",
                                  action.get(option)))
        for entity in action["entities"]:
            if kind == "delete" and isinstance(entity, str):
                continue
            if not isinstance(entity, dict):
                problems.append(issue("model_type", (*loc, "entities"), "Input should be an object", entity))
            elif handlers.validate is not None:
                handlers.validate(entity)
    if problems:
        raise Unprocessable(problems)
    return body["actions"]


def run_bulk(call: Call, handlers: BulkHandlers) -> BulkResponse:
    actions = _actions(call.request.body, handlers)
    results: dict[str, BulkActionResponse] = {}
    plural = f"{handlers.kind.lower()}s"
    for action in actions:
        kind = action["action"]
        result = results.setdefault(kind, {"success": [], "errors": []})
        entities = action["entities"]
        ids = [e if isinstance(e, str) else e[handlers.id_field] for e in entities]
        present = {i for i in ids if handlers.exists(call, i)}
        if kind == "create":
            mode = action.get("action_on_existence", "fail")
            if mode == "fail" and present:
                result["errors"].append({"error": f"The {plural} with these {handlers.id_field}s: {present} "
                                                  "already exist.", "status_code": 409})
                continue
            for entity, entity_id in zip(entities, ids, strict=True):
                if mode == "skip" and entity_id in present:
                    continue
                if handlers.create(call, entity, mode == "overwrite"):
                    result["success"].append(entity_id)
            continue
        missing = set(ids) - present
        if action.get("action_on_non_existence", "fail") == "fail" and missing:
            result["errors"].append({"error": f"The {plural} with these {handlers.id_field}s: {missing} were not "
                                              "found.", "status_code": 404})
            continue
        for entity, entity_id in zip(entities, ids, strict=True):
            if entity_id not in present:
                continue
            if kind == "update":
                handlers.update(call, entity, set(action.get("update_mask") or ()))
                result["success"].append(entity_id)
            elif handlers.delete(call, entity_id):
                result["success"].append(entity_id)
    return {"create": results.get("create"), "update": results.get("update"), "delete": results.get("delete")}
