"""``airflow.configuration``: ``conf``, read from the environment and Airflow's and the providers' defaults."""

from updraft.sdk.configuration import AirflowConfigParser, conf
from updraft.sdk.exceptions import AirflowConfigException

__all__ = ["AirflowConfigException", "AirflowConfigParser", "conf"]
