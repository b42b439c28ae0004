"""``airflow.providers.amazon.aws.triggers``: only ``s3`` (S3KeyTrigger)."""

PARTIAL_PROVIDER = True
