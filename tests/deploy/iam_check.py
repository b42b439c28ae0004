"""IAM judged from what the deployed functions really call: every AWS call a function's process made (recorded by
``lambda_bootstrap``) turned into the requests IAM authorizes for it (action, resource ARN, condition keys), each
judged against the policies the deployed role holds (read back from the embedded AWS's IAM: the template's
intrinsics resolved as CloudFormation resolved them), as IAM's policy evaluation decides within one account: an
explicit Deny wins, else an Allow whose action, resource and conditions all match, else denied.

The request each call makes follows the Service Authorization Reference: a transaction's items are authorized one
by one (``TransactWriteItems`` is ``PutItem``/``UpdateItem``/``DeleteItem``/``ConditionCheckItem`` on each item's
table); ``HeadObject`` is ``s3:GetObject`` (``GetObjectVersion`` with a version); a listing is ``s3:ListBucket`` on
the bucket with ``s3:prefix``; ``RunTask`` is ``ecs:RunTask`` on the task definition (``ecs:cluster``), plus
``iam:PassRole`` of the task's roles (``iam:PassedToService``) and ``ecs:TagResource`` when it tags
(``ecs:CreateAction``); CloudWatch Logs' stream actions act on ``log-group:G:log-stream:S``. A call this table
does not know raises :class:`Unmapped` naming it: the check never waves a call through.

What the embedded AWS knows and the call does not carry (the revision and roles of a task definition named by its
family, a cluster's ARN, the key a ciphertext was made with) comes from :class:`Resolver`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol


class Unmapped(LookupError):
    """A recorded call whose IAM request this module does not know: add it, from the Service Authorization
    Reference, rather than skipping it."""


class UnsupportedPolicy(ValueError):
    """A policy element this evaluator does not implement (it refuses to guess)."""


@dataclasses.dataclass(frozen=True)
class Request:
    action: str  # "dynamodb:GetItem"
    resource: str  # an ARN, or "*" for actions without resource-level permissions
    context: tuple[tuple[str, str], ...] = ()  # condition keys the request carries

    def __str__(self) -> str:
        keys = "".join(f" {k}={v}" for k, v in self.context)
        return f"{self.action} on {self.resource}{keys}"


class Resolver(Protocol):
    region: str
    account: str

    def task_definition(self, name: str) -> tuple[str, list[str]]:
        """A task definition's ARN (with its revision) and the roles it names (task and execution roles)."""
        ...

    def cluster_arn(self, name: str) -> str: ...

    def key_arn(self, key_id: str | None) -> str:
        """A KMS key's ARN from an id, an ARN or an alias; None: the key of a ciphertext (the stack's one key)."""
        ...

    def resource_statements(self, resource: str, action: str) -> list[dict[str, Any]]:
        """The resource-based policy that also judges a request on ``resource``: a bucket's policy for its objects
        and itself, a role's trust policy for ``sts:`` actions on it; [] for the others."""
        ...


def _arn(where: Resolver, service: str, resource: str) -> str:
    return f"arn:aws:{service}:{where.region}:{where.account}:{resource}"


def _table(where: Resolver, name: str, index: str | None = None) -> str:
    name = name.rsplit(":table/", 1)[-1]
    return _arn(where, "dynamodb", f"table/{name}" + (f"/index/{index}" if index else ""))


def _object(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def _function(where: Resolver, name: str, qualifier: str | None) -> str:
    arn = name if name.startswith("arn:") else _arn(where, "lambda", f"function:{name}")
    return f"{arn}:{qualifier}" if qualifier else arn


def _queue(where: Resolver, url_or_name: str) -> str:
    return _arn(where, "sqs", url_or_name.rstrip("/").rsplit("/", 1)[-1])


def _log_stream(where: Resolver, group: str, stream: str) -> str:
    return _arn(where, "logs", f"log-group:{group}:log-stream:{stream}")


def _dynamodb(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [Request(f"dynamodb:{operation}", _table(where, t)) for t in p["RequestItems"]]
    if operation == "TransactWriteItems":
        kinds = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}
        return [Request(f"dynamodb:{kinds[kind]}", _table(where, body["TableName"]))
                for item in p["TransactItems"] for kind, body in item.items()]
    if operation == "TransactGetItems":
        return [Request("dynamodb:GetItem", _table(where, item["Get"]["TableName"])) for item in p["TransactItems"]]
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "DescribeTable"):
        return [Request(f"dynamodb:{operation}", _table(where, p["TableName"], p.get("IndexName")))]
    raise Unmapped(f"dynamodb:{operation}")


