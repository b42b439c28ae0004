"""``airflow.operators.branch`` (Airflow 2 path)."""

from updraft.operators.branch import BaseBranchOperator, BranchMixIn

__all__ = ["BaseBranchOperator", "BranchMixIn"]
