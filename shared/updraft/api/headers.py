"""The security headers on every answer of the API function: its JSON, the web UI's pages and their assets.

The UI's pages load only their own files (``shell.html`` has no inline script or style, the JavaScript sets
styles through the CSSOM, which a policy does not restrict, and never builds HTML from text), so the pages' policy
allows nothing but the UI's own origin: no inline script, no ``eval``, no plugin, no ``<base>``, no framing by
any page (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for browsers that predate it). Any other
answer (JSON, an asset, an error) is never a page to run: its policy allows nothing at all. Every answer is
``nosniff`` (a JSON or text body is never taken for a script or HTML) and sends no ``Referer`` onwards (UI
URLs carry DAG and run ids).
"""

from __future__ import annotations

PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
               "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
DATA_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
COMMON = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def security_headers(content_type: str | None) -> dict[str, str]:
    """The headers an answer of this content type carries."""
    page = (content_type or "").split(";")[0].strip().lower() == "text/html"
    return {"Content-Security-Policy": PAGE_POLICY if page else DATA_POLICY, **COMMON}
