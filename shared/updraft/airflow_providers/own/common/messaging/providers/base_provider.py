"""``airflow.providers.common.messaging.providers.base_provider``."""

from updraft.triggers.queue_providers import BaseMessageQueueProvider

__all__ = ["BaseMessageQueueProvider"]
