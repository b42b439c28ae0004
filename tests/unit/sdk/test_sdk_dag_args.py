"""DAG-level arguments, checked against what Airflow 3's ``airflow.sdk.DAG`` accepts and refuses."""

from __future__ import annotations

import datetime as dt
import warnings

import pendulum
import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param
from updraft.sdk.exceptions import DuplicateTaskIdFound

BERLIN = pendulum.timezone("Europe/Berlin")


class TestIds:
    @pytest.mark.parametrize("dag_id", ["a", "my_dag", "my-dag.v2", "A1_b-c.d", "x" * 250, "ünïcode"])
    def test_valid_dag_ids(self, dag_id):
        assert DAG(dag_id).dag_id == dag_id

    @pytest.mark.parametrize("dag_id", ["has space", "slash/id", "semi;colon", "", "tab\tid", "star*"])
    def test_invalid_dag_ids(self, dag_id):
        with pytest.raises(ValueError, match="alphanumeric characters, dashes, dots and underscores"):
            DAG(dag_id)

    @pytest.mark.parametrize(("dag_id", "task_id"), [("a#1", "t"), ("a|b:c", "t"), ("ok", "x#y"), ("ok", "y/../z")])
    def test_an_id_assigned_after_construction_is_refused_by_validate(self, dag_id, task_id):
        """Ids end up in keys, limit ids and paths: one a DAG file assigns past the constructor's check is an
        import error (``validate``), not a dag_id holding a key separator."""
        with DAG("ok") as dag:
            task = EmptyOperator(task_id="t")
        dag.dag_id, task.task_id = dag_id, task_id
        with pytest.raises(ValueError, match="alphanumeric characters, dashes, dots and underscores"):
            dag.validate()

    def test_dag_id_too_long(self):
        with pytest.raises(ValueError, match="250"):
            DAG("x" * 251)

    @pytest.mark.parametrize("dag_id", [5, None, b"bytes"])
    def test_dag_id_must_be_a_string(self, dag_id):
        with pytest.raises(TypeError):
            DAG(dag_id)

    @pytest.mark.parametrize("task_id", ["t", "t.1", "t-1", "x" * 250])
    def test_valid_task_ids(self, task_id):
        with DAG("ids"):
            assert EmptyOperator(task_id=task_id).task_id == task_id

    @pytest.mark.parametrize("task_id", ["has space", "a/b", "", "x" * 251])
    def test_invalid_task_ids(self, task_id):
        with DAG("ids"), pytest.raises(ValueError):
            EmptyOperator(task_id=task_id)

    def test_task_id_must_be_a_string(self):
        with DAG("ids"), pytest.raises(TypeError):
            EmptyOperator(task_id=7)

    def test_duplicate_task_id(self):
        with DAG("dup"):
            EmptyOperator(task_id="t")
            with pytest.raises(DuplicateTaskIdFound, match="Task id 't' has already been added"):
                EmptyOperator(task_id="t")

    def test_same_task_added_twice_is_fine(self):
        dag = DAG("again")
        task = EmptyOperator(task_id="t", dag=dag)
        dag.add_task(task)
        assert dag.task_ids == ["t"]


class TestRemovedAndUnknownArguments:
    @pytest.mark.parametrize(("name", "hint"), [
        ("schedule_interval", "use schedule="),
        ("concurrency", "use max_active_tasks="),
        ("timetable", "pass the timetable as schedule="),
        ("full_filepath", "removed in Airflow 3"),
    ])
    def test_removed_airflow2_dag_arguments(self, name, hint):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'.*{hint}"):
            DAG("old", **{name: "@daily"})

    def test_unknown_dag_argument(self):
        with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
            DAG("x", nope=1)

    def test_sla_miss_callback_is_ignored_with_a_warning_as_in_airflow3(self):
        with pytest.warns(UserWarning, match="SLA feature is removed in Airflow 3.0"):
            DAG("sla", sla_miss_callback=lambda *a: None)


