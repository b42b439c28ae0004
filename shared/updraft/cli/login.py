"""``updraft login -u USER``: a bearer token from the environment's ``POST /auth/token`` (as airflowctl's login),
kept with the environment in ``environments.json`` (mode 0600) and sent instead of a SigV4 signature."""

from __future__ import annotations

import click

from updraft.cli.api_client import ApiCallFailed, ApiClient, local_api_url
from updraft.cli.environments import LOCAL, Environments, chosen_name


@click.command("login")
@click.option("--env", "env_name", default=None, metavar="NAME",
              help="The environment to log in to [default: the one --env/UPDRAFT_ENV/`env use` chose].")
@click.option("--username", "-u", required=True, help="Your user name.")
@click.option("--password", "-p", envvar="UPDRAFT_PASSWORD", prompt=True, hide_input=True,
              help="Your password [env: UPDRAFT_PASSWORD; prompted for when not given].")
@click.pass_context
def login(ctx: click.Context, env_name: str | None, username: str, password: str) -> None:
    """Log in to an environment with a user name and password; its API then gets the token."""
    name = None if env_name == LOCAL else env_name or chosen_name(ctx)  # None: local mode
    envs = Environments.load()
    url = envs.get(name).url if name is not None else local_api_url()
    try:  # /auth/token sits beside /api/v2, as in Airflow; nothing is signed: the password is the credential
        answer = ApiClient(url).request("POST", "/auth/token", body={"username": username, "password": password})
    except ApiCallFailed as err:
        raise click.ClickException(f"login to {name or LOCAL} failed: {err.message}") from None
    token = (answer or {}).get("access_token")
    if not token:
        raise click.ClickException(f"login to {name or LOCAL}: the answer carried no access_token")
    if name is None:
        envs.local_token = token
    else:
        envs.environments[name].token = token
    envs.save()
    click.echo(f"Logged in to {name or LOCAL} as {username}")
