"""``airflow.providers``: only the standard provider is available; others raise a clear error."""

