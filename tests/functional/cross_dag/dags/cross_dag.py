"""DAGs for the cross-DAG tests: a target that reports its conf, controllers that trigger it, and an upstream DAG
with tasks and a task group that sensors wait for."""

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.providers.standard.sensors.external_task import ExternalTaskSensor
from airflow.sdk import DAG, TaskGroup, get_current_context

START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
FAST = {"poke_interval": 0.05}


def report():
    context = get_current_context()
    run = context["dag_run"]
    if run.conf.get("fail"):
        raise RuntimeError("asked to fail")
    return {"conf": dict(run.conf), "logical_date": run.logical_date.isoformat(), "run_type": run.run_type}


with DAG("target", schedule=None, start_date=START, is_paused_upon_creation=False):
    PythonOperator(task_id="report", python_callable=report)

with DAG("paused_target", schedule=None, start_date=START, is_paused_upon_creation=True):
    EmptyOperator(task_id="nothing")

with DAG("ctl_basic", schedule=None, start_date=START):
    TriggerDagRunOperator(task_id="trigger", trigger_dag_id="target", conf={"day": "{{ ds }}"},
                          logical_date="2024-02-01T00:00:00+00:00", trigger_run_id="from_ctl_{{ ds_nodash }}",
                          note="started by ctl_basic")

with DAG("ctl_wait", schedule=None, start_date=START):
    for name, conf, extra in [
        ("wait_ok", {}, {}),
        ("wait_fail", {"fail": True}, {}),
        ("wait_flipped", {"fail": True}, {"allowed_states": ["failed"], "failed_states": ["success"]}),
    ]:
        TriggerDagRunOperator(task_id=name, trigger_dag_id="target", trigger_run_id=f"{name}_{{{{ ds }}}}",
                              conf=conf, wait_for_completion=True, **FAST, **extra)

with DAG("ctl_existing", schedule=None, start_date=START):
    TriggerDagRunOperator(task_id="fails", trigger_dag_id="target", trigger_run_id="fixed", retries=2)
    TriggerDagRunOperator(task_id="skips", trigger_dag_id="target", trigger_run_id="fixed",
                          skip_when_already_exists=True)

with DAG("ctl_reset", schedule=None, start_date=START):
    TriggerDagRunOperator(task_id="reset", trigger_dag_id="target", trigger_run_id="fixed", reset_dag_run=True,
                          wait_for_completion=True, **FAST)

with DAG("ctl_paused", schedule=None, start_date=START):
    TriggerDagRunOperator(task_id="refused", trigger_dag_id="paused_target", fail_when_dag_is_paused=True)
    TriggerDagRunOperator(task_id="allowed", trigger_dag_id="paused_target", trigger_run_id="while_paused")

with DAG("upstream", schedule=None, start_date=START, is_paused_upon_creation=False):
    produce = EmptyOperator(task_id="produce")
    PythonOperator(task_id="broken", python_callable=lambda: 1 / 0)
    with TaskGroup("grp"):
        EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")

SENSOR = {"external_dag_id": "upstream", "timeout": 10, **FAST}
with DAG("sensors", schedule=None, start_date=START):
    ExternalTaskSensor(task_id="on_task", external_task_id="produce", **SENSOR)
    ExternalTaskSensor(task_id="on_tasks", external_task_ids=["produce", "grp.a"], **SENSOR)
    ExternalTaskSensor(task_id="on_group", external_task_group_id="grp", **SENSOR)
    ExternalTaskSensor(task_id="on_failed_task", external_task_id="broken", failed_states=["failed"], **SENSOR)
    ExternalTaskSensor(task_id="on_failed_soft", external_task_id="broken", failed_states=["failed"],
                       soft_fail=True, **SENSOR)
    ExternalTaskSensor(task_id="skip_on_failed", external_task_id="broken", skipped_states=["failed"], **SENSOR)
    ExternalTaskSensor(task_id="on_dag_failed", allowed_states=["failed"], **SENSOR)
    ExternalTaskSensor(task_id="day_before", external_task_id="produce", execution_delta=datetime.timedelta(days=1),
                       external_dag_id="upstream", timeout=0.3, poke_interval=0.05, retries=3)
    ExternalTaskSensor(task_id="by_date_fn", external_task_id="produce", external_dag_id="upstream",
                       execution_date_fn=lambda dt, ds: [dt], **FAST)
    ExternalTaskSensor(task_id="missing_task", external_task_id="nope", check_existence=True, **SENSOR)
    ExternalTaskSensor(task_id="missing_dag", external_dag_id="no_such_dag", check_existence=True, **FAST)

with DAG("waits_for_upstream", schedule=None, start_date=START):
    ExternalTaskSensor(task_id="wait", external_dag_id="upstream", external_task_id="produce", timeout=20, **FAST)
