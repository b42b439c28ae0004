"""Lambda code bundled on this machine (no Docker): the handlers, the ``updraft`` and ``airflow`` packages and,
unless disabled, their runtime dependencies installed for the Lambda runtime's Python and platform."""

from __future__ import annotations

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
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "tests")


@jsii.implements(ILocalBundling)
class LocalBundler:
    def __init__(self, *, dependencies: bool) -> None:
        self.dependencies = dependencies

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        out = Path(output_dir)
        if self.dependencies:
            subprocess.check_call([
                sys.executable, "-m", "pip", "install", "-q", "--target", str(out),
                "--platform", "manylinux2014_x86_64", "--only-binary=:all:", "--implementation", "cp",
                "--python-version", RUNTIME_PYTHON, *LAMBDA_REQUIREMENTS,
            ])
        shutil.copytree(ROOT / "functions", out / "functions", ignore=_IGNORE, dirs_exist_ok=True)
        for package in ("updraft", "airflow"):
            shutil.copytree(ROOT / "shared" / package, out / package, ignore=_IGNORE, dirs_exist_ok=True)
        return True


def lambda_code(*, dependencies: bool = True) -> lambda_.Code:
    """One asset shared by every function (handlers are ``functions/<name>/handler.handler``)."""
    return lambda_.Code.from_asset(
        str(ROOT / "functions"),
        asset_hash_type=AssetHashType.OUTPUT,
        bundling=BundlingOptions(image=RUNTIME.bundling_image, command=["false"],  # Docker is never used
                                 local=LocalBundler(dependencies=dependencies)),
    )
