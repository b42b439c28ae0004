"""The CDK app: ``cdk synth -c env=dev|staging|prod`` (run from the repository root; see infra/README.md)."""

import os
import sys
from pathlib import Path

# Put the repository root first and drop infra/ (the script's dir): infra/constructs would shadow `constructs`.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

import aws_cdk as cdk  # noqa: E402

from infra.config import PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION, settings_for  # noqa: E402
from infra.stack import UpdraftStack  # noqa: E402

app = cdk.App()
settings = settings_for(app.node.try_get_context("env"))
account = os.environ.get("CDK_DEFAULT_ACCOUNT") or PLACEHOLDER_ACCOUNT
region = os.environ.get("CDK_DEFAULT_REGION") or PLACEHOLDER_REGION
UpdraftStack(app, f"Updraft-{settings.name}", settings=settings,
             env=cdk.Environment(account=account, region=region))
app.synth()
