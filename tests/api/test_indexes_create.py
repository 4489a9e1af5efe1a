"""Secondary indexes at CreateTable, DescribeTable and DeleteTable: DynamoDB's
validation and messages, and the index descriptions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def definitions(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": kind} for name, kind in pairs]


def key(*elements: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": kind} for name, kind in elements]


def gsi(name: str, *elements: tuple[str, str], projection: str = "ALL", **extra: Any) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": key(*elements),
        "Projection": {"ProjectionType": projection, **extra},
    }


def lsi(name: str, sort: str, projection: str = "ALL", **extra: Any) -> dict[str, Any]:
    return gsi(name, ("pk", "HASH"), (sort, "RANGE"), projection=projection, **extra)


@pytest.fixture
def create(client: Any, unique_name: Callable[[str], str]) -> Any:
    created: list[str] = []

    def run(**arguments: Any) -> dict[str, Any]:
        arguments.setdefault("TableName", unique_name("idx"))
        arguments.setdefault("BillingMode", "PAY_PER_REQUEST")
        arguments.setdefault("KeySchema", key(("pk", "HASH"), ("sk", "RANGE")))
        answer: dict[str, Any] = client.create_table(**arguments)
        created.append(arguments["TableName"])
        return answer

    yield run
    for name in created:
        try:
            client.delete_table(TableName=name)
        except ClientError:
            pass


def refused(create: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        create(**arguments)
    return error_of(excinfo)


BASE = definitions(("pk", "S"), ("sk", "S"))


def test_create_with_lsi_and_gsi_is_described(client: Any, create: Any) -> None:
    answer = create(
        AttributeDefinitions=BASE + definitions(("lsk", "N"), ("g", "S")),
        LocalSecondaryIndexes=[lsi("by-lsk", "lsk", "KEYS_ONLY")],
        GlobalSecondaryIndexes=[
            gsi("by-g", ("g", "HASH"), ("sk", "RANGE"), projection="INCLUDE", NonKeyAttributes=["x", "y"])
        ],
    )["TableDescription"]
    assert answer["GlobalSecondaryIndexes"][0]["IndexStatus"] == "CREATING"
    table = client.describe_table(TableName=answer["TableName"])["Table"]
    (local,) = table["LocalSecondaryIndexes"]
    assert local["IndexName"] == "by-lsk"
    assert local["KeySchema"] == key(("pk", "HASH"), ("lsk", "RANGE"))
    assert local["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert local["IndexSizeBytes"] == 0 and local["ItemCount"] == 0
    assert local["IndexArn"] == f"{table['TableArn']}/index/by-lsk"
    assert "IndexStatus" not in local and "ProvisionedThroughput" not in local
    (global_,) = table["GlobalSecondaryIndexes"]
    assert global_["IndexStatus"] == "ACTIVE"
    assert global_["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]}
    assert global_["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }
    assert global_["IndexArn"] == f"{table['TableArn']}/index/by-g"


def test_provisioned_gsi_reports_its_throughput(client: Any, create: Any) -> None:
    name = create(
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        AttributeDefinitions=BASE + definitions(("g", "S")),
        GlobalSecondaryIndexes=[
            dict(
                gsi("by-g", ("g", "HASH")),
                ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 2},
            )
        ],
    )["TableDescription"]["TableName"]
    index = client.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert index["ProvisionedThroughput"]["WriteCapacityUnits"] == 2


def test_index_statistics_follow_writes(client: Any, create: Any) -> None:
    name = create(
        AttributeDefinitions=BASE + definitions(("g", "S")),
        GlobalSecondaryIndexes=[gsi("by-g", ("g", "HASH"), projection="KEYS_ONLY")],
    )["TableDescription"]["TableName"]
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "x"}})
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "2"}})  # sparse
    index = client.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["ItemCount"] == 1
    # KEYS_ONLY: pk "a" (2 + 1 bytes), sk "1" (2 + 1), g "x" (1 + 1), plus 100 per entry.
    assert index["IndexSizeBytes"] == 8 + 100


def test_multi_attribute_gsi_key_is_accepted(client: Any, create: Any) -> None:
    name = create(
        AttributeDefinitions=BASE + definitions(("t", "S"), ("c", "N"), ("d", "S"), ("e", "N")),
        GlobalSecondaryIndexes=[
            gsi("multi", ("t", "HASH"), ("c", "HASH"), ("d", "RANGE"), ("e", "RANGE"))
        ],
    )["TableDescription"]["TableName"]
    index = client.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["KeySchema"] == key(("t", "HASH"), ("c", "HASH"), ("d", "RANGE"), ("e", "RANGE"))


def test_a_two_attribute_partition_key_without_sort_key(client: Any, create: Any) -> None:
    """A GSI's two elements may both be HASH (a multi-attribute partition key,
    no sort key), in CreateTable and in UpdateTable's Create; a table's may not."""
    name = create(
        AttributeDefinitions=BASE + definitions(("t", "S"), ("c", "N")),
        GlobalSecondaryIndexes=[gsi("two-hash", ("t", "HASH"), ("c", "HASH"))],
    )["TableDescription"]["TableName"]
    client.update_table(
        TableName=name,
        AttributeDefinitions=BASE + definitions(("t", "S"), ("c", "N"), ("u", "S"), ("v", "S")),
        GlobalSecondaryIndexUpdates=[{"Create": gsi("two-hash-later", ("u", "HASH"), ("v", "HASH"))}],
    )
    indexes = {index["IndexName"]: index for index in client.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"]}
    assert indexes["two-hash"]["KeySchema"] == key(("t", "HASH"), ("c", "HASH"))
    assert indexes["two-hash-later"]["KeySchema"] == key(("u", "HASH"), ("v", "HASH"))
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "t": {"S": "x"}, "c": {"N": "2"}})
    found = client.query(TableName=name, IndexName="two-hash", KeyConditionExpression="t = :t AND c = :c",
                         ExpressionAttributeValues={":t": {"S": "x"}, ":c": {"N": "2"}})
    assert [item["pk"] for item in found["Items"]] == [{"S": "a"}]
    with pytest.raises(ClientError) as excinfo:
        client.create_table(
            TableName=name + "-t", BillingMode="PAY_PER_REQUEST", AttributeDefinitions=BASE,
            KeySchema=key(("pk", "HASH"), ("sk", "HASH")),
        )
    assert excinfo.value.response["Error"]["Message"] == (
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
    )


def test_delete_table_removes_indexes(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("idx")
    arguments = dict(
        TableName=name,
        AttributeDefinitions=BASE + definitions(("g", "S")),
        GlobalSecondaryIndexes=[gsi("by-g", ("g", "HASH"))],
    )
    create(**arguments)
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "x"}})
    answer = client.delete_table(TableName=name)["TableDescription"]
    assert answer["GlobalSecondaryIndexes"][0]["ItemCount"] == 1
    create(**arguments)  # same name again: the old index entries are gone
    result = client.query(
        TableName=name,
        IndexName="by-g",
        KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": "x"}},
    )
    assert result["Items"] == []


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {
                "KeySchema": key(("pk", "HASH")),
                "AttributeDefinitions": definitions(("pk", "S"), ("l", "S")),
                "LocalSecondaryIndexes": [lsi("idx", "l")],
            },
            "One or more parameter values were invalid: Table KeySchema does not have a range key, "
            "which is required when specifying a LocalSecondaryIndex",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("l", "S")),
                "LocalSecondaryIndexes": [gsi("idx", ("l", "HASH"), ("sk", "RANGE"))],
            },
            "One or more parameter values were invalid: Index KeySchema does not have the same "
            "leading hash key as table KeySchema for index: idx. index hash key: l, table hash key: pk",
        ),
        (
            {
                "AttributeDefinitions": BASE,
                "LocalSecondaryIndexes": [gsi("idx", ("pk", "HASH"))],
            },
            "One or more parameter values were invalid: Index KeySchema does not have a range key "
            "for index: idx",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("l", "S")),
                "LocalSecondaryIndexes": [lsi("idx", "l"), lsi("idx", "l")],
            },
            "One or more parameter values were invalid: Duplicate index name: idx",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("l", "S")),
                "LocalSecondaryIndexes": [lsi("idx", "l")],
                "GlobalSecondaryIndexes": [gsi("idx", ("l", "HASH"))],
            },
            "One or more parameter values were invalid: Duplicate index name: idx",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("l", "S")),
                "LocalSecondaryIndexes": [lsi(f"idx{i}", "l") for i in range(6)],
            },
            "One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds "
            "per-table limit of 5",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [gsi(f"idx{i}", ("g", "HASH")) for i in range(21)],
            },
            "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the "
            "per-table limit of 20",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S"), ("unused", "S")),
                "GlobalSecondaryIndexes": [gsi("idx", ("g", "HASH"))],
            },
            "One or more parameter values were invalid: Some AttributeDefinitions are not used. "
            "AttributeDefinitions: [g, pk, sk, unused], keys used: [g, pk, sk]",
        ),
        (
            {
                "AttributeDefinitions": BASE,
                "GlobalSecondaryIndexes": [gsi("idx", ("missing", "HASH"))],
            },
            "One or more parameter values were invalid: Some index key attributes are not defined "
            "in AttributeDefinitions. Keys: [missing], AttributeDefinitions: [pk, sk]",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [gsi("idx", ("g", "HASH"), projection="INCLUDE")],
            },
            "One or more parameter values were invalid: ProjectionType is INCLUDE, but "
            "NonKeyAttributes is not specified",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [
                    gsi("idx", ("g", "HASH"), projection="KEYS_ONLY", NonKeyAttributes=["a"])
                ],
            },
            "One or more parameter values were invalid: ProjectionType is KEYS_ONLY, but "
            "NonKeyAttributes is specified",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [
                    gsi("idx", ("g", "HASH"), projection="INCLUDE", NonKeyAttributes=["a", "a"])
                ],
            },
            "One or more parameter values were invalid: Duplicate element in NonKeyAttributes: a",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [
                    gsi(f"idx{i}", ("g", "HASH"), projection="INCLUDE",
                        NonKeyAttributes=[f"a{i}-{j}" for j in range(20)])
                    for i in range(6)
                ],
            },
            "One or more parameter values were invalid: Number of projected attributes in all "
            "indexes exceeds limit of 100",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [gsi("idx", ("g", "RANGE"))],
            },
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S"), ("h", "S"), ("i", "S")),
                "GlobalSecondaryIndexes": [gsi("idx", ("g", "HASH"), ("h", "RANGE"), ("i", "HASH"))],
            },
            "One or more parameter values were invalid: All HASH key attributes must precede RANGE "
            "key attributes in the KeySchema",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(*[(f"h{i}", "S") for i in range(5)]),
                "GlobalSecondaryIndexes": [gsi("idx", *[(f"h{i}", "HASH") for i in range(5)])],
            },
            "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed "
            "number of HASH key attributes",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(*[(f"r{i}", "S") for i in range(5)]),
                "GlobalSecondaryIndexes": [
                    gsi("idx", ("pk", "HASH"), *[(f"r{i}", "RANGE") for i in range(5)])
                ],
            },
            "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed "
            "number of RANGE key attributes",
        ),
        (
            {
                "AttributeDefinitions": BASE + definitions(("g", "S")),
                "GlobalSecondaryIndexes": [gsi("idx", ("g", "HASH"), ("g", "HASH"), ("sk", "RANGE"))],
            },
            "The KeySchema contains multiple key attributes with the same name",
        ),
        (
            {"AttributeDefinitions": BASE, "GlobalSecondaryIndexes": []},
            "One or more parameter values were invalid: List of GlobalSecondaryIndexes is empty",
        ),
    ],
)
def test_create_table_index_validation(create: Any, arguments: dict[str, Any], expected: str) -> None:
    assert refused(create, **arguments) == ("ValidationException", expected)


def test_provisioned_table_needs_gsi_throughput(create: Any) -> None:
    code, message = refused(
        create,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        AttributeDefinitions=BASE + definitions(("g", "S")),
        GlobalSecondaryIndexes=[gsi("idx", ("g", "HASH"))],
    )
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput is not specified for index: idx",
    )


def test_on_demand_table_refuses_gsi_throughput(create: Any) -> None:
    code, message = refused(
        create,
        AttributeDefinitions=BASE + definitions(("g", "S")),
        GlobalSecondaryIndexes=[
            dict(
                gsi("idx", ("g", "HASH")),
                ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            )
        ],
    )
    assert code == "ValidationException"
    assert "ProvisionedThroughput should not be specified for index: idx" in message
