"""The DynamoDB fast path gives byte-for-byte the responses moto's own serializer gives."""

from __future__ import annotations

import collections
import contextlib
import json
import subprocess
import sys
import textwrap
from typing import Any

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
                                             {"AttributeName": "n", "AttributeType": "N"},
                                             {"AttributeName": "g", "AttributeType": "S"}],
                       LocalSecondaryIndexes=[{"IndexName": "by_n", "Projection": {"ProjectionType": "ALL"},
                                               "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                             {"AttributeName": "n", "KeyType": "RANGE"}]}],
                       GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "ALL"},
                                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                              {"AttributeName": "n", "KeyType": "RANGE"}]},
                                               {"IndexName": "by_g_only", "Projection": {"ProjectionType": "ALL"},
                                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]},
                                               {"IndexName": "by_g_keys", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                              {"AttributeName": "n", "KeyType": "RANGE"}]}])
        c.put_item(TableName="t", Item=ITEM)
        c.put_item(TableName="t", Item={**ITEM, "sk": {"S": "2"}})
        for pk, sk in (("b", "3"), ("b", "1"), ("b", "2"), ("0", "9"), ("c", "0")):
            c.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": sk}})
        for pk, sk, n in (("d", "2", "1"), ("a", "7", "1"), ("e", "1", "5"), ("d", "1", "1"), ("h", "5", "3")):
            c.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": n}, "g": {"S": "x"}})
        c.put_item(TableName="t", Item={"pk": {"S": "f"}, "sk": {"S": "0"}, "n": {"N": "0"}, "g": {"S": "y"}})
        g_values = {":g": {"S": "x"}, ":n": {"N": "1"}}
        g_page = c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g AND n >= :n",
                         ExpressionAttributeValues=g_values, Limit=2)
        values = {":p": {"S": "b"}, ":s": {"S": "1"}}
        page = c.query(TableName="t", KeyConditionExpression="pk = :p AND sk > :s", ScanIndexForward=False,
                       ExpressionAttributeValues=values, Limit=1)
        out = {
            "get": c.get_item(TableName="t", Key={"pk": {"S": "a"}, "sk": {"S": "1"}})["Item"],
            "batch": c.batch_get_item(RequestItems={"t": {"Keys": [{"pk": {"S": "a"}, "sk": {"S": "1"}},
                                                                   {"pk": {"S": "b"}, "sk": {"S": "3"}}]}})["Responses"],
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
            "global_index": [g_page["Items"], g_page.get("LastEvaluatedKey"),
                             c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g AND n >= :n",
                                     ExpressionAttributeValues=g_values, ExclusiveStartKey=g_page["LastEvaluatedKey"])["Items"]],
            "global_index_backwards": c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g",
                                              ScanIndexForward=False, ExpressionAttributeValues={":g": {"S": "x"}})["Items"],
            "global_index_hash_only": c.query(TableName="t", IndexName="by_g_only", KeyConditionExpression="g = :g",
                                              ExpressionAttributeValues={":g": {"S": "x"}})["Items"],
            "global_index_keys_only": {k: v for k, v in c.query(
                TableName="t", IndexName="by_g_keys", KeyConditionExpression="g = :g", Limit=3,
                ExpressionAttributeValues={":g": {"S": "x"}}).items() if k != "ResponseMetadata"},
        }
        out["sizes"] = []  # DynamoDB's item size limit, as moto draws it: a put, a SET, a SET that replaces
        for n in (404_986, 404_987):  # 14 bytes of names and keys besides the text: 405,000 at most
            try:
                c.put_item(TableName="t", Item={"pk": {"S": "z"}, "sk": {"S": str(n)}, "big": {"S": "x" * n}})
                out["sizes"].append("stored")
            except c.exceptions.ClientError as exc:
                out["sizes"].append(exc.response["Error"]["Message"])
        for expression, value in (("SET more = :v", {"N": "1"}), ("SET big = :v", {"S": "small"})):
            try:
                c.update_item(TableName="t", Key={"pk": {"S": "z"}, "sk": {"S": "404986"}},
                              UpdateExpression=expression, ExpressionAttributeValues={":v": value})
                out["sizes"].append("updated")
            except c.exceptions.ClientError as exc:
                out["sizes"].append(exc.response["Error"]["Message"])
        # A transaction's conditions: one that lands, one cancelled (its reasons, and nothing written).
        c.put_item(TableName="t", Item={"pk": {"S": "tx"}, "sk": {"S": "1"}, "n": {"N": "1"}})
        out["transactions"] = []
        for _ in range(2):
            try:
                c.transact_write_items(TransactItems=[
                    {"Update": {"TableName": "t", "Key": {"pk": {"S": "tx"}, "sk": {"S": "1"}},
                                "UpdateExpression": "SET n = :two", "ConditionExpression": "n = :one",
                                "ExpressionAttributeValues": {":one": {"N": "1"}, ":two": {"N": "2"}}}},
                    {"Put": {"TableName": "t", "Item": {"pk": {"S": "tx"}, "sk": {"S": "2"}},
                             "ConditionExpression": "attribute_not_exists(pk)"}}])
                out["transactions"].append("landed")
            except c.exceptions.TransactionCanceledException as exc:
                out["transactions"].append([r.get("Code") for r in exc.response["CancellationReasons"]])
        out["transactions"].append(c.query(TableName="t", KeyConditionExpression="pk = :p",
                                           ExpressionAttributeValues={":p": {"S": "tx"}})["Items"])
        # An item's size after an update that grew a nested value in place: a Query's 1 MB page sees it.
        grow = {"TableName": "t", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "g"}}}
        for sk in ("1", "2", "3"):
            c.put_item(TableName="t", Item={"pk": {"S": "g"}, "sk": {"S": sk}, "m": {"M": {}}})
        out["grown"] = [len(c.query(**grow)["Items"])]
        for sk in ("1", "2", "3"):
            c.update_item(TableName="t", Key={"pk": {"S": "g"}, "sk": {"S": sk}}, UpdateExpression="SET m.big = :v",
                          ExpressionAttributeValues={":v": {"S": "x" * 390_000}})
        grown = c.query(**grow)
        out["grown"] += [len(grown["Items"]), grown.get("LastEvaluatedKey")]
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
    assert fast["sizes"][0] == "stored" and "exceeded" in fast["sizes"][1]  # at the boundary, as moto
    assert fast["grown"][:2] == [3, 2] and fast["grown"][2]  # items grown in place fill a page: their sizes are new
    landed, cancelled, stored = fast["transactions"]
    assert landed == "landed" and cancelled == ["ConditionalCheckFailed"] * 2
    assert [(i["sk"]["S"], i.get("n")) for i in stored] == [("1", {"N": "2"}), ("2", None)]
    batch = {i["sk"]["S"]: i for i in fast["batch"]["t"]}
    assert sorted(batch) == ["1", "3"] and batch["1"]["m"] == {"M": {"deep": {"M": {"deeper": {"SS": ["s"]}}}}}
    assert fast["failed"] is not None and fast["update"]["n"] == {"N": "2.5"}
    assert [i["sk"]["S"] for i in fast["other_partition"]] == ["1", "2", "3"] and fast["missing_partition"] == []
    assert [i["sk"]["S"] for i in fast["pages"][0] + fast["pages"][2]] == ["3", "2"]
    assert [i["n"]["N"] for i in fast["local_index"]["Items"]] == ["3", "2"]  # a local index: its partition only
    assert fast["local_index"]["LastEvaluatedKey"] == {"pk": {"S": "b"}, "sk": {"S": "2"}, "n": {"N": "2"}}
    assert [i["pk"]["S"] for i in fast["local_index_other"]] == ["c"]
    # A global index: ordered by its keys, ties by the table's, whatever the order the table was walked in.
    first, start, rest = fast["global_index"]
    assert [(i["pk"]["S"], i["sk"]["S"]) for i in first + rest] == [("a", "7"), ("d", "1"), ("d", "2"), ("h", "5"),
                                                                      ("e", "1")]
    assert start == {"g": {"S": "x"}, "n": {"N": "1"}, "pk": {"S": "d"}, "sk": {"S": "1"}}
    assert [i["pk"]["S"] for i in fast["global_index_backwards"]] == ["e", "h", "d", "d", "a"]
    assert len(fast["global_index_hash_only"]) == 5
    keys_only = fast["global_index_keys_only"]  # the table's and the index's keys, nothing else
    assert [sorted(i) for i in keys_only["Items"]] == [["g", "n", "pk", "sk"]] * 3 and keys_only["LastEvaluatedKey"]


