"""The stack ``cdk deploy -c env=<name>`` deploys: one :class:`UpdraftEnvironment` and its settings' tags.

Its outputs are what ``updraft env add NAME --stack STACK`` reads to reach the environment (``updraft.cli.env``):
the API's base URL, the bucket DAG files are uploaded to and under which prefix, the region and the table.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Fn, Stack, Tags
from constructs import Construct

from infra.config import EnvironmentSettings
from infra.constructs import UpdraftEnvironment
from updraft.resources import DAGS_PREFIX


class UpdraftStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.updraft = UpdraftEnvironment(self, "Updraft", settings=settings, bundle_dependencies=bundle_dependencies)
        self._outputs()
        Tags.of(self).add("updraft:environment", settings.name)
        for key, value in settings.tags.items():
            Tags.of(self).add(key, value)

    def _outputs(self) -> None:
        outputs = {
            "ApiUrl": (self.updraft.api.rest_api.url, "Base URL of the REST API for IAM (SigV4) callers"),
            "UsersApiUrl": (self.updraft.api.users_api.url,
                            "Base URL of the REST API for users with a token (the official client, the UI)"),
            "BucketName": (self.updraft.data.bucket.bucket_name, "Bucket whose DagsPrefix holds the DAG files"),
            "DagsPrefix": (DAGS_PREFIX, "Where DAG files go in the bucket (updraft dags upload)"),
            "Region": (self.region, "Region of the environment (SigV4 requests are signed for it)"),
            "TableName": (self.updraft.data.table.table_name, "The store's DynamoDB table"),
            "DagCodeRoleArn": (self.updraft.functions.dag_code.role.role_arn,
                               "The role DAG code runs with (attach your policies to it, as MWAA's execution role)"),
        }
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)

    @property
    def availability_zones(self) -> list[str]:
        """Two AZs chosen by CloudFormation at deploy (``Fn::GetAZs``) instead of CDK's synth-time lookup, which
        needs credentials for the target account (or its AZs committed as context): ``cdk synth`` then works
        offline for any account and region, and the template names no AZ (cfn-lint W3010)."""
        return [Fn.select(index, Fn.get_azs()) for index in range(2)]
