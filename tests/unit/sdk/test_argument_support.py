"""Every argument Airflow 3.3's authoring surface accepts is either honoured or refused, never silently ignored.

``airflow_arguments.json`` is read from Airflow's own source by bench/airflow_arguments.py; Updraft's one table is
``updraft.sdk._internal.argument_support.ARGUMENTS``. An Airflow argument missing from the table (a new Airflow
release) or a table entry Airflow no longer has fails here.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import re
from pathlib import Path

import pytest

from airflow.sdk import DAG, BaseOperator, BaseSensorOperator, TaskGroup, dag, task, task_group
from updraft.operators.python import PythonOperator
from updraft.sdk._internal.argument_support import ARGUMENTS, Honoured, Refused, Removed, refusals
from updraft.sdk.exceptions import UnsupportedFeatureError

AIRFLOW = json.loads((Path(__file__).with_name("airflow_arguments.json")).read_text())
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
README = Path(__file__).resolve().parents[3] / "README.md"


def _entries(kind: type) -> list[tuple[str, str]]:
    return [(surface, name) for surface, table in ARGUMENTS.items() for name, rule in table.items()
            if isinstance(rule, kind)]


def made_by_dag():
    pass


def work():
    pass


def grouped():
    BaseOperator(task_id="x")


class _Sensor(BaseSensorOperator):
    def poke(self, context):
        return True


@pytest.mark.parametrize("surface", sorted(AIRFLOW))
def test_table_covers_exactly_airflows_arguments(surface):
    assert set(ARGUMENTS[surface]) == set(AIRFLOW[surface])


def _build(surface: str, name: str, value: object):
    """Build ``surface`` with ``name=value`` the way a DAG file does; return the object that keeps the argument."""
    extra = {name: value}
    if surface == "DAG":
        return DAG("d", start_date=START, **({} if name == "dag_id" else extra))
    if surface == "dag":
        return dag(**({} if name == "dag_id" else extra))(made_by_dag)()
    with DAG("d", start_date=START) as d:
        if surface == "BaseOperator":
            return BaseOperator(**{"task_id": "t", **extra})
        if surface == "BaseSensorOperator":
            return _Sensor(task_id="s", **extra)
        if surface == "task":
            task(**extra)(work)()
            return d.get_task("work")
        if surface == "TaskGroup":
            return TaskGroup(**{"group_id": "g", **extra})
        if surface == "task_group":
            task_group(**({} if name == "group_id" else extra))(grouped)()
            return d.task_group.children["grouped"]
    raise AssertionError(surface)


@pytest.mark.parametrize(("surface", "name"), _entries(Refused))
def test_refused_argument_fails_the_import_naming_it(surface, name):
    with pytest.raises(UnsupportedFeatureError, match=rf"\({name}=\.\.\.\)") as error:
        _build(surface, name, object())
    assert isinstance(error.value, ImportError)  # the parser reports it as the file's import error


@pytest.mark.parametrize(("surface", "name"), _entries(Refused))
def test_refused_argument_at_airflows_default_is_accepted(surface, name):
    _build(surface, name, ARGUMENTS[surface][name].default)  # type: ignore[union-attr]


def test_refused_argument_through_default_args_fails_too():
    with pytest.raises(UnsupportedFeatureError, match="run_as_user"), DAG(
            "d", start_date=START, default_args={"run_as_user": "root"}):
        BaseOperator(task_id="t")


_SIGNATURE = {"BaseOperator": BaseOperator, "BaseSensorOperator": _Sensor, "task": PythonOperator,
              "DAG": DAG, "dag": DAG, "TaskGroup": TaskGroup, "task_group": TaskGroup}
_KEEPER_ARGUMENT = {"DAG": ("description", None), "dag": ("description", None), "BaseOperator": ("owner", "o"),
                    "BaseSensorOperator": ("poke_interval", 60), "task": ("multiple_outputs", False),
                    "TaskGroup": ("tooltip", ""), "task_group": ("tooltip", "")}


@pytest.mark.parametrize(("surface", "name"), _entries(Honoured))
def test_honoured_argument_is_accepted_and_kept(surface, name):
    accepted = {p for cls in _SIGNATURE[surface].__mro__ if "__init__" in vars(cls)
                for p in inspect.signature(cls.__init__).parameters}
    assert name in accepted
    built = _build(surface, *_KEEPER_ARGUMENT[surface])
    assert hasattr(built, ARGUMENTS[surface][name].attribute)  # type: ignore[union-attr]


def test_honoured_arguments_reach_the_serialized_dag():
    from updraft.serialization.from_dag import build_serialized_dag

    with DAG("d", start_date=START, tags=["x"], fail_fast=True, owner_links={"o": "https://o"},
             is_paused_upon_creation=True) as d:
        BaseOperator(task_id="t", queue="q", pool_slots=2, max_active_tis_per_dag=3, task_display_name="T")
    text = json.dumps(build_serialized_dag(d, relative_fileloc="d.py", file_hash="h").to_dict(), default=str)
    for fragment in ('"fail_fast": true', '"queue": "q"', '"pool_slots": 2', '"max_active_tis_per_dag": 3',
                     '"task_display_name": "T"', "https://o"):
        assert fragment in text, fragment


@pytest.mark.parametrize(("surface", "name"), _entries(Removed))
def test_removed_argument_warns_as_airflow_3(surface, name):
    with pytest.warns(UserWarning, match=ARGUMENTS[surface][name].warning):  # type: ignore[union-attr]
        _build(surface, name, dt.timedelta(hours=1))


def test_readme_lists_every_refusal():
    section = re.split(r"\n#{2,4} ", README.read_text().split("### Arguments Updraft refuses", 1)[1])[0]
    for surface, names in refusals().items():
        for name, reason in names.items():
            assert f"`{surface}({name}=...)`: {reason}" in section, (surface, name)
