"""How large an answer the API gives: always less than API Gateway and Lambda pass.

A Lambda behind API Gateway answers at most 6 MB (6,291,456 bytes) of response payload, and that payload holds the
body as a JSON string (each ``"``, ``\\`` and newline of the body escaped again) beside the status and headers;
API Gateway's own limit (10 MB) is above it. An answer over it never reaches the caller (the Lambda call fails, a
502 without a word). So the answers that grow with what tasks wrote (a try's log, an XCom's value) stop below
:data:`MAX_ANSWER_BYTES` as :func:`carried_size` measures them: a log in pages (Airflow's continuation token), an
XCom's value refused with a 413 that says where to fetch it; and ``app`` refuses any other answer over it.
"""

from __future__ import annotations

import json
from typing import Any

MAX_ANSWER_BYTES = 5 * 1024 * 1024  # under Lambda's 6 MB with room for the status, the headers and the envelope


def carried_size(value: Any) -> int:
    """The bytes ``value`` takes in the Lambda's response: its JSON text (as the API writes it) as a JSON string."""
    return text_carried_size(json.dumps(value))


def text_carried_size(text: str) -> int:
    """The bytes a body ``text`` takes in the Lambda's response, as a JSON string."""
    return len(json.dumps(text))
