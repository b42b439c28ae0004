"""``airflow.hooks``: only ``airflow.hooks.base`` (``BaseHook``) is available."""
