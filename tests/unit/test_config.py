"""UpdraftConfig: the one place environment variables become settings."""

from __future__ import annotations

import pytest

from updraft.config import ConfigError, UpdraftConfig
from updraft.services import scheduler_settings, store_settings


def test_defaults_from_an_empty_environment():
    config = UpdraftConfig.from_env({})
    assert config.table is None and config.region is None
    assert config.dags_prefix == "dags/" and config.tick_seconds == 60 and config.parallelism == 32
    assert not config.fargate_configured
    assert config.task_log_group is None  # task logs in the bucket unless a log group is configured


def test_round_trip_through_the_environment():
    env = {"UPDRAFT_TABLE": "t", "AWS_REGION": "eu-west-1", "UPDRAFT_BUCKET": "b", "UPDRAFT_DAGS_PREFIX": "code",
           "UPDRAFT_DYNAMODB_ENDPOINT": "http://127.0.0.1:5000", "UPDRAFT_WORKER_FUNCTION": "worker",
           "UPDRAFT_ECS_CLUSTER": "c", "UPDRAFT_ECS_TASK_DEFINITION": "td:3", "UPDRAFT_ECS_SUBNETS": "s-1, s-2",
           "UPDRAFT_ECS_SECURITY_GROUPS": "sg-1", "UPDRAFT_ECS_PUBLIC_IP": "enabled", "UPDRAFT_TICK_SECONDS": "5",
           "UPDRAFT_PARALLELISM": "8", "UPDRAFT_TASK_LOG_GROUP": "updraft-dev-task-logs"}
    config = UpdraftConfig.from_env(env)
    assert config.dags_prefix == "code/" and config.task_log_group == "updraft-dev-task-logs"
    assert config.ecs_subnets == ("s-1", "s-2") and config.ecs_public_ip and config.fargate_configured
    assert UpdraftConfig.from_env(config.to_env()) == config
    store = store_settings(config)
    assert (store.table_name, store.region, store.host, store.s3_bucket) == (
        "t", "eu-west-1", "http://127.0.0.1:5000", "b")
    assert scheduler_settings(config).parallelism == 8


def test_region_falls_back_to_the_default_region():
    assert UpdraftConfig.from_env({"AWS_DEFAULT_REGION": "us-west-2"}).region == "us-west-2"


def test_missing_table_names_the_variable():
    with pytest.raises(ConfigError, match="UPDRAFT_TABLE"):
        store_settings(UpdraftConfig.from_env({"AWS_REGION": "us-east-1"}))


@pytest.mark.parametrize("value", ["soon", "0"])
def test_bad_numbers_name_the_variable(value):
    with pytest.raises(ConfigError, match="UPDRAFT_TICK_SECONDS"):
        UpdraftConfig.from_env({"UPDRAFT_TICK_SECONDS": value})


@pytest.mark.parametrize(("value", "exposed"), [("", False), ("False", False), ("0", False), ("True", True),
                                                ("t", True), ("non-sensitive-only", True)])
def test_expose_config_reads_airflow_s_values(value, exposed):
    config = UpdraftConfig.from_env({"AIRFLOW__API__EXPOSE_CONFIG": value})
    assert config.expose_config is exposed
    assert UpdraftConfig.from_env(config.to_env()).expose_config is exposed


def test_expose_config_that_is_no_boolean_names_the_variable():
    with pytest.raises(ConfigError, match="AIRFLOW__API__EXPOSE_CONFIG"):
        UpdraftConfig.from_env({"AIRFLOW__API__EXPOSE_CONFIG": "sometimes"})


def test_the_airflow_options_the_settings_stand_for_leave_unset_ones_out():
    config = UpdraftConfig.from_env({"UPDRAFT_BUCKET": "b", "UPDRAFT_EMAIL_FROM": "ops@example.com",
                                     "UPDRAFT_DAGS_PAUSED_AT_CREATION": "false"})
    options = config.airflow_options()
    assert list(options) == ["core", "api", "email", "scheduler"]  # no secrets backend: no [secrets]
    assert options["core"] == {"dags_folder": "s3://b/dags/", "parallelism": "32",
                               "dags_are_paused_at_creation": "False"}
    assert options["email"] == {"from_email": "ops@example.com"} and "base_url" not in options["api"]
