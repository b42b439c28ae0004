"""The DynamoDB fast path gives byte-for-byte the responses moto's own serializer gives."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, os, sys
    os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
    if sys.argv[1] == "fast":
        from updraft.local import moto_speedups
        moto_speedups.apply()
    import boto3
    from moto import mock_aws

    ITEM = {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "1.5"}, "b": {"B": bytes(range(40))},
            "bs": {"BS": [b"x", b"\\x00y"]}, "ss": {"SS": ["p", "q"]}, "ns": {"NS": ["1", "2"]},
            "flag": {"BOOL": False}, "none": {"NULL": True},
            "l": {"L": [{"N": "1"}, {"M": {"x": {"B": b"z"}, "y": {"L": []}}}, {"S": ""}]},
            "m": {"M": {"deep": {"M": {"deeper": {"SS": ["s"]}}}}}}
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                             {"AttributeName": "sk", "AttributeType": "S"},
                                             {"AttributeName": "n", "AttributeType": "N"}],
                       LocalSecondaryIndexes=[{"IndexName": "by_n", "Projection": {"ProjectionType": "ALL"},
                                               "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                             {"AttributeName": "n", "KeyType": "RANGE"}]}])
        c.put_item(TableName="t", Item=ITEM)
        c.put_item(TableName="t", Item={**ITEM, "sk": {"S": "2"}})
        for pk, sk in (("b", "3"), ("b", "1"), ("b", "2"), ("0", "9"), ("c", "0")):
            c.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": sk}})
        values = {":p": {"S": "b"}, ":s": {"S": "1"}}
        page = c.query(TableName="t", KeyConditionExpression="pk = :p AND sk > :s", ScanIndexForward=False,
                       ExpressionAttributeValues=values, Limit=1)
        out = {
            "get": c.get_item(TableName="t", Key={"pk": {"S": "a"}, "sk": {"S": "1"}})["Item"],
            "query": c.query(TableName="t", KeyConditionExpression="pk = :p",
                             ExpressionAttributeValues={":p": {"S": "a"}})["Items"],
            "update": c.update_item(TableName="t", Key={"pk": {"S": "a"}, "sk": {"S": "1"}},
                                    UpdateExpression="SET n = n + :one", ReturnValues="ALL_NEW",
                                    ExpressionAttributeValues={":one": {"N": "1"}})["Attributes"],
            "failed": None,
            "other_partition": c.query(TableName="t", KeyConditionExpression="pk = :p",
                                       ExpressionAttributeValues={":p": {"S": "b"}})["Items"],
            "missing_partition": c.query(TableName="t", KeyConditionExpression="pk = :p",
                                         ExpressionAttributeValues={":p": {"S": "z"}})["Items"],
            "pages": [page["Items"], page.get("LastEvaluatedKey"),
                      c.query(TableName="t", KeyConditionExpression="pk = :p AND sk > :s", ScanIndexForward=False,
                              ExpressionAttributeValues=values, ExclusiveStartKey=page["LastEvaluatedKey"])["Items"]],
            "filtered": c.query(TableName="t", KeyConditionExpression="pk = :p", FilterExpression="n > :s",
                                ExpressionAttributeValues={":p": {"S": "b"}, ":s": {"N": "1"}})["Items"],
            "scan": c.scan(TableName="t")["Items"],
            "local_index": {k: v for k, v in c.query(
                TableName="t", IndexName="by_n", KeyConditionExpression="pk = :p AND n > :s", ScanIndexForward=False,
                Limit=2, ExpressionAttributeValues={":p": {"S": "b"}, ":s": {"N": "1"}}).items()
                if k != "ResponseMetadata"},
            "local_index_other": c.query(TableName="t", IndexName="by_n", KeyConditionExpression="pk = :p",
                                         ExpressionAttributeValues={":p": {"S": "c"}})["Items"],
        }
        try:
            c.put_item(TableName="t", Item=ITEM, ConditionExpression="attribute_not_exists(pk)",
                       ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except c.exceptions.ConditionalCheckFailedException as exc:
            out["failed"] = exc.response.get("Item")
    print(json.dumps(out, default=repr, sort_keys=True))
""")


def _run(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_fast_path_responses_equal_motos_own():
    slow, fast = _run("slow"), _run("fast")
    assert fast == slow
    assert fast["get"]["b"]["B"] == repr(bytes(range(40)))  # binary came back as bytes, not as base64 text
    assert fast["failed"] is not None and fast["update"]["n"] == {"N": "2.5"}
    assert [i["sk"]["S"] for i in fast["other_partition"]] == ["1", "2", "3"] and fast["missing_partition"] == []
    assert [i["sk"]["S"] for i in fast["pages"][0] + fast["pages"][2]] == ["3", "2"]
    assert [i["n"]["N"] for i in fast["local_index"]["Items"]] == ["3", "2"]  # a local index: its partition only
    assert fast["local_index"]["LastEvaluatedKey"] == {"pk": {"S": "b"}, "sk": {"S": "2"}, "n": {"N": "2"}}
    assert [i["pk"]["S"] for i in fast["local_index_other"]] == ["c"]


def test_a_query_of_a_local_index_reads_its_partition_only(monkeypatch):
    """A local index's partition is the table's: its Query lists that partition, never the table's items."""
    import boto3
    from moto import mock_aws
    from moto.dynamodb.models.table import Table

    from updraft.local import moto_speedups

    moto_speedups.apply()
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                                             for a, t in (("pk", "S"), ("sk", "S"), ("n", "N"))],
                       LocalSecondaryIndexes=[{"IndexName": "by_n", "Projection": {"ProjectionType": "ALL"},
                                               "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                             {"AttributeName": "n", "KeyType": "RANGE"}]}])
        for pk in ("a", "b"):
            for i in range(50):
                c.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": f"{i:02d}"}, "n": {"N": str(i)}})
        seen = []
        listed = Table.all_items
        monkeypatch.setattr(Table, "all_items", lambda self: seen.append(n := list(listed(self))) or iter(n))
        page = c.query(TableName="t", IndexName="by_n", KeyConditionExpression="pk = :p", ScanIndexForward=False,
                       Limit=3, ExpressionAttributeValues={":p": {"S": "b"}})
    assert [i["n"]["N"] for i in page["Items"]] == ["49", "48", "47"]
    assert [len(items) for items in seen] == [50]


def test_a_response_class_is_listed_once(monkeypatch):
    """moto looks up each request's action among its response class's methods: listed once per class."""
    import inspect

    from moto.core import responses

    from updraft.local import moto_speedups

    moto_speedups.apply()
    listed = []
    members = inspect.getmembers
    monkeypatch.setattr(inspect, "getmembers", lambda clazz, *a, **k: listed.append(clazz) or members(clazz, *a, **k))

    class Fresh(responses.BaseResponse):
        def some_action(self):
            return "{}"

    for _ in range(3):
        assert "some_action" in responses.method_names_from_class(Fresh)
    assert listed == [Fresh]
