"""Install an environment's requirements once, into a cache keyed by what decides the result.

``install(file)`` answers a folder of packages that DAG code gets on its path (``dag_packages.activate``), never
the user's own environment and never Updraft's: pip installs with ``--target`` into a fresh folder, which is then
renamed into place (so two processes installing the same file at once both end with one complete folder). The key
is the file's content (with the files it includes and the local wheels it names), Updraft's own pinned packages,
the Python version and the platform: the same file is installed once; a changed file, or another Updraft, is a new
folder at the next start.

Each folder holds ``site/`` (the packages), ``lock.txt`` (``name==version`` of everything installed, the set a
deployed bundle must match), ``providers.json`` (each installed provider's ``get_provider_info()`` plus its
version: connection types and config defaults, read without importing the provider) and ``report.json`` (every
line not installed, with its reason).

A conflict with Updraft's own packages fails the install with the packages named (``RequirementsConflict``), at
install time rather than as an ImportError in a task. Updraft's own packages are, by default, the versions this
interpreter runs with; a deployment gives its own pinned set instead (``runtime``: the versions its bundle holds).

By default the packages are for this interpreter and machine; ``platform`` installs them for another one (the
Lambda runtime's Python and manylinux tags: binary wheels only, as pip requires for a foreign platform).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from updraft.requirements import stubs
from updraft.requirements.constraints import constraint_lines, runtime_versions
from updraft.requirements.lines import Line, RequirementsError, local_paths, pip_lines, read

FORMAT = "5"  # bump when the folder's layout or the way it is built changes


class RequirementsConflict(RequirementsError):
    """The requirements cannot be installed beside Updraft's own packages; the message names both sides."""


@dataclasses.dataclass(frozen=True)
class Platform:
    """A Python and platform other than this interpreter's that the packages are installed for."""

    python_version: str  # "3.11"
    platforms: tuple[str, ...]  # pip's platform tags, e.g. ("manylinux2014_x86_64",)
    implementation: str = "cp"

    def pip_args(self) -> tuple[str, ...]:
        tags = [arg for tag in self.platforms for arg in ("--platform", tag)]
        return (*tags, "--python-version", self.python_version, "--implementation", self.implementation,
                "--only-binary=:all:")


@dataclasses.dataclass(frozen=True)
class Installed:
    """An installed requirements folder (see the module notes)."""

    root: Path
    lines: tuple[Line, ...]

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def lock(self) -> str:
        return (self.root / "lock.txt").read_text()

    @property
    def providers_file(self) -> Path:
        return self.root / "providers.json"

    @property
    def providers(self) -> list[dict[str, object]]:
        loaded: list[dict[str, object]] = json.loads(self.providers_file.read_text())
        return loaded

    @property
    def not_installed(self) -> list[Line]:
        """The lines refused or left to Updraft's own providers, with their reasons."""
        return [line for line in self.lines if line.action != "install"]


def default_cache() -> Path:
    """``$UPDRAFT_REQUIREMENTS_CACHE``, else ``$XDG_CACHE_HOME/updraft/requirements`` (``~/.cache``)."""
    explicit = os.environ.get("UPDRAFT_REQUIREMENTS_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "updraft" / "requirements"


def install(requirements: Path, cache: Path | None = None, *, pip_args: tuple[str, ...] = (),
            runtime: Mapping[str, str] | None = None, platform: Platform | None = None) -> Installed:
    """The installed folder for ``requirements`` (installed now unless the cache has it); raises
    ``RequirementsError`` (or ``RequirementsConflict``) naming what failed.

    ``runtime``: Updraft's own packages ``{name: version}`` the requirements must agree with (default: the ones
    this interpreter runs with); ``platform``: install for that Python and platform instead of this one's."""
    lines = tuple(read(requirements))
    pins = constraint_lines(runtime_versions() if runtime is None else dict(runtime)) + stubs.constraints()
    if platform is not None:
        pip_args = (*pip_args, *platform.pip_args())
    wanted, constraints = pip_lines(list(lines))
    wanted = [*wanted, *stubs.PROVIDED] if wanted else wanted
    key = _key(wanted, constraints, pins, lines, pip_args)
    cache = cache or default_cache()
    done = cache / key
    if (done / "lock.txt").exists():
        return Installed(done, lines)
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=cache))
    try:
        _build(work, wanted, constraints + pins, stubs.write_stubs(cache / ".stubs"), pip_args)
        _write_report(work, lines)
        try:
            work.rename(done)
        except OSError:
            if not (done / "lock.txt").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Installed(done, lines)


