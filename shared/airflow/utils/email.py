"""``airflow.utils.email``: ``send_email`` through the environment's Amazon SES sender (not SMTP).

``build_mime_message`` builds a MIME message as Airflow's does (the Amazon provider's SES hook sends it). The SMTP
plumbing of Airflow's module (``send_email_smtp``, ``send_mime_email``) raises an ImportError naming it: Updraft has
no SMTP backend.
"""

from updraft.notifications.email import build_mime_message, get_email_address_list, send_email
from updraft.sdk._internal.unsupported import module_getattr

__all__ = ["build_mime_message", "get_email_address_list", "send_email"]

__getattr__ = module_getattr(__name__, globals())
