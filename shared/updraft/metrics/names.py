"""Every metric Airflow 3.3 defines (its ``metrics_template.yaml``), and whether Updraft emits it.

Airflow 3.3 names a metric once and puts what varies in tags (``ti.finish`` tagged ``dag_id``, ``task_id`` and
``state``); its legacy StatsD names put the tags in the name (``ti.finish.{dag_id}.{task_id}.{state}``). Updraft
emits Airflow's tagged name as the CloudWatch metric name and the tags as its dimensions, so a search for
``ti.finish`` with ``state=failed`` finds what ``ti.finish.*.*.failed`` finds in StatsD. Units as Airflow's:
timers in milliseconds, counters as counts, gauges as the figure.

A metric Updraft does not emit says why: most measure a part Updraft does not have (a long-running job, the DAG
processor's loop, a triggerer, another executor), and AWS's own metrics (Lambda, DynamoDB, Step Functions) on the
environment's dashboard show what they would have shown. ``emitted_by`` names the one place that emits it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AirflowMetric:
    name: str
    kind: str  # "counter", "gauge" or "timer" (Airflow's types)
    dimensions: tuple[str, ...] = ()  # Airflow's tags: Updraft's dimensions
    emitted_by: str = ""  # where Updraft emits it; empty when it does not
    why_not: str = ""  # why not, when it does not

    @property
    def emitted(self) -> bool:
        return bool(self.emitted_by)


_NO_JOBS = ("no long-running jobs: the scheduler, parser and workers are Lambda invocations, whose count and "
            "errors are Lambda's metrics (on the dashboard)")
_NO_PROCESSOR_LOOP = "no DAG processor loop or file queue: a file is parsed when S3 says it changed"
_OTHER_EXECUTOR = "another executor's: tries run on Lambda and Fargate"
_NO_TRIGGERER = ("no triggerer: deferred tries wait in Step Functions (its executions are on the dashboard); "
                 "trigger checks run on Lambda")
_NO_OPENLINEAGE = "no OpenLineage integration"
_NO_CRITICAL_SECTION = ("no critical section or database: claims are conditional writes, whose throttles are "
                        "DynamoDB's metrics (on the dashboard)")
_NO_ADOPTION = "nothing to adopt: a try's worker is fenced by its try id and its lease, not owned by a scheduler"
_PER_TASK_GAUGE = ("a gauge per task of every DAG, counted on every pass: a scan of every active run's instances "
                   "each tick, and a CloudWatch metric per task; pool.* and scheduler.dagruns.running show occupancy")
_NO_CACHE_METRIC = "the DAG-version cache is per Lambda container; its misses are the store's reads"
_NO_CONNECTION_TEST = "no asynchronous connection tests: a test runs in the API request"
_NOT_IN_UPDRAFT = "the feature is not in Updraft"

AIRFLOW_METRICS: tuple[AirflowMetric, ...] = (
    # -- counters ---------------------------------------------------------------------------------------------
    AirflowMetric("{job_name}_start", "counter", ("job_name",), why_not=_NO_JOBS),
    AirflowMetric("{job_name}_end", "counter", ("job_name",), why_not=_NO_JOBS),
    AirflowMetric("{job_name}_heartbeat_failure", "counter", ("job_name",), why_not=_NO_JOBS),
    AirflowMetric("local_task_job.task_exit", "counter", ("job_id", "dag_id", "task_id", "return_code"),
                  why_not="no LocalTaskJob: a try's end is ti.finish"),
    AirflowMetric("operator_failures", "counter", ("operator_name",), emitted_by="worker: a try ends failed"),
    AirflowMetric("operator_successes", "counter", ("operator_name",), emitted_by="worker: a try ends success"),
    AirflowMetric("resumable_job.fresh_submit", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("resumable_job.already_succeeded", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("resumable_job.terminal_resubmit", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("resumable_job.reconnect_attempt", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("resumable_job.reconnect_success", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("ti_failures", "counter", emitted_by="worker: a try ends failed"),
    AirflowMetric("ti_successes", "counter", emitted_by="worker: a try ends success"),
    AirflowMetric("previously_succeeded", "counter",
                  why_not="a dispatch of a try that already ran loses its fence (the worker's TriesNotRunnable)"),
    AirflowMetric("task_instances_without_heartbeats_killed", "counter",
                  why_not="not yet: expired leases are found by the zombie check (backstops), which counts none yet"),
    AirflowMetric("scheduler_heartbeat", "counter", emitted_by="scheduler function: every tick's pass"),
    AirflowMetric("dag_processor_heartbeat", "counter", emitted_by="parser function: every invocation"),
    AirflowMetric("dag_processing.processes", "counter", emitted_by="parser function: a child per file parsed"),
    AirflowMetric("dag_processing.processor_timeouts", "counter",
                  why_not="a file whose parse times out gets an import error (dag_processing.import_errors)"),
    AirflowMetric("dag_processing.other_callback_count", "counter",
                  why_not="callbacks run on workers, not in the DAG processor"),
    AirflowMetric("dag_processing.callback_only_count", "counter",
                  why_not="callbacks run on workers, not in the DAG processor"),
    AirflowMetric("dag_processing.file_path_queue_update_count", "counter", why_not=_NO_PROCESSOR_LOOP),
    AirflowMetric("dag_file_processor_timeouts", "counter",
                  why_not="a file whose parse times out gets an import error (dag_processing.import_errors)"),
    AirflowMetric("dag_processing.manager_stalls", "counter", why_not=_NO_PROCESSOR_LOOP),
    AirflowMetric("dag_file_refresh_error", "counter",
                  emitted_by="parser function: a file whose handling failed (its store write)"),
    AirflowMetric("scheduler.tasks.killed_externally", "counter", why_not=_NO_ADOPTION),
    AirflowMetric("scheduler.orphaned_tasks.cleared", "counter", why_not=_NO_ADOPTION),
    AirflowMetric("scheduler.orphaned_tasks.adopted", "counter", why_not=_NO_ADOPTION),
    AirflowMetric("scheduler.critical_section_busy", "counter", why_not=_NO_CRITICAL_SECTION),
    AirflowMetric("ti.start", "counter", ("dag_id", "task_id"), emitted_by="worker: a try starts"),
    AirflowMetric("ti.finish", "counter", ("dag_id", "task_id", "state"),
                  emitted_by="worker: a try ends (its state: success, failed, up_for_retry, deferred, ...)"),
    AirflowMetric("dag.callback_exceptions", "counter",
                  why_not="not yet: a callback's exception is logged by the worker that ran it (CallbacksRun "
                          "counts the callbacks run)"),
    AirflowMetric("celery.task_timeout_error", "counter", why_not=_OTHER_EXECUTOR),
    AirflowMetric("celery.execute_command.failure", "counter", why_not=_OTHER_EXECUTOR),
    AirflowMetric("task_removed_from_dag", "counter", ("dag_id",),
                  why_not="a run keeps the DAG version it started with: no task is removed from it"),
    AirflowMetric("task_restored_to_dag", "counter", ("dag_id",),
                  why_not="a run keeps the DAG version it started with: no task is restored to it"),
    AirflowMetric("task_instance_created", "counter", ("task_type",),
                  why_not="instances are created by their claim (one write); ti.start counts tries"),
    AirflowMetric("triggerer_heartbeat", "counter", why_not=_NO_TRIGGERER),
    AirflowMetric("triggers.blocked_main_thread", "counter", why_not=_NO_TRIGGERER),
    AirflowMetric("triggers.failed", "counter", why_not=_NO_TRIGGERER),
    AirflowMetric("triggers.succeeded", "counter", why_not=_NO_TRIGGERER),
    AirflowMetric("asset.updates", "counter", why_not="not yet: asset events are counted by the API's event log"),
    AirflowMetric("asset.orphaned", "gauge", why_not="not yet: an asset no DAG names is found by the API's reads"),
    AirflowMetric("asset.triggered_dagruns", "counter", why_not="not yet: in the pass's RunsCreated"),
    AirflowMetric("deadline_alerts.deadline_created", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("deadline_alerts.deadline_missed", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("deadline_alerts.deadline_not_missed", "counter", why_not=_NOT_IN_UPDRAFT),
    AirflowMetric("ol.emit.failed", "counter", why_not=_NO_OPENLINEAGE),
    AirflowMetric("api_server.dag_bag.cache_hit", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("api_server.dag_bag.cache_miss", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("api_server.dag_bag.cache_clear", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("scheduler.dag_bag.cache_hit", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("scheduler.dag_bag.cache_miss", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("scheduler.dag_bag.cache_clear", "counter", why_not=_NO_CACHE_METRIC),
    AirflowMetric("connection_test.success", "counter", why_not=_NO_CONNECTION_TEST),
    AirflowMetric("connection_test.failed", "counter", why_not=_NO_CONNECTION_TEST),
    AirflowMetric("connection_test.reaped", "counter", why_not=_NO_CONNECTION_TEST),
    # -- gauges -----------------------------------------------------------------------------------------------
    AirflowMetric("dagbag_size", "gauge", emitted_by="parser function: the DAGs of the files it parsed"),
    AirflowMetric("api_server.dag_bag.cache_size", "gauge", why_not=_NO_CACHE_METRIC),
    AirflowMetric("scheduler.dag_bag.cache_size", "gauge", why_not=_NO_CACHE_METRIC),
    AirflowMetric("connection_test.active", "gauge", why_not=_NO_CONNECTION_TEST),
    AirflowMetric("connection_test.pending", "gauge", why_not=_NO_CONNECTION_TEST),
    AirflowMetric("dag_processing.import_errors", "gauge",
                  emitted_by="parser function: the environment's import errors after each invocation"),
    AirflowMetric("dag_processing.total_parse_time", "gauge",
                  emitted_by="parser function: seconds spent parsing the invocation's files"),
    AirflowMetric("dag_processing.file_path_queue_size", "gauge", why_not=_NO_PROCESSOR_LOOP),
    AirflowMetric("dag_processing.last_run.seconds_ago", "gauge", ("file_name",), why_not=_NO_PROCESSOR_LOOP),
    AirflowMetric("dag_processing.last_num_of_db_queries.{dag_file}", "gauge", ("dag_file",),
                  why_not="no database: a parse's store writes are DynamoDB's metrics"),
    AirflowMetric("scheduler.tasks.starving", "gauge",
                  emitted_by="scheduler function: scheduled tries a full pool kept waiting in the tick's pass"),
    AirflowMetric("scheduler.tasks.executable", "gauge",
                  emitted_by="scheduler function: tries the tick's pass claimed and dispatched"),
    AirflowMetric("scheduler.dagruns.running", "gauge", emitted_by="scheduler function: running runs at the tick"),
    AirflowMetric("executor.open_slots", "gauge", ("executor_class_name",),
                  why_not="one parallelism limit for every executor, not a slot count per executor"),
    AirflowMetric("executor.queued_tasks", "gauge", ("executor_class_name",),
                  why_not="queued tries are in flight to Lambda or ECS (pool.queued_slots counts them)"),
    AirflowMetric("executor.running_tasks", "gauge", ("executor_class_name",),
                  why_not="running tries are Lambda's ConcurrentExecutions (on the dashboard) and pool.running_slots"),
    AirflowMetric("pool.open_slots", "gauge", ("pool_name",), emitted_by="scheduler function: each pool, per tick"),
    AirflowMetric("pool.queued_slots", "gauge", ("pool_name",), emitted_by="scheduler function: each pool, per tick"),
    AirflowMetric("pool.running_slots", "gauge", ("pool_name",),
                  emitted_by="scheduler function: each pool, per tick"),
    AirflowMetric("pool.deferred_slots", "gauge", ("pool_name",),
                  emitted_by="scheduler function: each pool, per tick"),
    AirflowMetric("pool.scheduled_slots", "gauge", ("pool_name",),
                  emitted_by="scheduler function: each pool, per tick"),
    AirflowMetric("pool.starving_tasks", "gauge", ("pool_name",),
                  why_not="not yet: a pass's refusals are kept per try, not per pool (scheduler.tasks.starving "
                          "counts them all)"),
    AirflowMetric("triggers.running", "gauge", ("hostname",), why_not=_NO_TRIGGERER),
    AirflowMetric("triggerer.capacity_left", "gauge", ("hostname",), why_not=_NO_TRIGGERER),
    AirflowMetric("ti.scheduled", "gauge", ("queue", "dag_id", "task_id"), why_not=_PER_TASK_GAUGE),
    AirflowMetric("ti.queued", "gauge", ("queue", "dag_id", "task_id"), why_not=_PER_TASK_GAUGE),
    AirflowMetric("ti.running", "gauge", ("queue", "dag_id", "task_id"), why_not=_PER_TASK_GAUGE),
    AirflowMetric("ti.deferred", "gauge", ("queue", "dag_id", "task_id"), why_not=_PER_TASK_GAUGE),
    AirflowMetric("ol.event.size", "gauge", ("event_type", "operator_name"), why_not=_NO_OPENLINEAGE),
    *(AirflowMetric(f"edge_worker.{name}", "gauge", ("worker_name",), why_not=_OTHER_EXECUTOR)
      for name in ("status", "connected", "maintenance", "jobs_active", "concurrency", "free_concurrency",
                   "num_queues")),
    AirflowMetric("edge_worker.heartbeat_count", "counter", ("worker_name",), why_not=_OTHER_EXECUTOR),
    AirflowMetric("edge_worker.ti.start", "counter", ("queue", "dag_id", "task_id"), why_not=_OTHER_EXECUTOR),
    AirflowMetric("edge_worker.ti.finish", "counter", ("queue", "state", "dag_id", "task_id"),
                  why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_creation_status", "counter", ("status",), why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_deletion_status", "counter", ("status",), why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_patching_status", "counter", ("status",), why_not=_OTHER_EXECUTOR),
    # -- timers -----------------------------------------------------------------------------------------------
    AirflowMetric("dagrun.dependency-check", "timer", ("dag_id",),
                  why_not="a run's evaluation is pure and in memory; scheduler.scheduler_loop_duration times the pass"),
    AirflowMetric("task.duration", "timer", ("dag_id", "task_id"), emitted_by="worker: a try ends"),
    AirflowMetric("task.scheduled_duration", "timer", ("dag_id", "task_id"),
                  why_not="an instance is claimed as it is created (queued in one write): no scheduled time to "
                          "measure from"),
    AirflowMetric("task.queued_duration", "timer", ("dag_id", "task_id"),
                  emitted_by="worker: a try starts (its queued time to its start: the hop's invoke latency)"),
    AirflowMetric("dag_processing.last_duration", "timer", ("bundle_name", "file_name"),
                  emitted_by="parser function: each file parsed"),
    AirflowMetric("dagrun.duration.success", "timer", ("dag_id",), emitted_by="scheduler: a run ends success"),
    AirflowMetric("dagrun.duration.failed", "timer", ("dag_id",), emitted_by="scheduler: a run ends failed"),
    AirflowMetric("dagrun.schedule_delay", "timer", ("dag_id",),
                  emitted_by="scheduler: a scheduled run starts (its start after its run_after)"),
    AirflowMetric("scheduler.critical_section_duration", "timer", why_not=_NO_CRITICAL_SECTION),
    AirflowMetric("scheduler.critical_section_query_duration", "timer", why_not=_NO_CRITICAL_SECTION),
    AirflowMetric("scheduler.scheduler_loop_duration", "timer", emitted_by="scheduler function: every tick's pass"),
    AirflowMetric("scheduler.executor_heartbeat_duration", "timer",
                  why_not="no executor loop: a dispatch is one asynchronous invoke or RunTask"),
    AirflowMetric("dagrun.first_task_scheduling_delay", "timer", ("dag_id",),
                  emitted_by="scheduler: a scheduled run ends (its first try's start after its run_after)"),
    AirflowMetric("dagrun.first_task_start_delay", "timer", ("dag_id",),
                  emitted_by="scheduler: a run ends (its first try's start after the run was queued)"),
    AirflowMetric("collect_db_dags", "timer", why_not="no DagBag loaded from a database"),
    AirflowMetric("kubernetes_executor.adopt_task_instances.duration", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_creation", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_deletion", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("kubernetes_executor.pod_patching", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("batch_executor.adopt_task_instances.duration", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("ecs_executor.adopt_task_instances.duration", "timer", why_not=_NO_ADOPTION),
    AirflowMetric("lambda_executor.adopt_task_instances.duration", "timer", why_not=_NO_ADOPTION),
    AirflowMetric("edge_executor.sync.duration", "timer", why_not=_OTHER_EXECUTOR),
    AirflowMetric("ol.emit.attempts", "timer", ("event_type", "transport_type"), why_not=_NO_OPENLINEAGE),
    AirflowMetric("ol.extract", "timer", ("event_type", "operator_name"), why_not=_NO_OPENLINEAGE),
    AirflowMetric("airflow.io.load_filesystems", "timer", why_not="no airflow.io filesystems registry"),
    AirflowMetric("serde.load_serializers", "timer", why_not="no airflow.serialization.serde registry"),
    AirflowMetric("connection_test.dispatch_duration", "timer", why_not=_NO_CONNECTION_TEST),
    AirflowMetric("connection_test.hook_duration", "timer", why_not=_NO_CONNECTION_TEST),
)

BY_NAME: dict[str, AirflowMetric] = {metric.name: metric for metric in AIRFLOW_METRICS}
EMITTED: frozenset[str] = frozenset(metric.name for metric in AIRFLOW_METRICS if metric.emitted)

