"""``airflow.sdk._shared``: the helper modules Airflow shares between its core and its task SDK."""
