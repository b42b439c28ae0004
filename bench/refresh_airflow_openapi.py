"""Rebuild ``shared/updraft/api/airflow_openapi.json.gz``: Airflow's own OpenAPI documents, the contract Updraft's
served document is cut from (:mod:`updraft.api.openapi`).

Two of Airflow 3.3.2's generated documents, merged into one: the public REST API
(``api_fastapi/core_api/openapi/v2-rest-api-generated.yaml``) and the simple auth manager's
(``api_fastapi/auth/managers/simple/openapi/v2-simple-auth-manager-generated.yaml``, where ``/auth/token`` lives).
Stored as compact gzipped JSON (28 KB instead of 470 KB of YAML) so the Lambda bundle stays small and the API
Lambda reads it with the standard library, only when ``/openapi.json`` is asked for.

Usage: ``python bench/refresh_airflow_openapi.py CORE_YAML AUTH_YAML``, then ``python bench/gen_api_models.py`` to
regenerate the response models the routes are typed with (``updraft.api.models``).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import yaml

TARGET = Path(__file__).resolve().parents[1] / "shared" / "updraft" / "api" / "airflow_openapi.json.gz"


def merged(core: dict, auth: dict) -> dict:
    """``core`` with ``auth``'s paths and components added; a name both define must be defined the same."""
    out = json.loads(json.dumps(core))
    for path, item in auth["paths"].items():
        if path in out["paths"]:
            raise SystemExit(f"both documents define {path}")
        out["paths"][path] = item
    for section, entries in auth.get("components", {}).items():
        target = out.setdefault("components", {}).setdefault(section, {})
        for name, value in entries.items():
            if name in target and target[name] != value:
                raise SystemExit(f"components/{section}/{name} differs between the documents")
            target[name] = value
    return out


def main(core_yaml: str, auth_yaml: str) -> None:
    document = merged(yaml.safe_load(Path(core_yaml).read_text()), yaml.safe_load(Path(auth_yaml).read_text()))
    data = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    TARGET.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{TARGET}: {len(document['paths'])} paths, {len(data)} bytes of JSON, {TARGET.stat().st_size} gzipped")
    print("now run: python bench/gen_api_models.py (tests/unit/api/test_api_models.py fails until then)")


if __name__ == "__main__":
    main(*sys.argv[1:])
