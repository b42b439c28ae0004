"""``airflow.operators.trigger_dagrun`` (Airflow 2 path)."""

from updraft.operators.trigger_dagrun import TriggerDagRunOperator

__all__ = ["TriggerDagRunOperator"]
