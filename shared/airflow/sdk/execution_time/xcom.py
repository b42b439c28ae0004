"""``airflow.sdk.execution_time.xcom``: ``XCom`` for code running in a try."""

from updraft.sdk.xcom import XCom

__all__ = ["XCom"]
