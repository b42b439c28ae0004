"""Airflow's ``airflow.utils.email.send_email``, sent through the environment's SES sender.

Same signature and address handling as Airflow (a string of addresses split on ``,`` or ``;``, or an iterable).
What SES's ``SendEmail`` cannot carry is refused by name instead of being dropped: attachments (``files``),
``custom_headers``, a ``mime_subtype`` other than Airflow's default, an SMTP ``conn_id`` and any other backend
keyword. ``dryrun`` builds and checks the message without sending it, as Airflow's does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formatdate
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


def build_mime_message(mail_from: str | None, to: str | Iterable[str], subject: str, html_content: str,
                       files: list[str] | None = None, cc: str | Iterable[str] | None = None,
                       bcc: str | Iterable[str] | None = None, mime_subtype: str = "mixed",
                       mime_charset: str = "utf-8", custom_headers: dict[str, Any] | None = None,
                       ) -> tuple[MIMEMultipart, list[str]]:
    """Airflow's MIME message builder (the Amazon provider's SES hook sends what it builds): the message, with
    ``files`` attached, and every recipient (``bcc`` included, but not in the headers)."""
    recipients = get_email_address_list(to)
    msg = MIMEMultipart(mime_subtype)
    msg["Subject"] = subject
    if mail_from:
        msg["From"] = mail_from
    msg["To"] = ", ".join(recipients)
    if cc:
        cc_list = get_email_address_list(cc)
        msg["CC"] = ", ".join(cc_list)
        recipients += cc_list
    if bcc:
        recipients += get_email_address_list(bcc)
    msg["Date"] = formatdate(localtime=True)
    msg.attach(MIMEText(html_content, "html", mime_charset))
    for fname in files or []:
        basename = os.path.basename(fname)
        with open(fname, "rb") as file:
            part = MIMEApplication(file.read(), Name=basename)
        part["Content-Disposition"] = f'attachment; filename="{basename}"'
        part["Content-ID"] = f"<{basename}>"
        msg.attach(part)
    for header_key, header_value in (custom_headers or {}).items():
        msg[header_key] = header_value
    return msg, recipients
