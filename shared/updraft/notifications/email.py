"""Airflow's ``airflow.utils.email.send_email``, sent through the environment's SES sender.

Same signature and address handling as Airflow (a string of addresses split on ``,`` or ``;``, or an iterable).
What SES's ``SendEmail`` cannot carry is refused by name instead of being dropped: attachments (``files``),
``custom_headers``, a ``mime_subtype`` other than Airflow's default, an SMTP ``conn_id`` and any other backend
keyword. ``dryrun`` builds and checks the message without sending it, as Airflow's does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from updraft.notifications.ses import EmailNotConfigured, SesEmailSender, configured_sender


def get_email_address_list(addresses: str | Iterable[str]) -> list[str]:
    """Airflow's: ``"a@x, b@x; c@x"`` or an iterable of such strings -> a flat list of addresses."""
    if isinstance(addresses, str):
        return _split(addresses)
    if isinstance(addresses, Iterable):
        if not all(isinstance(item, str) for item in addresses):
            raise TypeError("The items in your iterable must be strings.")
        return [address for item in addresses for address in _split(item)]
    raise TypeError(f"Unexpected argument type: Received '{type(addresses).__name__}'.")


def _split(addresses: str) -> list[str]:
    return [a for a in re.split(r"\s*[,;]\s*", addresses.strip()) if a]


def send_email(to: str | Iterable[str], subject: str, html_content: str, files: list[str] | None = None,
               dryrun: bool = False, cc: str | Iterable[str] | None = None, bcc: str | Iterable[str] | None = None,
               mime_subtype: str = "mixed", mime_charset: str = "utf-8", conn_id: str | None = None,
               custom_headers: dict[str, Any] | None = None, *, sender: SesEmailSender | None = None,
               **kwargs: Any) -> str | None:
    """Send an HTML email; returns SES's message id (None for a dry run).

    ``sender`` defaults to the environment's; without one configured this raises ``EmailNotConfigured``, as
    Airflow's SMTP backend raises when it has no sender or server.
    """
    refused = {"files": files, "custom_headers": custom_headers, "conn_id": conn_id, **kwargs}
    refused = {name: value for name, value in refused.items() if value}
    if mime_subtype != "mixed":
        refused["mime_subtype"] = mime_subtype
    if refused:
        raise ValueError(f"send_email({', '.join(sorted(refused))}=...) is not supported by Updraft: email goes "
                         "through Amazon SES's SendEmail (HTML body, To/Cc/Bcc), from the environment's sender")
    to_list = get_email_address_list(to)
    cc_list = get_email_address_list(cc) if cc else []
    bcc_list = get_email_address_list(bcc) if bcc else []
    if not to_list:
        raise ValueError("send_email needs at least one recipient in 'to'")
    sender = sender or configured_sender()
    if sender is None:
        raise EmailNotConfigured()
    if dryrun:
        return None
    return sender.send(to=to_list, subject=subject, html=html_content, cc=cc_list, bcc=bcc_list,
                       charset=mime_charset)
