"""``airflow.utils.log``."""
