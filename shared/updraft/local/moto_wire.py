"""DynamoDB's attribute values through moto's JSON protocol as they are, not member by member.

moto 5.2 parses every request and serializes every response by walking botocore's shapes, member by member, and
DynamoDB's ``AttributeValue`` is the worst case: a structure of ten members, asked for each of them, at each
attribute of each item (a Query returning a run's 200 task instances cost ~100 ms of moto's time, measured, and
moto serves one request at a time).

- **Responses.** The items moto holds are already in DynamoDB's wire format (``{"S": ...}``, ``{"L": [...]}``),
  so an attribute value, and a map of them (an item: ``AttributeMap``), is written as it is, with binary values
  base64-encoded as the JSON protocol requires; everything else still goes through moto's serializer.
- **Requests.** A scalar attribute value (``S``, ``N``, ``BOOL``, ``NULL``: what moto's parser returns unchanged)
  is taken as it is; a binary, a set, a list or a map is parsed by moto (its scalars then take this path).

``tests/unit/local/test_moto_speedups.py`` checks the responses are moto's own, byte for byte.
"""

from __future__ import annotations

import base64
from typing import Any

from updraft.local.snapshot import map_binary

# The attribute types whose value is a JSON scalar as it is (a binary is base64 on the wire): moto's JSON parser
# returns them as they came, and its result walk as they are stored.
SCALARS = frozenset({"S", "N", "BOOL", "NULL"})


def wire_value(value: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute value as the JSON protocol writes it (binaries base64-encoded); a scalar that is not a
    binary is its own."""
    if len(value) == 1 and next(iter(value)) in SCALARS:
        return value
    return map_binary(value, lambda b: base64.b64encode(b).decode() if isinstance(b, bytes | bytearray) else b)


def apply() -> None:
    """Patch moto's JSON serializer and parser (called once, by ``moto_speedups.apply``)."""
    from moto.core.parse import BaseJSONParser
    from moto.core.serialize import BaseJSONSerializer

    structure = BaseJSONSerializer._serialize_type_structure
    mapping = BaseJSONSerializer._serialize_type_map
    parse_structure = BaseJSONParser._parse_structure

    def serialize_structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == "AttributeValue" and isinstance(value, dict):
            serialized[key] = wire_value(value)
            return
        structure(self, serialized, value, shape, key)

    def serialize_map(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if shape.value.name == "AttributeValue" and all(isinstance(each, dict) for each in value.values()):
            self._default_serialize(serialized, {name: wire_value(each) for name, each in value.items()}, shape, key)
            return
        mapping(self, serialized, value, shape, key)

    def parse_attribute_value(self: Any, shape: Any, value: Any) -> Any:
        if shape.name == "AttributeValue" and type(value) is dict and len(value) == 1:
            ((kind, given),) = value.items()
            if kind in SCALARS and given is not None:
                parsed = self.MAP_TYPE()
                parsed[kind] = given
                return parsed
        return parse_structure(self, shape, value)

    BaseJSONSerializer._serialize_type_structure = serialize_structure  # type: ignore[method-assign]
    BaseJSONSerializer._serialize_type_map = serialize_map  # type: ignore[method-assign]
    BaseJSONParser._parse_structure = parse_attribute_value  # type: ignore[method-assign]
