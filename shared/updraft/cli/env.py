"""``updraft env add|list|remove|use``: the environments ``--env NAME`` can operate.

``add --stack`` reads what the CLI needs from the deployed stack's CloudFormation outputs (``infra/stack.py``
declares them), so nobody copies an API URL by hand; ``add --url`` is for an API reached otherwise.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import click

from updraft.cli.environments import AUTH_MODES, LOCAL, Environment, Environments
from updraft.cli.options import BadValue, output_option
from updraft.cli.output import render

# The outputs infra/stack.py declares (their keys), and the one CDK's LambdaRestApi adds by itself, which older
# stacks have instead of ApiUrl.
API_URL, BUCKET, REGION, DAGS_PREFIX = "ApiUrl", "BucketName", "Region", "DagsPrefix"
USERS_API_URL = "UsersApiUrl"  # the same routes behind the Cognito authorizer: where a token is accepted
CDK_API_OUTPUT = "RestApiEndpoint"


@click.group("env")
def env() -> None:
    """Environments to operate with `updraft --env NAME ...` (kept in $UPDRAFT_HOME/environments.json)."""


def stack_outputs(stack: str, region: str | None) -> dict[str, str]:
    """The stack's outputs by key, with the user's AWS credentials; one line when it cannot be read."""
    import boto3
    import botocore.exceptions

    try:
        client = boto3.client("cloudformation", region_name=region)
        stacks = client.describe_stacks(StackName=stack)["Stacks"]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as err:
        raise click.ClickException(f"could not read stack {stack!r}: {err}") from None
    return {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}


def from_stack(stack: str, region: str | None, auth: str) -> Environment:
    outputs = stack_outputs(stack, region)
    url = (outputs.get(USERS_API_URL) if auth == "token" else None) or outputs.get(API_URL) or next(
        (v for k, v in outputs.items() if CDK_API_OUTPUT in k), None)
    if not url:
        raise click.ClickException(f"stack {stack!r} has no {API_URL} output: is it an Updraft stack?")
    return Environment(url=url.rstrip("/"), auth=auth, bucket=outputs.get(BUCKET),
                       region=outputs.get(REGION) or region, dags_prefix=outputs.get(DAGS_PREFIX) or "dags/",
                       stack=stack)


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadValue(f"--url {url!r} is not an http(s) URL")
    return url.rstrip("/")


@env.command("add")
@click.argument("name")
@click.option("--stack", default=None, help="The deployed CloudFormation stack (e.g. Updraft-dev) to read.")
@click.option("--url", default=None, help="The API's base URL instead (without /api/v2).")
@click.option("--bucket", default=None, help="With --url: the bucket `dags upload` writes to.")
@click.option("--region", default=None, help="The stack's region, also the one requests are signed for "
              "[default: your AWS configuration's].")
@click.option("--auth", type=click.Choice(AUTH_MODES), default="iam", show_default=True,
              help="iam: sign with your AWS credentials (SigV4); token: `updraft login` first; none.")
@click.option("--use", "make_default", is_flag=True, help="Also make it the default environment.")
def add(name: str, stack: str | None, url: str | None, bucket: str | None, region: str | None, auth: str,
        make_default: bool) -> None:
    """Add (or replace) environment NAME, from --stack or --url."""
    if name == LOCAL:
        raise BadValue(f"{LOCAL!r} is local mode's name; choose another")
    if (stack is None) == (url is None):
        raise BadValue("give exactly one of --stack and --url")
    if stack is not None:
        found = from_stack(stack, region, auth)
        if bucket:
            found.bucket = bucket
    else:
        found = Environment(url=_check_url(url or ""), auth=auth, bucket=bucket, region=region)
    envs = Environments.load()
    before = envs.environments.get(name)
    if before is not None and before.url == found.url:
        found.token = before.token  # re-reading a stack does not log the user out
    envs.environments[name] = found
    if make_default:
        envs.current = name
    envs.save()
    click.echo(f"Environment {name}: {found.url} (bucket {found.bucket or 'none'}, auth {found.auth})")


def _row(name: str, found: Environment, current: str | None) -> dict[str, Any]:
    return {"name": name, "default": name == current, "url": found.url, "auth": found.auth,
            "logged_in": bool(found.token), "bucket": found.bucket, "region": found.region, "stack": found.stack}


@env.command("list")
@output_option
def list_envs(output: str) -> None:
    """List the environments (tokens are never shown)."""
    envs = Environments.load()
    click.echo(render([_row(name, found, envs.current) for name, found in sorted(envs.environments.items())],
                      output))


@env.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Forget environment NAME (and its token); nothing in the environment changes."""
    envs = Environments.load()
    envs.get(name)
    del envs.environments[name]
    if envs.current == name:
        envs.current = None
    envs.save()
    click.echo(f"Environment {name} removed")


@env.command("use")
@click.argument("name")
def use(name: str) -> None:
    """Make NAME the default environment (`local`: back to the running local mode)."""
    envs = Environments.load()
    if name != LOCAL:
        envs.get(name)
    envs.current = None if name == LOCAL else name
    envs.save()
    click.echo(f"Default environment: {name}")
