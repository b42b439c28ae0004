"""``airflow.providers.standard.triggers``: the time triggers (``temporal``)."""
