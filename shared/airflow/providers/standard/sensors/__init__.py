"""``airflow.providers.standard.sensors``."""

