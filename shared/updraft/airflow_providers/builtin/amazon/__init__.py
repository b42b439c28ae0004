"""``airflow.providers.amazon``: of the Amazon provider only the S3 key wait (``aws.sensors.s3``, ``aws.triggers.s3``)
is available; any other module of it is an import error naming it (``updraft.sdk._internal.unsupported``)."""

PARTIAL_PROVIDER = True  # a failed import below leaves this package unimported (see unsupported.py)
