"""The code the functions and the Fargate worker run, built on this machine at synth (no Docker).

Two bundles, each a folder that is what ``/var/task`` holds (``/app`` in the worker image):

* Updraft's bundle (scheduler, API, asset events): the handlers, ``updraft``, ``airflow`` and Updraft's pinned
  run-time packages (``infra/requirements.lock``) at its root; with requirements, the installed providers'
  metadata (``providers.json``, for the API's connection types) but none of their code;
* the DAG-code bundle (parser, worker, trigger check, and the Fargate worker image): the same plus the
  environment's requirements in ``dag_packages/`` (``UPDRAFT_DAG_PACKAGES``: only DAG code's children get them
  on their path). Without requirements both bundles are one.

Each bundle holds ``packages.lock``: ``name==version`` of every package in it, from the environment's one lock
(``infra.packages``). Its key (the Lambda asset hash) is computed from the sources, the lock and the installed
requirements' own key, not from the built files (pip's output differs from run to run): an unchanged app
synthesizes to the same assets, so a deploy neither re-uploads nor updates the functions, and a bundle already
built under ``cdk.out/.updraft-bundles/<key>`` is used as it is.

The worker image's build context is the DAG-code bundle's folder (``bundle/`` and the Dockerfiles): the image
copies the very files the Lambda bundle holds, so the two never run different versions, and its asset hash (CDK's
fingerprint of the context) changes with the lock. A DAG-code bundle larger than Lambda's zip limit is run by
the DAG-code functions as a container image built from the same folder (``lambda.Dockerfile``).

Everything is compiled to ``.pyc`` with unchecked-hash invalidation: ``/var/task`` is read-only, so a module
without a usable ``.pyc`` is recompiled in memory on every cold start (4-6x slower imports), and timestamp-based
``.pyc`` files would not survive the zip's 2-second mtimes. That needs this interpreter to be the runtime's Python
minor version; another one is refused rather than shipping bytecode Lambda cannot use.
"""

from __future__ import annotations

import compileall
import dataclasses
import hashlib
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path

from aws_cdk import AssetHashType
from aws_cdk import aws_lambda as lambda_

from infra.packages import DAG_PACKAGES, RUNTIME_PYTHON, Packages, runtime_site
from updraft.requirements.lines import canonical

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_11  # the same minor version as this machine's Python
FORMAT = "3"  # bump when the way a bundle is built changes
# Lambda's limit on a function's code unzipped (its layers included): 250 MB. Past it, container images (10 GB).
ZIP_LIMIT_BYTES = 250 * 1024 * 1024
WORKER_DOCKERFILE = ROOT / "infra" / "worker_image" / "Dockerfile"
LAMBDA_DOCKERFILE = ROOT / "infra" / "worker_image" / "lambda.Dockerfile"
BUILD_FOLDER = ".updraft-bundles"  # in the cloud assembly's folder (cdk.out): the built bundles by key
LOCK_FILE = "packages.lock"
PROVIDERS_FILE = "providers.json"
# What the bundle holds: source directory -> its path in the bundle.
SOURCES = {ROOT / "functions": "functions", ROOT / "shared" / "updraft": "updraft",
           ROOT / "shared" / "airflow": "airflow"}
_IGNORED = ("__pycache__", "*.pyc", "tests")
_IGNORE = shutil.ignore_patterns(*_IGNORED)


@dataclasses.dataclass(frozen=True)
class Bundle:
    """A built bundle: ``path`` (``<context>/bundle``), its content ``key`` and its unzipped ``size`` in bytes."""

    path: Path
    key: str
    size: int

    @property
    def context(self) -> Path:
        """The image build context: the bundle and the Dockerfiles."""
        return self.path.parent

    def zip_code(self) -> lambda_.Code:
        return lambda_.Code.from_asset(str(self.path), asset_hash_type=AssetHashType.CUSTOM, asset_hash=self.key)


def _sources() -> list[tuple[str, Path]]:
    """Every file the bundle copies, as (path in the bundle, source path), in a stable order."""
    out = []
    for source, target in SOURCES.items():
        for path in source.rglob("*"):
            relative = path.relative_to(source)
            if path.is_file() and not any(relative.match(p) or p in relative.parts for p in _IGNORED):
                out.append((f"{target}/{relative.as_posix()}", path))
    return sorted(out)


