"""Reading a synthesized template: intrinsic functions rendered as text, resources found by type or handler."""

from __future__ import annotations

from typing import Any

PSEUDO = {"AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"}


def render(value: Any, deployed: dict[str, str] | None = None) -> Any:
    """A template value as the text it becomes at deploy time, with this stack's resources as ``<LogicalId>``
    (``<LogicalId.Attr>`` for Fn::GetAtt) unless ``deployed`` gives their physical value under the same key
    (``LogicalId`` or ``LogicalId.Attr``); lists and dicts without intrinsics are rendered element-wise."""
    deployed = deployed or {}
    if isinstance(value, dict) and len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref":
            return PSEUDO.get(arg) or deployed.get(arg, f"<{arg}>")
        if key == "Fn::GetAtt":
            return deployed.get(f"{arg[0]}.{arg[1]}", f"<{arg[0]}.{arg[1]}>")
        if key == "Fn::Join":
            return arg[0].join(str(render(part, deployed)) for part in arg[1])
    if isinstance(value, list):
        return [render(v, deployed) for v in value]
    if isinstance(value, dict):
        return {k: render(v, deployed) for k, v in value.items()}
    return value


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def of_type(resources: dict, type_: str) -> dict[str, dict]:
    return {k: v for k, v in resources.items() if v["Type"] == type_}


def function_id(resources: dict, name: str) -> str:
    """The logical id of Updraft's ``name`` function (handler ``functions.<name>.handler.handler``)."""
    (found,) = [k for k, v in of_type(resources, "AWS::Lambda::Function").items()
                if v["Properties"].get("Handler") == f"functions.{name}.handler.handler"]
    return found


def role_statements(resources: dict, role_id: str) -> list[dict]:
    """Every statement granted to a role: its inline policies and the AWS::IAM::Policy resources attached."""
    out = [s for p in resources[role_id]["Properties"].get("Policies", []) for s in p["PolicyDocument"]["Statement"]]
    for policy in of_type(resources, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            out.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return out


def function_role(resources: dict, name: str) -> str:
    return resources[function_id(resources, name)]["Properties"]["Role"]["Fn::GetAtt"][0]
