"""``airflow.providers.standard.operators.hitl``."""

from updraft.operators.hitl import ApprovalOperator, HITLBranchOperator, HITLEntryOperator, HITLOperator

__all__ = ["ApprovalOperator", "HITLBranchOperator", "HITLEntryOperator", "HITLOperator"]
