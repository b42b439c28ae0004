"""The serialized DAG: versioned, deterministic, lossless, complete for the scheduler, and free of pickles."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pendulum
import pytest
from serialization_dags import build_everything_dag, load_workday_timetable

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, task
from updraft.serialization import (
    SCHEMA_VERSION,
    SchemaVersionError,
    SerializedDAG,
    canonical_json,
    dag_hash,
    deserialize_dag,
    serialize_dag,
)
from updraft.serialization.encoding import CallableRef, OpaqueValue, XComRef, XComZipRef
from updraft.timetables.registry import TimetableNotRegistered

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def serialize(dag: DAG) -> dict[str, Any]:
    dag.validate()
    return serialize_dag(dag, relative_fileloc="dags/everything.py", file_hash="f" * 64)


@pytest.fixture(scope="module")
def everything() -> dict[str, Any]:
    return serialize(build_everything_dag())


def tasks_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_id"]: t for t in doc["dag"]["tasks"]}


class TestVersion:
    def test_schema_version_is_present(self, everything):
        assert everything["__version"] == SCHEMA_VERSION == 1
        assert set(everything) == {"__version", "dag"}

    @pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, 0, "1", None])
    def test_other_versions_are_refused(self, everything, version):
        doc = {**everything, "__version": version}
        with pytest.raises(SchemaVersionError, match="schema version"):
            deserialize_dag(doc)

    def test_missing_version_is_refused(self, everything):
        with pytest.raises(SchemaVersionError):
            deserialize_dag({"dag": everything["dag"]})

    def test_unknown_fields_are_refused(self, everything):
        doc = copy.deepcopy(everything)
        doc["dag"]["from_the_future"] = 1
        with pytest.raises(SchemaVersionError, match="from_the_future"):
            deserialize_dag(doc)
        doc = copy.deepcopy(everything)
        doc["dag"]["tasks"][0]["new_task_field"] = 1
        with pytest.raises(SchemaVersionError, match="new_task_field"):
            deserialize_dag(doc)


class TestDeterminism:
    def test_building_twice_gives_the_same_bytes(self, everything):
        again = serialize(build_everything_dag())
        assert canonical_json(again) == canonical_json(everything)
        assert dag_hash(again) == dag_hash(everything)

    def test_hash_is_sha256_of_the_canonical_bytes(self, everything):
        import hashlib

        assert dag_hash(everything) == hashlib.sha256(canonical_json(everything)).hexdigest()
        assert canonical_json(everything) == json.dumps(everything, sort_keys=True, separators=(",", ":"),
                                                        ensure_ascii=False).encode()

    def test_insertion_orders_do_not_matter(self):
        def build(reverse: bool) -> DAG:
            names = ["c", "a", "b"]
            if reverse:
                names.reverse()
            kwargs = {n: n.upper() for n in names}
            with DAG("orders", tags=names, params={n: 1 for n in names}) as the_dag:
                tasks = [EmptyOperator(task_id=n) for n in names]
                PythonOperator(task_id="p", python_callable=print, op_kwargs={"k": kwargs, "s": set(names)})
                tasks[0] >> tasks[1:]
            return the_dag

        first, second = serialize(build(False)), serialize(build(True))
        assert [t["task_id"] for t in first["dag"]["tasks"]] == ["a", "b", "c", "p"]
        # the graphs differ (different root), so compare everything but the edges
        for doc in (first, second):
            for t in doc["dag"]["tasks"]:
                t.pop("upstream_task_ids", None)
                t.pop("downstream_task_ids", None)
                t.pop("effective_priority_weight", None)
            doc["dag"]["task_group"].pop("children")
        assert canonical_json(first) == canonical_json(second)

    def test_memory_addresses_never_reach_the_json(self, everything):
        text = canonical_json(everything).decode()
        assert " at 0x" not in text
        assert "<serialization_dags.Opaque object>" in text
        assert "0x" not in text

    def test_callable_instances_and_partials_have_stable_names(self):
        import functools

        class Callable:
            def __call__(self, *args: Any) -> None:
                pass

        def build() -> dict[str, Any]:
            with DAG("names") as the_dag:
                PythonOperator(task_id="p", python_callable=print,
                               op_kwargs={"partial": functools.partial(build, 1), "instance": Callable()})
            return serialize(the_dag)

        first, second = build(), build()
        assert canonical_json(first) == canonical_json(second)
        op_kwargs = tasks_of(first)["p"]["template_values"]["op_kwargs"]
        assert op_kwargs["partial"]["__var"].startswith("functools.partial(")
        assert "0x" not in json.dumps(op_kwargs)

    def test_same_hash_in_fresh_interpreters_with_different_hash_seeds(self, everything):
        script = (
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from serialization_dags import build_everything_dag\n"
            "from updraft.serialization import dag_hash, serialize_dag\n"
            "d = build_everything_dag(); d.validate()\n"
            "print(dag_hash(serialize_dag(d, relative_fileloc='dags/everything.py', file_hash='f' * 64)))\n"
        )
        hashes = set()
        for seed in ("1", "2"):
            env = {**os.environ, "PYTHONHASHSEED": seed}
            out = subprocess.run([sys.executable, "-c", script, str(HERE)], env=env, cwd=REPO, check=True,
                                 capture_output=True, text=True, timeout=60)
            hashes.add(out.stdout.strip())
        assert hashes == {dag_hash(everything)}

    def test_a_change_changes_the_hash(self, everything):
        changed = serialize(build_everything_dag())
        changed["dag"]["tasks"][0]["retries"] += 1
        assert dag_hash(changed) != dag_hash(everything)


class TestRoundTrip:
    def test_lossless(self, everything):
        restored = deserialize_dag(everything)
        assert isinstance(restored, SerializedDAG)
        assert restored.to_dict() == everything
        assert canonical_json(restored.to_dict()) == canonical_json(everything)
        # and again, from JSON text, as it is stored
        from_text = deserialize_dag(json.loads(canonical_json(everything)))
        assert from_text.to_dict() == everything

    def test_custom_timetable_through_the_plugin_registry(self):
        doc = serialize(build_everything_dag("workday_dag", schedule=load_workday_timetable()))
        assert doc["dag"]["timetable"] == {"__type": "workday.AfterWorkdayTimetable", "__var": {}}
        restored = deserialize_dag(doc)
        assert type(restored.timetable).__name__ == "AfterWorkdayTimetable"
        assert restored.to_dict() == doc

    def test_unregistered_custom_timetable_is_refused(self):
        from updraft.timetables import Timetable

        class Unregistered(Timetable):
            pass

        with DAG("x", schedule=Unregistered()) as the_dag:
            EmptyOperator(task_id="t")
        with pytest.raises(TimetableNotRegistered):
            serialize(the_dag)

    def test_values_decode_without_user_code(self, everything):
        restored = deserialize_dag(everything)
        deep = restored.task_dict["deep"]
        op_kwargs = deep.template_values["op_kwargs"]
        assert op_kwargs["a_set"] == {"a", "b", "c"}
        assert op_kwargs["int_keys"] == {1: "one", 2: "two"}
        assert op_kwargs["when"] == dt.datetime(2024, 5, 1, 12, 0)  # still naive
        assert op_kwargs["aware"] == pendulum.datetime(2024, 5, 1, tz="Asia/Tokyo")
        assert op_kwargs["day"] == dt.date(2024, 5, 1)
        assert op_kwargs["span"] == dt.timedelta(seconds=90)
        assert op_kwargs["tuple"] == (1, "x")
        assert op_kwargs["summary_n"] == XComRef("stats", "n")
        assert isinstance(op_kwargs["obj"], OpaqueValue)
        assert isinstance(op_kwargs["fn"], CallableRef)
        default_args = restored.default_args
        assert default_args["retry_delay"] == dt.timedelta(minutes=5)
        assert default_args["on_failure_callback"] == CallableRef("serialization_dags.on_failure")
        assert default_args["end_date"] == pendulum.datetime(2030, 1, 1)

    def test_zip_with_and_without_fillvalue_stay_distinct(self, everything):
        restored = deserialize_dag(everything).task_dict
        plain = restored["load__2"].expand_input["value"]["row"]
        padded = restored["load__3"].expand_input["value"]["row"]
        assert isinstance(plain, XComZipRef) and isinstance(padded, XComZipRef)
        from updraft.sdk.param import NOTSET

        assert plain.fillvalue is NOTSET
        assert padded.fillvalue is None


class TestContent:
    def test_dag_fields(self, everything):
        d = everything["dag"]
        assert d["dag_id"] == "everything"
        assert (d["relative_fileloc"], d["file_hash"]) == ("dags/everything.py", "f" * 64)
        assert d["timezone"] == "Europe/Berlin"
        assert d["start_date"] == "2023-12-31T23:00:00+00:00"
        assert d["timetable"]["__type"] == "airflow.timetables.trigger.CronTriggerTimetable"
        assert d["timetable_summary"] == "0 3 * * 1-5"
        assert (d["max_active_runs"], d["max_active_tasks"], d["catchup"]) == (2, 8, False)
        assert d["dagrun_timeout"] == 6 * 3600
        assert d["tags"] == ["a-tag", "m-tag", "z-tag"]
        assert d["doc_md"].startswith("# Everything")
        assert d["params"]["limit"] == {"default": 10, "description": "rows",
                                        "schema": {"type": "integer", "minimum": 1}, "source": None}
        assert set(d["params"]) == {"limit", "mode", "plain", "from_default_args"}
        assert d["callbacks"] == ["on_failure_callback"]
        assert d["owner"] == "data"
        assert d["edge_info"]["extract"]["choose"] == {"label": "to branch"}
        assert d["edge_info"]["pick"]["end"] == {"label": "done"}

    def test_task_group_tree(self, everything):
        root = everything["dag"]["task_group"]
        assert root["group_id"] is None
        groups = {c["group_id"]: c for c in root["children"] if "group_id" in c}
        assert set(groups) == {"grp", "per_region"}
        grp = groups["grp"]
        assert grp["tooltip"] == "the group"
        # prefix_group_id=False only stops the inner group prefixing its own children
        inner = next(c for c in grp["children"] if c.get("group_id") == "grp.inner")
        assert inner["prefix_group_id"] is False
        assert inner["children"] == [{"task_id": "deep"}]
        assert grp["upstream_task_ids"] == ["choose"]

    # What the scheduler reads for every task, whatever its operator.
    SCHEDULER_FIELDS = (
        "task_id", "task_type", "trigger_rule", "weight_rule", "priority_weight", "effective_priority_weight",
        "pool", "pool_slots", "queue", "retries", "retry_delay", "retry_exponential_backoff", "depends_on_past",
        "wait_for_downstream", "ignore_first_depends_on_past", "wait_for_past_depends_before_skipping",
        "start_date", "end_date", "upstream_task_ids", "downstream_task_ids", "compute", "is_mapped", "is_empty",
        "can_skip_downstream", "is_sensor", "template_fields", "template_ext", "template_values", "params",
        "do_xcom_push", "multiple_outputs", "owner", "callbacks",
    )

    def test_scheduler_fields_present_for_every_task(self, everything):
        for t in everything["dag"]["tasks"]:
            missing = [f for f in self.SCHEDULER_FIELDS if f not in t]
            assert not missing, (t["task_id"], missing)
            assert t["compute"]["executor"] in ("lambda", "fargate")
        restored = deserialize_dag(everything)
        for t in restored.tasks:
            # optional limits decode to None when absent from the document
            for name in ("execution_timeout", "max_retry_delay", "max_active_tis_per_dag",
                         "max_active_tis_per_dagrun"):
                assert hasattr(t, name)

    def test_rules_limits_and_placement(self, everything):
        t = tasks_of(everything)
        slow = t["grp.slow"]
        assert slow["trigger_rule"] == "none_failed_min_one_success"
        assert (slow["depends_on_past"], slow["wait_for_downstream"]) == (True, True)
        assert slow["execution_timeout"] == 7200
        assert slow["compute"] == {"executor": "fargate", "cpu": 1024, "memory": 4096}
        assert slow["queue"] == "grp-queue"
        assert (slow["retries"], slow["retry_delay"], slow["max_retry_delay"]) == (2, 300, 3600)
        assert slow["retry_exponential_backoff"] == 2.0
        load = t["load"]
        assert (load["pool"], load["pool_slots"], load["priority_weight"]) == ("db", 2, 5)
        assert t["end"]["trigger_rule"] == "all_done"
        assert t["grp.fast"]["is_empty"] is True
        assert t["pick"]["can_skip_downstream"] is True
        assert t["gate"]["extra"] == {"ignore_downstream_trigger_rules": False}
        assert t["wait_for_file"]["is_sensor"] is True
        assert t["wait_for_file"]["extra"]["mode"] == "reschedule"
        assert t["shell"]["custom_operator_name"] == "@task.bash"
        assert t["extract"]["doc_md"] == "Reads the rows."
        assert t["stats"]["multiple_outputs"] is True

    def test_effective_weights_are_airflows(self, everything):
        restored = build_everything_dag()
        expected = restored.priority_weights()
        for tid, t in tasks_of(everything).items():
            assert t["effective_priority_weight"] == expected[tid]
        t = tasks_of(everything)
        assert t["deep"]["effective_priority_weight"] == 50  # absolute
        assert t["end"]["effective_priority_weight"] == 1  # a leaf, downstream rule
        # upstream rule: own weight plus every ancestor (extract, choose, grp.fast)
        assert t["grp.slow"]["effective_priority_weight"] == 4

    def test_template_values(self, everything):
        t = tasks_of(everything)
        assert t["grp.slow"]["template_values"] == {"bash_command": "run.sh {{ ds }}",
                                                     "env": {"A": "1", "B": "2"}, "cwd": None}
        assert t["grp.slow"]["template_ext"] == [".sh", ".bash"]
        assert t["grp.slow"]["template_fields_renderers"] == {"bash_command": "bash", "env": "json"}
        assert t["shell"]["template_values"]["op_args"] == ["x"]

    def test_mapped_tasks(self, everything):
        t = tasks_of(everything)
        loaded = t["load"]
        assert loaded["is_mapped"] is True
        assert loaded["expand_input"] == {
            "kind": "dict-of-lists", "target": "op_kwargs",
            "value": {"row": {"__type": "xcomref", "__var": {"task_id": "extract", "key": "return_value"}}},
        }
        assert loaded["partial_kwargs"]["op_kwargs"] == {"factor": 3}
        assert loaded["upstream_task_ids"] == ["extract"]
        mapped_fn = t["load__1"]["expand_input"]["value"]["row"]
        assert mapped_fn["__type"] == "xcom_map"
        assert mapped_fn["__var"]["callables"] == ["serialization_dags.build_everything_dag.<locals>.<lambda>"]
        assert t["load__4"]["expand_input"]["value"]["row"]["__type"] == "xcom_concat"
        assert t["load__5"]["expand_input"]["kind"] == "list-of-dicts"
        bash = t["mapped_bash"]
        assert bash["expand_input"]["target"] is None
        assert bash["expand_input"]["value"] == {"bash_command": ["echo a", "echo b"], "env": [{"X": "1"}]}
        assert (bash["retries"], bash["task_type"]) == (1, "BashOperator")
        assert t["kwargs_from_xcom"]["expand_input"]["value"]["__type"] == "xcomref"

    def test_task_params_include_the_dags(self, everything):
        params = tasks_of(everything)["deep"]["params"]
        assert set(params) == {"limit", "mode", "plain", "from_default_args", "task_level"}


class TestNoPickles:
    def test_document_is_plain_json(self, everything):
        def walk(value: Any) -> None:
            if isinstance(value, dict):
                assert all(isinstance(k, str) for k in value)
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            else:
                assert value is None or isinstance(value, (str, int, float, bool)), repr(value)

        walk(everything)
        text = canonical_json(everything).decode()
        assert "pickle" not in text.lower()
        assert json.loads(text) == everything

    def test_bytes_become_display_text(self):
        with DAG("b") as the_dag:
            PythonOperator(task_id="p", python_callable=print, op_kwargs={"raw": b"\x00\xff"})
        doc = serialize(the_dag)
        raw = tasks_of(doc)["p"]["template_values"]["op_kwargs"]["raw"]
        assert raw == {"__type": "repr", "__var": {"type": "bytes", "repr": "b'\\x00\\xff'"}}

    def test_user_dict_that_looks_like_a_tag_round_trips(self):
        with DAG("tag") as the_dag:
            @task
            def f(x):
                return x

            f({"__type": "datetime", "__var": "not a date"})
        doc = serialize(the_dag)
        restored = deserialize_dag(doc)
        assert restored.task_dict["f"].template_values["op_args"] == [{"__type": "datetime",
                                                                        "__var": "not a date"}]
        assert restored.to_dict() == doc


def test_the_topological_order_puts_upstream_first_and_breaks_ties_by_task_id():
    """Every scheduler walks a run's tasks in this one order; a version is deserialized once and walked at every
    evaluation, so the order is built once per version."""
    with DAG("order", schedule=None, start_date=dt.datetime(2024, 1, 1)) as dag:
        root, mid_b, mid_a, leaf, _lone = (EmptyOperator(task_id=t) for t in ("z_root", "b", "a", "c_leaf", "y"))
        root >> [mid_b, mid_a] >> leaf
    version = deserialize_dag(serialize(dag))
    assert version.topological_order == ("y", "z_root", "a", "b", "c_leaf")
    assert version.topological_order is version.topological_order
