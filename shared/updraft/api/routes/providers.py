"""``GET /api/v2/providers``: the environment's providers, as Airflow's route lists them.

Read from the installer's ``providers.json`` (:mod:`updraft.requirements.provider_info`; no provider code is
imported): Updraft's own standard provider and every installed one, sorted by package name, each with its version,
its description without reStructuredText markup and its documentation URL, as Airflow's ``_provider_mapper``
answers them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from updraft.api.routing import Call, RouteTable
from updraft.requirements import provider_info

if TYPE_CHECKING:
    from updraft.api.models import ProviderCollectionResponse, ProviderResponse

routes = RouteTable()


def _plain(description: str) -> str:
    """Airflow's ``_remove_rst_syntax``."""
    return re.sub("[`_<>]", "", description.strip(" \n."))


@routes.get("/providers")
def get_providers(call: Call) -> ProviderCollectionResponse:
    limit = call.query.integer("limit", 50, ge=0)
    offset = call.query.integer("offset", 0, ge=0)
    call.query.check()
    installed = provider_info.installed()
    listed: list[ProviderResponse] = [
        {"package_name": p["package-name"], "description": _plain(p.get("description", "")),
         "version": p.get("version", ""), "documentation_url": p.get("documentation-url")}
        for p in provider_info.listed(installed)]
    providers = sorted(listed, key=lambda p: p["package_name"])
    return {"providers": providers[offset:offset + limit], "total_entries": len(providers)}
