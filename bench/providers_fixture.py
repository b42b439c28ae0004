"""Regenerate tests/unit/requirements/providers.json: a ``providers.json`` as the installer writes it, from the
real provider wheels.

Each provider's ``get_provider_info.py`` is a module holding one function that returns a literal dict; it is
loaded from its file (never as part of ``airflow.providers``, so neither Airflow nor Updraft's shim is
imported) and the dict is kept with the keys the connection form reads, plus ``"version"`` from the wheel's
``.dist-info`` folder, as the installer adds it. Updraft's own providers (standard) are left out, as the
installer leaves them out. tests/unit/requirements/test_provider_info.py and the API and UI tests read it.

With ``--airflow-answer DEPS_DIR`` it also writes tests/unit/requirements/airflow_hook_meta.json: what Airflow
3.3.2's own ``HookMetaService.hook_meta_data()`` (its ``GET /ui/connections/hook_meta``) answers for the same
wheels, the API test's expected answer. That runs Airflow's core from the unzipped wheels in a child
``python -S`` (so Updraft's shim is not on the path), with its server-side dependencies pip-installed into
DEPS_DIR (``pip install --target DEPS_DIR sqlalchemy fastapi methodtools lazy-object-proxy opentelemetry-sdk
pygtrie aiosqlite``, with ``--upgrade`` once the folder exists).

Usage: python bench/providers_fixture.py [UNZIPPED_WHEELS_DIR] [--airflow-answer DEPS_DIR]
       (default wheels folder /work/wt/wheels/x)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "unit" / "requirements" / "providers.json"
AIRFLOW_ANSWER = OUT.with_name("airflow_hook_meta.json")
CHILD = """
import json, sys
sys.path[:0] = sys.argv[1:3]
sys.path.append(sys.argv[3])
from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService
print(json.dumps([m.model_dump() for m in HookMetaService.hook_meta_data()], indent=1))
"""
KEYS = ("package-name", "name", "description", "connection-types")
OWN = {"apache-airflow-providers-standard", "apache-airflow-providers-common-messaging"}


def provider_info(path: Path) -> dict:
    spec = importlib.util.spec_from_file_location(f"_provider_info_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_provider_info()  # type: ignore[no-any-return]


def versions(root: Path) -> dict[str, str]:
    """Distribution name (``apache-airflow-providers-http``) -> version, from the ``.dist-info`` folder names."""
    out = {}
    for info in root.glob("*.dist-info"):
        name, version = info.name[: -len(".dist-info")].rsplit("-", 1)
        out[name.replace("_", "-")] = version
    return out


def main(root: Path) -> None:
    known = versions(root)
    providers = []
    for path in sorted(root.glob("airflow/providers/**/get_provider_info.py")):
        info = provider_info(path)
        if info["package-name"] in OWN:
            continue
        kept = {key: info[key] for key in KEYS if key in info}
        kept["version"] = known[info["package-name"]]
        providers.append(kept)
    providers.sort(key=lambda p: p["package-name"])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(providers, indent=1) + "\n", encoding="utf-8")  # keys in the provider's order
    print(f"{OUT}: {len(providers)} providers, "
          f"{sum(len(p.get('connection-types', [])) for p in providers)} connection types")


def airflow_answer(root: Path, deps: Path) -> None:
    """Airflow's own hook_meta answer for the wheels in ``root``, computed in a child without site (no shim)."""
    answer = subprocess.run([sys.executable, "-S", "-c", CHILD, str(root), str(deps), sysconfig.get_paths()["purelib"]],
                            check=True, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    AIRFLOW_ANSWER.write_text(answer.stdout, encoding="utf-8")
    print(f"{AIRFLOW_ANSWER}: {len(json.loads(answer.stdout))} connection types")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wheels", nargs="?", default="/work/wt/wheels/x", type=Path)
    parser.add_argument("--airflow-answer", metavar="DEPS_DIR", type=Path)
    args = parser.parse_args()
    main(args.wheels)
    if args.airflow_answer:
        airflow_answer(args.wheels, args.airflow_answer)
