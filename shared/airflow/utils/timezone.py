"""``airflow.utils.timezone`` (Airflow 2 path): the same helpers as ``airflow.sdk.timezone``."""

from airflow.sdk.timezone import *  # noqa: F403
from airflow.sdk.timezone import __all__
