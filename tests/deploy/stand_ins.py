"""The resource types moto's CloudFormation accepts without creating (moto 5.2.5), each with what stands in for it.

CloudFormation on moto skips a type it has no model for and still reaches CREATE_COMPLETE: such a resource would
exist only on paper. For each type of this stack that moto skips, the stand-in creates the resource through the
service's own API on the embedded AWS with the template's properties (intrinsics resolved to what was deployed),
so botocore's validation and moto's service checks judge them, and asserts what the stack relies on. A type that
moto skips and this table does not name fails the deploy test, and so does a type named here that moto now creates
(the table then lies).

``Custom::S3AutoDeleteObjects`` is created (its request is answered), but its provider is CDK's Node.js function,
which cannot run here: its stand-in checks what that function would act on (the bucket's auto-delete tag and the
bucket policy letting the provider's role empty it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.deploy.conftest import Environment


@dataclass
class StandInContext:
    session: Any  # .client(name) on the embedded AWS
    resources: dict[str, Any]  # the template's resources
    resolve_moto: Callable[[Any], Any]  # moto's own resolution of intrinsics over the created resources
    physical: dict[str, str]  # the created resources' physical ids (what Ref gives), by logical id
    stood: dict[str, str] = field(default_factory=dict)  # "LogicalId" / "LogicalId.Attr" of stood-in resources

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref" and arg in self.stood:
                return self.stood[arg]
            if key == "Ref" and arg in self.physical:
                return self.physical[arg]
            if key == "Fn::GetAtt" and f"{arg[0]}.{arg[1]}" in self.stood:
                return self.stood[f"{arg[0]}.{arg[1]}"]
            if key == "Fn::Join":
                return arg[0].join(str(self.resolve(part)) for part in arg[1])
            if key.startswith("Fn::") or key == "Ref":
                return self.resolve_moto(value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def props(self, logical_id: str) -> dict[str, Any]:
        resolved: dict[str, Any] = self.resolve(self.resources[logical_id].get("Properties", {}))
        return resolved


def _tags(props: dict[str, Any]) -> list[dict[str, str]]:
    return [{"Key": t["Key"], "Value": t["Value"]} for t in props.get("Tags", [])]


def bucket_policy(ctx: StandInContext, logical_id: str) -> None:
    """Put with the bucket's API; the deployed bucket then denies non-TLS access (as the stack means it to)."""
    props = ctx.props(logical_id)
    s3 = ctx.session.client("s3")
    s3.put_bucket_policy(Bucket=props["Bucket"], Policy=json.dumps(props["PolicyDocument"]))
    policy = json.loads(s3.get_bucket_policy(Bucket=props["Bucket"])["Policy"])
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for s in policy["Statement"])


def queue_policy(ctx: StandInContext, logical_id: str) -> None:
    """Set on each queue with SQS's API; read back."""
    props = ctx.props(logical_id)
    sqs = ctx.session.client("sqs")
    for url in props["Queues"]:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(props["PolicyDocument"])})
        stored = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"])
        assert stored["Statement"] == props["PolicyDocument"]["Statement"]


