"""``airflow.task``: priority weight strategies and weight rules."""
