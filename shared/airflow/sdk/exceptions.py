"""``airflow.sdk.exceptions``: the same exception classes as ``airflow.exceptions``."""

from airflow.exceptions import *  # noqa: F403
from airflow.exceptions import __all__
