"""``GET /api/v2/version``: the Airflow API version these routes follow, and Updraft's own.

Clients read ``version`` as the server's Airflow version; Updraft answers the Airflow release whose REST API it
serves (the contract in ``notes/airflow-rest-api-v2.openapi.yaml``), and names itself in ``git_version``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import updraft
from updraft.api.routing import Call, RouteTable

if TYPE_CHECKING:
    from updraft.api.models import VersionInfo

AIRFLOW_API_VERSION = "3.3.2"

routes = RouteTable()


@routes.get("/version")
def get_version(_call: Call) -> VersionInfo:
    return {"version": AIRFLOW_API_VERSION, "git_version": f"updraft-{updraft.__version__}"}
