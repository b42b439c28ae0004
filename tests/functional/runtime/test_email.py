"""Email through Amazon SES (moto): email_on_retry / email_on_failure alerts with Airflow's default subject and
body, airflow.utils.email.send_email from a task, and what is refused or logged instead of silently skipped."""

from __future__ import annotations

import datetime as dt
import importlib
import textwrap
from urllib.parse import quote

import boto3
import pytest
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from tests.functional.runtime.rt_harness import HEADER, RuntimeEnv
from updraft.notifications.email import get_email_address_list, send_email
from updraft.notifications.ses import EmailNotConfigured, SesEmailSender
from updraft.sdk.exceptions import UnsupportedFeatureError

SENDER = "updraft@example.com"

DAGS = """
from airflow.utils.email import send_email

def explode():
    raise ValueError("disk <full>\\nsecond line")

def mail():
    send_email(to="a@example.com; b@example.com", subject="report", html_content="<b>ready</b>",
               cc=["c@example.com"])

with DAG("mailing", schedule=None, start_date=START,
         default_args={"email": "ops@example.com", "retries": 1, "retry_delay": datetime.timedelta(seconds=1)}):
    PythonOperator(task_id="alerting", python_callable=explode)
    PythonOperator(task_id="quiet", python_callable=explode, email_on_failure=False, email_on_retry=False)
    PythonOperator(task_id="mailer", python_callable=mail)

def page(context):
    send_email("oncall@example.com", f"lost try {context['ti'].try_number}", context["ti"].task_id)

with DAG("zombie", schedule=None, start_date=START, default_args={"email": "ops@example.com"}):
    PythonOperator(task_id="lost", python_callable=lambda: 1, on_failure_callback=page)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("email")
    source = root / "source"
    source.mkdir()
    (source / "mailing.py").write_text(HEADER + textwrap.dedent(DAGS))
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        patch.setenv("UPDRAFT_EMAIL_FROM", SENDER)
        patch.setenv("UPDRAFT_BASE_URL", "https://updraft.example.com/ui/")
        boto3.client("ses", region_name="us-east-1").verify_email_identity(EmailAddress=SENDER)
        env = RuntimeEnv(root)
        env.add_folder(source)
        env.patch = patch
        yield env


def sent():
    return ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages


def test_failure_and_retry_alerts_and_send_email_reach_ses(env):
    run = env.run("mailing", tick=dt.timedelta(seconds=2))
    assert env.states("mailing", run.run_id) == {"alerting": "failed", "quiet": "failed", "mailer": "success"}
    alerts = [m for m in sent() if m.subject.startswith("Airflow alert: <RuntimeTaskInstance mailing.")]
    assert [m.destinations["ToAddresses"] for m in alerts] == [["ops@example.com"]] * 2  # retry, then failure
    assert all(m.source == SENDER for m in sent())
    first, second = sorted(alerts, key=lambda m: "Try 1" not in m.body)
    assert first.subject == "Airflow alert: <RuntimeTaskInstance mailing.alerting " + run.run_id + " try=1>"
    assert first.body.startswith("Try 1 out of 2<br>Exception:<br>disk &lt;full&gt;<br>second line<br>")
    assert (f'Log: <a href="https://updraft.example.com/ui/dags/mailing/runs/{quote(run.run_id)}'
            '/tasks/alerting?try_number=1">Link</a>') in first.body
    assert "Try 2 out of 2" in second.body
    (report,) = [m for m in sent() if m.subject == "report" and m.destinations["ToAddresses"][0] == "a@example.com"]
    assert report.destinations == {"ToAddresses": ["a@example.com", "b@example.com"],
                                   "CcAddresses": ["c@example.com"]}
    assert report.body == "<b>ready</b>"
    stats = boto3.client("ses", region_name="us-east-1").get_send_statistics()["SendDataPoints"]
    assert len(sent()) == 3
    assert sum(point["DeliveryAttempts"] for point in stats) == 5  # moto counts one per recipient


def test_without_a_sender_the_alert_is_an_error_in_the_task_log(env):
    env.patch.delenv("UPDRAFT_EMAIL_FROM")
    try:
        before = len(sent())
        run = env.run("mailing", run_id="unconfigured", tick=dt.timedelta(seconds=2))
    finally:
        env.patch.setenv("UPDRAFT_EMAIL_FROM", SENDER)
    assert len(sent()) == before
    assert env.states("mailing", run.run_id)["mailer"] == "failed"  # send_email itself raises, as Airflow's does
    log = env.log("mailing", run.run_id, "alerting", try_number=2)
    assert "Failed to send task failure or retry email notification to ops@example.com" in log
    assert "UPDRAFT_EMAIL_FROM" in log
    assert "EmailNotConfigured" in env.log("mailing", run.run_id, "mailer")


def test_send_email_refuses_what_ses_cannot_carry(env):
    sender = SesEmailSender(boto3.client("ses", region_name="us-east-1"), SENDER)
    for kwargs in ({"files": ["/etc/hosts"]}, {"custom_headers": {"X": "1"}}, {"conn_id": "smtp_default"},
                   {"mime_subtype": "alternative"}, {"reply_to": "x@example.com"}):
        with pytest.raises(ValueError, match=f"{next(iter(kwargs))}=.*Amazon SES"):
            send_email("a@example.com", "s", "b", sender=sender, **kwargs)
    assert send_email("a@example.com", "s", "b", dryrun=True, sender=sender) is None
    with pytest.raises(EmailNotConfigured):
        env.patch.delenv("UPDRAFT_EMAIL_FROM")
        try:
            send_email("a@example.com", "s", "b")
        finally:
            env.patch.setenv("UPDRAFT_EMAIL_FROM", SENDER)
    assert get_email_address_list(["a@x.com, b@x.com", "c@x.com"]) == ["a@x.com", "b@x.com", "c@x.com"]


@pytest.mark.parametrize(("module", "name"), [
    ("airflow.providers.smtp.operators.smtp", None), ("airflow.operators.email", None),
    ("airflow.utils.email", "send_email_smtp"),
])
def test_smtp_paths_are_refused_naming_ses(module, name):
    with pytest.raises(UnsupportedFeatureError, match="Amazon SES"):
        imported = importlib.import_module(module)
        getattr(imported, name)


def test_a_try_failed_by_the_scheduler_runs_its_failure_callback_and_alert_on_a_worker(env):
    from updraft.executors.callback_requests import TaskCallbackRequest
    from updraft.model.records import TIKey
    from updraft.scheduling.try_lifecycle import start_try

    run = env.trigger("zombie", run_id="zombie")
    env.scheduler.run_pass()
    (item,) = env.executor.take()
    start_try(env.store, item.key, item.try_id, now=env.clock(), hostname="gone", lease=dt.timedelta(seconds=30))
    env.clock.advance(seconds=60)  # the worker never heart-beats again
    env.scheduler.run_pass()
    assert env.ti("zombie", run.run_id, "lost").state == "failed"
    (request,) = env.executor.take()
    assert isinstance(request, TaskCallbackRequest) and not request.retried
    assert request.message.startswith("zombie: worker lease expired")
    env.executor.dispatch([request, request])  # delivered twice
    env.drain()
    (page,) = [m for m in sent() if m.destinations["ToAddresses"] == ["oncall@example.com"]]
    assert (page.subject, page.body) == ("lost try 1", "lost")
    (alert,) = [m for m in sent() if m.subject.startswith("Airflow alert: <RuntimeTaskInstance zombie.lost")]
    assert "Try 1 out of 1<br>Exception:<br>zombie: worker lease expired" in alert.body
    log = env.logs.read(TIKey("zombie", run.run_id, "@callbacks.lost"), 1)
    assert "failed by the scheduler: zombie" in log and "Executing task callback page" in log