def _key(wanted: list[str], constraints: list[str], pins: list[str], lines: tuple[Line, ...],
         pip_args: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for part in (FORMAT, sys.version, platform.machine(), *pip_args, "\0", *wanted, "\0", *constraints, "\0",
                 *pins):
        digest.update(part.encode() + b"\n")
    for path in local_paths(list(lines)):
        stat = path.stat() if path.exists() else None
        digest.update(f"{path}:{stat.st_size if stat else -1}:{stat.st_mtime_ns if stat else -1}\n".encode())
    return digest.hexdigest()[:32]


def _build(work: Path, wanted: list[str], constraints: list[str], stub_folder: Path,
           pip_args: tuple[str, ...]) -> None:
    (work / "requirements.txt").write_text("\n".join(wanted) + "\n")
    (work / "constraints.txt").write_text("\n".join(constraints) + "\n")
    site = work / "site"
    site.mkdir()
    if wanted:
        command = [sys.executable, "-m", "pip", "install", "--target", str(site), "--disable-pip-version-check",
                   "--no-warn-script-location", "--no-input", "--find-links", str(stub_folder),
                   "-c", str(work / "constraints.txt"), "-r", str(work / "requirements.txt"), *pip_args]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise _failure(done.stdout + done.stderr)
    (work / "lock.txt").write_text(_lock(site))
    (work / "providers.json").write_text(json.dumps(_provider_infos(site), indent=1))


def _failure(output: str) -> RequirementsError:
    """pip's failure as one error: a conflict says which packages want what (one line per package, however many
    of its releases pip tried), anything else pip's last lines."""
    if "ResolutionImpossible" in output or "conflicting dependencies" in output:
        causes: dict[str, str] = {}
        for cause in re.findall(r"^\s+(The user requested .*|\S+ \S+ depends on .*)$", output, re.MULTILINE):
            if cause.startswith("The user requested"):
                pinned = cause.removeprefix("The user requested ").replace("(constraint)", "").strip()
                causes.setdefault(pinned, f"Updraft runs with {pinned}")
            else:
                causes.setdefault(cause.split(" ", 1)[0], cause)  # the newest release pip tried says it
        return RequirementsConflict(
            "the requirements conflict with the packages Updraft runs with (DAG code shares them): "
            + ("; ".join(causes.values()) or output.strip()[-800:]))
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return RequirementsError("pip could not install the requirements: " + " | ".join(lines[-6:]))


def _lock(site: Path) -> str:
    from importlib import metadata

    pins = sorted({f"{dist.metadata['Name']}=={dist.version}" for dist in metadata.distributions(path=[str(site)])},
                  key=str.lower)
    return "".join(f"{pin}\n" for pin in pins)


def _provider_infos(site: Path) -> list[dict[str, object]]:
    """Each installed provider's ``get_provider_info()`` (its entry point), run in a child process that sees only
    the installed folder's provider-info modules (a provider's metadata is a function returning a dict literal),
    with its ``version`` and its ``documentation-url`` (the distribution's "Documentation" project URL), as
    Airflow's providers manager adds them."""
    script = r"""
import importlib.metadata as metadata, importlib.util, json, os, sys
site = sys.argv[1]
out = []
for dist in metadata.distributions(path=[site]):
    for point in dist.entry_points:
        if point.group != "apache_airflow_provider":
            continue
        module, _, attr = point.value.partition(":")
        path = os.path.join(site, *module.split(".")) + ".py"
        spec = importlib.util.spec_from_file_location("provider_info", path)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        info = getattr(loaded, attr or "get_provider_info")()
        info["version"] = dist.version
        urls = [u.split(",", 1) for u in dist.metadata.get_all("Project-URL") or [] if "," in u]
        info["documentation-url"] = next((url.strip() for name, url in urls if name.strip().lower()
                                          == "documentation"), None)
        out.append(info)
print(json.dumps(sorted(out, key=lambda info: info.get("package-name", ""))))
"""
    done = subprocess.run([sys.executable, "-I", "-c", script, str(site)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RequirementsError("reading the installed providers' metadata failed: " + done.stderr.strip()[-600:])
    infos: list[dict[str, object]] = json.loads(done.stdout)
    return infos


def _write_report(work: Path, lines: tuple[Line, ...]) -> None:
    report = [dataclasses.asdict(line) for line in lines if line.action != "install"]
    (work / "report.json").write_text(json.dumps(report, indent=1))
