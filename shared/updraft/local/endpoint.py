"""How the CLI finds a running local system: the file ``updraft local`` writes while it runs.

``$UPDRAFT_HOME/local.json`` (default ``~/.updraft``) holds the embedded AWS's address and the environment's
configuration; it is removed on a clean stop, and a file left by a killed process is recognised by its dead pid.
A deployed environment will be reached through its API instead; commands ask for :func:`connect` and do not
care which.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from updraft.config import UpdraftConfig
from updraft.resources import LOCAL_CREDENTIALS
from updraft.services import Services


class NotRunning(RuntimeError):
    """No local system answers; the message says how to start one."""


def updraft_home() -> Path:
    return Path(os.environ.get("UPDRAFT_HOME") or Path.home() / ".updraft")


def endpoint_file(home: Path | None = None) -> Path:
    return (home or updraft_home()) / "local.json"


@dataclass(frozen=True)
class LocalEndpoint:
    endpoint_url: str
    env: dict[str, str]  # UpdraftConfig.to_env() of the running system
    pid: int
    dags_folder: str | None = None
    state_dir: str | None = None
    api_url: str | None = None  # the REST API local mode serves (API Gateway's part)

    def config(self) -> UpdraftConfig:
        return UpdraftConfig.from_env(self.env)

    def write(self, path: Path | None = None) -> Path:
        path = path or endpoint_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)
        return path

    @classmethod
    def read(cls, path: Path | None = None) -> LocalEndpoint:
        path = path or endpoint_file()
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            endpoint = cls(**data)
        except FileNotFoundError:
            raise NotRunning("no local Updraft is running (start one with `updraft local`)") from None
        except (ValueError, TypeError) as exc:
            raise NotRunning(f"{path} is unreadable ({exc}); start local mode again with `updraft local`") from None
        if not process_alive(endpoint.pid):
            raise NotRunning(f"the local Updraft that wrote {path} (pid {endpoint.pid}) is gone; "
                             f"start it again with `updraft local`")
        return endpoint


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts: alive, and not ours to clean up after)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def connect(path: Path | None = None) -> Any:
    """Services (store, clients, log sink) of the running local system."""
    endpoint = LocalEndpoint.read(path)
    for name, value in LOCAL_CREDENTIALS.items():
        os.environ.setdefault(name, value)
    return Services(endpoint.config())
