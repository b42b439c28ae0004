"""``airflow.providers.standard.operators.branch``."""

from updraft.operators.branch import BaseBranchOperator, BranchMixIn

__all__ = ["BaseBranchOperator", "BranchMixIn"]
