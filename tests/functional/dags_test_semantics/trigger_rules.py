"""Every trigger rule against every mix of upstream outcomes.

Three sources finish as success (``ok``), failed (``bad``) and skipped (``skip``); ``uf`` is upstream_failed
(it follows ``bad`` with the default all_success). For each trigger rule there is one sink per mix of those
upstreams, named ``<rule>__<mix>`` with the mix letters s(uccess), f(ailed), k (skipped), u(pstream_failed).
"""

import datetime

from airflow.exceptions import AirflowFailException, AirflowSkipException
from airflow.sdk import DAG, TriggerRule, task

MIXES = {"s": ["ok"], "f": ["bad"], "k": ["skip"], "u": ["uf"], "sf": ["ok", "bad"], "sk": ["ok", "skip"],
         "fk": ["bad", "skip"], "sfk": ["ok", "bad", "skip"]}

with DAG("trigger_rules", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)):

    @task
    def ok():
        return "ok"

    @task
    def bad():
        raise AirflowFailException("fails")

    # ``skip`` runs after ``bad`` has failed: all_success marks a task upstream_failed as soon as one upstream
    # failed and skipped as soon as one skipped (trigger_rule_dep flags before all upstreams are done), so with
    # both, the one that finishes first decides, in Airflow as in Updraft. Ordering them makes the run stable.
    @task(trigger_rule="all_done")
    def skip():
        raise AirflowSkipException("skips")

    @task
    def uf():
        return "never runs"

    sources = {"ok": ok(), "bad": bad(), "skip": skip()}
    sources["uf"] = uf()
    sources["bad"] >> sources["uf"]
    sources["bad"] >> sources["skip"]

    @task
    def sink():
        return None

    for rule in TriggerRule:
        for mix, upstream in MIXES.items():
            node = sink.override(task_id=f"{rule.value}__{mix}", trigger_rule=rule)()
            for name in upstream:
                sources[name] >> node
