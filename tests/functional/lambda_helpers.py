"""What the handler tests share: a Lambda context, a do-nothing worker function for moto, a spy on invokes."""

from __future__ import annotations

import io
import json
import zipfile
from types import SimpleNamespace


def lambda_context(function_name: str) -> SimpleNamespace:
    """The attributes Powertools' inject_lambda_context reads."""
    return SimpleNamespace(function_name=function_name, memory_limit_in_mb=1024, aws_request_id="req-1",
                           invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}")


def echo_function_zip() -> bytes:
    """moto cannot run Lambda code without Docker; it only needs a function to exist to accept invokes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return event\n")
    return buffer.getvalue()


class SpyLambda:
    """Forwards to moto (which only echoes) and keeps the payloads the executor sent."""

    def __init__(self, client, function_name: str | None = None) -> None:
        self.client = client
        self.function_name = function_name
        self.payloads: list[dict] = []

    def invoke(self, **kwargs):
        if self.function_name is not None:
            assert kwargs["FunctionName"] == self.function_name and kwargs["InvocationType"] == "Event"
        self.payloads.append(json.loads(kwargs["Payload"]))
        return self.client.invoke(**kwargs)
