"""Where DAG code finds an environment's packages, and how Airflow's ``airflow`` and ``airflow.providers``
namespaces span them.

Provider wheels install modules under ``airflow/providers/<name>/`` and ship no ``airflow/__init__.py``: Airflow's
own ``airflow`` package extends its ``__path__`` over every ``airflow`` folder on ``sys.path``, and so does
Updraft's. ``airflow.providers`` searches three kinds of folder, in this order:

1. Updraft's own providers (``updraft/airflow_providers/own``: ``standard``, ``common.messaging``), which Updraft
   runs natively and which always win; the installer never installs their wheels (``updraft.requirements``);
2. every ``airflow/providers`` folder on ``sys.path``: the environment's installed provider wheels;
3. Updraft's built-ins (``updraft/airflow_providers/builtin``: the S3 key wait, ``common.compat.sdk``), found only
   when the real provider is not installed.

Updraft's ``airflow`` package itself holds only ``providers/__init__.py`` under ``providers``, so no file of Updraft
is a file of a provider wheel. The environment's package folders come last on ``sys.path``: Updraft's own packages
win, and the installer pins every package both use to Updraft's version, so the two never differ.

Stdlib only and cheap: ``import airflow`` imports this.
"""

from __future__ import annotations

import os
import pkgutil
import sys
from collections.abc import Mapping, Sequence

# The environment's package folders (os.pathsep-separated) for Updraft's processes that start DAG code.
VAR = "UPDRAFT_DAG_PACKAGES"

_UPDRAFT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_PROVIDERS = os.path.join(_UPDRAFT, "airflow_providers", "own")
BUILTIN_PROVIDERS = os.path.join(_UPDRAFT, "airflow_providers", "builtin")


def from_environment(env: Mapping[str, str] | None = None) -> list[str]:
    """The package folders ``VAR`` names, in order (none when unset)."""
    value = (os.environ if env is None else env).get(VAR, "")
    return [part for part in value.split(os.pathsep) if part]


def providers_path(path: Sequence[str]) -> list[str]:
    """``airflow.providers.__path__``: Updraft's own providers, the installed ones, then Updraft's built-ins."""
    installed = [p for p in pkgutil.extend_path(list(path), "airflow.providers") if p not in (OWN_PROVIDERS,
                                                                                           BUILTIN_PROVIDERS)]
    return [OWN_PROVIDERS, *installed, BUILTIN_PROVIDERS]


def activate(dirs: Sequence[str]) -> None:
    """Make ``dirs`` importable by DAG code in this process (after Updraft's own packages), and let ``airflow`` and
    ``airflow.providers`` see the providers in them even when they were imported before. Idempotent."""
    for folder in dirs:
        if folder not in sys.path:
            sys.path.append(folder)
    airflow = sys.modules.get("airflow")
    if airflow is not None:
        airflow.__path__ = pkgutil.extend_path(list(airflow.__path__), "airflow")
    providers = sys.modules.get("airflow.providers")
    if providers is not None:
        providers.__path__ = providers_path(providers.__path__)
    import importlib

    importlib.invalidate_caches()


def pythonpath(root: str, env: Mapping[str, str]) -> str:
    """The ``PYTHONPATH`` of a server that forks DAG code: Updraft's ``root`` first, the caller's ``PYTHONPATH``,
    then the environment's package folders (``VAR`` in ``env``)."""
    parts = [root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p], *from_environment(env)]
    return os.pathsep.join(dict.fromkeys(parts))