@pytest.fixture
def dynamodb(monkeypatch):
    """A DynamoDB client of in-process moto with the speed-ups applied, and a table ``t`` keyed ``pk``, ``sk``."""
    import boto3
    from moto import mock_aws

    from updraft.local import moto_speedups

    moto_speedups.apply()
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = boto3.client("dynamodb")

        def table(**definitions: Any) -> Any:
            client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST", **definitions,
                                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                           {"AttributeName": "sk", "KeyType": "RANGE"}])
            return client

        yield table


def test_a_query_of_a_local_index_reads_its_partition_only(dynamodb, monkeypatch):
    """A local index's partition is the table's: its Query lists that partition, never the table's items."""
    from moto.dynamodb.models.table import Table

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
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


def test_a_query_of_a_global_index_does_not_sort_the_table(dynamodb, monkeypatch):
    """A global index's Query walks the table (its items span partitions) but sorts only what it keeps."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
                 GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "ALL"},
                                          "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}])
    for i in range(200):
        item = {"pk": {"S": f"p{i % 37:02d}"}, "sk": {"S": f"{i:03d}"}}
        c.put_item(TableName="t", Item={**item, "g": {"S": "x"}} if i % 50 == 0 else item)
    compared = []
    less = DynamoType.__lt__
    monkeypatch.setattr(DynamoType, "__lt__", lambda self, other: compared.append(1) or less(self, other))
    items = c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    # moto's order, as without the speed-up: the table's sort key stands in for the index's missing one.
    assert [i["sk"]["S"] for i in items] == ["000", "050", "100", "150"]
    assert len(compared) < 20  # sorting the table's 200 items would take over a thousand


def test_a_global_index_query_walks_only_the_items_of_its_partition(dynamodb, monkeypatch):
    """moto's walk of a global index's Query (a ``DynamoType`` comparison per key condition and item) meets only
    the items whose index partition key is the queried one; the answer is moto's."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
                 GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                          "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                        {"AttributeName": "sk", "KeyType": "RANGE"}]}])
    for i in range(300):
        g = {"S": "x"} if i % 60 == 0 else {"S": f"y{i % 7}"}
        c.put_item(TableName="t", Item={"pk": {"S": f"p{i % 11}"}, "sk": {"S": f"{i:03d}"}, "g": g})
    c.put_item(TableName="t", Item={"pk": {"S": "n"}, "sk": {"S": "999"}, "g": {"N": "1"}})  # another type
    compared = []
    unequal = DynamoType.__ne__
    monkeypatch.setattr(DynamoType, "__ne__", lambda self, other: compared.append(1) or unequal(self, other))
    items = c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g AND sk > :s",
                    ExpressionAttributeValues={":g": {"S": "x"}, ":s": {"S": "000"}})["Items"]
    assert [i["sk"]["S"] for i in items] == ["060", "120", "180", "240"]
    assert len(compared) <= 5  # moto's walk compared each of the table's 301 items


