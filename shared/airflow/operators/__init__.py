"""``airflow.operators`` (Airflow 2 paths of the standard operators)."""

