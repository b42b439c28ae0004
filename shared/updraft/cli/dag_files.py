"""Where ``dags upload`` puts DAG files: the chosen environment's bucket, under its DAGs prefix.

The API has no route for DAG files (Airflow reads them from its bundles, not through its API), and the parser
already runs on every write under the prefix, so uploading is an S3 put: with the user's own AWS credentials
for a deployed environment, with the embedded AWS's for local mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from updraft.cli.environments import Environments, chosen_name
from updraft.cli.system import system


@dataclass(frozen=True)
class DagsBucket:
    s3: Any  # a boto3 S3 client
    bucket: str
    prefix: str  # ends with "/"


def dags_bucket(ctx: click.Context) -> DagsBucket:
    name = chosen_name(ctx)
    if name is None:
        services = system(ctx)
        if not services.config.bucket:
            raise click.ClickException("the system has no bucket configured (UPDRAFT_BUCKET)")
        return DagsBucket(services.client("s3"), services.config.bucket, services.config.dags_prefix)
    env = Environments.load().get(name)
    if not env.bucket:
        raise click.ClickException(f"environment {name!r} names no bucket: add it again with --stack, "
                                   "or with --url and --bucket")
    import boto3

    return DagsBucket(boto3.client("s3", region_name=env.region), env.bucket, env.dags_prefix)
