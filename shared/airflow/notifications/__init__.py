"""``airflow.notifications``: Airflow 2's home of notifiers (deprecated in Airflow 3 for ``airflow.sdk``)."""
