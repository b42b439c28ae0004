"""``airflow.providers.standard.triggers.hitl``."""

from updraft.triggers.hitl import HITLTrigger, HITLTriggerEventFailurePayload, HITLTriggerEventSuccessPayload

__all__ = ["HITLTrigger", "HITLTriggerEventFailurePayload", "HITLTriggerEventSuccessPayload"]
