"""``airflow.sdk.definitions``: Airflow 3's authoring modules, by their full paths."""

