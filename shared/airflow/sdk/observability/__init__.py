"""``airflow.sdk.observability``."""
