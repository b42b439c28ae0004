"""Lambda code bundled on this machine (no Docker): the handlers, the ``updraft`` and ``airflow`` packages and,
unless disabled, their runtime dependencies installed for the Lambda runtime's Python and platform.

Everything in the bundle is compiled to ``.pyc`` with unchecked-hash invalidation: ``/var/task`` is read-only,
so a module without a usable ``.pyc`` is recompiled in memory on every cold start (4-6x slower imports), and
timestamp-based ``.pyc`` files would not survive the zip's 2-second mtimes. That needs this interpreter to be
the runtime's Python minor version; another one is refused rather than shipping bytecode Lambda cannot use.

The asset hash is computed from the sources and the requirements, not from the bundle (pip's output differs
from run to run): an unchanged app synthesizes to the same asset, so a deploy does not re-upload 55 MB and
update every function, and a synth that finds the asset already staged in ``cdk.out`` skips the bundling.
"""

from __future__ import annotations

import compileall
import hashlib
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

from infra.config import LAMBDA_REQUIREMENTS

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_11  # the same minor version as this machine's Python
RUNTIME_PYTHON = "3.11"
# What the bundle holds: source directory -> its path in the bundle.
SOURCES = {ROOT / "functions": "functions", ROOT / "shared" / "updraft": "updraft",
           ROOT / "shared" / "airflow": "airflow"}
_IGNORED = ("__pycache__", "*.pyc", "tests")
_IGNORE = shutil.ignore_patterns(*_IGNORED)


def _sources() -> list[tuple[str, Path]]:
    """Every file the bundle copies, as (path in the bundle, source path), in a stable order."""
    out = []
    for source, target in SOURCES.items():
        for path in source.rglob("*"):
            relative = path.relative_to(source)
            if path.is_file() and not any(relative.match(p) or p in relative.parts for p in _IGNORED):
                out.append((f"{target}/{relative.as_posix()}", path))
    return sorted(out)


def source_hash(*, dependencies: bool) -> str:
    digest = hashlib.sha256(f"{RUNTIME_PYTHON}|{dependencies}|{'|'.join(LAMBDA_REQUIREMENTS)}".encode())
    for name, path in _sources():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@jsii.implements(ILocalBundling)
class LocalBundler:
    def __init__(self, *, dependencies: bool) -> None:
        self.dependencies = dependencies

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        if f"{sys.version_info.major}.{sys.version_info.minor}" != RUNTIME_PYTHON:
            raise RuntimeError(f"bundle the Lambda code with Python {RUNTIME_PYTHON} (the Lambda runtime), not "
                               f"{sys.version.split()[0]}: its .pyc files would be unusable")
        out = Path(output_dir)
        if self.dependencies:
            subprocess.check_call([
                sys.executable, "-m", "pip", "install", "-q", "--target", str(out), "--no-compile",
                "--platform", "manylinux2014_x86_64", "--only-binary=:all:", "--implementation", "cp",
                "--python-version", RUNTIME_PYTHON, *LAMBDA_REQUIREMENTS,
            ])
        for source, target in SOURCES.items():
            shutil.copytree(source, out / target, ignore=_IGNORE, dirs_exist_ok=True)
        if not compileall.compile_dir(out, quiet=1, workers=0,
                                      invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH):
            raise RuntimeError(f"compiling the Lambda bundle in {out} failed")
        return True


def lambda_code(*, dependencies: bool = True) -> lambda_.Code:
    """One asset shared by every function (handlers are ``functions/<name>/handler.handler``)."""
    return lambda_.Code.from_asset(
        str(ROOT / "functions"),
        asset_hash_type=AssetHashType.CUSTOM, asset_hash=source_hash(dependencies=dependencies),
        bundling=BundlingOptions(image=RUNTIME.bundling_image, command=["false"],  # Docker is never used
                                 local=LocalBundler(dependencies=dependencies)),
    )
