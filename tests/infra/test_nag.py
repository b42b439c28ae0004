"""cdk-nag's AwsSolutions checks on the dev stack: every finding is fixed or suppressed in ``infra/nag.py`` with its
reason, and every suppression there is still needed (its rule fires without it); in an existing VPC too."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.infra.conftest import EXISTING_VPC, ROOT, STACK, cdk

cdk_nag = pytest.importorskip("cdk_nag", reason="the infra extra is not installed (pip install -e '.[infra]')")

from aws_cdk.assertions import Annotations, Match  # noqa: E402

from infra.config import PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION, settings_for  # noqa: E402
from infra.nag import SUPPRESSIONS, suppress  # noqa: E402
from infra.stack import UpdraftStack  # noqa: E402


def _findings(tmp_path, *, suppressed: bool, vpc: bool = False) -> set[str]:
    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"], outdir=str(tmp_path))
    settings = dataclasses.replace(settings_for("dev"), vpc=EXISTING_VPC) if vpc else settings_for("dev")
    stack = UpdraftStack(app, STACK, settings=settings, bundle_dependencies=False,
                         env=cdk.Environment(account=PLACEHOLDER_ACCOUNT, region=PLACEHOLDER_REGION))
    if suppressed:
        suppress(stack)
    cdk.Aspects.of(app).add(cdk_nag.AwsSolutionsChecks())
    annotations = Annotations.from_stack(stack)
    found = [*annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")),
             *annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*"))]
    return {f"{m.entry.data.split(':')[0].split('[')[0]} {m.id}" for m in found}


def test_every_aws_solutions_finding_is_fixed_or_suppressed_with_a_reason(tmp_path) -> None:
    assert _findings(tmp_path / "suppressed", suppressed=True) == set()
    rules = {finding.split()[0] for finding in _findings(tmp_path / "bare", suppressed=False)}
    assert rules == set(SUPPRESSIONS), "a suppression whose rule no longer fires must go"
    assert all(len(reason) > 40 for reason in SUPPRESSIONS.values())


def test_an_environment_in_an_existing_vpc_has_no_other_finding(tmp_path) -> None:
    """The same suppressions cover it (the VPC is the user's: no flow-log rule fires on an imported one)."""
    assert _findings(tmp_path, suppressed=True, vpc=True) == set()
