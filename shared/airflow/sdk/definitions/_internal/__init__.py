"""``airflow.sdk.definitions._internal``: the internals provider packages import by path."""
