"""The environment DAG-file code sees at parse time: the caller's, without Updraft's settings or AWS secrets.

The parser runs with the parser Lambda's credentials (``AWS_ACCESS_KEY_ID``, ``AWS_SESSION_TOKEN``, or the
container credentials' URI and token) and Updraft's settings (``UPDRAFT_TABLE``, endpoints). Code in a DAG file
runs at every parse; with those it could write the table directly (pause another team's DAG, empty a pool).
The fork server is started with this environment, so even ``/proc/self/environ`` of a child holds none of it,
and each child scrubs ``os.environ`` again (a parser forking from its own process). The region stays: it is not a
secret and SDK clients in user code need it. ``AIRFLOW_VAR_*``/``AIRFLOW_CONN_*`` stay: they are the user's own.

What user code gets instead: the DAG-code role's credentials (``use_dag_code_credentials``, registered by the
parser handler), sent with each file's job to the fork server and set in the child's environment before the file
runs; without a registered role, no AWS credentials at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping

SCRUBBED_PREFIXES = ("AWS_", "UPDRAFT_")
KEPT = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION"})


def is_scrubbed(name: str) -> bool:
    return name.upper().startswith(SCRUBBED_PREFIXES) and name.upper() not in KEPT


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` without what user code must not see."""
    return {name: value for name, value in env.items() if not is_scrubbed(name)}


def scrub_environment(env: MutableMapping[str, str]) -> None:
    """Remove, in place, what user code must not see (``os.environ`` also unsets it for the process)."""
    for name in [name for name in env if is_scrubbed(name)]:
        del env[name]


_dag_code_credentials: list[Callable[[], dict[str, str]]] = []


def use_dag_code_credentials(provider: Callable[[], dict[str, str]] | None) -> None:
    """Give parse-time user code the credentials ``provider`` returns (the DAG-code role's, refreshed by it)."""
    _dag_code_credentials[:] = [provider] if provider is not None else []


def dag_code_environment() -> dict[str, str]:
    """What a parse child adds to its scrubbed environment: the DAG-code role's credentials, or nothing."""
    return _dag_code_credentials[0]() if _dag_code_credentials else {}