def test_a_global_index_partition_of_numbers_matches_as_moto_compares_numbers(dynamodb):
    """A number key is matched by its value, as moto compares it ("1.0" is 1), not by its text."""
    c = dynamodb(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                       {"AttributeName": "sk", "AttributeType": "S"},
                                       {"AttributeName": "g", "AttributeType": "N"}],
                 GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "ALL"},
                                          "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}])
    for sk, g in (("a", "1"), ("b", "1.0"), ("c", "2"), ("d", "10")):
        c.put_item(TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": sk}, "g": {"N": g}})
    items = c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"N": "1"}})["Items"]
    assert sorted(i["sk"]["S"] for i in items) == ["a", "b"]


def test_an_index_query_sorts_by_plain_values_in_moto_s_order(dynamodb, monkeypatch):
    """The matches of an index's Query are sorted by their keys' plain values (a number's Decimal, a text as it
    is), which order them as moto's comparisons of its attribute objects do, without those comparisons."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                                       for a, t in (("pk", "S"), ("sk", "S"), ("g", "S"), ("n", "N"))],
                 GlobalSecondaryIndexes=[{"IndexName": "by_n", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                          "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                        {"AttributeName": "n", "KeyType": "RANGE"}]}])
    for pk, sk, n in (("a", "1", "10"), ("b", "1", "9"), ("a", "2", "-1"), ("c", "0", "2.5"), ("b", "0", "9"),
                      ("a", "0", "100")):
        c.put_item(TableName="t", Item={"pk": {"S": pk}, "sk": {"S": sk}, "g": {"S": "x"}, "n": {"N": n}})
    compared = []
    less = DynamoType.__lt__
    monkeypatch.setattr(DynamoType, "__lt__", lambda self, other: compared.append(1) or less(self, other))
    items = c.query(TableName="t", IndexName="by_n", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    # By number (not as texts: "10" < "9"), ties by the table's keys in text order.
    assert [(i["n"]["N"], i["pk"]["S"], i["sk"]["S"]) for i in items] == [
        ("-1", "a", "2"), ("2.5", "c", "0"), ("9", "b", "0"), ("9", "b", "1"), ("10", "a", "1"), ("100", "a", "0")]
    assert compared == []


def test_a_query_of_a_keys_only_index_copies_keys_not_items(dynamodb, monkeypatch):
    """moto's Query deep-copies each whole match before projecting it; a keys-only index's copies only its keys."""
    from moto.dynamodb.models.dynamo_type import Item

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
                 GlobalSecondaryIndexes=[{"IndexName": index, "Projection": {"ProjectionType": projection},
                                          "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}
                                         for index, projection in (("keys", "KEYS_ONLY"), ("all", "ALL"))])
    for i in range(6):
        c.put_item(TableName="t", Item={"pk": {"S": f"p{i}"}, "sk": {"S": "s"}, "g": {"S": "x"},
                                        "wide": {"M": {f"k{j}": {"S": "v"} for j in range(20)}}})
    copied = []
    whole = Item.__deepcopy__
    monkeypatch.setattr(Item, "__deepcopy__", lambda self, memo: copied.append(1) or whole(self, memo))

    def query(index: str) -> list[dict]:
        return c.query(TableName="t", IndexName=index, KeyConditionExpression="g = :g",
                       ExpressionAttributeValues={":g": {"S": "x"}})["Items"]

    keys = query("keys")
    assert [sorted(i) for i in keys] == [["g", "pk", "sk"]] * 6 and copied == []
    assert len(query("all")) == 6 and len(copied) == 6  # another projection: moto's copies, as before
    c.update_item(TableName="t", Key={"pk": {"S": "p0"}, "sk": {"S": "s"}}, UpdateExpression="SET g = :y",
                  ExpressionAttributeValues={":y": {"S": "y"}})
    assert {i["pk"]["S"] for i in query("keys")} == {f"p{i}" for i in range(1, 6)}
    assert keys[0]["g"] == {"S": "x"}  # an answer is its own, not the stored item's


def test_a_new_item_is_measured_once_not_once_per_attribute(dynamodb, monkeypatch):
    """moto measures an item against DynamoDB's size limit at each attribute it stores; a new item is measured once
    (the limit itself: ``test_fast_path_responses_equal_motos_own``'s ``sizes``)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    measured = []
    size = DynamoType.size
    monkeypatch.setattr(DynamoType, "size", lambda self: measured.append(1) or size(self))
    c.put_item(TableName="t", Item={"pk": {"S": "a"}, "sk": {"S": "3"}, **{f"n{i}": {"N": str(i)} for i in range(60)}})
    assert len(measured) < 200  # moto measured the item again at each of its 62 attributes: ~1,900
    assert c.get_item(TableName="t", Key={"pk": {"S": "a"}, "sk": {"S": "3"}})["Item"]["n59"] == {"N": "59"}


def test_a_transactions_condition_is_tested_once_not_again_by_its_write(dynamodb, monkeypatch):
    """moto tests a transaction's condition of each item, then writes the item through its single-item write, which
    parses and tests the same condition again on the same item; the write is sent without it (the answers are
    moto's own: ``test_fast_path_responses_equal_motos_own``'s ``transactions``)."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    c.put_item(TableName="t", Item={**key, "n": {"N": "1"}})
    parsed = []
    parse = ConditionExpressionParser.parse
    monkeypatch.setattr(ConditionExpressionParser, "parse",
                        lambda self: parsed.append(self.condition_expression) or parse(self))
    update = {"TableName": "t", "Key": key, "UpdateExpression": "SET n = :two", "ConditionExpression": "n = :one",
              "ExpressionAttributeValues": {":one": {"N": "1"}, ":two": {"N": "2"}}}
    c.transact_write_items(TransactItems=[{"Update": update}])
    assert parsed.count("n = :one") == 2  # the request's validation and the transaction's test; moto's write: 3
    assert c.get_item(TableName="t", Key=key)["Item"]["n"] == {"N": "2"}
    parsed.clear()
    c.update_item(**{**update, "ExpressionAttributeValues": {":one": {"N": "2"}, ":two": {"N": "3"}}})
    assert parsed.count("n = :one") == 2  # a single-item write still tests its own condition


def test_a_plain_update_is_applied_without_motos_validation_and_any_other_by_moto(dynamodb, monkeypatch):
    """A plain update (placeholders, SET of a value or of a number plus or minus one, REMOVE, ADD of a number) is
    applied without moto's validation passes, alone or in a transaction; an update that is not plain, or whose
    checks could fail, is moto's (what each answers: ``test_update_expressions_update_and_fail_as_in_moto_s_own_
    validation``)."""
    from moto.dynamodb.parsing.validators import UpdateExpressionValidator

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    validated = []
    validate = UpdateExpressionValidator.validate
    monkeypatch.setattr(UpdateExpressionValidator, "validate", lambda self: validated.append(1) or validate(self))
    plain = {"TableName": "t", "Key": key, "UpdateExpression": "SET #s = :s, #f = #f - :one REMOVE #r ADD #n :one",
             "ExpressionAttributeNames": {"#s": "state", "#f": "free", "#r": "gone", "#n": "ends"},
             "ExpressionAttributeValues": {":s": {"S": "queued"}, ":one": {"N": "1"}}}
    c.put_item(TableName="t", Item={**key, "free": {"N": "4"}, "gone": {"S": "x"}})
    c.update_item(**plain, ConditionExpression="attribute_exists(#f)")
    c.transact_write_items(TransactItems=[{"Update": plain}])
    assert validated == []
    item = c.get_item(TableName="t", Key=key)["Item"]
    assert (item["state"], item["free"], item["ends"], "gone" in item) == ({"S": "queued"}, {"N": "2"}, {"N": "2"},
                                                                          False)
    for update in ({"UpdateExpression": "SET #f = if_not_exists(#f, :one)", "ExpressionAttributeNames": {"#f": "free"}},
                   {"UpdateExpression": "SET #f = #s + :one", "ExpressionAttributeNames": {"#f": "free", "#s": "state"}}):
        with contextlib.suppress(c.exceptions.ClientError):  # the second is refused: "state" is a text
            c.update_item(TableName="t", Key=key, ExpressionAttributeValues={":one": {"N": "1"}}, **update)
    assert len(validated) == 2


def test_attribute_values_cross_moto_s_json_protocol_as_they_are(dynamodb, monkeypatch):
    """A scalar attribute value is parsed as it came, not member by member of its ten; an item's attributes are
    written as one map, not value by value (what both give: ``test_fast_path_responses_equal_motos_own``)."""
    from moto.core.parse import BaseJSONParser
    from moto.core.serialize import BaseJSONSerializer

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    item = {**key, **{f"a{i}": {"S": str(i)} for i in range(30)}, "n": {"N": "1.5"}, "b": {"B": b"\x00"},
            "l": {"L": [{"S": "x"}, {"BOOL": True}]}}
    parsed: collections.Counter[str] = collections.Counter()
    written: collections.Counter[str] = collections.Counter()
    parse, serialize = BaseJSONParser._parse_shape, BaseJSONSerializer._serialize
    monkeypatch.setattr(BaseJSONParser, "_parse_shape",
                        lambda self, shape, node: parsed.update([shape.name]) or parse(self, shape, node))
    monkeypatch.setattr(BaseJSONSerializer, "_serialize", lambda self, out, value, shape, key: written.update(
        [shape.name]) or serialize(self, out, value, shape, key))
    c.put_item(TableName="t", Item=item)
    assert c.get_item(TableName="t", Key=key)["Item"] == item
    assert parsed["StringAttributeValue"] == 0 and parsed["NumberAttributeValue"] == 0  # scalars as they came
    assert parsed["BinaryAttributeValue"] == 1 and parsed["ListAttributeValue"] == 1  # moto's walk, for these
    assert written["AttributeValue"] == 0 and written["AttributeMap"] == 1  # the item's map whole


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


UPDATES = textwrap.dedent("""
    import json, os, sys
    os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
    if sys.argv[1] == "fast":
        from updraft.local import moto_speedups
        moto_speedups.apply()
    import boto3
    from moto import mock_aws

    WIDE = ("SET " + ", ".join(f"#a{i} = :v{i}" for i in range(15)) + " REMOVE " + ", ".join(f"#r{i}" for i in range(9)))
    WIDE_NAMES = {**{f"#a{i}": f"a{i}" for i in range(15)}, **{f"#r{i}": f"r{i}" for i in range(9)}}
    WIDE_VALUES = {f":v{i}": {"S": str(i)} for i in range(15)}
    CASES = [  # (update expression, names, values[, condition]): valid ones first, then each of moto's errors
        (WIDE, WIDE_NAMES, WIDE_VALUES),
        ("SET a = if_not_exists(a, :v), l = list_append(l, :l), n = n + :one", None,
         {":v": {"S": "x"}, ":l": {"L": [{"N": "3"}]}, ":one": {"N": "1"}}),
        ("SET m.deep.x = :v, m.k2 = :v ADD ns :ns DELETE ss :ss REMOVE l[0]", None,
         {":v": {"S": "y"}, ":ns": {"NS": ["7"]}, ":ss": {"SS": ["p"]}}),
        ("SET #x = :v REMOVE #y", {"#x": "x", "#y": "y"}, {":v": {"BOOL": True}}),
        ("SET a = :v SET b = :v", None, {":v": {"S": "x"}}),
        ("REMOVE a REMOVE b", None, None),
        ("ADD ns :ns ADD n :one", None, {":ns": {"NS": ["1"]}, ":one": {"N": "1"}}),
        ("SET a = :v, a = :w", None, {":v": {"S": "x"}, ":w": {"S": "y"}}),
        ("SET m.deep = :v, m.deep.x = :v", None, {":v": {"S": "x"}}),
        ("SET #a = :v, #b = :v", {"#a": "same", "#b": "same"}, {":v": {"S": "x"}}),
        ("SET pk = :v", None, {":v": {"S": "x"}}),
        ("SET a = :missing", None, {":v": {"S": "x"}}),
        ("SET a = nothing_here", None, None),
        ("ADD ss :one", None, {":one": {"N": "1"}}),
        # plain updates (moto_plain_updates): applied directly where moto's checks pass, by moto otherwise
        ("SET #a = :v, #m2 = #n - :half, #c = :l REMOVE #y ADD #k :one",
         {"#a": "a", "#m2": "m2", "#n": "n", "#c": "c", "#y": "y", "#k": "k"},
         {":v": {"S": "x"}, ":half": {"N": "0.5"}, ":l": {"L": [{"S": "x"}, {"M": {"q": {"SS": ["a"]}}}]},
          ":one": {"N": "1"}}),
        ("ADD #n :half SET #a = :v", {"#a": "a", "#n": "n"}, {":half": {"N": "1.25"}, ":v": {"NULL": True}}),
        ("SET #a = :v", {"#a": "a", "#n": "n"}, {":v": {"S": "x"}}, "attribute_exists(#n)"),
        ("SET #a = :v", {"#a": "a", "#n": "n"}, {":v": {"S": "x"}, ":two": {"N": "2"}}, "#n = :two"),
        ("SET #a = :v", {"#a": "pk"}, {":v": {"S": "x"}}),
        ("SET #a = :v REMOVE #c", {"#a": "x", "#c": "x"}, {":v": {"S": "x"}}),
        ("SET #a = #zz + :one", {"#a": "a", "#zz": "zz"}, {":one": {"N": "1"}}),
        ("SET #a = #y + :one", {"#a": "a", "#y": "y"}, {":one": {"N": "1"}}),
        ("SET #a = #n - :s", {"#a": "a", "#n": "n"}, {":s": {"S": "x"}}),
        ("ADD #y :one", {"#y": "y"}, {":one": {"N": "1"}}),
        ("ADD #a :s", {"#a": "a"}, {":s": {"S": "x"}}),
        ("ADD #ss :ss", {"#ss": "ss"}, {":ss": {"SS": ["z"]}}),
        ("SET #a = :v, #a = :v", {"#a": "a"}, {":v": {"S": "x"}}),
    ]
    out = []
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        item = {"pk": {"S": "old"}, "n": {"N": "1"}, "l": {"L": [{"N": "1"}, {"N": "2"}]}, "ss": {"SS": ["p", "q"]},
                "ns": {"NS": ["1"]}, "m": {"M": {"deep": {"M": {"x": {"S": "w"}}}}}, "y": {"S": "gone"}}
        for expression, names, values, *condition in CASES:
            for key in ("new", "old"):  # an item the update creates, and one it changes
                c.put_item(TableName="t", Item=item)
                call = {"TableName": "t", "Key": {"pk": {"S": key}}, "UpdateExpression": expression,
                        "ReturnValues": "ALL_NEW"}
                if names:
                    call["ExpressionAttributeNames"] = names
                if values:
                    call["ExpressionAttributeValues"] = values
                if condition:
                    call.update(ConditionExpression=condition[0], ReturnValuesOnConditionCheckFailure="ALL_OLD")
                try:
                    out.append(c.update_item(**call)["Attributes"])
                except c.exceptions.ClientError as exc:
                    out.append({**exc.response["Error"], "Item": exc.response.get("Item")})
                c.delete_item(TableName="t", Key={"pk": {"S": key}})
    print(json.dumps(out, sort_keys=True))
