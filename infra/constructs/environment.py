"""``UpdraftEnvironment``: one whole Updraft deployment, embeddable in any CDK stack."""

from __future__ import annotations

from constructs import Construct

from infra.config import EnvironmentSettings
from infra.constructs.compute import UpdraftFunctions
from infra.constructs.data import UpdraftData


class UpdraftEnvironment(Construct):
    """The data (table, bucket) and the compute (parser, scheduler, worker) of one environment.

    ``bundle_dependencies=False`` bundles the code without pip-installing its dependencies (tests only).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.data = UpdraftData(self, "Data", retain=settings.retain_data)
        self.functions = UpdraftFunctions(self, "Functions", data=self.data, settings=settings,
                                          bundle_dependencies=bundle_dependencies)
