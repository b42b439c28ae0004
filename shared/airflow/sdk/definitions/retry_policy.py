"""``airflow.sdk.definitions.retry_policy``: task retry policies."""

from updraft.sdk.retry_policy import (
    ExceptionRetryPolicy,
    RetryAction,
    RetryDecision,
    RetryPolicy,
    RetryRule,
)

__all__ = ["ExceptionRetryPolicy", "RetryAction", "RetryDecision", "RetryPolicy", "RetryRule"]