class TestLimits:
    def test_defaults(self):
        dag = DAG("d")
        assert (dag.max_active_tasks, dag.max_active_runs, dag.max_consecutive_failed_dag_runs) == (16, 16, 0)
        assert dag.catchup is False
        assert dag.schedule is None

    def test_values_kept(self):
        dag = DAG("d", max_active_tasks=3, max_active_runs=1, max_consecutive_failed_dag_runs=5, catchup=True,
                  start_date=pendulum.datetime(2024, 1, 1), schedule="@daily")
        assert (dag.max_active_tasks, dag.max_active_runs, dag.max_consecutive_failed_dag_runs) == (3, 1, 5)
        assert dag.catchup is True

    def test_none_means_the_default(self):
        assert DAG("d", max_active_runs=None, max_active_tasks=None).max_active_runs == 16

    def test_the_defaults_come_from_airflows_configuration_variables(self, monkeypatch):
        monkeypatch.setenv("AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG", "32")
        monkeypatch.setenv("AIRFLOW__CORE__MAX_ACTIVE_RUNS_PER_DAG", "2")
        assert (DAG("d").max_active_tasks, DAG("d").max_active_runs) == (32, 2)
        assert DAG("d", max_active_tasks=4).max_active_tasks == 4  # the DAG's own value still wins
        monkeypatch.setenv("AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG", "lots")
        with pytest.raises(ValueError, match="AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG must be an integer"):
            DAG("d")

    def test_catchup_and_failed_runs_defaults_come_from_airflows_configuration_variables(self, monkeypatch):
        monkeypatch.setenv("AIRFLOW__SCHEDULER__CATCHUP_BY_DEFAULT", "True")
        monkeypatch.setenv("AIRFLOW__CORE__MAX_CONSECUTIVE_FAILED_DAG_RUNS_PER_DAG", "3")
        dag = DAG("d", schedule="@daily", start_date=pendulum.datetime(2024, 1, 1))
        assert (dag.catchup, dag.max_consecutive_failed_dag_runs) == (True, 3)
        assert DAG("d", catchup=False, max_consecutive_failed_dag_runs=0).catchup is False
        with pytest.raises(ValueError, match="start_date is required when catchup=True"):
            DAG("d", schedule="@daily")  # as in Airflow: the configured catchup needs a start date
        monkeypatch.setenv("AIRFLOW__SCHEDULER__CATCHUP_BY_DEFAULT", "maybe")
        with pytest.raises(ValueError, match="AIRFLOW__SCHEDULER__CATCHUP_BY_DEFAULT must be a boolean"):
            DAG("d")

    @pytest.mark.parametrize("name", ["max_active_tasks", "max_active_runs", "max_consecutive_failed_dag_runs"])
    def test_limits_must_be_ints(self, name):
        with pytest.raises(TypeError, match=f"'{name}' must be <class 'int'>"):
            DAG("d", **{name: "3"})

    def test_continuous_schedule_allows_one_active_run(self):
        with pytest.raises(ValueError, match="ContinuousTimetable requires max_active_runs <= 1"):
            DAG("c", schedule="@continuous", start_date=pendulum.datetime(2024, 1, 1), max_active_runs=2)
        assert DAG("c", schedule="@continuous", max_active_runs=1).max_active_runs == 1

    def test_dagrun_timeout_must_be_a_timedelta(self):
        assert DAG("d", dagrun_timeout=dt.timedelta(hours=1)).dagrun_timeout == dt.timedelta(hours=1)
        with pytest.raises(TypeError, match="dagrun_timeout must be timedelta"):
            DAG("d", dagrun_timeout=3600)

    def test_catchup_on_a_schedule_needs_a_start_date(self):
        with pytest.raises(ValueError, match="start_date is required when catchup=True"):
            DAG("c", schedule="@daily", catchup=True)
        # unscheduled DAGs never backfill, so no start_date is fine
        assert DAG("c", schedule=None, catchup=True).catchup


