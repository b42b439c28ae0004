"""Metadata-only wheels that stand for what Updraft provides itself, so pip never installs it.

Every provider wheel requires ``apache-airflow>=2.11``; installed for real, that would bring Airflow's scheduler,
database layer and web server next to Updraft (hundreds of packages, and an ``airflow`` package that overwrites the
shim). The installer gives pip these stubs (``--find-links``) and pins them (a constraint on the exact
``+updraft`` version, which only a stub carries): the requirement is met, nothing of Airflow is installed, and
``importlib.metadata.version("apache-airflow")`` answers the release Updraft follows. The standard and
common-messaging providers are stubbed too: Updraft runs them natively (``dag_packages``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

# The distributions Updraft stands for, at the versions it follows (Airflow 3.3.2 and what it ships with).
STUBS = {
    "apache-airflow": "3.3.2+updraft",
    "apache-airflow-core": "3.3.2+updraft",
    "apache-airflow-task-sdk": "1.3.2+updraft",
    "apache-airflow-providers-standard": "1.21.0+updraft",
    "apache-airflow-providers-common-messaging": "2.1.2+updraft",
}


# What Airflow's core brings (its own Requires-Dist, these versions) that provider modules import without declaring
# it: the stub of ``apache-airflow`` requires them, so they come exactly when a provider does.
CORE_BRINGS = ("attrs!=25.2.0,>=22.1.0", "deprecated>=1.2.13", "lazy-object-proxy>=1.2.0", "packaging>=25.0",
               "python-slugify>=5.0", "sqlalchemy>=2.0.50", "structlog>=26.1.0", "tabulate>=0.9.0",
               "tenacity>=8.3.0")


# The providers Updraft runs natively, installed (as stubs) into every requirements folder: a provider module that
# checks for one of them (the amazon provider's SQS queue for MessageQueueTrigger wants common-messaging) finds it.
PROVIDED = ("apache-airflow-providers-standard", "apache-airflow-providers-common-messaging")


def constraints() -> list[str]:
    """The constraint lines that pin each stub (nothing but the stub has a ``+updraft`` version)."""
    return [f"{name}=={version}" for name, version in STUBS.items()]


def write_stubs(folder: Path) -> Path:
    """Write one stub wheel per distribution into ``folder`` (each write atomic, so concurrent installs agree)
    and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, version in STUBS.items():
        dist = name.replace("-", "_")
        wheel = folder / f"{dist}-{version}-py3-none-any.whl"
        _write_wheel(wheel, name, dist, version, CORE_BRINGS if name == "apache-airflow" else ())
    return folder


def _write_wheel(path: Path, name: str, dist: str, version: str, requires: tuple[str, ...]) -> None:
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                             "Summary: Provided by Updraft (a stub: nothing of it is installed)\n"
                             + "".join(f"Requires-Dist: {spec}\n" for spec in requires)),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: updraft\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{file},sha256={_digest(text)},{len(text.encode())}" for file, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    with zipfile.ZipFile(partial, "w") as archive:
        for file, text in files.items():
            archive.writestr(file, text)
    partial.replace(path)


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
