"""Airflow 2's ``airflow.utils.dates`` and the timezone helpers DAG files call at parse time."""

from __future__ import annotations

from datetime import datetime, timedelta

import pendulum
import pytest

from airflow.utils import timezone
from airflow.utils.dates import cron_presets, days_ago, infer_time_unit, scale_time_units
from updraft.sdk.parsing_context import get_parsing_context


def test_days_ago_is_utc_midnight_n_days_back():
    with pytest.warns(DeprecationWarning, match="days_ago"):
        value = days_ago(2)
    today = pendulum.now("UTC").start_of("day")
    assert value == today - timedelta(days=2)
    assert value.utcoffset() == timedelta(0)


def test_days_ago_with_time_of_day():
    with pytest.warns(DeprecationWarning):
        value = days_ago(0, hour=6, minute=30)
    assert (value.hour, value.minute, value.second) == (6, 30, 0)
    assert value.date() == pendulum.now("UTC").date()


def test_cron_presets_and_units():
    assert cron_presets["@daily"] == "0 0 * * *"
    assert infer_time_unit([30]) == "seconds"
    assert infer_time_unit([5400]) == "minutes"
    assert infer_time_unit([36000]) == "hours"
    assert infer_time_unit([]) == "hours"
    assert scale_time_units([120, 60], "minutes") == [2, 1]


def test_timezone_helpers_are_aware_and_utc_by_default():
    assert timezone.datetime(2024, 1, 1).utcoffset() == timedelta(0)
    assert timezone.utcnow().utcoffset() == timedelta(0)
    assert timezone.parse("2024-01-01T00:00:00").tzinfo is not None
    assert timezone.make_aware(datetime(2024, 1, 1)).utcoffset() == timedelta(0)


def test_parsing_context_is_empty_during_a_full_parse(monkeypatch):
    monkeypatch.delenv("_AIRFLOW_PARSING_CONTEXT_DAG_ID", raising=False)
    assert get_parsing_context() == (None, None)
    monkeypatch.setenv("_AIRFLOW_PARSING_CONTEXT_DAG_ID", "etl")
    assert get_parsing_context().dag_id == "etl"