""")


@pytest.mark.slow
def test_update_expressions_update_and_fail_as_in_moto_s_own_validation():
    """Valid updates (of a new and an existing item) give the same item, invalid ones the same error and message,
    whether moto checks every node of the expression or the root once."""
    slow, fast = (json.loads(subprocess.run([sys.executable, "-c", UPDATES, mode], capture_output=True, text=True,
                                            check=True).stdout) for mode in ("slow", "fast"))
    assert fast == slow
    on_the_new_item, on_the_existing_item = fast[0::2], fast[1::2]
    assert all("Code" not in answer for answer in on_the_existing_item[:4]), on_the_existing_item[:4]
    assert on_the_existing_item[0]["a14"] == {"S": "14"} and on_the_existing_item[2]["m"]["M"]["k2"] == {"S": "y"}
    errors = [answer.get("Message", "") for answer in on_the_existing_item[4:14]]
    assert all(errors), errors  # every invalid expression failed
    assert any("Two document paths overlap" in message for message in errors)
    assert any('The "SET" section can only be used once' in message for message in errors)
    # plain updates: applied as moto applies them, a failed condition answered with the item as it was
    plain, added, exists, unequal = on_the_existing_item[14:18]
    assert (plain["a"], plain["m2"], plain["k"], "y" in plain) == ({"S": "x"}, {"N": "0.5"}, {"N": "1"}, False)
    assert plain["c"] == {"L": [{"S": "x"}, {"M": {"q": {"SS": ["a"]}}}]}
    assert added["n"] == {"N": "2.25"} and added["a"] == {"NULL": True}
    assert exists["a"] == {"S": "x"} and on_the_new_item[16]["Code"] == "ConditionalCheckFailedException"
    assert unequal["Code"] == "ConditionalCheckFailedException" and unequal["Item"]["n"] == {"N": "1"}
    refused = on_the_existing_item[18:25] + on_the_existing_item[26:]
    assert all("Code" in answer for answer in refused), refused  # each of moto's refusals, by moto
    assert on_the_existing_item[25]["ss"] == {"SS": ["p", "q", "z"]}  # a set's ADD: moto's own path


def test_a_wide_update_expression_is_checked_at_its_root_only(monkeypatch):
    """The clause count and overlapping paths checks run once per validation, not once per node."""
    import boto3
    from moto import mock_aws
    from moto.dynamodb.parsing import validators

    from updraft.local import moto_speedups

    moto_speedups.apply()
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    checked = []
    for check, method in ((validators.ActionCountValidator, "verify_action_counts"),
                          (validators.OverlappingPathsValidator, "check_for_overlapping_paths")):
        original = getattr(check, method)
        monkeypatch.setattr(check, method, lambda self, node, original=original, method=method:
                            checked.append(method) or original(self, node))
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        c.put_item(TableName="t", Item={"pk": {"S": "k"}})
        c.update_item(TableName="t", Key={"pk": {"S": "k"}},
                      UpdateExpression="SET " + ", ".join(f"a{i} = :v" for i in range(20)),
                      ExpressionAttributeValues={":v": {"S": "x"}})
    assert sorted(checked) == ["check_for_overlapping_paths", "verify_action_counts"]


def test_a_condition_text_is_lexed_once_and_each_request_meets_its_own_values(monkeypatch):
    """Two conditional writes with one condition text and different values: each is decided on its own values
    (one lands, one fails), and the text was lexed once."""
    import boto3
    from moto import mock_aws
    from moto.dynamodb.comparisons import ConditionExpressionParser

    from updraft.local import moto_speedups

    moto_speedups.apply()
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    lexed = []
    lex_one = ConditionExpressionParser._lex_one_node
    monkeypatch.setattr(ConditionExpressionParser, "_lex_one_node",
                        lambda self, rest: lexed.append(rest) or lex_one(self, rest))
    condition = "attribute_not_exists(pk) OR (#s = :expected AND size(#n) < :n)"
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        c.put_item(TableName="t", Item={"pk": {"S": "k"}, "state": {"S": "queued"}, "note": {"S": "abc"}})

        def write(expected: str) -> str:
            try:
                c.update_item(TableName="t", Key={"pk": {"S": "k"}}, UpdateExpression="SET #s = :next",
                              ConditionExpression=condition, ExpressionAttributeNames={"#s": "state", "#n": "note"},
                              ExpressionAttributeValues={":expected": {"S": expected}, ":next": {"S": "running"},
                                                         ":n": {"N": "5"}})
            except c.exceptions.ConditionalCheckFailedException:
                return "refused"
            return "written"

        assert write("scheduled") == "refused"
        tokens = len(lexed)
        assert write("queued") == "written"
        assert write("queued") == "refused"  # now running
        assert c.get_item(TableName="t", Key={"pk": {"S": "k"}})["Item"]["state"] == {"S": "running"}
    assert tokens > 10 and len(lexed) == tokens  # lexed for the first write alone


def test_a_requests_condition_is_parsed_once_and_never_with_another_requests_values(dynamodb, monkeypatch):
    """A conditional write's handler and its write parse one condition with the same names and values: the second
    takes the first's tree. The next request, with the same text and other values, is parsed for itself."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    c.put_item(TableName="t", Item={**key, "state": {"S": "queued"}})
    built = []
    make = ConditionExpressionParser._make_op_condition
    monkeypatch.setattr(ConditionExpressionParser, "_make_op_condition",
                        lambda self, node: built.append(self.expression_attribute_values) or make(self, node))

    def write(expected: str, *, transaction: bool = False) -> str:
        update = {"TableName": "t", "Key": key, "UpdateExpression": "SET #s = :next", "ConditionExpression": "#s = :e",
                  "ExpressionAttributeNames": {"#s": "state"},
                  "ExpressionAttributeValues": {":e": {"S": expected}, ":next": {"S": expected + "+"}}}
        try:
            if transaction:
                c.transact_write_items(TransactItems=[{"Update": update}])
            else:
                c.update_item(**update)
        except (c.exceptions.ConditionalCheckFailedException, c.exceptions.TransactionCanceledException):
            return "refused"
        return "written"

    assert [write("running"), write("queued"), write("queued+", transaction=True), write("queued")] == [
        "refused", "written", "written", "refused"]
    assert [values[":e"]["S"] for values in built] == ["running", "queued", "queued+", "queued"]  # one a request
    assert c.get_item(TableName="t", Key=key)["Item"]["state"] == {"S": "queued++"}


