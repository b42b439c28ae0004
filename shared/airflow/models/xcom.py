"""``airflow.models.xcom``: ``XCOM_RETURN_KEY``; the database model ``XComModel`` imports, and any use raises
(read XComs with ``ti.xcom_pull`` or ``airflow.sdk.execution_time.xcom.XCom``)."""

from updraft.sdk.server_side import server_only_class
from updraft.sdk.xcom_arg import XCOM_RETURN_KEY

XComModel = server_only_class("airflow.models.xcom.XComModel")

__all__ = ["XCOM_RETURN_KEY", "XComModel"]
