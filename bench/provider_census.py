"""Provider import census: which DAG-facing modules of each provider import under Updraft's ``airflow`` shim.

For each provider, every DAG-facing module (below) is imported one by one in a fresh Python process that sees the
providers folder as an environment's DAG packages (``updraft.requirements.dag_packages``), and the first error of
each module that fails is reported. Run it on a folder the providers are installed in::

    python bench/provider_census.py PROVIDERS_DIR [--errors]

It prints the README's table (provider -> modules importing / total, and what the others need); ``--errors`` lists
each failure too. A module fails either for want of something the environment did not install (another provider,
an optional extra or library: it fails the same way under Airflow without it) or for a gap of Updraft's (a name
the shim lacks): the table counts the two apart, and the census test asks for no gap at all.
``tests/unit/providers/test_import_census.py`` runs the same census against a committed expectation.

"DAG-facing" is what DAG files and the modules they import load: hooks, operators, sensors, triggers, transfers,
notifications, decorators, utils, links and the provider's own helpers. Left out are the parts a DAG file never
imports, which Airflow's servers load: executors, auth managers, the CLI, log handlers, secrets backends, bundles,
plugins, asset URI handlers, filesystems for ObjectStoragePath, example DAGs and ``get_provider_info``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# Provider distribution suffix -> its package below airflow/providers.
PROVIDERS = {
    "amazon": "amazon",
    "http": "http",
    "common-sql": "common/sql",
    "sqlite": "sqlite",
    "postgres": "postgres",
    "slack": "slack",
    "smtp": "smtp",
    "ssh": "ssh",
    "sftp": "sftp",
    "snowflake": "snowflake",
    "databricks": "databricks",
    "dbt-cloud": "dbt/cloud",
    "common-compat": "common/compat",
}

# Path components (packages or module names) of the parts DAG files never import.
NOT_DAG_FACING = frozenset({
    "executors", "auth_manager", "cli", "log", "secrets", "bundles", "plugins", "assets", "fs", "example_dags",
    "get_provider_info",
})

ROOT = Path(__file__).resolve().parents[1]

# The child: activate the folder as DAG packages, import each module, report {module: first error or None}.
_CHILD = """
import json, sys, traceback
from updraft.requirements.dag_packages import activate
activate([sys.argv[1]])
import importlib
result = {}
for name in json.loads(sys.argv[2]):
    try:
        importlib.import_module(name)
        result[name] = None
    except BaseException as exc:
        result[name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
print("CENSUS" + json.dumps(result))
"""


def dag_facing_modules(site: Path, provider: str) -> list[str]:
    """The dotted names of ``provider``'s DAG-facing modules installed in ``site`` (sorted)."""
    base = site / "airflow" / "providers" / PROVIDERS[provider]
    names = []
    for path in base.rglob("*.py"):
        parts = list(path.relative_to(site).with_suffix("").parts)
        if NOT_DAG_FACING.intersection(path.relative_to(base).with_suffix("").parts):
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return sorted(names)


def census(site: Path, provider: str, timeout: float = 300) -> dict[str, str | None]:
    """Each DAG-facing module of ``provider`` -> None when it imports, else its error's first line."""
    modules = dag_facing_modules(site, provider)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    env.pop("UPDRAFT_DAG_PACKAGES", None)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(site), json.dumps(modules)], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("CENSUS")]
    if not lines:
        raise RuntimeError(f"the census child of {provider} reported nothing (exit {proc.returncode}): "
                           f"{proc.stderr[-2000:]}")
    return json.loads(lines[-1][len("CENSUS"):])


def needs(error: str) -> str | None:
    """What a failed module needs that was not installed (``"provider microsoft-azure"``, ``"optional library
    bson"``, ...), or None when the failure is a gap of Updraft's."""
    provider = re.search(r"add apache-airflow-providers-([\w.-]+) to the environment's requirements", error)
    if provider:
        return f"provider {provider.group(1)}"
    if "Updraft has no Kubernetes cluster" in error:
        return "provider cncf-kubernetes (refused: Fargate instead)"
    if error.startswith("AirflowOptionalProviderFeatureException"):
        return "an optional extra"
    library = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", error)
    if library and not library.group(1).startswith("airflow"):
        return f"optional library {library.group(1).split('.')[0]}"
    return None


def table(results: dict[str, dict[str, str | None]]) -> str:
    """The README's markdown table: provider -> importing / total (percent), what the others need, and gaps."""
    rows = ["| provider | DAG-facing modules importing | the others need (not installed) | gaps of Updraft |",
            "|---|---|---|---|"]
    for provider, result in results.items():
        ok = sum(error is None for error in result.values())
        wants = sorted({needs(error) or "" for error in result.values() if error is not None} - {""})
        gaps = sum(error is not None and needs(error) is None for error in result.values())
        rows.append(f"| {provider} | {ok} / {len(result)} ({100 * ok / max(len(result), 1):.0f} %) | "
                    f"{', '.join(wants) or '-'} | {gaps} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the folder the provider wheels are installed in")
    parser.add_argument("--errors", action="store_true", help="list each module that fails, with its error")
    parser.add_argument("--providers", default=",".join(PROVIDERS), help="comma-separated subset")
    args = parser.parse_args()
    results = {provider: census(args.site, provider) for provider in args.providers.split(",")}
    print(table(results))
    if args.errors:
        for provider, result in results.items():
            for module, error in result.items():
                if error is not None:
                    print(f"{provider}: {module}: {error}")


if __name__ == "__main__":
    main()
