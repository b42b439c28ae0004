"""Operator extra links end to end on moto, as Airflow 3.3 has them: the parser (a forked child, the plugins folder
loaded) records each task's link names and XCom keys; the worker handler runs each try in its child, which stores
the links' URLs as the try's XComs through the store proxy once the try ends (success or failure); the API's
``links`` route answers them (``{"extra_links": {name: url}, "total_entries": n}``) and the task route names them.

The DAG's operator has the two kinds of link Airflow's providers use, without any provider: an
``XComOperatorLink``-style link (the operator persists what the URL is built from, the link reads it back with
``XCom.get_value``) and a link computed from the operator and the try alone. A plugin adds a global link.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import textwrap
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

from tests.functional.api.conftest import Api
from tests.functional.lambda_helpers import lambda_context
from updraft.executors.recording import RecordingExecutor
from updraft.model.records import TIKey
from updraft.model.states import FINISHED_RUN_STATES
from updraft.parsing import ParseOptions, parse_dags_folder
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.scheduling.commands.triggering import trigger_dag
from updraft.scheduling.scheduler import Scheduler
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

TABLE = "updraft-links-test"
BUCKET = "updraft-links-bucket"
REGION = "us-east-1"
RUN_ID = "manual__links"

DAG_FILE = '''
import datetime
from airflow.sdk import DAG, BaseOperator, BaseOperatorLink, task
from airflow.sdk.execution_time.xcom import XCom


class JobRunLink(BaseOperatorLink):
    """As a provider's XComOperatorLink: execute persists the run's id, the link reads it back."""
    name = "Job Run"
    key = "job_run"

    def get_link(self, operator, *, ti_key):
        conf = XCom.get_value(key=self.key, ti_key=ti_key)
        return f"https://jobs.example.com/runs/{conf['run_id']}" if conf else ""

    @classmethod
    def persist(cls, context, run_id):
        context["ti"].xcom_push(key=cls.key, value={"run_id": run_id})


class DocsLink(BaseOperatorLink):
    """Built from the operator and the try alone."""
    name = "Docs"

    def get_link(self, operator, *, ti_key):
        return f"https://docs.example.com/{operator.topic}?dag={ti_key.dag_id}&try={ti_key.try_number}"


class BrokenLink(BaseOperatorLink):
    name = "Broken"

    def get_link(self, operator, *, ti_key):
        raise RuntimeError("this link has no URL")


class SubmitJob(BaseOperator):
    operator_extra_links = (JobRunLink(), DocsLink())

    def __init__(self, *, topic, fail=False, **kwargs):
        super().__init__(**kwargs)
        self.topic = topic
        self.fail = fail

    def execute(self, context):
        run_id = f"{self.task_id}-{context['ti'].map_index}-{context['ti'].try_number}"
        JobRunLink.persist(context, run_id)
        if self.fail:
            raise ValueError("the job failed")
        return run_id


class SubmitWithBrokenLink(SubmitJob):
    @property
    def operator_extra_links(self):  # a property, as some providers' operators have
        return (BrokenLink(), DocsLink())


with DAG("links_dag", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    SubmitJob(task_id="submit", topic="etl")
    SubmitJob(task_id="failing", topic="etl", fail=True)
    SubmitWithBrokenLink(task_id="broken", topic="ops")
    SubmitJob.partial(task_id="mapped").expand(topic=["a", "b"])

    @task
    def plain():
        return 1

    plain()
'''

PLUGIN_FILE = '''
from airflow.plugins_manager import AirflowPlugin
from airflow.sdk import BaseOperatorLink


class RunbookLink(BaseOperatorLink):
    name = "Runbook"

    def get_link(self, operator, *, ti_key):
        return f"https://runbook.example.com/{ti_key.dag_id}/{ti_key.task_id}"


class LinksPlugin(AirflowPlugin):
    name = "links_plugin"
    global_operator_extra_links = [RunbookLink()]
'''


def _drive(store: DynamoStore, worker: object, recording: RecordingExecutor) -> None:
    """The scheduler and the worker handler, until the run ends (each dispatch runs its try in a child)."""
    scheduler = Scheduler(store, recording)
    for _ in range(10):
        scheduler.schedule_run("links_dag", RUN_ID)
        for dispatch in recording.take():
            worker.handler(dispatch.to_payload(), lambda_context("updraft-worker"))  # type: ignore[attr-defined]
        run = store.get_run("links_dag", RUN_ID)
        if run is not None and run.state in FINISHED_RUN_STATES:
            return
    states = [(t.key.label, t.state) for t in store.get_run_tis("links_dag", RUN_ID)]
    raise AssertionError(f"the run did not end: {states}")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("links")
    dags, plugins = tmp / "dags", tmp / "plugins"
    dags.mkdir()
    plugins.mkdir()
    (dags / "links_dag.py").write_text(textwrap.dedent(DAG_FILE))
    (plugins / "links_plugin.py").write_text(textwrap.dedent(PLUGIN_FILE))
    with pytest.MonkeyPatch.context() as mp, mock_aws():
        for name, value in {"AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "UPDRAFT_TABLE": TABLE,
                            "UPDRAFT_BUCKET": BUCKET, "UPDRAFT_WORKER_FUNCTION": "updraft-worker",
                            "UPDRAFT_PLUGINS_FOLDER": str(plugins)}.items():
            mp.setenv(name, value)
        for name in ("UPDRAFT_LOCAL_COMPUTE", "UPDRAFT_SCHEDULER_FUNCTION", "AWS_ENDPOINT_URL",
                     "UPDRAFT_TASK_LOG_GROUP", "AIRFLOW__SECRETS__BACKEND"):
            mp.delenv(name, raising=False)
        mp.setattr(tempfile, "tempdir", str(tmp))
        config = StoreConfig(table_name=TABLE, region=REGION, s3_bucket=BUCKET)
        create_table(config)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="dags/links_dag.py", Body=textwrap.dedent(DAG_FILE).encode())
        store = DynamoStore(config, s3_client=s3)
        # The parser's way: the file (and the plugins) run in a forked child; this process imports neither.
        parsed = parse_dags_folder(str(dags), ParseOptions(plugins_folder=str(plugins)))
        [file] = parsed.files
        assert not file.import_errors, file.import_errors
        register_parsed_file(store, file, now=dt.datetime.now(dt.UTC))
        set_paused(store, "links_dag", False)
        mp.setattr("updraft.services._shared", None)
        from functions.api import handler as api_handler
        from functions.worker import handler

        recording = RecordingExecutor()
        handler.services().executor = recording
        trigger_dag(store, "links_dag", now=dt.datetime.now(dt.UTC), run_id=RUN_ID)
        _drive(store, handler, recording)
        yield SimpleNamespace(store=store, api=Api(api_handler))


def _links(world, task_id: str, **query) -> dict:
    answer = world.api.get(f"/api/v2/dags/links_dag/dagRuns/{RUN_ID}/taskInstances/{task_id}/links", query=query)
    assert answer.status == 200, answer.body
    return answer.body


@pytest.mark.slow
def test_the_links_of_a_successful_try_as_airflow_answers_them(world):
    assert _links(world, "submit") == {"extra_links": {
        "Docs": "https://docs.example.com/etl?dag=links_dag&try=1",
        "Job Run": "https://jobs.example.com/runs/submit--1-1",
        "Runbook": "https://runbook.example.com/links_dag/submit",
    }, "total_entries": 3}
    # Stored as the try's XComs under the links' keys (Airflow's _link_<class name>), beside what execute pushed.
    key = TIKey("links_dag", RUN_ID, "submit")
    assert world.store.get_xcom(key, "_link_JobRunLink") == "https://jobs.example.com/runs/submit--1-1"
    assert world.store.get_xcom(key, "job_run") == {"run_id": "submit--1-1"}


def test_a_failed_try_keeps_its_links(world):
    """Airflow's finalize stores the links whatever the outcome: the failed job's page is the one wanted."""
    ti = world.api.get(f"/api/v2/dags/links_dag/dagRuns/{RUN_ID}/taskInstances/failing").body
    assert ti["state"] == "failed"
    assert _links(world, "failing")["extra_links"]["Job Run"] == "https://jobs.example.com/runs/failing--1-1"


def test_a_link_that_raises_is_null_and_logged_and_the_others_stay(world):
    ti = world.api.get(f"/api/v2/dags/links_dag/dagRuns/{RUN_ID}/taskInstances/broken").body
    assert ti["state"] == "success"
    assert _links(world, "broken") == {"extra_links": {
        "Broken": None, "Docs": "https://docs.example.com/ops?dag=links_dag&try=1",
        "Runbook": "https://runbook.example.com/links_dag/broken"}, "total_entries": 3}
    log = world.api.get(f"/api/v2/dags/links_dag/dagRuns/{RUN_ID}/taskInstances/broken/logs/1",
                        query={"full_content": "true"}).body
    text = "\n".join(line["event"] for line in log["content"])
    assert "Failed to push an xcom for task operator extra link 'Broken'" in text
    assert "RuntimeError: this link has no URL" in text


def test_each_map_index_has_its_own_links(world):
    for index, topic in enumerate(["a", "b"]):
        assert _links(world, "mapped", map_index=index)["extra_links"] == {
            "Docs": f"https://docs.example.com/{topic}?dag=links_dag&try=1",
            "Job Run": f"https://jobs.example.com/runs/mapped-{index}-1",
            "Runbook": "https://runbook.example.com/links_dag/mapped"}


def test_a_task_without_operator_links_has_the_global_one_and_the_task_route_names_them(world):
    assert _links(world, "plain") == {"extra_links": {"Runbook": "https://runbook.example.com/links_dag/plain"},
                                      "total_entries": 1}
    tasks = {t["task_id"]: t for t in world.api.get("/api/v2/dags/links_dag/tasks").body["tasks"]}
    assert tasks["submit"]["extra_links"] == ["Docs", "Job Run", "Runbook"]
    assert tasks["broken"]["extra_links"] == ["Broken", "Docs", "Runbook"]
    assert tasks["plain"]["extra_links"] == ["Runbook"]
    # No such task instance: Airflow's 404.
    assert world.api.get(f"/api/v2/dags/links_dag/dagRuns/{RUN_ID}/taskInstances/nope/links").status == 404