def _s3(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    versioned = "Version" if p.get("VersionId") else ""
    if operation in ("GetObject", "HeadObject"):
        return [Request(f"s3:GetObject{versioned}", _object(p["Bucket"], p["Key"]))]
    if operation == "PutObject":
        return [Request("s3:PutObject", _object(p["Bucket"], p["Key"]))]
    if operation == "DeleteObject":
        return [Request(f"s3:DeleteObject{versioned}", _object(p["Bucket"], p["Key"]))]
    if operation in ("ListObjects", "ListObjectsV2"):
        return [Request("s3:ListBucket", f"arn:aws:s3:::{p['Bucket']}", (("s3:prefix", p.get("Prefix", "")),))]
    if operation in ("PutBucketNotificationConfiguration", "GetBucketNotificationConfiguration"):
        return [Request(f"s3:{operation.removesuffix('Configuration')}", f"arn:aws:s3:::{p['Bucket']}")]
    raise Unmapped(f"s3:{operation}")


def _logs(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation in ("CreateLogStream", "PutLogEvents", "GetLogEvents"):
        return [Request(f"logs:{operation}", _log_stream(where, p["logGroupName"], p["logStreamName"]))]
    if operation in ("DescribeLogStreams", "CreateLogGroup"):
        return [Request(f"logs:{operation}", _arn(where, "logs", f"log-group:{p['logGroupName']}:*"))]
    raise Unmapped(f"logs:{operation}")


def _states(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation in ("StartExecution", "ListExecutions", "DescribeStateMachine"):
        return [Request(f"states:{operation}", p["stateMachineArn"])]
    if operation in ("StopExecution", "DescribeExecution", "GetExecutionHistory"):
        return [Request(f"states:{operation}", p["executionArn"])]
    if operation in ("SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"):
        return [Request(f"states:{operation}", "*")]  # no resource-level permissions
    raise Unmapped(f"states:{operation}")


def _ecs(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    cluster = where.cluster_arn(p.get("cluster", "default"))
    if operation == "RunTask":
        definition, roles = where.task_definition(p["taskDefinition"])
        overrides = p.get("overrides", {})
        roles = [overrides.get("taskRoleArn") or roles[0], overrides.get("executionRoleArn") or roles[1]]
        requests = [Request("ecs:RunTask", definition, (("ecs:cluster", cluster),))]
        requests += [Request("iam:PassRole", role, (("iam:PassedToService", "ecs-tasks.amazonaws.com"),))
                     for role in roles if role]
        if p.get("tags"):
            cluster_name = cluster.rsplit("/", 1)[-1]
            requests.append(Request("ecs:TagResource", _arn(where, "ecs", f"task/{cluster_name}/*"),
                                    (("ecs:CreateAction", "RunTask"),)))
        return requests
    if operation in ("StopTask", "DescribeTasks"):
        tasks = [p["task"]] if operation == "StopTask" else p["tasks"]
        cluster_name = cluster.rsplit("/", 1)[-1]
        return [Request(f"ecs:{operation}", t if t.startswith("arn:") else _arn(where, "ecs", f"task/{cluster_name}/{t}"),
                        (("ecs:cluster", cluster),)) for t in tasks]
    raise Unmapped(f"ecs:{operation}")


def _lambda(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation == "Invoke":
        return [Request("lambda:InvokeFunction", _function(where, p["FunctionName"], p.get("Qualifier")))]
    raise Unmapped(f"lambda:{operation}")


def _sqs(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation in ("SendMessage", "SendMessageBatch", "GetQueueAttributes", "ReceiveMessage", "DeleteMessage"):
        action = operation.removesuffix("Batch")
        return [Request(f"sqs:{action}", _queue(where, p["QueueUrl"]))]
    if operation == "GetQueueUrl":
        return [Request("sqs:GetQueueUrl", _queue(where, p["QueueName"]))]
    raise Unmapped(f"sqs:{operation}")


def _kms(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation in ("Encrypt", "Decrypt", "GenerateDataKey"):
        return [Request(f"kms:{operation}", where.key_arn(p.get("KeyId")))]
    raise Unmapped(f"kms:{operation}")


def _cloudwatch(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation == "PutMetricData":  # no resource-level permissions; the namespace is a condition key
        return [Request("cloudwatch:PutMetricData", "*", (("cloudwatch:namespace", p["Namespace"]),))]
    raise Unmapped(f"cloudwatch:{operation}")


def _sts(where: Resolver, operation: str, p: Mapping[str, Any]) -> list[Request]:
    if operation == "GetCallerIdentity":
        return []  # needs no permission
    if operation == "AssumeRole":  # a tagged session needs sts:TagSession too
        return [Request(action, p["RoleArn"]) for action in ("sts:AssumeRole", "sts:TagSession")[:2 if p.get("Tags") else 1]]
    raise Unmapped(f"sts:{operation}")


# botocore's signing name (IAM's service prefix, except CloudWatch's "monitoring") -> its requests.
_SERVICES: dict[str, Callable[[Resolver, str, Mapping[str, Any]], list[Request]]] = {
    "dynamodb": _dynamodb, "s3": _s3, "logs": _logs, "states": _states, "ecs": _ecs, "lambda": _lambda,
    "sqs": _sqs, "kms": _kms, "monitoring": _cloudwatch, "sts": _sts,
}


def requests_for(call: Mapping[str, Any], where: Resolver) -> list[Request]:
    """The requests IAM authorizes for one recorded call (``{"service", "operation", "params"}``)."""
    service = _SERVICES.get(call["service"])
    if service is None:
        raise Unmapped(f"{call['service']}:{call['operation']}")
    try:
        return service(where, call["operation"], call["params"])
    except KeyError as missing:
        raise Unmapped(f"{call['service']}:{call['operation']} without {missing}") from None


# -- policy evaluation ---------------------------------------------------------------------------------------------
@functools.cache
def _pattern(glob: str, ignore_case: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(f"^{body}$", re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _any_glob(patterns: Any, value: str, *, ignore_case: bool) -> bool:
    return any(_pattern(p, ignore_case).match(value) for p in _listed(patterns))


_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda have, want: have == want,
    "StringLike": lambda have, want: bool(_pattern(want, False).match(have)),
    "ArnEquals": lambda have, want: have == want,
    "ArnLike": lambda have, want: bool(_pattern(want, False).match(have)),
    "Bool": lambda have, want: have.lower() == want.lower(),
}
_NEGATED = {"StringNotEquals": "StringEquals", "StringNotLike": "StringLike", "ArnNotEquals": "ArnEquals",
            "ArnNotLike": "ArnLike"}


def _conditions_hold(conditions: Mapping[str, Mapping[str, Any]], context: Mapping[str, str]) -> bool:
    """Every operator's every key holds (IAM's AND of keys, OR of a key's values); a key the request does not
    carry fails a positive operator and passes a negated one, and ``...IfExists`` passes."""
    for operator, keys in conditions.items():
        name, if_exists = operator.removesuffix("IfExists"), operator.endswith("IfExists")
        negated = name in _NEGATED
        test = _OPERATORS.get(_NEGATED.get(name, name))
        if test is None:
            raise UnsupportedPolicy(f"condition operator {operator}")
        for key, wanted in keys.items():
            have = next((v for k, v in context.items() if k.lower() == key.lower()), None)
            if have is None:
                if not (if_exists or negated):
                    return False
                continue
            matched = any(test(have, w) for w in _listed(wanted))
            if matched == negated:
                return False
    return True


def _names(statement: Mapping[str, Any], principal: str) -> bool | None:
    """Whether a resource policy's statement names ``principal`` (a role ARN): True when by its ARN or ``*``,
    None when by its account (the account's own policies must then allow too), False otherwise."""
    if "NotPrincipal" in statement:
        raise UnsupportedPolicy("NotPrincipal")
    named = statement["Principal"]
    arns = _listed(named.get("AWS", [])) if isinstance(named, dict) else _listed(named)
    if principal in arns or "*" in arns:
        return True
    account = principal.split(":")[4]
    return None if {account, f"arn:aws:iam::{account}:root"} & set(arns) else False


def _matches(statement: Mapping[str, Any], request: Request) -> bool:
    if "Action" in statement:
        if not _any_glob(statement["Action"], request.action, ignore_case=True):
            return False
    elif _any_glob(statement["NotAction"], request.action, ignore_case=True):
        return False
    if "Resource" in statement:
        if not _any_glob(statement["Resource"], request.resource, ignore_case=False):
            return False
    elif "NotResource" in statement and _any_glob(statement["NotResource"], request.resource, ignore_case=False):
        return False
    # (neither: a trust policy's statement, whose resource is the role it is attached to)
    return _conditions_hold(statement.get("Condition", {}), dict(request.context))


def allowed(statements: Iterable[Mapping[str, Any]], request: Request, *, principal: str,
            resource_statements: Iterable[Mapping[str, Any]] = ()) -> bool:
    """IAM's decision within one account for ``principal`` (a role's ARN) with its identity ``statements`` and the
    resource's policy: an explicit Deny in either wins; then an Allow of the identity policies, or of the resource
    policy naming the role itself (one naming the account defers to the identity policies); else denied."""
    for statement in statements:
        if "Principal" in statement or "NotPrincipal" in statement:
            raise UnsupportedPolicy("a principal in an identity policy")
    mine = [s for s in statements if _matches(s, request)]
    theirs = [(s, named) for s in resource_statements if (named := _names(s, principal)) is not False
              and _matches(s, request)]
    if any(s["Effect"] == "Deny" for s in mine) or any(s["Effect"] == "Deny" for s, _ in theirs):
        return False
    return any(s["Effect"] == "Allow" for s in mine) or any(s["Effect"] == "Allow" and named for s, named in theirs)


def unused_grants(statements: Iterable[Mapping[str, Any]], requests: Iterable[Request]) -> list[tuple[str, str]]:
    """Each (action, resource) an Allow statement grants that none of ``requests`` falls under: what least
    privilege could drop if these requests are all the role ever makes."""
    requests = list(requests)
    unused = []
    for statement in statements:
        if statement["Effect"] != "Allow" or "Action" not in statement:
            continue
        for action in _listed(statement["Action"]):
            for resource in _listed(statement.get("Resource", "*")):
                narrowed = {**statement, "Action": action, "Resource": resource}
                if not any(_matches(narrowed, request) for request in requests):
                    unused.append((action, resource))
    return unused


def role_statements(iam: Any, role_name: str) -> list[dict[str, Any]]:
    """Every statement of the deployed role: its inline policies (``AWS::IAM::Policy`` resources become those)
    and its attached managed policies' default versions."""
    documents: list[Any] = []
    for page in iam.get_paginator("list_role_policies").paginate(RoleName=role_name):
        documents += [iam.get_role_policy(RoleName=role_name, PolicyName=name)["PolicyDocument"]
                      for name in page["PolicyNames"]]
    for page in iam.get_paginator("list_attached_role_policies").paginate(RoleName=role_name):
        for attached in page["AttachedPolicies"]:
            version = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]["DefaultVersionId"]
            documents.append(iam.get_policy_version(PolicyArn=attached["PolicyArn"],
                                                    VersionId=version)["PolicyVersion"]["Document"])
    statements = []
    for document in documents:
        parsed = json.loads(urllib.parse.unquote(document)) if isinstance(document, str) else document
        found = parsed["Statement"]
        statements += [found] if isinstance(found, dict) else found
    return statements
