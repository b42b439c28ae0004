"""``airflow.providers.amazon.aws.sensors``: only ``s3`` (S3KeySensor)."""

PARTIAL_PROVIDER = True
