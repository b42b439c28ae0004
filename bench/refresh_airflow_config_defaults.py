"""Rebuild ``shared/updraft/sdk/airflow_config_defaults.json.gz``: Airflow's core configuration defaults and which
options are sensitive, the base of ``conf`` (:mod:`updraft.sdk.configuration`).

Read from Airflow 3.3.2's ``airflow/config_templates/config.yml`` (in the ``apache-airflow-core`` wheel). Defaults
that expand a path or a key of an Airflow installation (``{AIRFLOW_HOME}``, ``{FERNET_KEY}``, ``{SECRET_KEY}``,
``{JWT_SECRET_KEY}``) are left out: Updraft has no such installation, so reading one without a value set raises
Airflow's "not found in config" error instead of naming a folder that does not exist. ``%%`` (ConfigParser's
escape) is unescaped, as Airflow's parser returns it.

Usage: ``python bench/refresh_airflow_config_defaults.py CONFIG_YML``
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import yaml

TARGET = Path(__file__).resolve().parents[1] / "shared" / "updraft" / "sdk" / "airflow_config_defaults.json.gz"
_INSTALLATION = ("{AIRFLOW_HOME}", "{FERNET_KEY}", "{SECRET_KEY}", "{JWT_SECRET_KEY}")


def extract(description: dict) -> dict:
    """{"defaults": {section: {key: value}}, "sensitive": [[section, key], ...]} from config.yml's description."""
    defaults: dict[str, dict[str, str]] = {}
    sensitive = []
    for section, body in description.items():
        for key, option in (body.get("options") or {}).items():
            if option.get("sensitive"):
                sensitive.append([section, key])
            value = option.get("default")
            if value is None or any(marker in str(value) for marker in _INSTALLATION):
                continue
            value = str(value).replace("%%", "%")
            if option.get("is_template") is not True:
                value = value.replace("{{", "{").replace("}}", "}")
            defaults.setdefault(section, {})[key] = value
    return {"defaults": defaults, "sensitive": sorted(sensitive)}


def main() -> None:
    data = extract(yaml.safe_load(Path(sys.argv[1]).read_text()))
    TARGET.write_bytes(gzip.compress(json.dumps(data, sort_keys=True, separators=(",", ":")).encode(), mtime=0))
    print(f"wrote {TARGET} ({sum(map(len, data['defaults'].values()))} defaults)")


if __name__ == "__main__":
    main()
