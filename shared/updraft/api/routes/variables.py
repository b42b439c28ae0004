"""Variables: list, get, create (``POST``), update (``PATCH`` with ``update_mask``), delete, and the bulk
``PATCH /variables`` (Airflow's ``BulkBody``), as Airflow's ``VariableResponse``.

Values are masked exactly as Airflow's API masks them: a variable whose key is sensitive shows ``***``, a JSON
object shows ``***`` under its sensitive keys. ``is_encrypted`` is true when the environment's KMS key encrypts
the value in the table (Airflow's Fernet flag).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, Conflict, NotFound
from updraft.api.formats import pattern_matcher
from updraft.api.json_text import InvalidJson, loads
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.bulk import BulkHandlers, run_bulk
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.identifiers import ID_LEN
from updraft.secrets.masker import REPLACEMENT, redact
from updraft.store.variables import VariableRecord

if TYPE_CHECKING:
    from updraft.api.models import BulkResponse, VariableCollectionResponse, VariableResponse

routes = RouteTable()

BODY = {"key": Field("str", required=True, nullable=False, max_length=ID_LEN, key=True),
        "value": Field("json", required=True), "description": Field("str"), "team_name": Field("str")}
ORDER = {"key": lambda v: v.key, "id": lambda v: v.key, "_val": lambda v: v.value, "value": lambda v: v.value,
         "description": lambda v: v.description, "is_encrypted": lambda v: v.is_encrypted}


def _not_found(key: str) -> NotFound:
    return NotFound(f"The Variable with key: `{key}` was not found")


def masked_value(key: str, value: str | None) -> str | None:
    """Airflow's ``VariableResponse.redact_val``; a value that is JSON but cannot be walked safely (nested deeper
    than :data:`~updraft.api.json_text.MAX_DEPTH`) is hidden whole, as its sensitive keys cannot be masked."""
    if value is None:
        return None
    try:
        loaded = loads(value)
    except InvalidJson as err:
        return str(redact(value, key)) if err.not_json else REPLACEMENT
    return json.dumps(redact(loaded, key))


def variable_response(record: VariableRecord) -> VariableResponse:
    return {"key": record.key, "value": masked_value(record.key, record.value), "description": record.description,
            "is_encrypted": record.is_encrypted, "team_name": None}


def stored_value(value: Any) -> str:
    """As Airflow's ``VariableBody``: a string as sent, any other JSON value as JSON (indent 2, like
    ``Variable.set(serialize_json=True)``)."""
    return value if isinstance(value, str) else json.dumps(value, indent=2)


def _body(raw: str | None) -> dict[str, Any]:
    body = parse_body(raw, BODY)
    if body.get("team_name") is not None:
        raise BadRequest("Updraft has no multi-team mode: team_name must be null")
    if not body["key"]:
        raise BadRequest("A variable needs a key")
    return body


@routes.get("/variables")
def get_variables(call: Call) -> VariableCollectionResponse:
    page = page_of(call.query, ["id"])
    matches = pattern_matcher(call.query.string("variable_key_pattern"))
    call.query.check()
    found, total = paginate([v for v in call.store.list_variables() if matches(v.key)], page, ORDER)
    return {"variables": [variable_response(v) for v in found], "total_entries": total}


@routes.get("/variables/{variable_key}")
def get_variable(call: Call) -> VariableResponse:
    key = call.path("variable_key")
    record = call.store.get_variable(key)
    if record is None:
        raise _not_found(key)
    return variable_response(record)


@routes.post("/variables", status=201)
def post_variable(call: Call) -> VariableResponse:
    body = _body(call.request.body)
    record = call.store.set_variable(body["key"], stored_value(body["value"]), body.get("description"),
                                     only_if_new=True)
    if record is None:
        raise Conflict(f"The Variable with key: `{body['key']}` already exists")
    return variable_response(record)


def _update(call: Call, key: str, body: dict[str, Any], mask: set[str]) -> VariableRecord:
    old = call.store.get_variable(key)
    if old is None:
        raise _not_found(key)
    fields = set(body) - {"key", "team_name"}
    if mask:
        fields &= mask
    value = stored_value(body["value"]) if "value" in fields else old.value
    description = body.get("description") if "description" in fields else old.description
    updated = call.store.set_variable(key, value, description)
    assert updated is not None  # None only for only_if_new
    return updated


@routes.patch("/variables/{variable_key}")
def patch_variable(call: Call) -> VariableResponse:
    """Only the fields named in ``update_mask`` change (all those sent without one); the key cannot."""
    key = call.path("variable_key")
    mask = set(call.query.strings("update_mask"))
    call.query.check()
    body = _body(call.request.body)
    if body["key"] != key:
        raise BadRequest("Invalid body, key from request body doesn't match uri parameter")
    return variable_response(_update(call, key, body, mask))


@routes.delete("/variables/{variable_key}")
def delete_variable(call: Call) -> Reply:
    key = call.path("variable_key")
    if not call.store.delete_variable(key):
        raise _not_found(key)
    return Reply(204)


def _bulk_create(call: Call, entity: dict[str, Any], overwrite: bool) -> bool:
    body = _body(json.dumps(entity))
    value = stored_value(body["value"])
    if overwrite:
        call.store.set_variable(body["key"], value, body.get("description"))
        return True
    return call.store.set_variable(body["key"], value, body.get("description"), only_if_new=True) is not None


BULK = BulkHandlers(
    kind="Variable", id_field="key",
    exists=lambda call, key: call.store.get_variable(key) is not None,
    create=_bulk_create,
    update=lambda call, entity, mask: _update(call, entity["key"], _body(json.dumps(entity)), mask),
    delete=lambda call, key: call.store.delete_variable(key),
    validate=lambda entity: _body(json.dumps(entity)),
)


@routes.patch("/variables")
def bulk_variables(call: Call) -> BulkResponse:
    return run_bulk(call, BULK)
