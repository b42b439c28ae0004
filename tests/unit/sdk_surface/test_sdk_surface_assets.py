"""Assets validate and normalise like Airflow 3, combine with ``&``/``|``, and give Airflow's JSON expression."""

from __future__ import annotations

import json
import os

import pytest

from airflow.datasets import Dataset, DatasetAll, DatasetAny
from airflow.sdk import Asset, AssetAlias, AssetAll, AssetAny, Metadata
from updraft.sdk.assets import AssetNameRef, AssetUriRef, Model
from updraft.sdk.exceptions import UnsupportedFeatureError


def test_name_or_uri_alone_stands_for_both():
    by_name = Asset("orders")
    assert (by_name.name, by_name.uri, by_name.group, by_name.extra) == ("orders", "orders", "asset", {})
    by_uri = Asset(uri="s3://bucket/orders")
    assert (by_uri.name, by_uri.uri) == ("s3://bucket/orders", "s3://bucket/orders")
    both = Asset("orders", "s3://bucket/orders", group="sales", extra={"owner": "me"})
    assert (both.name, both.uri, both.group, both.extra) == ("orders", "s3://bucket/orders", "sales", {"owner": "me"})
    assert os.fspath(both) == "s3://bucket/orders"


@pytest.mark.parametrize(("raw", "normalised"), [
    ("S3://bucket/key/", "s3://bucket/key"),
    ("s3://bucket/key?b=2&a=1#frag", "s3://bucket/key?a=1&b=2"),
    ("postgres://host:5432/db/schema/table", "postgres://host:5432/db/schema/table"),
    ("file:///tmp/data/", "file:///tmp/data"),
    ("x-custom://Anything/Goes/", "x-custom://Anything/Goes/"),
    ("plain name", "plain name"),
])
def test_uri_normalisation(raw, normalised):
    assert Asset(uri=raw).uri == normalised


def test_credentials_are_dropped_with_a_warning():
    with pytest.warns(UserWarning, match="should not contain a password"):
        asset = Asset(uri="s3://user:secret@bucket/key")
    assert asset.uri == "s3://bucket/key"


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({}, TypeError, "Asset() requires either 'name' or 'uri'"),
    ({"name": ""}, ValueError, "Asset name cannot be empty"),
    ({"name": "   "}, ValueError, "Asset name cannot be just whitespace"),
    ({"name": 5, "uri": "x"}, ValueError, "Asset name must be a string"),
    ({"name": "x" * 1501}, ValueError, "Asset name cannot exceed 1500 characters"),
    ({"name": "self"}, ValueError, "prohibited name for asset: self"),
    ({"name": "context"}, ValueError, "prohibited name for asset: context"),
    ({"uri": "airflow://dag/x"}, ValueError, "Asset scheme 'airflow' is reserved"),
    ({"uri": "s3:///key"}, ValueError, "URI format s3:// must contain a bucket name"),
    ({"name": "a", "group": " "}, ValueError, "Asset group cannot be just whitespace"),
])
def test_validation_messages(kwargs, error, message):
    with pytest.raises(error) as info:
        Asset(**kwargs)
    assert str(info.value) == message


def test_watchers_are_unsupported():
    with pytest.raises(UnsupportedFeatureError, match="watchers"):
        Asset("a", watchers=[object()])


def test_equality_and_hashing():
    assert Asset("a", "s3://b/k/") == Asset("a", "s3://b/k")
    assert Asset("a") != Asset("a", group="other")
    assert len({Asset("a"), Asset("a"), Asset("b")}) == 2


def test_dataset_is_an_asset_with_its_own_group():
    ds = Dataset("s3://bucket/key")
    assert isinstance(ds, Asset)
    assert ds.group == "dataset"
    assert Model("m").group == "model"
    assert DatasetAll is AssetAll and DatasetAny is AssetAny


def test_conditions_flatten_and_serialize_to_airflows_expression():
    a, b, c = Asset("a"), Asset("b"), Asset("c")
    either = a | b | c
    assert isinstance(either, AssetAny) and either.objects == (a, b, c)
    both = a & b & c
    assert isinstance(both, AssetAll) and both.objects == (a, b, c)
    mixed = (a | b) & AssetAlias("late")
    assert mixed.as_expression() == {"all": [
        {"any": [{"asset": {"uri": "a", "name": "a", "group": "asset"}},
                 {"asset": {"uri": "b", "name": "b", "group": "asset"}}]},
        {"alias": {"name": "late", "group": "asset"}},
    ]}
    json.dumps(mixed.as_expression())
    assert [key for key, _ in mixed.iter_assets()] == [("a", "a"), ("b", "b")]
    assert [name for name, _ in mixed.iter_asset_aliases()] == ["late"]


def test_conditions_reject_non_assets():
    with pytest.raises(TypeError, match="expect asset expressions in condition"):
        AssetAny(Asset("a"), "b")
    with pytest.raises(TypeError):
        Asset("a") | "b"


def test_refs():
    assert Asset.ref(name="orders") == AssetNameRef("orders")
    assert Asset.ref(uri="s3://b/k").as_expression() == {"asset_ref": {"uri": "s3://b/k"}}
    assert isinstance(Asset.ref(uri="s3://b/k"), AssetUriRef)
    with pytest.raises(TypeError, match="either name or URI, not both"):
        Asset.ref(name="a", uri="b")
    with pytest.raises(TypeError, match="expects keyword argument 'name' or 'uri'"):
        Asset.ref()


def test_alias_validation():
    assert AssetAlias("x").group == "asset"
    with pytest.raises(ValueError, match="AssetAlias name cannot be empty"):
        AssetAlias("")


def test_metadata():
    meta = Metadata("s3://b/k", {"rows": 3}, alias="late")
    assert (meta.asset, meta.extra, meta.alias) == (("s3://b/k", "s3://b/k"), {"rows": 3}, "late")
