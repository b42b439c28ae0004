"""Small wheels built on the spot, so the installer's tests need no index: a fake provider (an
``apache_airflow_provider`` entry point and ``get_provider_info``) and plain libraries."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def build_wheel(folder: Path, name: str, version: str, files: dict[str, str], *, requires: tuple[str, ...] = (),
                entry_points: str = "") -> Path:
    """Write ``name-version`` as a wheel holding ``files`` (path -> text) into ``folder``."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    content = dict(files)
    content[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                   + "".join(f"Requires-Dist: {spec}\n" for spec in requires))
    content[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if entry_points:
        content[f"{info}/entry_points.txt"] = entry_points
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in content.items()]
    content[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in content.items():
            archive.writestr(path, text)
    return wheel


def fake_provider(folder: Path, *, version: str = "1.0.0", requires: tuple[str, ...] = ()) -> Path:
    """``apache-airflow-providers-acme``: a hook module, and metadata with one connection type."""
    package = "airflow/providers/acme"
    info = ('def get_provider_info():\n    return {"package-name": "apache-airflow-providers-acme", "name": "Acme",\n'
            '            "connection-types": [{"connection-type": "acme", "hook-class-name": '
            '"airflow.providers.acme.hooks.acme.AcmeHook", "hook-name": "Acme"}]}\n')
    return build_wheel(folder, "apache-airflow-providers-acme", version, {
        f"{package}/__init__.py": f'__version__ = "{version}"\n',
        f"{package}/get_provider_info.py": info,
        f"{package}/hooks/__init__.py": "",
        f"{package}/hooks/acme.py": ("from airflow.sdk import BaseHook\n\n\nclass AcmeHook(BaseHook):\n"
                                    "    conn_type = 'acme'\n"),
    }, requires=requires, entry_points=("[apache_airflow_provider]\n"
                                        "provider_info = airflow.providers.acme.get_provider_info:get_provider_info\n"))


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
