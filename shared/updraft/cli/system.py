"""The running local system itself, for the few commands that work on it rather than through an API.

Commands that read or change an environment go through its REST API (:func:`updraft.cli.api_client.api`);
only what the API does not do for local mode comes here: ``dags upload`` writing to the embedded bucket.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from updraft.local.endpoint import NotRunning, connect

if TYPE_CHECKING:
    from updraft.services import Services


def system(ctx: click.Context) -> Services:
    """The running local system's Services, connected once per invocation; a one-line error when none runs."""
    config = ctx.find_root().obj
    services: Services | None = getattr(config, "services", None)
    if services is None:
        try:
            services = config.services = connect()
        except NotRunning as err:
            raise click.ClickException(str(err)) from None
    return services