def test_a_query_served_alone_answers_the_same_without_copying_its_matches(monkeypatch):
    """Under a guard that serializes every request (``serving_alone``), a Query's matches are not deep-copied
    before they are serialized; its answer is the same, and the stored items stay as they were."""
    import boto3
    from moto import mock_aws
    from moto.dynamodb.models.dynamo_type import Item

    from updraft.local import moto_speedups

    moto_speedups.apply()
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    copied = []
    deepcopy = Item.__deepcopy__
    monkeypatch.setattr(Item, "__deepcopy__", lambda self, memo: copied.append(1) or deepcopy(self, memo))
    with mock_aws():
        c = boto3.client("dynamodb")
        c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                       KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
                       GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "ALL"},
                                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                              {"AttributeName": "sk", "KeyType": "RANGE"}]}])
        for i in range(5):
            c.put_item(TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": f"{i}"}, "g": {"S": "x"},
                                            "m": {"M": {"l": {"L": [{"N": str(i)}, {"S": "v"}]}}}})

        def queries() -> list[Any]:
            return [c.query(TableName="t", KeyConditionExpression="pk = :p",
                            ExpressionAttributeValues={":p": {"S": "p"}})["Items"],
                    c.query(TableName="t", IndexName="by_g", KeyConditionExpression="g = :g",
                            ExpressionAttributeValues={":g": {"S": "x"}}, ProjectionExpression="sk, m.l")["Items"]]

        copied.clear()
        before = queries()
        copies = len(copied)
        copied.clear()
        with moto_speedups.serving_alone():
            alone = queries()
        assert copies >= 5 and copied == []
        assert alone == before and len(before[0]) == 5
        assert before[1][0] == {"sk": {"S": "0"}, "m": {"M": {"l": {"L": [{"N": "0"}, {"S": "v"}]}}}}
        assert queries() == before  # the stored items were not changed by the uncopied answers


