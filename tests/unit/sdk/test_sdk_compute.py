"""Where each task runs: Lambda by default, Fargate when long or sized, chosen with Airflow's ``executor=``."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, task
from updraft.sdk.compute import Compute


def make(**kwargs):
    with DAG("c"):
        return EmptyOperator(task_id="t", **kwargs)


class TestPlacement:
    def test_default_is_lambda(self):
        assert make().compute == Compute("lambda")
        assert make().compute.to_dict() == {"executor": "lambda", "cpu": None, "memory": None}

    def test_short_timeout_stays_on_lambda(self):
        assert make(execution_timeout=dt.timedelta(minutes=14)).compute.executor == "lambda"

    def test_long_timeout_moves_to_fargate(self):
        assert make(execution_timeout=dt.timedelta(minutes=14, seconds=1)).compute == Compute("fargate", 512, 1024)

    def test_pinned_lambda_with_a_long_timeout_is_an_error(self):
        with pytest.raises(ValueError, match=r"pinned to Lambda.*use executor='fargate'"):
            make(executor="lambda", execution_timeout=dt.timedelta(hours=1))

    def test_fargate_with_size(self):
        assert make(executor="fargate", executor_config={"cpu": 1024, "memory": 4096}).compute == \
            Compute("fargate", 1024, 4096)

    def test_cpu_alone_means_fargate_with_the_smallest_valid_memory(self):
        assert make(executor_config={"cpu": 2048}).compute == Compute("fargate", 2048, 4096)

    @pytest.mark.parametrize(("config", "message"), [
        ({"cpu": 300}, "cpu must be one of"),
        ({"cpu": 256, "memory": 4096}, "memory 4096 MiB is not valid with cpu 256"),
        ({"cpu": 1024, "memory": 2500}, "in steps of 1024"),
        ({"cpu": 4096, "memory": 40000}, "allowed: 8192-30720"),
        ({"memory": "lots"}, "memory must be a whole number"),
        ({"cpu": 1.5}, "cpu must be a whole number"),
    ])
    def test_invalid_fargate_sizes(self, config, message):
        with pytest.raises(ValueError, match=message):
            make(executor="fargate", executor_config=config)

    @pytest.mark.parametrize(("executor", "expected"), [
        ("lambda", "lambda"),
        ("fargate", "fargate"),
        ("ecs", "fargate"),
        ("AwsEcsExecutor", "fargate"),
        ("airflow.providers.amazon.aws.executors.ecs.ecs_executor.AwsEcsExecutor", "fargate"),
        ("AwsLambdaExecutor", "lambda"),
        ("airflow.providers.amazon.aws.executors.aws_lambda.AwsLambdaExecutor", "lambda"),
        ("LocalExecutor", "lambda"),
    ])
    def test_executor_names(self, executor, expected):
        assert make(executor=executor).compute.executor == expected

    @pytest.mark.parametrize("executor", ["CeleryExecutor", "KubernetesExecutor", "batch"])
    def test_unavailable_executors(self, executor):
        with pytest.raises(ValueError, match=f"executor '{executor}' is not available in Updraft"):
            make(executor=executor)

    def test_other_executors_config_is_ignored(self):
        assert make(executor_config={"KubernetesExecutor": {"image": "x"}}).compute.executor == "lambda"

    def test_executor_from_default_args(self):
        with DAG("c", default_args={"executor": "fargate", "executor_config": {"cpu": 4096}}):
            op = EmptyOperator(task_id="t")
        assert op.compute == Compute("fargate", 4096, 8192)

    def test_mapped_and_taskflow_tasks(self):
        with DAG("c"):
            mapped = BashOperator.partial(task_id="m", execution_timeout=dt.timedelta(hours=2)).expand(
                bash_command=["a"])

            @task(executor="fargate", executor_config={"cpu": 512, "memory": 2048})
            def heavy():
                return 1

            out = heavy()
        assert mapped.compute == Compute("fargate", 512, 1024)
        assert out.operator.compute == Compute("fargate", 512, 2048)
