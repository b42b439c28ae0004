"""Asset conditions as the scheduler evaluates them: the serialized form of ``&``, ``|``, nesting, aliases, refs."""

from __future__ import annotations

import pytest

from airflow.sdk import Asset, AssetAlias
from updraft.scheduling.decisions.asset_conditions import evaluate, leaf_target, leaves
from updraft.timetables.simple import AssetTriggeredTimetable

A, B, C, D = (Asset(n) for n in "abcd")


def condition(schedule):
    return AssetTriggeredTimetable(schedule).asset_condition


@pytest.mark.parametrize(("schedule", "queued", "met"), [
    ([A, B], {"asset:a"}, False),  # a list is "all of"
    ([A, B], {"asset:a", "asset:b"}, True),
    (A | B, {"asset:b"}, True),
    (A & B, {"asset:b"}, False),
    ((A | B) & C, {"asset:a"}, False),
    ((A | B) & C, {"asset:b", "asset:c"}, True),
    ((A & B) | (C & D), {"asset:a", "asset:d"}, False),
    ((A & B) | (C & D), {"asset:c", "asset:d"}, True),
    (A & (B | (C & D)), {"asset:a", "asset:c", "asset:d"}, True),
    (A & (B | (C & D)), {"asset:a", "asset:c"}, False),
    (AssetAlias("al") | A, {"alias:al"}, True),
    (AssetAlias("al") & A, {"alias:al"}, False),
    (Asset.ref(name="a") & B, {"asset:a", "asset:b"}, True),
    (A, set(), False),
])
def test_conditions(schedule, queued, met):
    assert evaluate(condition(schedule), queued) is met


def test_uri_references_resolve_through_the_callback():
    cond = condition(Asset.ref(uri="s3://b/k"))
    assert not evaluate(cond, {"asset:k"})
    assert evaluate(cond, {"asset:k"}, lambda uri: "k" if uri == "s3://b/k" else None)


def test_leaves_and_targets():
    cond = condition((A | AssetAlias("al")) & Asset.ref(name="r"))
    assert [leaf_target(x) for x in leaves(cond)] == ["asset:a", "alias:al", "asset:r"]
