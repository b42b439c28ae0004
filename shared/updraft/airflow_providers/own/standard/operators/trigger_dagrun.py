"""``airflow.providers.standard.operators.trigger_dagrun``."""

from updraft.operators.trigger_dagrun import XCOM_RUN_ID, DagIsPaused, TriggerDagRunOperator

__all__ = ["XCOM_RUN_ID", "DagIsPaused", "TriggerDagRunOperator"]
