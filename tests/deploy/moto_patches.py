"""The few places where moto 5.2.5's CloudFormation differs from AWS's for this stack, mended for the deploy tier.

Each mend says what a real deploy relies on; none changes what the template asks for:

* ``AWS::KMS::Key`` with ``Tags``: CloudFormation tags are ``Key``/``Value``; moto hands them to KMS's tagger,
  which reads ``TagKey``/``TagValue``, and answers 500 (every CDK stack tags its key with the stack's tags).
* custom resources: moto sends their ``ResponseURL`` to ``host.docker.internal`` (where a Docker-run function
  would reach it); here functions run on this host, so the URL names the embedded AWS's own address.
* custom resources: AWS passes every ``ResourceProperties`` scalar as a string (``true`` -> ``"true"``); moto
  passes the template's JSON types. CDK's handlers are written for strings (:func:`as_cloudformation_sends`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def patched(host: str, port: int) -> Iterator[None]:
    from moto import settings
    from moto.kms.models import Key

    original_create = Key.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_key(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
                   **kwargs: Any) -> Any:
        properties = cloudformation_json["Properties"]
        tags = [{"TagKey": t["Key"], "TagValue": t["Value"]} for t in properties.get("Tags", [])]
        fixed = {**cloudformation_json, "Properties": {**properties, "Tags": tags}}
        return original_create(cls, resource_name, fixed, account_id, region_name, **kwargs)

    saved = (Key.create_from_cloudformation_json, settings.moto_server_host, settings.moto_server_port)
    Key.create_from_cloudformation_json = classmethod(create_key)  # type: ignore[assignment,method-assign]
    settings.moto_server_host = lambda: f"http://{host}"  # type: ignore[assignment]
    settings.moto_server_port = lambda: str(port)  # type: ignore[assignment]
    try:
        yield
    finally:
        (Key.create_from_cloudformation_json, settings.moto_server_host,  # type: ignore[method-assign]
         settings.moto_server_port) = saved  # type: ignore[assignment]


def as_cloudformation_sends(event: Any) -> Any:
    """A custom-resource request with its properties' scalars as strings, as CloudFormation sends them."""
    if not isinstance(event, dict) or "ResourceProperties" not in event:
        return event

    def strings(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strings(v) for v in value]
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else str(value)

    return {**event, "ResourceProperties": strings(event["ResourceProperties"])}
