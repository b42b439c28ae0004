"""A running "local system" for CLI tests: the embedded AWS, provisioned, and the endpoint file the CLI reads.

One server per test module (starting one takes ~0.2 s, but there is no reason to pay it per test); every test
gets its own environment on it (its own table and bucket, via a fresh ResourceNames), its own API (local mode's
API Gateway in front of the API routes, which commands reach through ``updraft.cli.api_client``) and its own
``UPDRAFT_HOME``, so tests never see each other's DAGs, runs or pools. No handler runs: tests put into the
store what the parser, scheduler and workers would, and the CLI must read it back (helpers: cli_helpers.py).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.cli_system.cli_helpers import LocalSystem, api_handler
from updraft.local.api_gateway import LocalApiGateway
from updraft.local.endpoint import LocalEndpoint, endpoint_file
from updraft.local.moto_server import EmbeddedAwsServer
from updraft.local.provision import provision
from updraft.resources import ResourceNames
from updraft.services import Services

_environments = itertools.count(1)


@pytest.fixture(scope="module")
def aws_server() -> Iterator[EmbeddedAwsServer]:
    with EmbeddedAwsServer() as server:
        yield server


@pytest.fixture
def local_system(aws_server: EmbeddedAwsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                 ) -> Iterator[LocalSystem]:
    resources = provision(ResourceNames(f"cli{next(_environments)}"), aws_server.url)
    config = resources.config()
    home = tmp_path / "updraft-home"
    monkeypatch.setenv("UPDRAFT_HOME", str(home))
    monkeypatch.delenv("UPDRAFT_DAGS_FOLDER", raising=False)
    services = Services(config)
    gateway = LocalApiGateway(api_handler(Services(config)))  # its own clients: requests arrive on its threads
    LocalEndpoint(endpoint_url=aws_server.url, env=config.to_env(), pid=os.getpid(),
                  api_url=gateway.url).write(endpoint_file(home))
    try:
        yield LocalSystem(services, resources, home)
    finally:
        gateway.close()


@pytest.fixture
def no_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UPDRAFT_HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv("UPDRAFT_DAGS_FOLDER", raising=False)
    return tmp_path / "empty-home"
