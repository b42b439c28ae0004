"""``airflow.sdk.configuration``: the same ``conf`` as ``airflow.configuration``."""

from updraft.sdk.configuration import AirflowConfigParser, conf

__all__ = ["AirflowConfigParser", "conf"]
