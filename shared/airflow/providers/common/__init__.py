"""``airflow.providers.common``: only ``compat.sdk``, the re-export module DAG files and examples import."""
