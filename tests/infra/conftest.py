"""The infra tier: one synth of the dev stack for the whole tier (each synth costs ~5-7 s).

Docker is made unusable before aws_cdk starts its node process (which inherits the environment): if anything
in the app tried to build an image or bundle with Docker at synth, the synth would fail here even on a machine
that has a Docker engine. Docker is for ``cdk deploy`` only.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ["CDK_DOCKER"] = "/nonexistent/docker-is-not-needed-at-synth"
cdk = pytest.importorskip("aws_cdk", reason="the infra extra is not installed (pip install -e '.[infra]')")

from aws_cdk.assertions import Template  # noqa: E402

from infra.config import (  # noqa: E402
    PLACEHOLDER_ACCOUNT,
    PLACEHOLDER_REGION,
    EnvironmentSettings,
    ExistingVpc,
    settings_for,
)
from infra.stack import UpdraftStack  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STACK = "Updraft-test"


@dataclass(frozen=True)
class Synth:
    template: Template
    resources: dict
    outdir: Path  # the cloud assembly: template, asset manifest, staged assets
    assets: dict  # the stack's asset manifest


# An existing VPC as a user gives it (infra/README.md, "Networking"): two private subnets, their route tables.
EXISTING_VPC = ExistingVpc(vpc_id="vpc-0a1b2c3d4e5f60718", private_subnet_ids=("subnet-0aaa1111", "subnet-0bbb2222"),
                           route_table_ids=("rtb-0ccc3333", "rtb-0ddd4444"))


def synthesize(outdir: Path, settings: EnvironmentSettings) -> Synth:
    """``settings``' stack as ``cdk synth`` builds it: cdk.json's context (the AZs of the placeholder account),
    the placeholder account and region; dependencies are not pip-installed into the Lambda bundle."""
    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"], outdir=str(outdir))
    UpdraftStack(app, STACK, settings=settings, bundle_dependencies=False,
                 env=cdk.Environment(account=PLACEHOLDER_ACCOUNT, region=PLACEHOLDER_REGION))
    assembly = app.synth()
    template = assembly.get_stack_by_name(STACK).template
    return Synth(template=Template.from_json(template), resources=template["Resources"], outdir=outdir,
                 assets=json.loads((outdir / f"{STACK}.assets.json").read_text()))


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    """The dev stack as ``cdk synth -c env=dev`` builds it."""
    return synthesize(tmp_path_factory.mktemp("cdk.out"), settings_for("dev"))


@pytest.fixture(scope="session")
def vpc_synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    """The dev stack in an existing VPC (``EXISTING_VPC``, its endpoints created)."""
    return synthesize(tmp_path_factory.mktemp("cdk.out.vpc"), dataclasses.replace(settings_for("dev"),
                                                                                   vpc=EXISTING_VPC))