def bundle_key(packages: Packages, *, dag_code: bool, dependencies: bool, architecture: str) -> str:
    """The bundle's content key: what decides its files (see the module notes)."""
    digest = hashlib.sha256(f"{FORMAT}|{RUNTIME_PYTHON}|{architecture}|{dependencies}\0".encode())
    digest.update(packages.runtime_lock.encode() + b"\0")
    if packages.dag is not None:
        digest.update(packages.dag.providers_file.read_bytes() + b"\0")
        if dag_code:  # the installed folder's own key covers the file, its local wheels and the pins
            digest.update(f"{packages.dag.root.name}\0{packages.lock}\0".encode())
    for dockerfile in (WORKER_DOCKERFILE, LAMBDA_DOCKERFILE):
        digest.update(dockerfile.read_bytes() + b"\0")
    for name, path in _sources():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build(packages: Packages, *, dag_code: bool, dependencies: bool, architecture: str, workdir: Path,
          cache: Path | None = None) -> Bundle:
    """The bundle under ``workdir/<key>`` (built now unless it is there). ``dependencies=False`` leaves out
    Updraft's run-time packages (tests: no index needed); the environment's requirements are always there."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" != RUNTIME_PYTHON:
        raise RuntimeError(f"bundle the Lambda code with Python {RUNTIME_PYTHON} (the Lambda runtime), not "
                           f"{sys.version.split()[0]}: its .pyc files would be unusable")
    dag_code = dag_code and packages.dag is not None
    key = bundle_key(packages, dag_code=dag_code, dependencies=dependencies, architecture=architecture)
    done = workdir / key
    if not (done / "bundle" / LOCK_FILE).is_file():
        # The DAG-code bundle is Updraft's (built first, compiled once) plus the requirements.
        base = build(packages, dag_code=False, dependencies=dependencies, architecture=architecture,
                     workdir=workdir, cache=cache).path if dag_code else None
        workdir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=workdir))
        try:
            _build(work, packages, base, dag_code=dag_code, dependencies=dependencies, architecture=architecture,
                   cache=cache)
            try:
                work.rename(done)
            except OSError:  # another synth built it meanwhile
                if not (done / "bundle" / LOCK_FILE).is_file():
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    path = done / "bundle"
    return Bundle(path, key, sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))


def _build(work: Path, packages: Packages, base: Path | None, *, dag_code: bool, dependencies: bool,
           architecture: str, cache: Path | None) -> None:
    out = work / "bundle"
    if base is not None:
        shutil.copytree(base, out)
    else:
        out.mkdir()
        if dependencies:
            shutil.copytree(runtime_site(architecture, cache=cache).site, out, dirs_exist_ok=True)
        for source, target in SOURCES.items():
            shutil.copytree(source, out / target, ignore=_IGNORE, dirs_exist_ok=True)
        if not compileall.compile_dir(out, quiet=1, workers=0,
                                      invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH):
            raise RuntimeError(f"compiling the Lambda bundle in {out} failed")
        if packages.dag is not None:
            shutil.copyfile(packages.dag.providers_file, out / PROVIDERS_FILE)
    if dag_code:
        assert packages.dag is not None
        dag = out / DAG_PACKAGES
        shutil.copytree(packages.dag.site, dag)
        _drop(dag, set(packages.runtime))
        # A package's own files that do not compile (test data, Python 2 leftovers) are left as they are, as
        # pip leaves them: they are never imported.
        compileall.compile_dir(dag, quiet=2, workers=0,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (out / LOCK_FILE).write_text(packages.lock if dag_code else packages.runtime_lock)
    shutil.copyfile(WORKER_DOCKERFILE, work / "Dockerfile")
    shutil.copyfile(LAMBDA_DOCKERFILE, work / "lambda.Dockerfile")


def _drop(site: Path, names: set[str]) -> None:
    """Remove from ``site`` the distributions named (Updraft's own, pinned to the versions the bundle's root
    already holds, which come first on the path): their files (from each RECORD) unless another kept
    distribution lists them too, then folders left empty."""
    from importlib import metadata

    dropped: set[Path] = set()
    kept: set[Path] = set()
    for dist in metadata.distributions(path=[str(site)]):
        files = {(site / str(f)).resolve() for f in dist.files or []}
        (dropped if canonical(dist.metadata["Name"] or "") in names else kept).update(files)
    for path in dropped - kept:
        if path.is_file() and site.resolve() in path.parents:
            path.unlink()
    for folder in sorted((p for p in site.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()

