"""``airflow.sdk.bases``: base classes for custom operators and sensors."""

