"""``airflow.sdk.execution_time``: the task runtime's modules DAG files import names from (``context``)."""
