"""``airflow.providers.common.messaging.triggers``."""