def test_an_items_size_is_motos_for_every_type_and_an_unchanged_item_is_measured_once(dynamodb, monkeypatch):
    """The faster measure gives moto's size (ASCII and other texts, keys, numbers, sets, binaries, nested values);
    an item is measured when stored, and again only once changed in place (moto measured each item a Query
    returns twice, at every Query). That the sizes stay moto's: ``test_fast_path_responses_equal_motos_own``."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item
    from moto.dynamodb.models.utilities import bytesize

    attrs = {"pk": {"S": "a"}, "café": {"S": "naïve ☃"}, "n": {"N": "-12.500"}, "ss": {"SS": ["x", "é"]},
             "ns": {"NS": ["1", "22"]}, "b": {"B": b"\x00\x01"}, "bs": {"BS": [b"x"]}, "t": {"BOOL": True},
             "z": {"NULL": True}, "l": {"L": [{"S": "ü"}, {"N": "3"}]}, "m": {"M": {"ключ": {"S": "v"}}}}
    item = Item(hash_key=DynamoType({"S": "a"}), range_key=None, attrs=attrs)
    assert item.size() == sum(bytesize(key) + DynamoType.size(value) for key, value in item.attrs.items())

    c = dynamodb(AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk")])
    for i in range(6):
        c.put_item(TableName="t", Item={"pk": {"S": "p"}, "sk": {"S": f"{i}"}, "v": {"N": str(i)}})
    measured = []
    monkeypatch.setattr(DynamoType, "size", lambda self: measured.append(1) or 1)  # one call per attribute measure
    query = {"TableName": "t", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}
    assert len(c.query(**query)["Items"]) == 6
    assert measured == []  # each was measured when stored
    key = {"pk": {"S": "p"}, "sk": {"S": "1"}}
    c.update_item(TableName="t", Key=key, UpdateExpression="SET w = :one", ExpressionAttributeValues={":one": {"N": "1"}})
    assert len(measured) == 1  # a SET of an attribute measures its value, not the item
    c.update_item(TableName="t", Key=key, UpdateExpression="ADD v :one", ExpressionAttributeValues={":one": {"N": "1"}})
    measured.clear()
    assert len(c.query(**query)["Items"]) == 6
    assert len(measured) == 2  # the item the ADD changed in place, measured again: its two numbers, once each
