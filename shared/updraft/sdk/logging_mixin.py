"""Airflow's ``LoggingMixin``: ``self.log`` for hooks, operators and anything provider code mixes it into.

The logger is named as Airflow names it: ``<_log_config_logger_name>.<_logger_name or module.Class>``, so a hook
logs to ``airflow.task.hooks.<module>.<Class>`` and an operator to ``airflow.task.operators.<module>.<Class>``.
Those loggers propagate to the root logger, whose handler (``updraft.runtime.logs``) writes the records of the
thread running a try into that try's log; outside a try (parsing) they go wherever the process logs.
Airflow's loggers are structlog's; these are the standard library's, which accept the same ``log.info("%s", x)``
calls providers make.
"""

from __future__ import annotations

import logging
from typing import Any


class LoggingMixin:
    """A logger configured with the class name (Airflow's ``airflow.utils.log.logging_mixin.LoggingMixin``)."""

    # The parent logger (Airflow's logging config defines airflow.task.hooks / airflow.task.operators ...).
    _log_config_logger_name: str | None = None
    # Replaces ``module.Class`` in the logger's name when set (a hook's or operator's ``logger_name``).
    _logger_name: str | None = None

    def __init__(self, context: Any = None) -> None:
        super().__init__()

    @staticmethod
    def _create_logger_name(logged_class: type, log_config_logger_name: str | None = None,
                            class_logger_name: str | None = None) -> str:
        logger_name = (class_logger_name if class_logger_name is not None
                       else f"{logged_class.__module__}.{logged_class.__name__}")
        if log_config_logger_name:
            return f"{log_config_logger_name}.{logger_name}" if logger_name else log_config_logger_name
        return logger_name

    @classmethod
    def logger(cls) -> logging.Logger:
        """The class's logger."""
        return logging.getLogger(cls._create_logger_name(cls, cls._log_config_logger_name, cls._logger_name))

    @property
    def log(self) -> logging.Logger:
        """This object's logger (named from its class, or its ``_logger_name``)."""
        return logging.getLogger(self._create_logger_name(type(self), self._log_config_logger_name,
                                                          self._logger_name))
