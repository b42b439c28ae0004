"""``airflow.utils.email``: ``send_email`` through the environment's Amazon SES sender (not SMTP).

The SMTP plumbing of Airflow's module (``send_email_smtp``, ``build_mime_message``, ``send_mime_email``) raises an
ImportError naming it: Updraft has no SMTP backend.
"""

from updraft.notifications.email import get_email_address_list, send_email
from updraft.sdk._internal.unsupported import module_getattr

__all__ = ["get_email_address_list", "send_email"]

__getattr__ = module_getattr(__name__, globals())
