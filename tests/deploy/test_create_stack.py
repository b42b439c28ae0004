"""``cdk deploy -c env=dev`` on the embedded AWS: the template reaches CREATE_COMPLETE from its TemplateURL and
every resource in it exists, created by CloudFormation or, for the types moto skips, by the stand-in of
``stand_ins.STAND_INS`` (a type moto skips that has no stand-in fails here, as does a stand-in moto no longer needs).
"""

from __future__ import annotations

from tests.deploy.conftest import Environment
from tests.deploy.stand_ins import STAND_INS, check_every_resource


def test_every_resource_of_the_dev_stack_is_created_or_stood_in_for(environment: Environment) -> None:
    print(check_every_resource(environment))
    # Every stand-in is for a type of the default stack (the VPC-mode stack has the same ones: test_vpc_mode), so
    # one moto creates now is found stale here.
    assert set(STAND_INS) <= {resource["Type"] for resource in environment.assembly.resources.values()}
