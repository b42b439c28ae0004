"""Which operator extra links a task has, as Airflow 3.3 resolves them, and how the serialized DAG records them:
the operator's own (class attribute, property, set by ``__init__``; a mapped task's prototype's), a plugin's
``operator_extra_links`` for the task's class (winning over the operator's own of the same name), the plugins'
``global_operator_extra_links`` (under names the task does not use yet)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

import updraft.plugins
from updraft.plugins import AirflowPlugin
from updraft.sdk import DAG
from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.operator_link import BaseOperatorLink, task_links
from updraft.serialization import deserialize_dag, serialize_dag

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


class NamedLink(BaseOperatorLink):
    def __init__(self, name: str, xcom_key: str | None = None) -> None:
        self._name = name
        self._key = xcom_key

    @property
    def name(self) -> str:
        return self._name

    @property
    def xcom_key(self) -> str:
        return self._key or super().xcom_key

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return f"https://example.com/{self._name}"


class Submit(BaseOperator):
    operator_extra_links = (NamedLink("Run", "run_key"), NamedLink("Docs"))

    def __init__(self, *, topic: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.topic = topic


class ChoosesInInit(BaseOperator):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.operator_extra_links = (NamedLink("Chosen"),)


class ByProperty(BaseOperator):
    @property
    def operator_extra_links(self) -> tuple[BaseOperatorLink, ...]:  # type: ignore[override]
        return (NamedLink(f"Page of {self.task_id}"),)


@pytest.fixture(autouse=True)
def isolated_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(updraft.plugins, "_plugins", dict(updraft.plugins._plugins))


def _serialized_links(dag: DAG) -> dict[str, Any]:
    doc = serialize_dag(dag, relative_fileloc="f.py", file_hash="h")
    return {t.task_id: t.extra_links for t in deserialize_dag(doc).tasks}


def test_the_operators_own_links_by_class_property_and_init_and_a_mapped_tasks():
    with DAG("d", schedule=None, start_date=START) as dag:
        Submit(task_id="submit")
        ChoosesInInit(task_id="chosen")
        ByProperty(task_id="prop")
        Submit.partial(task_id="mapped").expand(topic=["a", "b"])
        BaseOperator(task_id="plain")
    assert _serialized_links(dag) == {
        "submit": {"Docs": "_link_NamedLink", "Run": "run_key"},
        "chosen": {"Chosen": "_link_NamedLink"},
        "prop": {"Page of prop": "_link_NamedLink"},
        "mapped": {"Docs": "_link_NamedLink", "Run": "run_key"},
        "plain": None,  # no links: nothing recorded (the documents of DAGs without links are unchanged)
    }
    doc = serialize_dag(dag, relative_fileloc="f.py", file_hash="h")
    assert "extra_links" not in next(t for t in doc["dag"]["tasks"] if t["task_id"] == "plain")


def test_a_plugins_links_for_the_class_win_and_global_links_fill_in():
    class Plugin(AirflowPlugin):
        name = "links"
        operator_extra_links = [type("ForSubmit", (NamedLink,), {"operators": [Submit]})("Run", "plugin_key")]
        global_operator_extra_links = [NamedLink("Docs", "global_docs"), NamedLink("Runbook", "runbook")]

    with DAG("d", schedule=None, start_date=START) as dag:
        submit = Submit(task_id="submit")
        plain = BaseOperator(task_id="plain")
    assert task_links(submit)["Run"].xcom_key == "plugin_key"  # the plugin's, over the operator's own
    assert task_links(submit)["Docs"].xcom_key == "_link_NamedLink"  # the operator's own, over the global one
    assert _serialized_links(dag) == {
        "submit": {"Docs": "_link_NamedLink", "Run": "plugin_key", "Runbook": "runbook"},
        "plain": {"Docs": "global_docs", "Runbook": "runbook"},
    }
    assert task_links(plain).keys() == {"Docs", "Runbook"}


def test_a_link_without_a_string_name_is_refused_naming_the_task():
    class Nameless(NamedLink):
        name = None  # type: ignore[assignment]

    class Broken(BaseOperator):
        operator_extra_links = (Nameless("x"),)

    with DAG("d", schedule=None, start_date=START):
        broken = Broken(task_id="broken")
    with pytest.raises(TypeError, match="of task 'broken' must have a non-empty string name"):
        task_links(broken)
