"""Connections: list, get, create (``POST``), update (``PATCH`` with ``update_mask``), delete, the bulk
``PATCH /connections`` and ``POST /connections/test``, as Airflow's ``ConnectionResponse``.

Passwords are always ``***`` in responses and ``extra`` is shown with its sensitive fields masked, exactly as
Airflow's API does; a PATCH that sends a masked value back keeps the stored one (Airflow's ``merge``). Testing a
connection is answered as Airflow answers with ``[core] test_connection`` disabled (its default): Updraft runs no
hooks in the API.

``GET /connections/hook_meta`` is what the connection form is drawn from: every connection type Updraft and the
environment's installed providers declare (:mod:`updraft.requirements.provider_info`, read from the installer's
``providers.json``; no provider code is imported), each as Airflow's ``ConnectionHookMetaData``. Airflow serves it
as ``GET /ui/connections/hook_meta``, in its private UI API beside ``/api/v2``; Updraft's ``/ui/`` paths are the web
UI's session (:mod:`updraft.api.auth.session`), so it is served here, where both a bearer client and the UI's
session reach it, and needs the role a connection read needs. A connection named ``hook_meta`` is still listed,
created, changed and deleted as any other, but ``GET`` of that one id answers the form's metadata.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NoReturn

from updraft.api.body import Field, parse_body
from updraft.api.errors import BadRequest, Conflict, Forbidden, NotFound, Unprocessable, issue
from updraft.api.formats import pattern_matcher
from updraft.api.json_text import InvalidJson, loads
from updraft.api.pagination import page_of, paginate
from updraft.api.routes.bulk import BulkHandlers, run_bulk
from updraft.api.routing import Call, Reply, RouteTable
from updraft.model.identifiers import KEY_REGEX
from updraft.requirements import provider_info
from updraft.secrets.masker import REPLACEMENT, merge, redact, should_hide_value_for_key
from updraft.store.connections import ConnectionRecord

if TYPE_CHECKING:
    from updraft.api.models import BulkResponse, ConnectionCollectionResponse, ConnectionResponse

routes = RouteTable()

BODY = {"connection_id": Field("str", required=True, nullable=False, max_length=200, key=True),
        "conn_type": Field("str", required=True, nullable=False), "description": Field("str"),
        "host": Field("str"), "login": Field("str"), "schema": Field("str"), "port": Field("int"),
        "password": Field("str"), "extra": Field("str"), "team_name": Field("str")}
FIELDS = ("conn_type", "description", "host", "login", "schema", "port", "password", "extra")
ORDER = {"conn_id": lambda c: c.conn_id, "connection_id": lambda c: c.conn_id, "id": lambda c: c.conn_id,
         "conn_type": lambda c: c.conn_type, "description": lambda c: c.description, "host": lambda c: c.host,
         "port": lambda c: c.port}
TEST_DISABLED = ("Testing connections is disabled in Airflow configuration. "
                 "Contact your deployment admin to enable it.")


def _not_found(conn_id: str) -> NotFound:
    return NotFound(f"The Connection with connection_id: `{conn_id}` was not found")


def masked_extra(extra: str | None) -> str | None:
    """Airflow's ``ConnectionResponse.redact_extra``."""
    if not extra:
        return extra
    try:
        return json.dumps(redact(loads(extra)))
    except InvalidJson:
        return REPLACEMENT  # never an unparsable (or too deep to mask) extra in clear (Airflow refuses to store one)


def connection_response(record: ConnectionRecord) -> ConnectionResponse:
    # Airflow's conn_type is required (its column NOT NULL); every connection is written through this API, whose
    # body requires it, so the record's optional type is always set and "" only keeps the model's type.
    return {"connection_id": record.conn_id, "conn_type": record.conn_type or "", "description": record.description,
            "host": record.host, "login": record.login, "schema": record.schema, "port": record.port,
            "password": None if record.password is None else str(redact(record.password, "password")),
            "extra": masked_extra(record.extra), "team_name": None}


def _body(raw: str | None) -> dict[str, Any]:
    body = parse_body(raw, BODY)
    problems = []
    if not KEY_REGEX.match(body["connection_id"]):
        problems.append(issue("string_pattern_mismatch", ("body", "connection_id"),
                              f"String should match pattern '{KEY_REGEX.pattern}'", body["connection_id"]))
    extra = body.get("extra")
    if extra == "":
        body["extra"] = "{}"  # Airflow reads "" as an empty object
    elif extra is not None:
        try:
            loaded = loads(extra)
        except InvalidJson as err:
            if not err.not_json:  # JSON, but too deep or not Unicode
                raise Unprocessable([issue(err.kind, ("body", "extra", *err.loc), err.msg, err.value)]) from None
            loaded = None
        if not isinstance(loaded, dict):
            problems.append(issue("value_error", ("body", "extra"), "Value error, The `extra` field must be a "
                                  "valid JSON object (e.g., {'key': 'value'})", extra))
    if problems:
        raise Unprocessable(problems)
    if body.get("team_name") is not None:
        raise BadRequest("Updraft has no multi-team mode: team_name must be null")
    return body


def _record(body: dict[str, Any]) -> ConnectionRecord:
    return ConnectionRecord(conn_id=body["connection_id"], **{f: body.get(f) for f in FIELDS})


