"""``airflow.providers.common.messaging.triggers.msg_queue``: ``MessageQueueTrigger`` on an SQS queue."""

from updraft.triggers.aws_sources import MessageQueueTrigger

__all__ = ["MessageQueueTrigger"]
