"""``airflow.triggers``: the trigger base classes (``airflow.triggers.base``); time triggers live in the standard
provider (``airflow.providers.standard.triggers.temporal``), and Airflow 2's ``airflow.triggers.temporal`` too."""
