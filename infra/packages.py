"""The packages an environment deploys: one lock for the Lambda bundles and the Fargate worker image.

Two parts, resolved for the Lambda runtime (Python 3.11, manylinux, the functions' architecture):

* Updraft's own run-time packages, pinned in ``infra/requirements.lock`` (committed, so every machine and CI
  deploys the same versions; ``python -m infra.packages`` resolves ``config.LAMBDA_REQUIREMENTS`` again and
  rewrites it). Every function's bundle and the worker image hold exactly these.
* the environment's requirements (``EnvironmentSettings.requirements``: the user's pip file, MWAA's
  requirements.txt), installed at synth by ``updraft.requirements.install`` with the lock's versions as
  Updraft's own: the same line judging, Airflow stubs and conflict report as locally. A conflict fails the synth
  naming the packages. They go only where DAG code runs (the parser, worker and trigger-check functions, and the
  worker image), in ``dag_packages/`` beside the code (docs/decisions/0012).

The environment's lock is the union of both (equal versions where they meet, as the install pins them). Nothing
here imports CDK.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.config import LAMBDA_REQUIREMENTS, EnvironmentSettings
from updraft.requirements import stubs
from updraft.requirements.install import Installed, Platform, install
from updraft.requirements.lines import RequirementsError, canonical

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_LOCK = ROOT / "infra" / "requirements.lock"
RUNTIME_PYTHON = "3.11"  # the Lambda runtime's minor version (bundling.RUNTIME)
# Lambda's architectures -> the manylinux tag wheels are picked for (manylinux2014 = glibc 2.17: the Lambda
# Python 3.11 runtime's Amazon Linux 2 has glibc 2.26; newer manylinux_2_x wheels are accepted by pip through it).
PLATFORMS = {"x86_64": "manylinux2014_x86_64", "arm64": "manylinux2014_aarch64"}
DAG_PACKAGES = "dag_packages"  # the folder beside the code, in the DAG-code bundles and the worker image


def lambda_platform(architecture: str) -> Platform:
    return Platform(RUNTIME_PYTHON, (PLATFORMS[architecture],))


def read_lock(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of a lock's ``name==version`` lines (comments and blanks skipped)."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not version:
            raise RequirementsError(f"not a pinned line in a lock: {raw!r}")
        pins[canonical(name)] = version.strip()
    return pins


def format_lock(pins: dict[str, str]) -> str:
    return "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))


@dataclasses.dataclass(frozen=True)
class Packages:
    """Updraft's pinned run-time packages and, when the environment has requirements, their installed folder."""

    runtime: dict[str, str]
    dag: Installed | None

    @property
    def lock(self) -> str:
        """The environment's one lock: everything the DAG-code bundles and the worker image hold."""
        return format_lock(self.pins)

    @property
    def pins(self) -> dict[str, str]:
        pins = dict(self.runtime)
        if self.dag is not None:
            for name, version in read_lock(self.dag.lock).items():
                if pins.setdefault(name, version) != version:  # the install pins them: never expected
                    raise RequirementsError(f"{name}: the requirements installed {version}, Updraft's lock has "
                                            f"{pins[name]}")
        return pins

    @property
    def runtime_lock(self) -> str:
        return format_lock(self.runtime)


def resolve(settings: EnvironmentSettings, *, cache: Path | None = None) -> Packages:
    """The environment's packages (its requirements installed for the Lambda platform now unless cached); a
    ``RequirementsError`` naming the environment, the file and the packages when they cannot be installed."""
    runtime = read_lock(RUNTIME_LOCK.read_text())
    if settings.requirements is None:
        return Packages(runtime, None)
    path = requirements_path(settings)
    try:
        installed = install(path, cache, runtime=runtime, platform=lambda_platform(settings.architecture))
    except RequirementsError as exc:
        raise type(exc)(f"environment {settings.name!r}, requirements {path}: {exc}") from exc
    return Packages(runtime, installed)


def requirements_path(settings: EnvironmentSettings) -> Path:
    """The settings' requirements file, relative to the repository root unless absolute."""
    assert settings.requirements is not None
    path = Path(settings.requirements).expanduser()
    return path if path.is_absolute() else ROOT / path


def runtime_site(architecture: str, *, cache: Path | None = None) -> Installed:
    """``infra/requirements.lock`` installed for the Lambda platform (cached by its content); refused when pip
    installs anything the lock does not name (the lock is then incomplete: regenerate it). The stubs of the
    providers Updraft runs natively (``stubs.PROVIDED``, metadata only) that every install adds are not packages
    of the lock."""
    installed = install(RUNTIME_LOCK, cache, runtime={}, platform=lambda_platform(architecture))
    provided = {canonical(name) for name in stubs.PROVIDED}
    wanted = read_lock(RUNTIME_LOCK.read_text())
    got = {name: version for name, version in read_lock(installed.lock).items() if name not in provided}
    if got != wanted:
        extra = sorted(f"{n}=={v}" for n, v in got.items() if wanted.get(n) != v)
        raise RequirementsError(f"{RUNTIME_LOCK} is incomplete: pip also installed {', '.join(extra)}; regenerate "
                                "it with `python -m infra.packages`")
    return installed


def resolve_runtime_lock(architecture: str = "x86_64") -> str:
    """``LAMBDA_REQUIREMENTS`` resolved now for the Lambda platform (pip's dry-run report; needs the index)."""
    import json

    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--target", str(Path(work) / "t"), "--report", str(report),
                        *lambda_platform(architecture).pip_args(), *LAMBDA_REQUIREMENTS], check=True)
        items = json.loads(report.read_text())["install"]
    pins = {canonical(item["metadata"]["name"]): item["metadata"]["version"] for item in items}
    header = ("# Updraft's run-time packages in every Lambda bundle and the worker image: infra/config.py's\n"
              "# LAMBDA_REQUIREMENTS resolved for the Lambda runtime (Python 3.11, manylinux). Regenerate with\n"
              "# `python -m infra.packages` after changing them; an environment's requirements resolve against it.\n")
    return header + format_lock(pins)


if __name__ == "__main__":
    RUNTIME_LOCK.write_text(resolve_runtime_lock())
    print(f"wrote {RUNTIME_LOCK}")
