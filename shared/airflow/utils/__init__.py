"""``airflow.utils``: the helper modules DAG files import."""

