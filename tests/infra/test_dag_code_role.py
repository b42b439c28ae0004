"""The DAG-code role in the synthesized stack: no permissions of its own, assumable only by the parser and the
workers, named to them and to users (the session's one synth)."""

from __future__ import annotations

from tests.infra.cfn import as_list, function_id, function_role, of_type, role_statements


def _dag_code_role(resources: dict) -> str:
    (role,) = [k for k in of_type(resources, "AWS::IAM::Role") if "DagCode" in k]
    return role


def test_the_dag_code_role_grants_nothing_and_only_updraft_roles_assume_it(synth) -> None:
    resources = synth.resources
    role = _dag_code_role(resources)
    properties = resources[role]["Properties"]
    # No access to the table, the queues, the bucket or the secrets: users attach their own policies.
    assert role_statements(resources, role) == []
    assert "ManagedPolicyArns" not in properties
    assert properties["MaxSessionDuration"] == 3600
    assumers = set()
    for trust in properties["AssumeRolePolicyDocument"]["Statement"]:
        assert trust["Effect"] == "Allow" and "Condition" not in trust
        assert set(as_list(trust["Action"])) == {"sts:AssumeRole", "sts:TagSession"}
        assert set(trust["Principal"]) == {"AWS"}
        assumers |= {principal["Fn::GetAtt"][0] for principal in as_list(trust["Principal"]["AWS"])}
    (task_definition,) = of_type(resources, "AWS::ECS::TaskDefinition").values()
    assert assumers == {function_role(resources, "parser"), function_role(resources, "worker"),
                        task_definition["Properties"]["TaskRoleArn"]["Fn::GetAtt"][0],
                        function_role(resources, "trigger_check")}  # a polling trigger's look runs user code


def test_parser_workers_and_users_are_told_the_role(synth) -> None:
    resources = synth.resources
    arn = {"Fn::GetAtt": [_dag_code_role(resources), "Arn"]}
    for name in ("parser", "worker", "trigger_check"):
        assert resources[function_id(resources, name)]["Properties"]["Environment"]["Variables"][
            "UPDRAFT_DAG_CODE_ROLE"] == arn
    for name in ("scheduler", "api"):  # they run no user code
        assert "UPDRAFT_DAG_CODE_ROLE" not in resources[function_id(resources, name)]["Properties"][
            "Environment"]["Variables"]
    (task_definition,) = of_type(resources, "AWS::ECS::TaskDefinition").values()
    (container,) = task_definition["Properties"]["ContainerDefinitions"]
    assert {"Name": "UPDRAFT_DAG_CODE_ROLE", "Value": arn} in container["Environment"]
    assert synth.template.to_json()["Outputs"]["DagCodeRoleArn"]["Value"] == arn
