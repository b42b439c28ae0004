"""One email through Amazon SES's ``SendEmail``, from the environment's sender identity.

The sender is a verified SES identity set per environment (``UPDRAFT_EMAIL_FROM``; the CDK stack's
``email_sender`` setting, which also grants the worker and Fargate roles ``ses:SendEmail`` on it). The message is
HTML with the charset the caller asks for; ``SendEmail`` carries no attachments or custom headers, so those are
refused by the callers (``updraft.notifications.email``) rather than dropped.

The process's sender is built on first use from the environment (boto3 then, never at import), once per
configuration, so a warm worker keeps its SES client.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from updraft.config import UpdraftConfig

if TYPE_CHECKING:
    from mypy_boto3_ses import SESClient


class EmailNotConfigured(RuntimeError):
    """No sender identity is configured for this environment."""

    def __init__(self) -> None:
        super().__init__("email is not configured for this environment: set the SES sender identity "
                         "(UPDRAFT_EMAIL_FROM; the CDK setting email_sender) to send email")


class SesEmailSender:
    def __init__(self, ses_client: SESClient, sender: str) -> None:
        self.ses_client = ses_client
        self.sender = sender

    def send(self, *, to: Sequence[str], subject: str, html: str, cc: Sequence[str] = (), bcc: Sequence[str] = (),
             charset: str = "utf-8") -> str:
        """Send one HTML message; returns SES's message id."""
        if not to:
            raise ValueError("an email needs at least one recipient")
        destination = {"ToAddresses": list(to)}
        if cc:
            destination["CcAddresses"] = list(cc)
        if bcc:
            destination["BccAddresses"] = list(bcc)
        response = self.ses_client.send_email(
            Source=self.sender, Destination=destination,  # type: ignore[arg-type]
            Message={"Subject": {"Data": subject, "Charset": charset},
                     "Body": {"Html": {"Data": html, "Charset": charset}}})
        return response["MessageId"]


_through: list[Any] = []


def send_through(sender: Any) -> None:
    """Make ``sender`` this process's sender: a try's child process sends through the worker, which holds the
    SES grant (``runtime.store_proxy.ProxyEmailSender``)."""
    _through[:] = [sender]


def configured_sender(config: UpdraftConfig | None = None) -> SesEmailSender | None:
    """The environment's sender, or None when no sender identity is configured."""
    if _through:
        return _through[0]  # type: ignore[no-any-return]
    config = config or UpdraftConfig.from_env()
    if not config.email_from:
        return None
    return _sender(config.email_from, config.region, config.endpoint_url)


@functools.cache
def _sender(email_from: str, region: str | None, endpoint_url: str | None) -> SesEmailSender:
    import boto3

    kwargs = {"region_name": region} if region else {}
    client = boto3.client("ses", endpoint_url=endpoint_url, **kwargs)  # type: ignore[call-overload]
    return SesEmailSender(client, email_from)
