"""cdk-nag's AwsSolutions rules this stack does not follow, each with the reason (``suppress``), so that
``tests/infra/test_nag.py`` fails on any other finding: a new resource that breaks a rule must fix it or say here
why not. Rule ids are cdk-nag's (https://github.com/cdklabs/cdk-nag/blob/main/RULES.md).
"""

from __future__ import annotations

from aws_cdk import Stack

# Rule id -> why the stack does not follow it.
SUPPRESSIONS: dict[str, str] = {
    "AwsSolutions-APIG1": "API Gateway access logs need the account-wide API Gateway CloudWatch role "
                          "(AWS::ApiGateway::Account, one per account and region, shared with other stacks), which "
                          "an environment's stack must not own; the API function's log group records every "
                          "request it serves",
    "AwsSolutions-APIG6": "as APIG1: execution logging needs the account-wide API Gateway CloudWatch role",
    "AwsSolutions-APIG2": "both APIs proxy every path to the API function, which validates each request as "
                          "Airflow's REST API does (its 400/422 bodies); a gateway model would duplicate Airflow's "
                          "schema",
    "AwsSolutions-APIG3": "WAF is a per-account cost left to the operator; every data route needs SigV4 or a "
                          "Cognito token",
    "AwsSolutions-APIG4": "the methods Airflow leaves open (token routes, health, version: "
                          "updraft.api.auth.policy.OPEN_METHODS) and the web UI's pages (no data; the session "
                          "cookie is checked by the function) have no authorizer; every other method has IAM or "
                          "the Cognito authorizer",
    "AwsSolutions-COG4": "the IAM API authorizes with SigV4 by design (automation and the CLI); the users API's "
                         "open methods are APIG4's; all its other methods use the Cognito authorizer",
    "AwsSolutions-COG1": "no explicit policy: Cognito's default applies (at least 8 characters with lower and "
                         "upper case letters, digits and symbols)",
    "AwsSolutions-COG2": "MFA is the operator's choice on the pool (users are created by admins only)",
    "AwsSolutions-COG8": "threat protection needs Cognito's paid Plus feature plan, the account's choice",
    "AwsSolutions-ECS2": "the container's environment holds resource names only (table, bucket, functions, "
                         "cluster); secrets come from the configured secrets backend at run time",
    "AwsSolutions-ECS4": "Container Insights is charged per task; each try's state and log are in the store and "
                         "the task log group",
    "AwsSolutions-IAM4": "CDK's own bucket-notifications handler (run at deploy only) has "
                         "AWSLambdaBasicExecutionRole; Updraft's functions have no managed policy",
    "AwsSolutions-IAM5": "each wildcard is scoped to this environment's resources (the table's indexes, objects "
                         "under the bucket's prefixes, the worker family's revisions, the task log group's "
                         "streams, the deferral machine's executions, the secrets backend's prefixes: "
                         "infra/constructs/access.py), or is CDK's (grant_write on a log group), or, for functions "
                         "in an existing VPC, the network-interface actions Lambda needs, on * as AWS's "
                         "AWSLambdaVPCAccessExecutionRole grants them (access.manage_vpc_interfaces)",
    "AwsSolutions-L1": "the bundle's .pyc files are compiled for Python 3.11 (infra/constructs/bundling.py); "
                       "CDK's custom-resource handlers follow CDK's release",
    "AwsSolutions-S1": "server access logs need a second bucket; S3 data events in CloudTrail are the account's "
                       "choice",
    "AwsSolutions-SF1": "the deferral machine logs ERROR events to its vended log group; ALL would log each wait's "
                        "input (the try's trigger kwargs)",
    "AwsSolutions-SF2": "X-Ray is off throughout (its SDK costs the handlers' cold starts)",
    "AwsSolutions-SQS3": "this queue is itself the dead-letter queue of the functions' failed async invokes",
    "AwsSolutions-VPC7": "the VPC holds only the Fargate workers' network interfaces behind an egress-only "
                         "security group; flow logs are charged per GB, the account's choice",
}


def suppress(stack: Stack) -> None:
    """Suppress :data:`SUPPRESSIONS` on ``stack`` with their reasons (cdk-nag prints them in its report)."""
    from cdk_nag import NagPackSuppression, NagSuppressions

    NagSuppressions.add_stack_suppressions(
        stack, [NagPackSuppression(id=rule, reason=reason) for rule, reason in SUPPRESSIONS.items()])
