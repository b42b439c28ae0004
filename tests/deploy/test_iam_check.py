"""The deploy tier's IAM evaluator (``iam_check``) on its own: the requests a call makes and IAM's decision, so a
check that passes in the deploy tier is one that can fail. No deployment needed (fast)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.iam_check import Request, Unmapped, UnsupportedPolicy, allowed, requests_for, unused_grants

ROLE = "arn:aws:iam::123456789012:role/worker"
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/state"


class Where:
    region, account = "us-east-1", "123456789012"

    def task_definition(self, name: str) -> tuple[str, list[str]]:
        assert name == "updraft-dev-worker"
        return ("arn:aws:ecs:us-east-1:123456789012:task-definition/updraft-dev-worker:3",
                ["arn:aws:iam::123456789012:role/task", "arn:aws:iam::123456789012:role/execution"])

    def cluster_arn(self, name: str) -> str:
        return f"arn:aws:ecs:us-east-1:123456789012:cluster/{name}"

    def key_arn(self, key_id: str | None) -> str:
        return "arn:aws:kms:us-east-1:123456789012:key/k"

    def resource_statements(self, resource: str, action: str) -> list[dict[str, Any]]:
        return []


def _call(service: str, operation: str, **params: Any) -> dict[str, Any]:
    return {"service": service, "operation": operation, "params": params}


def test_a_transaction_is_authorized_item_by_item_and_a_query_on_an_index_names_it() -> None:
    transaction = _call("dynamodb", "TransactWriteItems", TransactItems=[
        {"Put": {"TableName": "state"}}, {"ConditionCheck": {"TableName": "state"}}])
    assert requests_for(transaction, Where()) == [Request("dynamodb:PutItem", TABLE),
                                                  Request("dynamodb:ConditionCheckItem", TABLE)]
    query = _call("dynamodb", "Query", TableName="state", IndexName="gsi1")
    assert requests_for(query, Where()) == [Request("dynamodb:Query", f"{TABLE}/index/gsi1")]


def test_run_task_needs_the_task_definition_the_roles_passed_and_the_tagging() -> None:
    call = _call("ecs", "RunTask", cluster="c", taskDefinition="updraft-dev-worker", tags=[{"key": "k", "value": "v"}])
    assert [str(r) for r in requests_for(call, Where())] == [
        "ecs:RunTask on arn:aws:ecs:us-east-1:123456789012:task-definition/updraft-dev-worker:3 "
        "ecs:cluster=arn:aws:ecs:us-east-1:123456789012:cluster/c",
        "iam:PassRole on arn:aws:iam::123456789012:role/task iam:PassedToService=ecs-tasks.amazonaws.com",
        "iam:PassRole on arn:aws:iam::123456789012:role/execution iam:PassedToService=ecs-tasks.amazonaws.com",
        "ecs:TagResource on arn:aws:ecs:us-east-1:123456789012:task/c/* ecs:CreateAction=RunTask"]


def test_a_call_without_a_mapping_is_refused_not_waved_through() -> None:
    with pytest.raises(Unmapped, match="dynamodb:DeleteTable"):
        requests_for(_call("dynamodb", "DeleteTable", TableName="state"), Where())
    with pytest.raises(Unmapped, match="rds:DescribeDBInstances"):
        requests_for(_call("rds", "DescribeDBInstances"), Where())


LIST_DAGS = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b",
             "Condition": {"StringLike": {"s3:prefix": ["dags/*"]}}}
READ_TABLE = {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:Query"],
              "Resource": [TABLE, f"{TABLE}/index/*"]}


@pytest.mark.parametrize(("request_", "expected"), [
    (Request("dynamodb:GetItem", TABLE), True),
    (Request("dynamodb:Query", f"{TABLE}/index/gsi1"), True),
    (Request("dynamodb:PutItem", TABLE), False),  # action not granted
    (Request("dynamodb:GetItem", f"{TABLE}-other"), False),  # another resource
    (Request("s3:ListBucket", "arn:aws:s3:::b", (("s3:prefix", "dags/x.py"),)), True),
    (Request("s3:ListBucket", "arn:aws:s3:::b", (("s3:prefix", "store/"),)), False),  # condition fails
    (Request("s3:ListBucket", "arn:aws:s3:::b"), False),  # a condition key the request lacks
])
def test_identity_policies_decide_on_action_resource_and_conditions(request_: Request, expected: bool) -> None:
    assert allowed([LIST_DAGS, READ_TABLE], request_, principal=ROLE) is expected


def test_an_explicit_deny_wins_and_a_trust_policy_naming_the_role_allows_on_its_own() -> None:
    deny = {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*"}
    assert not allowed([READ_TABLE, deny], Request("dynamodb:GetItem", TABLE), principal=ROLE)
    assume = Request("sts:AssumeRole", "arn:aws:iam::123456789012:role/dag-code")
    trust = [{"Effect": "Allow", "Action": ["sts:AssumeRole"], "Principal": {"AWS": ROLE}}]
    assert allowed([], assume, principal=ROLE, resource_statements=trust)
    assert not allowed([], assume, principal="arn:aws:iam::123456789012:role/api", resource_statements=trust)
    # Naming the account defers to the role's own policies.
    account = [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}}]
    assert not allowed([], assume, principal=ROLE, resource_statements=account)


def test_what_it_does_not_implement_is_refused() -> None:
    odd = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*",
           "Condition": {"ForAnyValue:StringLike": {"s3:prefix": ["dags/*"]}}}
    with pytest.raises(UnsupportedPolicy, match="ForAnyValue:StringLike"):
        allowed([odd], Request("s3:ListBucket", "arn:aws:s3:::b", (("s3:prefix", "x"),)), principal=ROLE)


def test_the_grants_no_request_used_are_reported_by_action_and_resource() -> None:
    made = [Request("dynamodb:GetItem", TABLE), Request("s3:ListBucket", "arn:aws:s3:::b", (("s3:prefix", "dags/"),))]
    assert unused_grants([READ_TABLE, LIST_DAGS], made) == [
        ("dynamodb:GetItem", f"{TABLE}/index/*"), ("dynamodb:Query", TABLE), ("dynamodb:Query", f"{TABLE}/index/*")]
