"""The SES grant for an environment with an email sender: SendEmail only, from that sender's identity only.
(The dev stack the tier synthesizes has no sender, so its roles have no SES action: test_iam.)"""

from __future__ import annotations

import pytest

cdk = pytest.importorskip("aws_cdk")

from infra.config import EnvironmentSettings, settings_for  # noqa: E402
from infra.constructs.access import send_email  # noqa: E402
from tests.infra.cfn import render  # noqa: E402


def test_send_email_statement_is_scoped_to_the_sender():
    stack = cdk.Stack(cdk.App(), "S", env=cdk.Environment(account="123456789012", region="us-east-1"))
    statement = stack.resolve(send_email(stack, "alerts@example.com").to_statement_json())
    assert statement["Action"] == "ses:SendEmail"
    assert render(statement["Resource"]) == ["arn:aws:ses:us-east-1:123456789012:identity/alerts@example.com",
                                     "arn:aws:ses:us-east-1:123456789012:identity/example.com"]
    assert statement["Condition"] == {"StringEquals": {"ses:FromAddress": "alerts@example.com"}}


def test_the_sender_must_be_an_address():
    fields = {**settings_for("dev").__dict__, "email_sender": "example.com"}
    with pytest.raises(ValueError, match="email_sender must be an email address"):
        EnvironmentSettings(**fields)
