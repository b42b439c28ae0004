"""``airflow.sdk.definitions.decorators.setup_teardown``: ``setup_task``, ``teardown_task`` and ``context_wrapper``."""

from updraft.sdk.setup_teardown import ContextWrapper, context_wrapper, setup, teardown

setup_task = setup
teardown_task = teardown

__all__ = ["ContextWrapper", "context_wrapper", "setup_task", "teardown_task"]
