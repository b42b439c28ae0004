"""``UpdraftDashboard``: one CloudWatch dashboard per environment, ``<prefix>-dashboard``.

What an operator watches an Airflow deployment by, from Airflow's metrics as the functions emit them
(``updraft.metrics``: the DAG, task, pool and state are dimensions, so a graph sums or lists them with a metric
math ``SEARCH``) beside AWS's own: runs by state, task durations, schedule delay, the hop's latency (a try's queued
time to its start), pool slots, parse times and import errors, DynamoDB and Lambda throttles, Lambda errors and
concurrency, the deferral state machine's executions, and the state of every alarm the environment has.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constructs.data import UpdraftData
from updraft.resources import ResourceNames

PERIOD = Duration.minutes(5)
WIDTH = 12  # two graphs a row (the dashboard's grid is 24 wide)


def search(namespace: str, name: str, dimensions: Sequence[str], statistic: str, label: str,
           *, total: bool = False) -> cloudwatch.MathExpression:
    """Every series of Airflow's metric ``name`` over ``dimensions`` (one line each, or their sum: ``total``)."""
    schema = ",".join([f'"{namespace}"', *dimensions])
    expression = f"SEARCH('{{{schema}}} MetricName=\"{name}\"', '{statistic}', {int(PERIOD.to_seconds())})"
    return cloudwatch.MathExpression(expression=f"SUM({expression})" if total else expression, label=label,
                                     using_metrics={}, period=PERIOD)


class UpdraftDashboard(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, namespace: str,
                 functions: dict[str, lambda_.IFunction], data: UpdraftData, state_machine: sfn.IStateMachine,
                 alarms: Sequence[cloudwatch.IAlarm]) -> None:
        super().__init__(scope, construct_id)
        ns = namespace

        def graph(title: str, metrics: Sequence[cloudwatch.IMetric], *, unit: str = "") -> cloudwatch.GraphWidget:
            return cloudwatch.GraphWidget(title=title, left=list(metrics), width=WIDTH, height=6,
                                          left_y_axis=cloudwatch.YAxisProps(label=unit, show_units=False))

        def per_function(metric: str, statistic: str) -> list[cloudwatch.IMetric]:
            return [fn.metric(metric, statistic=statistic, period=PERIOD, label=name)
                    for name, fn in functions.items()]

        table = data.table
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{names.prefix}-dashboard",
                                              default_interval=Duration.hours(3))
        self.dashboard.add_widgets(cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(alarms), width=24))
        self.dashboard.add_widgets(
            graph("Runs by state (ended per 5 minutes)", [
                search(ns, "dagrun.duration.success", ["dag_id"], "SampleCount", "success", total=True),
                search(ns, "dagrun.duration.failed", ["dag_id"], "SampleCount", "failed", total=True),
                search(ns, "ti.finish", ["dag_id", "task_id", "state"], "SampleCount", "tries ended", total=True)]),
            graph("Run durations (ms, p90 by DAG)", [
                search(ns, "dagrun.duration.success", ["dag_id"], "p90", "success")], unit="ms"),
        )
        self.dashboard.add_widgets(
            graph("Task durations (ms, p90 by task)", [
                search(ns, "task.duration", ["dag_id", "task_id"], "p90", "duration")], unit="ms"),
            graph("Schedule delay (ms, max by DAG)", [
                search(ns, "dagrun.schedule_delay", ["dag_id"], "Maximum", "schedule delay"),
                search(ns, "dagrun.first_task_scheduling_delay", ["dag_id"], "Maximum", "first task")], unit="ms"),
        )
        self.dashboard.add_widgets(
            graph("Hop latency: a try's queued time to its start (ms, p90 by task)", [
                search(ns, "task.queued_duration", ["dag_id", "task_id"], "p90", "queued")], unit="ms"),
            graph("Pool slots (by pool)", [
                search(ns, "pool.open_slots", ["pool_name"], "Minimum", "open"),
                search(ns, "pool.running_slots", ["pool_name"], "Maximum", "running"),
                search(ns, "pool.queued_slots", ["pool_name"], "Maximum", "queued"),
                search(ns, "pool.deferred_slots", ["pool_name"], "Maximum", "deferred")]),
        )
        self.dashboard.add_widgets(
            graph("Parse times (ms, max by file)", [
                search(ns, "dag_processing.last_duration", ["bundle_name", "file_name"], "Maximum", "parse")],
                unit="ms"),
            graph("Import errors and the scheduler's pass", [
                cloudwatch.Metric(namespace=ns, metric_name="dag_processing.import_errors", statistic="Maximum",
                                  period=PERIOD, label="import errors"),
                cloudwatch.Metric(namespace=ns, metric_name="scheduler.dagruns.running", statistic="Maximum",
                                  period=PERIOD, label="runs running"),
                cloudwatch.Metric(namespace=ns, metric_name="scheduler.tasks.starving", statistic="Maximum",
                                  period=PERIOD, label="tries starving (full pools)")]),
        )
        self.dashboard.add_widgets(
            graph("Throttles (DynamoDB and Lambda)", [
                table.metric("ReadThrottleEvents", statistic="Sum", period=PERIOD, label="table reads"),
                table.metric("WriteThrottleEvents", statistic="Sum", period=PERIOD, label="table writes"),
                *per_function("Throttles", "Sum")]),
            graph("Lambda errors", per_function("Errors", "Sum")),
        )
        self.dashboard.add_widgets(
            graph("Lambda concurrency (max)", per_function("ConcurrentExecutions", "Maximum")),
            graph("Deferral waits (Step Functions executions)", [
                state_machine.metric_started(period=PERIOD, label="started"),
                state_machine.metric_succeeded(period=PERIOD, label="succeeded"),
                state_machine.metric_failed(period=PERIOD, label="failed"),
                state_machine.metric_aborted(period=PERIOD, label="aborted (stopped)"),
                state_machine.metric_timed_out(period=PERIOD, label="timed out")]),
        )
