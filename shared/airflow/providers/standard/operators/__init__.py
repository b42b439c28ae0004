"""``airflow.providers.standard.operators``."""

