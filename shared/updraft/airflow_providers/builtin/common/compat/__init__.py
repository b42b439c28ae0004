"""``airflow.providers.common.compat``: only its ``sdk`` module is provided."""