class TestDates:
    def test_naive_start_date_is_utc(self):
        dag = DAG("d", start_date=dt.datetime(2024, 1, 1))
        assert dag.start_date == pendulum.datetime(2024, 1, 1, tz="UTC")
        assert dag.timezone.name == "UTC"

    def test_aware_start_date_gives_the_dag_its_timezone(self):
        dag = DAG("d", start_date=pendulum.datetime(2024, 1, 1, tz=BERLIN))
        assert dag.timezone.name == "Europe/Berlin"
        # stored in UTC like Airflow, the same instant
        assert dag.start_date.utcoffset() == dt.timedelta(0)
        assert dag.start_date == pendulum.datetime(2024, 1, 1, tz=BERLIN)

    def test_start_date_from_default_args_parsed_and_utc(self):
        dag = DAG("d", default_args={"start_date": "2024-03-01", "end_date": dt.datetime(2024, 4, 1)})
        assert dag.start_date == pendulum.datetime(2024, 3, 1, tz="UTC")
        assert dag.default_args["end_date"] == pendulum.datetime(2024, 4, 1, tz="UTC")

    def test_naive_default_args_dates_are_utc_even_in_a_berlin_dag(self):
        dag = DAG("d", start_date=pendulum.datetime(2024, 1, 1, tz=BERLIN),
                  default_args={"end_date": dt.datetime(2030, 1, 1)})
        assert dag.end_date == pendulum.datetime(2030, 1, 1, tz="UTC")

    def test_default_args_date_strings_are_read_in_the_dags_timezone(self):
        dag = DAG("d", start_date=pendulum.datetime(2024, 1, 1, tz=BERLIN),
                  default_args={"end_date": "2030-01-01", "start_date": "2024-01-01"})
        assert dag.end_date == pendulum.datetime(2030, 1, 1, tz=BERLIN)
        assert dag.default_args["start_date"] == pendulum.datetime(2024, 1, 1, tz=BERLIN)
        assert dag.default_args["start_date"].utcoffset() == dt.timedelta(0)
        offset = DAG("d", default_args={"start_date": "2024-01-01T00:00:00+02:00", "end_date": "2024-02-01"})
        assert offset.end_date == pendulum.datetime(2024, 1, 31, 22, tz="UTC")

    def test_task_start_date_is_the_later_of_task_and_dag(self):
        with DAG("d", start_date=pendulum.datetime(2024, 1, 10), end_date=pendulum.datetime(2024, 12, 1)):
            early = EmptyOperator(task_id="early", start_date=pendulum.datetime(2024, 1, 1))
            late = EmptyOperator(task_id="late", start_date=pendulum.datetime(2024, 2, 1),
                                 end_date=pendulum.datetime(2025, 1, 1))
            unset = EmptyOperator(task_id="unset")
        assert early.start_date == pendulum.datetime(2024, 1, 10)
        assert late.start_date == pendulum.datetime(2024, 2, 1)
        assert unset.start_date == pendulum.datetime(2024, 1, 10)
        # and ends at the earlier end date
        assert late.end_date == pendulum.datetime(2024, 12, 1)

    def test_task_dates_are_utc(self):
        with DAG("d"):
            task = EmptyOperator(task_id="t", start_date=pendulum.datetime(2024, 1, 1, 12, tz=BERLIN))
        assert task.start_date.utcoffset() == dt.timedelta(0)
        assert task.start_date.hour == 11

    def test_end_before_start_is_refused_by_validate(self):
        dag = DAG("d", start_date=pendulum.datetime(2024, 2, 1), end_date=pendulum.datetime(2024, 1, 1))
        with pytest.raises(Exception, match="end_date"):
            dag.validate()


class TestParams:
    def test_invalid_default_on_a_scheduled_dag_names_the_param(self):
        with pytest.raises(ValueError, match=r"not allowed to define a Schedule.*param limit"):
            DAG("p", schedule="@daily", start_date=pendulum.datetime(2024, 1, 1),
                params={"limit": Param(5, type="string")})

    def test_required_param_without_default_on_a_scheduled_dag(self):
        with pytest.raises(ValueError, match="param needed"):
            DAG("p", schedule="@daily", params={"needed": Param(type="integer")})

    def test_required_param_is_fine_without_a_schedule(self):
        dag = DAG("p", schedule=None, params={"needed": Param(type="integer"), "n": Param(3, minimum=1)})
        dag.validate()
        assert dag.params.get_param("needed").has_value is False
        assert dag.params["n"] == 3

    def test_params_added_later_are_checked_by_validate(self):
        dag = DAG("p", schedule="@daily", start_date=pendulum.datetime(2024, 1, 1))
        dag.params["late"] = Param(type="string")
        with pytest.raises(ValueError, match="param late"):
            dag.validate()

    def test_assigning_an_invalid_value_to_a_typed_param(self):
        dag = DAG("p", params={"n": Param(1, type="integer")})
        with pytest.raises(Exception, match="'x' is not of type 'integer'"):
            dag.params["n"] = "x"

    def test_reading_validates_and_dump_never_raises(self):
        dag = DAG("p", params={"bad": Param(5, type="string"), "missing": Param(type="integer"), "ok": 1})
        with pytest.raises(Exception, match="5 is not of type 'string'"):
            dag.params["bad"]
        with pytest.raises(Exception, match="No value passed and Param has no default value"):
            dag.params["missing"]
        assert dag.params.dump() == {"bad": None, "missing": None, "ok": 1}

    def test_invalid_assignment_names_the_param_and_keeps_the_old_value(self):
        dag = DAG("p", params={"n": Param(1, type="integer")})
        with pytest.raises(Exception, match="Invalid input for param n"):
            dag.params["n"] = "x"
        assert dag.params["n"] == 1
        dag.params["n"] = 2
        assert dag.params["n"] == 2

    def test_plain_values_become_params_and_must_be_json(self):
        dag = DAG("p", params={"a": 1, "b": [1, 2]})
        assert dag.params["a"] == 1
        with pytest.raises(Exception, match="json-serializable"):
            DAG("p", params={"bad": object()})

    def test_default_args_params_override_dag_params_and_leave_default_args(self):
        dag = DAG("p", params={"a": 1, "b": 1}, default_args={"params": {"b": 2, "c": 3}})
        assert dict(dag.params) == {"a": 1, "b": 2, "c": 3}
        assert "params" not in dag.default_args


