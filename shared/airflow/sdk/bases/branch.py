"""``airflow.sdk.bases.branch``."""

from updraft.operators.branch import BaseBranchOperator, BranchMixIn

__all__ = ["BaseBranchOperator", "BranchMixIn"]
