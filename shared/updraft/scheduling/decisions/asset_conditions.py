"""Whether a DAG's asset condition is met: Airflow's ``BaseAsset.evaluate`` on the serialized condition.

The condition is the timetable's encoded form (``{"__type": "asset_all" | "asset_any" | "asset" |
"asset_alias" | "asset_ref", ...}``), so the scheduler decides without the authoring classes. A leaf is met when
the DAG has events queued for it since its last asset-triggered run; ``&`` needs all of its parts, ``|`` any.
Aliases are met by events emitted through them (``outlet_events[AssetAlias(...)].add(...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any


def leaf_target(leaf: Mapping[str, Any], uri_to_name: Callable[[str], str | None] = lambda uri: None) -> str | None:
    """The queue target (``asset:<name>`` / ``alias:<name>``) a leaf of the condition stands for."""
    kind = leaf.get("__type")
    if kind == "asset":
        return f"asset:{leaf.get('name') or leaf.get('uri')}"
    if kind == "asset_alias":
        return f"alias:{leaf['name']}"
    if kind == "asset_ref":
        if leaf.get("name"):
            return f"asset:{leaf['name']}"
        name = uri_to_name(str(leaf.get("uri")))
        return f"asset:{name}" if name is not None else None
    raise ValueError(f"not an asset condition leaf: {leaf!r}")


def evaluate(condition: Mapping[str, Any], queued: set[str],
             uri_to_name: Callable[[str], str | None] = lambda uri: None) -> bool:
    """Whether ``condition`` holds when the targets in ``queued`` have events."""
    kind = condition.get("__type")
    if kind == "asset_all":
        return all(evaluate(o, queued, uri_to_name) for o in condition["objects"])
    if kind == "asset_any":
        return any(evaluate(o, queued, uri_to_name) for o in condition["objects"])
    return leaf_target(condition, uri_to_name) in queued


def leaves(condition: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every asset, alias and reference the condition names."""
    if condition.get("__type") in ("asset_all", "asset_any"):
        for o in condition["objects"]:
            yield from leaves(o)
    else:
        yield condition
