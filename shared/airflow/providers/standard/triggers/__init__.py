"""``airflow.providers.standard.triggers``."""
