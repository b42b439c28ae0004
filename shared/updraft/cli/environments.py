"""The environments the CLI knows: ``$UPDRAFT_HOME/environments.json``, written by ``updraft env`` and ``login``.

An environment is where its REST API answers (``url``), the bucket ``dags upload`` writes to, the region its
requests are signed for, and how the CLI authenticates: ``iam`` (SigV4 from the user's AWS credentials),
``token`` (a bearer token from ``updraft login``, kept here) or ``none``. The file may hold tokens, so it is
written with mode 0600, as ``~/.aws/credentials`` is.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click

from updraft.local.endpoint import updraft_home

AUTH_MODES = ("iam", "token", "none")
LOCAL = "local"  # the reserved name of local mode (``updraft --env local``, ``updraft env use local``)


class UnknownEnvironment(click.ClickException):
    """A name ``--env``/``UPDRAFT_ENV`` gave that ``environments.json`` does not hold."""


@dataclass
class Environment:
    url: str  # the API's base URL, without /api/v2 (a stage path included)
    auth: str = "iam"
    bucket: str | None = None
    region: str | None = None
    dags_prefix: str = "dags/"
    stack: str | None = None  # the CloudFormation stack it was read from, if any
    token: str | None = None  # from `updraft login`; sent as a bearer token instead of signing

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Environment:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class Environments:
    """The file's content: every environment by name, and the one ``env use`` made the default."""

    environments: dict[str, Environment] = field(default_factory=dict)
    current: str | None = None
    local_token: str | None = None  # `updraft login` against local mode (its users mode)

    @staticmethod
    def path() -> Path:
        return updraft_home() / "environments.json"

    @classmethod
    def load(cls) -> Environments:
        path = cls.path()
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return cls()
        except ValueError as err:
            raise click.ClickException(f"{path} is unreadable ({err}); fix or remove it") from None
        envs = {name: Environment.from_dict(value) for name, value in (data.get("environments") or {}).items()}
        return cls(envs, data.get("current"), data.get("local_token"))

    def save(self) -> None:
        """Atomically, owner-only from the first byte (tokens must never be readable by others)."""
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"current": self.current, "local_token": self.local_token,
                       "environments": {name: asdict(env) for name, env in sorted(self.environments.items())}},
                      out, indent=2)
        os.chmod(tmp, 0o600)  # an existing tmp file keeps its mode through O_CREAT
        tmp.replace(path)

    def get(self, name: str) -> Environment:
        try:
            return self.environments[name]
        except KeyError:
            raise UnknownEnvironment(f"unknown environment {name!r}; {self.known()}") from None

    def known(self) -> str:
        """One clause naming what there is to choose from."""
        if not self.environments:
            return "add one with `updraft env add NAME --stack STACK` or `--url URL`"
        return f"known environments: {', '.join(sorted(self.environments))} (and {LOCAL})"


def chosen_name(ctx: click.Context) -> str | None:
    """``--env``, else ``UPDRAFT_ENV`` (click reads it for ``--env``), else the default of ``env use``; None:
    local mode."""
    name: str | None = ctx.find_root().params.get("env")
    if name is None:
        name = Environments.load().current
    return None if name in (None, LOCAL) else name
