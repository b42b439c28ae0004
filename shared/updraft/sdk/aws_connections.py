"""AWS connections in DAG code: Updraft gives DAG code the environment's DAG-code role instead of Airflow
connections, so ``aws_default`` (or none) stands for that role and any other ``aws_conn_id`` is refused by name
(Updraft would otherwise silently not use it). One home for the rule the S3 trigger, sensor and filesystem share.
"""

from __future__ import annotations

from updraft.sdk.exceptions import UnsupportedFeatureError

DEFAULT_CONN_IDS = ("aws_default", None, "")
CONN_HINT = ("Updraft gives DAG code the environment's DAG-code role instead of AWS connections: leave aws_conn_id "
             "as 'aws_default' (or None) and grant the role read access to the bucket")


def check_conn_id(owner: str, aws_conn_id: str | None) -> None:
    """Refuse an AWS connection other than the default: Updraft would silently not use it."""
    if aws_conn_id not in DEFAULT_CONN_IDS:
        raise UnsupportedFeatureError(f"{owner}(aws_conn_id={aws_conn_id!r})", CONN_HINT)
