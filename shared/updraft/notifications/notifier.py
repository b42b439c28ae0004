"""The email notifier: Airflow's ``SmtpNotifier`` role (templated to/subject/body), sent through SES.

Used for a task's ``email_on_failure`` / ``email_on_retry`` alert (``updraft.runtime.task_email``), and usable
as any callback. Its subject and body are templates rendered with the callback's context and the DAG's Jinja
environment, as Airflow's notifier renders them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from updraft.notifications.email import send_email
from updraft.notifications.ses import SesEmailSender
from updraft.sdk.notifier import BaseNotifier


class EmailNotifier(BaseNotifier):
    template_fields = ("to", "subject", "html_content", "cc", "bcc")

    def __init__(self, *, to: str | Iterable[str], subject: str, html_content: str,
                 cc: str | Iterable[str] | None = None, bcc: str | Iterable[str] | None = None,
                 sender: SesEmailSender | None = None) -> None:
        super().__init__()
        self.to = to
        self.subject = subject
        self.html_content = html_content
        self.cc = cc
        self.bcc = bcc
        self.sender = sender

    def notify(self, context: Any) -> None:
        send_email(self.to, self.subject, self.html_content, cc=self.cc, bcc=self.bcc, sender=self.sender)
