"""``cdk deploy -c env=dev`` on the embedded AWS: the template reaches CREATE_COMPLETE from its TemplateURL and
every resource in it exists, created by CloudFormation or, for the types moto skips, by the stand-in of
``stand_ins.STAND_INS`` (a type moto skips that has no stand-in fails here, as does a stand-in moto no longer needs).
"""

from __future__ import annotations

from moto.cloudformation.custom_model import CustomModel
from moto.cloudformation.models import cloudformation_backends
from moto.cloudformation.parsing import clean_json

from tests.deploy.conftest import ACCOUNT, REGION, Environment
from tests.deploy.stand_ins import STAND_INS, StandInContext


def test_every_resource_of_the_dev_stack_is_created_or_stood_in_for(environment: Environment) -> None:
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
    assert {resources[i]["Type"] for i in skipped | node_providers} == set(STAND_INS), \
        "the types moto skips (or whose provider cannot run here) and the stand-ins must match"
    # moto also lists one resource of its own with no logical id (a model it adds beside the template's).
    assert set(environment.deployed.physical) - {""} == set(resources) - skipped

    context = StandInContext(environment.session, resources, lambda value: clean_json(value, stack.resource_map),
                               environment.deployed.physical)
    for type_, stand_in in STAND_INS.items():
        for logical_id in sorted(i for i in skipped | node_providers if resources[i]["Type"] == type_):
            stand_in(context, logical_id)
    print(f"{len(resources)} resources: {len(resources) - len(skipped)} created by CloudFormation, "
          f"{len(skipped)} of {len({resources[i]['Type'] for i in skipped})} types it skips created by stand-ins, "
          f"{len(node_providers)} Node.js custom resources answered and checked")
