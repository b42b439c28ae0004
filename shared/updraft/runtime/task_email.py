"""A task's ``email_on_failure`` / ``email_on_retry`` alert, as Airflow's task runner sends it.

After the failure or retry callbacks of a try, when the task has ``email`` and the matching flag (both flags
default to True, as in Airflow), the alert goes to ``task.email`` through the environment's SES sender with
Airflow's default subject and body templates, rendered with the try's context plus ``exception``,
``exception_html``, ``try_number`` and ``max_tries``. Like Airflow, a failure to send is logged in the task's log
and changes nothing; that includes an environment with no sender configured, which Airflow's SMTP default meets
the same way (an error line in the log, not a silent skip).
"""

from __future__ import annotations

import html
import logging
from typing import Any

from updraft.notifications.notifier import EmailNotifier
from updraft.notifications.ses import EmailNotConfigured, configured_sender

SUBJECT = "Airflow alert: {{ti}}"
# Airflow's default (1-indexed tries, as it reports them).
HTML_CONTENT = (
    "Try {{try_number}} out of {{max_tries + 1}}<br>"
    "Exception:<br>{{exception_html}}<br>"
    'Log: <a href="{{ti.log_url}}">Link</a><br>'
    "Host: {{ti.hostname}}<br>"
    'Mark success: <a href="{{ti.mark_success_url}}">Link</a><br>'
)


def wants_email(task: Any, *, retried: bool) -> bool:
    return bool(getattr(task, "email", None)) and bool(
        getattr(task, "email_on_retry" if retried else "email_on_failure", False))


def send_error_email(task: Any, context: Any, error: BaseException) -> None:
    """Send the alert for ``error``; never raises (a failure is logged in the task's log)."""
    log = logging.getLogger("airflow.task")
    sender = configured_sender()
    if sender is None:
        log.error("Failed to send task failure or retry email notification to %s: %s", task.email,
                  EmailNotConfigured())
        return
    ti = context["ti"]
    email_context = {**context, "exception": error,
                     "exception_html": html.escape(str(error)).replace("\n", "<br>"),
                     "try_number": ti.try_number, "max_tries": ti.max_tries}
    try:
        EmailNotifier(to=task.email, subject=SUBJECT, html_content=HTML_CONTENT, sender=sender)(email_context)
    except Exception:
        log.exception("Failed to send email notification via Amazon SES")