def event_invoke_config(ctx: StandInContext, logical_id: str) -> None:
    """Put with Lambda's API on the deployed function; its failure destination is a deployed queue."""
    props = ctx.props(logical_id)
    lam = ctx.session.client("lambda")
    numbers = {k: int(props[k]) for k in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds") if k in props}
    lam.put_function_event_invoke_config(
        FunctionName=props["FunctionName"], Qualifier=props["Qualifier"], **numbers,
        **({"DestinationConfig": props["DestinationConfig"]} if "DestinationConfig" in props else {}))
    config = lam.get_function_event_invoke_config(FunctionName=props["FunctionName"], Qualifier=props["Qualifier"])
    assert {k: config[k] for k in numbers} == numbers
    destination = props.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
    if destination:
        name = destination.rsplit(":", 1)[-1]
        ctx.session.client("sqs").get_queue_url(QueueName=name)  # the dead-letter queue was deployed


def user_pool(ctx: StandInContext, logical_id: str) -> None:
    """Created with Cognito's API (only admins create users, as the template says)."""
    props = ctx.props(logical_id)
    pool = ctx.session.client("cognito-idp").create_user_pool(
        PoolName=props["UserPoolName"], AdminCreateUserConfig=props["AdminCreateUserConfig"],
        UsernameConfiguration=props["UsernameConfiguration"],
        AccountRecoverySetting={"RecoveryMechanisms": props["AccountRecoverySetting"]["RecoveryMechanisms"]},
        UserPoolTags=props.get("UserPoolTags", {}))["UserPool"]
    ctx.stood[logical_id] = pool["Id"]
    ctx.stood[f"{logical_id}.Arn"] = pool["Arn"]
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True


def user_pool_client(ctx: StandInContext, logical_id: str) -> None:
    """Created with Cognito's API; a user the pool's admin created signs in with a password through it (the
    CLI's and UI's flow), and the client has no OAuth flows."""
    props = ctx.props(logical_id)
    idp = ctx.session.client("cognito-idp")
    client = idp.create_user_pool_client(
        UserPoolId=props["UserPoolId"], ClientName=props["ClientName"], GenerateSecret=props["GenerateSecret"],
        ExplicitAuthFlows=props["ExplicitAuthFlows"],
        AllowedOAuthFlowsUserPoolClient=props["AllowedOAuthFlowsUserPoolClient"],
        PreventUserExistenceErrors=props["PreventUserExistenceErrors"],
        SupportedIdentityProviders=props["SupportedIdentityProviders"])["UserPoolClient"]
    ctx.stood[logical_id] = client["ClientId"]
    assert not client.get("AllowedOAuthFlows")
    idp.admin_create_user(UserPoolId=props["UserPoolId"], Username="first-admin")
    idp.admin_set_user_password(UserPoolId=props["UserPoolId"], Username="first-admin",
                                Password="Deploy-tier-1-password!", Permanent=True)
    tokens = idp.initiate_auth(ClientId=client["ClientId"], AuthFlow="USER_PASSWORD_AUTH",
                               AuthParameters={"USERNAME": "first-admin", "PASSWORD": "Deploy-tier-1-password!"})
    assert tokens["AuthenticationResult"]["IdToken"]


def user_pool_group(ctx: StandInContext, logical_id: str) -> None:
    """Created with Cognito's API: an Airflow role by name."""
    props = ctx.props(logical_id)
    group = ctx.session.client("cognito-idp").create_group(
        UserPoolId=props["UserPoolId"], GroupName=props["GroupName"], Description=props["Description"],
        Precedence=int(props["Precedence"]))["Group"]
    assert group["GroupName"] in ("VIEWER", "USER", "OP", "ADMIN")


def stage(ctx: StandInContext, logical_id: str) -> None:
    """Created with API Gateway's API on the deployed REST API and its deployed deployment."""
    props = ctx.props(logical_id)
    created = ctx.session.client("apigateway").create_stage(
        restApiId=props["RestApiId"], stageName=props["StageName"], deploymentId=props["DeploymentId"])
    assert created["deploymentId"] == props["DeploymentId"]


def gateway_response(ctx: StandInContext, logical_id: str) -> None:
    """Put with API Gateway's API on the deployed REST API."""
    props = ctx.props(logical_id)
    ctx.session.client("apigateway").put_gateway_response(
        restApiId=props["RestApiId"], responseType=props["ResponseType"], statusCode=props["StatusCode"],
        responseParameters=props["ResponseParameters"], responseTemplates=props["ResponseTemplates"])


def authorizer(ctx: StandInContext, logical_id: str) -> None:
    """Created with API Gateway's API on the deployed REST API, naming the stood-in user pool; every method of
    that API that says COGNITO_USER_POOLS names this authorizer."""
    props = ctx.props(logical_id)
    created = ctx.session.client("apigateway").create_authorizer(
        restApiId=props["RestApiId"], name=props["Name"], type=props["Type"], providerARNs=props["ProviderARNs"],
        identitySource=props["IdentitySource"])
    (pool,) = ctx.resources[logical_id]["Properties"]["ProviderARNs"]
    assert created["providerARNs"] == [ctx.stood[f"{pool['Fn::GetAtt'][0]}.Arn"]]
    for method in ctx.resources.values():
        if method["Type"] == "AWS::ApiGateway::Method" and \
                method["Properties"].get("AuthorizationType") == "COGNITO_USER_POOLS":
            assert method["Properties"]["AuthorizerId"] == {"Ref": logical_id}


def auto_delete_objects(ctx: StandInContext, logical_id: str) -> None:
    """CDK's Node.js provider empties the bucket on delete; it acts on the bucket the resource names, which is
    tagged for it, and whose policy lets the provider's role list and delete its objects."""
    props = ctx.props(logical_id)
    s3 = ctx.session.client("s3")
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=props["BucketName"])["TagSet"]}
    assert tags.get("aws-cdk:auto-delete-objects") == "true"
    provider = ctx.resources[logical_id]["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    role = ctx.resolve(ctx.resources[provider]["Properties"]["Role"])
    policy = json.loads(s3.get_bucket_policy(Bucket=props["BucketName"])["Policy"])
    assert any(s["Principal"] == {"AWS": role} and "s3:DeleteObject*" in s["Action"] for s in policy["Statement"])


# Type -> its stand-in, in the order they run (a user pool before its client, groups and authorizer; the bucket
# policy before the auto-delete check reads it).
STAND_INS: dict[str, Callable[[StandInContext, str], None]] = {
    "AWS::S3::BucketPolicy": bucket_policy,
    "AWS::SQS::QueuePolicy": queue_policy,
    "AWS::Lambda::EventInvokeConfig": event_invoke_config,
    "AWS::Cognito::UserPool": user_pool,
    "AWS::Cognito::UserPoolClient": user_pool_client,
    "AWS::Cognito::UserPoolGroup": user_pool_group,
    "AWS::ApiGateway::Stage": stage,
    "AWS::ApiGateway::GatewayResponse": gateway_response,
    "AWS::ApiGateway::Authorizer": authorizer,
    "Custom::S3AutoDeleteObjects": auto_delete_objects,
}


def check_every_resource(environment: Environment) -> str:
    """``environment``'s stack reached CREATE_COMPLETE and each resource of its template exists: created by
    CloudFormation (a custom resource answered by its provider), or of a type moto skips (or whose Node.js provider
    cannot run here) and created by its stand-in, whose checks pass. The types stood in for must be exactly the
    types of :data:`STAND_INS` the template has: a skipped type without a stand-in fails, and so does a stand-in
    for a type moto now creates. Returns a summary line."""
    from moto.cloudformation.custom_model import CustomModel
    from moto.cloudformation.models import cloudformation_backends
    from moto.cloudformation.parsing import clean_json

    from tests.deploy.conftest import ACCOUNT, REGION

    resources = environment.assembly.resources
    stack = cloudformation_backends[ACCOUNT][REGION].get_stack(environment.deployed.stack_id)
    assert stack.status == "CREATE_COMPLETE"
    parsed = stack.resource_map._parsed_resources
    skipped = {logical_id for logical_id in resources if parsed.get(logical_id) is None}
    node_providers = {entry.split()[1] for entry in environment.runtime.stood_in}
    for logical_id in resources:
        model = parsed.get(logical_id)
        if isinstance(model, CustomModel):
            assert model.is_created(), f"{logical_id}: its provider never answered"
    types = {resource["Type"] for resource in resources.values()}
    assert {resources[i]["Type"] for i in skipped | node_providers} == set(STAND_INS) & types, \
        "the types moto skips (or whose provider cannot run here) and the stand-ins must match"
    # moto also lists one resource of its own with no logical id (a model it adds beside the template's).
    assert set(environment.deployed.physical) - {""} == set(resources) - skipped

    context = StandInContext(environment.session, resources, lambda value: clean_json(value, stack.resource_map),
                             environment.deployed.physical)
    for type_, stand_in in STAND_INS.items():
        for logical_id in sorted(i for i in skipped | node_providers if resources[i]["Type"] == type_):
            stand_in(context, logical_id)
    return (f"{len(resources)} resources: {len(resources) - len(skipped)} created by CloudFormation, "
            f"{len(skipped)} of {len({resources[i]['Type'] for i in skipped})} types it skips created by stand-ins, "
            f"{len(node_providers)} Node.js custom resources answered and checked")
