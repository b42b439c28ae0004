"""Updraft's reusable constructs. Import them as ``infra.constructs`` (the repository root on sys.path): the
directory name matches the ``constructs`` library, so ``infra/`` itself must never be on sys.path."""

from infra.constructs.api import UpdraftApi
from infra.constructs.compute import UpdraftFunctions
from infra.constructs.data import UpdraftData
from infra.constructs.deferrals import DeferralStateMachine
from infra.constructs.environment import UpdraftEnvironment
from infra.constructs.fargate import FargateWorkers

__all__ = ["DeferralStateMachine", "FargateWorkers", "UpdraftApi", "UpdraftData", "UpdraftEnvironment",
           "UpdraftFunctions"]
