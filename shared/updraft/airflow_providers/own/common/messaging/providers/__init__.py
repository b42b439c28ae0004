"""``airflow.providers.common.messaging.providers``: the base class of queue kinds."""