@routes.get("/connections")
def get_connections(call: Call) -> ConnectionCollectionResponse:
    page = page_of(call.query, ["id"])
    matches = pattern_matcher(call.query.string("connection_id_pattern"))
    call.query.check()
    found, total = paginate([c for c in call.store.list_connections() if matches(c.conn_id)], page, ORDER)
    return {"connections": [connection_response(c) for c in found], "total_entries": total}


@routes.post("/connections/test")
def test_connection(call: Call) -> NoReturn:
    raise Forbidden(TEST_DISABLED)


# The response's standard fields (Airflow's StandardHookFields) and the ui-field-behaviour name each one reads.
STANDARD_FIELDS = {"description": "description", "url_schema": "schema", "host": "host", "port": "port",
                   "login": "login", "password": "password"}


def _standard_field(behaviour: provider_info.FieldBehaviour, name: str) -> dict[str, Any] | None:
    """Airflow's ``ConnectionHookFieldBehavior`` for one standard field, or None when nothing is said of it."""
    hidden = name in behaviour.hidden_fields
    title, placeholder = behaviour.relabeling.get(name), behaviour.placeholders.get(name)
    if not (hidden or title or placeholder):
        return None
    return {"hidden": hidden, "title": title, "placeholder": placeholder}


def _extra_fields(fields: dict[str, Any]) -> dict[str, Any] | None:
    """Airflow's ``ConnectionHookMetaData.redact_extra_fields``: a sensitive field's default shows as ``***``."""
    if not fields:
        return None
    return {name: {**spec, "value": REPLACEMENT} if should_hide_value_for_key(name) and spec.get("value") is not None
            else spec for name, spec in fields.items()}


def hook_meta_entry(kind: provider_info.ConnectionType) -> dict[str, Any]:
    """One connection type as Airflow's ``ConnectionHookMetaData``."""
    behaviour = kind.field_behaviour
    return {
        "connection_type": kind.connection_type, "hook_class_name": kind.hook_class_name,
        "default_conn_name": None, "hook_name": kind.hook_name,
        "standard_fields": None if behaviour is None else {
            field: _standard_field(behaviour, name) for field, name in STANDARD_FIELDS.items()},
        "extra_fields": _extra_fields(dict(kind.extra_fields)),
    }


@routes.get("/connections/hook_meta")
def hook_meta(call: Call) -> list[dict[str, Any]]:
    """The connection form's types; a broken ``providers.json`` is a broken install, answered 500 naming it."""
    call.query.check()
    return [hook_meta_entry(kind) for kind in provider_info.connection_types(provider_info.installed())]


@routes.get("/connections/{connection_id}")
def get_connection(call: Call) -> ConnectionResponse:
    conn_id = call.path("connection_id")
    record = call.store.get_connection(conn_id)
    if record is None:
        raise _not_found(conn_id)
    return connection_response(record)


@routes.post("/connections", status=201)
def post_connection(call: Call) -> ConnectionResponse:
    body = _body(call.request.body)
    record = call.store.put_connection(_record(body), only_if_new=True)
    if record is None:
        raise Conflict(f"The Connection with connection_id: `{body['connection_id']}` already exists")
    return connection_response(record)


def _update(call: Call, conn_id: str, body: dict[str, Any], mask: set[str]) -> ConnectionRecord:
    """Airflow's ``update_orm_from_pydantic``: the fields sent (those also in ``update_mask`` when given); a
    password or extra sent back masked keeps the stored value."""
    old = call.store.get_connection(conn_id)
    if old is None:
        raise _not_found(conn_id)
    fields = set(body) & set(FIELDS)
    if mask:
        fields &= mask
    values = old.to_dict()
    for name in fields:
        values[name] = body.get(name)
    if "password" in fields and body.get("password") is not None:
        values["password"] = merge(body["password"], old.password, "password")
    if "extra" in fields and body.get("extra") is not None and old.extra:
        try:
            values["extra"] = json.dumps(merge(loads(body["extra"]), loads(old.extra)))
        except InvalidJson:
            values["extra"] = body["extra"]
    record = ConnectionRecord(**values)  # type: ignore[arg-type]
    call.store.put_connection(record)
    return record


@routes.patch("/connections/{connection_id}")
def patch_connection(call: Call) -> ConnectionResponse:
    conn_id = call.path("connection_id")
    mask = set(call.query.strings("update_mask"))
    call.query.check()
    body = _body(call.request.body)
    if body["connection_id"] != conn_id:
        raise BadRequest("The connection_id in the request body does not match the URL parameter")
    return connection_response(_update(call, conn_id, body, mask))


@routes.delete("/connections/{connection_id}")
def delete_connection(call: Call) -> Reply:
    conn_id = call.path("connection_id")
    if not call.store.delete_connection(conn_id):
        raise _not_found(conn_id)
    return Reply(204)


def _bulk_create(call: Call, entity: dict[str, Any], overwrite: bool) -> bool:
    record = _record(_body(json.dumps(entity)))
    if overwrite:
        call.store.put_connection(record)
        return True
    return call.store.put_connection(record, only_if_new=True) is not None


BULK = BulkHandlers(
    kind="Connection", id_field="connection_id",
    exists=lambda call, conn_id: call.store.get_connection(conn_id) is not None,
    create=_bulk_create,
    update=lambda call, entity, mask: _update(call, entity["connection_id"], _body(json.dumps(entity)), mask),
    delete=lambda call, conn_id: call.store.delete_connection(conn_id),
    validate=lambda entity: _body(json.dumps(entity)),
)


@routes.patch("/connections")
def bulk_connections(call: Call) -> BulkResponse:
    return run_bulk(call, BULK)
