"""Airflow's example plugins: ``airflow.example_dags`` is the DAGs folder, listeners stay refused with the reason."""

from __future__ import annotations

import importlib
import sys

import pytest

from updraft.parsing.s3_events import dag_file_events
from updraft.parsing.timetable_horizons import reparse_event
from updraft.sdk._internal import bundle_root
from updraft.sdk.exceptions import UnsupportedFeatureError


def test_example_dags_package_is_the_dags_folder(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "helper_for_test.py").write_text("VALUE = 42\n")
    before = list(bundle_root.DAGS_FOLDERS)
    try:
        bundle_root.use_dags_folder(str(tmp_path))
        module = importlib.import_module("airflow.example_dags.plugins.helper_for_test")
        assert module.VALUE == 42
    finally:
        bundle_root.DAGS_FOLDERS[:] = before
        for name in ("airflow.example_dags.plugins.helper_for_test", "airflow.example_dags.plugins"):
            sys.modules.pop(name, None)


def test_a_helper_missing_from_the_dags_folder_says_where_to_put_it():
    with pytest.raises(UnsupportedFeatureError, match=r"plugins folder .* in the DAGs folder"):
        importlib.import_module("airflow.example_dags.plugins.not_there_at_all")


def test_listeners_are_refused_naming_why():
    with pytest.raises(UnsupportedFeatureError, match=r"scheduler and API server .* on_\*_callback"):
        importlib.import_module("airflow.listeners")


def test_the_schedulers_request_is_an_event_the_parser_handles():
    event = reparse_event("bucket", "dags/", "team a/my+dag.py")
    (found,) = dag_file_events(event, prefix="dags/", bucket="bucket").events
    assert (found.kind, found.key) == ("created", "dags/team a/my+dag.py")
