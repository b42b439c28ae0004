"""How a request to an environment's API proves who sends it (a :data:`Signer`, which ``updraft.cli.api_client`` calls).

Two ways in, as the deployed API offers them: SigV4 with the user's own AWS credentials (API Gateway's IAM
authorization, service ``execute-api``), or the bearer token ``updraft login`` obtained from ``/auth/token``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from updraft.cli.environments import Environment

# Adds credentials to a request about to be sent (a bearer token, or a SigV4 signature over its method, URL,
# headers and body); ``None``: the environment needs none (local mode's all-admins default).
Signer = Callable[[str, str, dict[str, str], bytes], dict[str, str]]

_EXECUTE_API_HOST = re.compile(r"^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com", re.IGNORECASE)


def bearer(token: str) -> Signer:
    def sign(method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        return {**headers, "Authorization": f"Bearer {token}"}

    return sign


def region_of(url: str, given: str | None) -> str | None:
    """The region to sign for: the environment's, else the one in an ``execute-api`` host name."""
    from urllib.parse import urlsplit

    if given:
        return given
    found = _EXECUTE_API_HOST.match(urlsplit(url).hostname or "")
    return found.group(1) if found else None


def sigv4(region: str | None) -> Signer:
    """Signs with the credentials boto3 finds (profile, environment, SSO, instance role), fresh per request so
    a refreshed session keeps working; one clear error when there are none."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    session = boto3.Session()
    signing_region = region or session.region_name
    if not signing_region:
        raise click.ClickException("the environment names no region to sign its requests for; "
                                   "add it again with --region, or set AWS_REGION")

    def sign(method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        credentials = session.get_credentials()
        if credentials is None:
            raise click.ClickException("no AWS credentials found to sign the request with (SigV4): configure "
                                       "them (aws configure, AWS_PROFILE...) or use `updraft login`")
        request = AWSRequest(method=method, url=url, data=body, headers=headers)
        SigV4Auth(credentials.get_frozen_credentials(), "execute-api", signing_region).add_auth(request)
        return dict(request.headers.items())

    return sign


def signer_for(name: str, env: Environment) -> Signer | None:
    """A stored token wins (the user logged in on purpose); otherwise the environment's auth mode."""
    if env.token:
        return bearer(env.token)
    if env.auth == "iam":
        return sigv4(region_of(env.url, env.region))
    if env.auth == "token":
        raise click.ClickException(f"environment {name!r} takes a token: run `updraft login --env {name} -u USER`")
    return None
