"""``airflow.providers.common.messaging``: the message-queue trigger, for SQS (``updraft.triggers.aws_sources``)."""
