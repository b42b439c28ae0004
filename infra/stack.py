"""The stack ``cdk deploy -c env=<name>`` deploys: one :class:`UpdraftEnvironment` and its settings' tags."""

from __future__ import annotations

from aws_cdk import Fn, Stack, Tags
from constructs import Construct

from infra.config import EnvironmentSettings
from infra.constructs import UpdraftEnvironment


class UpdraftStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.updraft = UpdraftEnvironment(self, "Updraft", settings=settings, bundle_dependencies=bundle_dependencies)
        Tags.of(self).add("updraft:environment", settings.name)
        for key, value in settings.tags.items():
            Tags.of(self).add(key, value)

    @property
    def availability_zones(self) -> list[str]:
        """Two AZs chosen by CloudFormation at deploy (``Fn::GetAZs``) instead of CDK's synth-time lookup, which
        needs credentials for the target account (or its AZs committed as context): ``cdk synth`` then works
        offline for any account and region, and the template names no AZ (cfn-lint W3010)."""
        return [Fn.select(index, Fn.get_azs()) for index in range(2)]
