"""``airflow.providers.amazon.aws``: only ``sensors.s3`` and ``triggers.s3``."""

PARTIAL_PROVIDER = True