class TestMetadata:
    def test_tags_doc_md_description(self):
        dag = DAG("m", tags=["b", "a", "a"], doc_md="# Title", description="desc")
        assert dag.tags == {"a", "b"}
        assert dag.doc_md == "# Title"
        assert dag.description == "desc"

    def test_doc_md_naming_a_markdown_file_reads_it_as_airflow_does(self, tmp_path):
        readme = tmp_path / "README.md"
        readme.write_text("# From the file\n")
        assert DAG("m", doc_md=str(readme)).doc_md == "# From the file\n"
        dag = DAG("m")
        dag.doc_md = str(readme)  # converted on assignment too
        assert dag.doc_md == "# From the file\n"
        missing = str(tmp_path / "missing.md")
        assert DAG("m", doc_md=missing).doc_md == missing
        assert DAG("m", doc_md="plain text").doc_md == "plain text"

    def test_tag_length_limit(self):
        DAG("m", tags=["x" * 100])
        with pytest.raises(ValueError, match="tag cannot be longer than 100 characters"):
            DAG("m", tags=["x" * 101])

    def test_owner_links_are_validated(self):
        DAG("m", owner_links={"team": "https://example.com", "me": "mailto:me@example.com"})
        with pytest.raises(ValueError, match="Wrong link format"):
            DAG("m", owner_links={"team": "not a link"})

    def test_owner_is_every_task_owner(self):
        with DAG("m") as dag:
            EmptyOperator(task_id="a", owner="zed")
            EmptyOperator(task_id="b", owner="amy")
            EmptyOperator(task_id="c", owner="amy")
        assert dag.owner == "amy, zed"

    def test_fail_fast_allows_only_all_success(self):
        with DAG("ff", fail_fast=True):
            EmptyOperator(task_id="ok")
            with pytest.raises(Exception, match="'fail_fast' dag can only have all_success"):
                EmptyOperator(task_id="bad", trigger_rule="all_done")

    def test_no_warnings_for_a_plain_dag(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with DAG("quiet", schedule="@daily", start_date=pendulum.datetime(2024, 1, 1)):
                EmptyOperator(task_id="t")


class TestDagFileHelpers:
    """DAG methods that DAG files call (not only the scheduler)."""

    def test_set_dependency_param_and_bound_task_decorator(self):
        the_dag = DAG("h", params={"who": "me"})
        EmptyOperator(task_id="a", dag=the_dag)
        EmptyOperator(task_id="b", dag=the_dag)
        the_dag.set_dependency("a", "b")
        assert the_dag.get_task("b").upstream_task_ids == {"a"}

        ref = the_dag.param("subject", "Hi")
        assert ref.name == "subject" and the_dag.params["subject"] == "Hi"
        assert the_dag.param("who").name == "who" and the_dag.params["who"] == "me"

        @the_dag.task
        def bound():
            return 1

        assert bound().operator.dag is the_dag

    def test_relatives(self):
        with DAG("h") as the_dag:
            a, b, c = (EmptyOperator(task_id=i) for i in "abc")
            a >> b >> c
        assert a.get_flat_relative_ids(upstream=False) == {"b", "c"}
        assert [t.task_id for t in c.get_flat_relatives(upstream=True)] == ["a", "b"]
        assert [t.task_id for t in b.get_direct_relatives(upstream=True)] == ["a"]
        assert [t.task_id for t in the_dag.roots] == ["a"]
        assert [t.task_id for t in the_dag.leaves] == ["c"]
