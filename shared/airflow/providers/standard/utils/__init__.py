"""``airflow.providers.standard.utils``."""
