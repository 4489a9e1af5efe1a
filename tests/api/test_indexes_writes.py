"""Writes on a table with indexes: index key validation with DynamoDB's
messages, index write capacity (a key change costs two writes), and
all-or-nothing batches."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def S(text: str) -> dict[str, str]:  # noqa: N802 - DynamoDB's type letter
    return {"S": text}


def N(number: int) -> dict[str, str]:  # noqa: N802
    return {"N": str(number)}


@pytest.fixture
def table(make_table: Any) -> str:
    name: str = make_table(
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
            {"AttributeName": "b", "AttributeType": "B"},
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "by-n",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "n", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["p"]},
            },
            {
                "IndexName": "by-b",
                "KeySchema": [{"AttributeName": "b", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    )
    return name


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


def in_index(client: Any, table: str, value: str) -> list[str]:
    result = client.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                          ExpressionAttributeValues={":g": S(value)})
    return [item["sk"]["S"] for item in result["Items"]]


@pytest.mark.parametrize(
    ("attribute", "value", "expected"),
    [
        ("g", N(1), "One or more parameter values were invalid: Type mismatch for Index Key g "
                    "Expected: S Actual: N IndexName: by-g"),
        ("n", S("1"), "One or more parameter values were invalid: Type mismatch for Index Key n "
                      "Expected: N Actual: S IndexName: by-n"),
        ("g", {"NULL": True}, "One or more parameter values were invalid: Type mismatch for Index "
                              "Key g Expected: S Actual: NULL IndexName: by-g"),
        ("g", S(""), "One or more parameter values are not valid. A value specified for a secondary "
                     "index key is not supported. The AttributeValue for a key attribute cannot "
                     "contain an empty string value. IndexName: by-g, IndexKey: g"),
        ("b", {"B": b""}, "One or more parameter values are not valid. A value specified for a "
                          "secondary index key is not supported. The AttributeValue for a key "
                          "attribute cannot contain an empty binary value. IndexName: by-b, IndexKey: b"),
    ],
)
def test_put_with_bad_index_key_is_refused(
    client: Any, table: str, attribute: str, value: dict[str, Any], expected: str
) -> None:
    item = {"pk": S("a"), "sk": S("1"), attribute: value}
    assert refused(client.put_item, TableName=table, Item=item) == ("ValidationException", expected)
    assert "Item" not in client.get_item(TableName=table, Key={"pk": S("a"), "sk": S("1")})


def test_update_to_bad_index_key_is_refused_and_changes_nothing(client: Any, table: str) -> None:
    key = {"pk": S("a"), "sk": S("1")}
    client.put_item(TableName=table, Item={**key, "g": S("x")})
    code, message = refused(client.update_item, TableName=table, Key=key,
                            UpdateExpression="SET g = :v", ExpressionAttributeValues={":v": N(1)})
    assert code == "ValidationException"
    assert "Type mismatch for Index Key g Expected: S Actual: N IndexName: by-g" in message
    assert client.get_item(TableName=table, Key=key)["Item"]["g"] == S("x")
    assert in_index(client, table, "x") == ["1"]


def test_batch_with_one_bad_index_key_writes_nothing(client: Any, table: str) -> None:
    requests = [
        {"PutRequest": {"Item": {"pk": S("a"), "sk": S("1"), "g": S("x")}}},
        {"PutRequest": {"Item": {"pk": S("a"), "sk": S("2"), "g": N(5)}}},
    ]
    code, message = refused(client.batch_write_item, RequestItems={table: requests})
    assert code == "ValidationException"
    assert "Type mismatch for Index Key g" in message
    assert client.scan(TableName=table)["Count"] == 0
    assert in_index(client, table, "x") == []


def test_put_capacity_counts_index_writes(client: Any, table: str) -> None:
    result = client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("1"), "g": S("x"), "n": N(1)},
                             ReturnConsumedCapacity="INDEXES")
    capacity = result["ConsumedCapacity"]
    assert capacity["Table"]["CapacityUnits"] == 1.0
    assert capacity["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 1.0}}
    assert capacity["LocalSecondaryIndexes"] == {"by-n": {"CapacityUnits": 1.0}}
    assert capacity["CapacityUnits"] == 3.0
    total = client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("2"), "g": S("x")},
                            ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    assert total["CapacityUnits"] == 2.0


def test_item_outside_every_index_costs_no_index_write(client: Any, table: str) -> None:
    capacity = client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("1"), "misc": S("x")},
                               ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert capacity["CapacityUnits"] == 1.0
    assert "GlobalSecondaryIndexes" not in capacity


def test_key_change_moves_the_entry_and_costs_two_writes(client: Any, table: str) -> None:
    key = {"pk": S("a"), "sk": S("1")}
    client.put_item(TableName=table, Item={**key, "g": S("x")})
    capacity = client.update_item(TableName=table, Key=key, UpdateExpression="SET g = :v",
                                  ExpressionAttributeValues={":v": S("y")},
                                  ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert capacity["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 2.0}}
    assert in_index(client, table, "x") == []
    assert in_index(client, table, "y") == ["1"]


def test_unprojected_change_costs_no_index_write(client: Any, table: str) -> None:
    key = {"pk": S("a"), "sk": S("1")}
    client.put_item(TableName=table, Item={**key, "g": S("x")})
    capacity = client.update_item(TableName=table, Key=key, UpdateExpression="SET misc = :v",
                                  ExpressionAttributeValues={":v": S("z")},
                                  ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert "GlobalSecondaryIndexes" not in capacity
    projected = client.update_item(TableName=table, Key=key, UpdateExpression="SET p = :v",
                                   ExpressionAttributeValues={":v": S("z")},
                                   ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert projected["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 1.0}}


def test_delete_removes_entries_and_reports_them(client: Any, table: str) -> None:
    key = {"pk": S("a"), "sk": S("1")}
    client.put_item(TableName=table, Item={**key, "g": S("x"), "n": N(3)})
    capacity = client.delete_item(TableName=table, Key=key, ReturnConsumedCapacity="INDEXES")[
        "ConsumedCapacity"
    ]
    assert capacity["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 1.0}}
    assert capacity["LocalSecondaryIndexes"] == {"by-n": {"CapacityUnits": 1.0}}
    assert in_index(client, table, "x") == []


def test_batch_write_maintains_indexes_and_reports_capacity(client: Any, table: str) -> None:
    client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("0"), "g": S("x")})
    requests = [
        {"PutRequest": {"Item": {"pk": S("a"), "sk": S(str(n)), "g": S("x")}}} for n in range(1, 4)
    ] + [{"DeleteRequest": {"Key": {"pk": S("a"), "sk": S("0")}}}]
    result = client.batch_write_item(RequestItems={table: requests}, ReturnConsumedCapacity="INDEXES")
    (capacity,) = result["ConsumedCapacity"]
    assert capacity["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 4.0}}
    assert in_index(client, table, "x") == ["1", "2", "3"]


def test_replacing_put_keeps_one_entry(client: Any, table: str) -> None:
    for _ in range(3):
        client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("1"), "g": S("x"), "n": N(1)})
    assert in_index(client, table, "x") == ["1"]
    lsi = client.query(TableName=table, IndexName="by-n", KeyConditionExpression="pk = :p",
                       ExpressionAttributeValues={":p": S("a")})
    assert lsi["Count"] == 1


# --- item collections (tables with an LSI) ---------------------------------------------


def test_item_collection_metrics_on_lsi_table(client: Any, table: str) -> None:
    key = {"pk": S("a"), "sk": S("1")}
    put = client.put_item(TableName=table, Item={**key, "n": N(1)}, ReturnItemCollectionMetrics="SIZE")
    assert put["ItemCollectionMetrics"] == {
        "ItemCollectionKey": {"pk": S("a")},
        "SizeEstimateRangeGB": [0.0, 1.0],
    }
    update = client.update_item(TableName=table, Key=key, UpdateExpression="SET n = :n",
                                ExpressionAttributeValues={":n": N(2)}, ReturnItemCollectionMetrics="SIZE")
    assert update["ItemCollectionMetrics"]["ItemCollectionKey"] == {"pk": S("a")}
    delete = client.delete_item(TableName=table, Key=key, ReturnItemCollectionMetrics="SIZE")
    assert delete["ItemCollectionMetrics"]["SizeEstimateRangeGB"] == [0.0, 1.0]


def test_no_item_collection_metrics_without_lsi(client: Any, make_table: Any) -> None:
    name = make_table()
    answer = client.put_item(TableName=name, Item={"pk": S("a"), "sk": S("1")},
                             ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in answer


@pytest.fixture(scope="module")
def small_collections(monkeypatch_module: Any) -> Any:
    from tests.api.conftest import make_client, start_server, stop_server

    monkeypatch_module.setenv("DYNASTORE_ITEM_COLLECTION_MAX_BYTES", "300")
    process, url = start_server("--in-memory")
    try:
        yield make_client(url)
    finally:
        stop_server(process)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_item_collection_size_cap(small_collections: Any) -> None:
    client = small_collections
    client.create_table(
        TableName="collections",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "l")],
        LocalSecondaryIndexes=[{
            "IndexName": "by-l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    written = 0
    with pytest.raises(ClientError) as excinfo:
        for number in range(20):
            client.put_item(TableName="collections",
                            Item={"pk": S("big"), "sk": S(f"{number:02}"), "l": S("x"), "pad": S("p" * 40)})
            written += 1
    assert error_of(excinfo)[0] == "ItemCollectionSizeLimitExceededException"
    assert 0 < written < 20
    # The refused write left nothing behind; other partitions still accept writes.
    assert client.scan(TableName="collections", Select="COUNT")["Count"] == written
    client.put_item(TableName="collections", Item={"pk": S("small"), "sk": S("1"), "l": S("x")})


def test_batch_write_item_collection_metrics(client: Any, table: str) -> None:
    requests = [{"PutRequest": {"Item": {"pk": S(p), "sk": S(str(n))}}} for p in ("a", "b") for n in range(2)]
    result = client.batch_write_item(RequestItems={table: requests}, ReturnItemCollectionMetrics="SIZE")
    metrics = result["ItemCollectionMetrics"][table]
    assert [entry["ItemCollectionKey"] for entry in metrics] == [{"pk": S("a")}, {"pk": S("b")}]
    assert all(entry["SizeEstimateRangeGB"] == [0.0, 1.0] for entry in metrics)


# DynamoDB: "Size limit exceeded for Index Key c Actual Size: 43398 bytes Max
# Size: 2048 bytes IndexName: index4" (dynalite issue 35, and user reports);
# the sort key's 1024-byte form is by analogy.
def test_index_key_values_are_held_to_the_key_size_limits(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g", "h")],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g-h", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "h", "KeyType": "RANGE"}],
        }],
    )
    key = {"pk": {"S": "a"}, "sk": {"S": "1"}}

    def message(attribute: str, size: int, limit: int) -> str:
        return (f"One or more parameter values were invalid: Size limit exceeded for Index Key {attribute} "
                f"Actual Size: {size} bytes Max Size: {limit} bytes IndexName: by-g-h")

    writes = {
        "PutItem": lambda value: client.put_item(TableName=table, Item={**key, **value}),
        "UpdateItem": lambda value: client.update_item(
            TableName=table, Key=key, UpdateExpression="SET " + ", ".join(f"{n} = :{n}" for n in value),
            ExpressionAttributeValues={f":{n}": v for n, v in value.items()}),
        "BatchWriteItem": lambda value: client.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": {**key, **value}}}]}),
    }
    for operation, write in writes.items():
        for value, expected in (
            ({"g": {"S": "é" * 1025}}, message("g", 2050, 2048)),
            ({"h": {"S": "x" * 1025}}, message("h", 1025, 1024)),
        ):
            with pytest.raises(ClientError) as excinfo:
                write(value)
            assert error_of(excinfo) == ("ValidationException", expected), operation
        write({"g": {"S": "x" * 2048}, "h": {"S": "y" * 1024}})  # at the limits: fine
    with pytest.raises(ClientError) as excinfo:
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {**key, "g": {"S": "x" * 2049}}}}])
    assert excinfo.value.response["CancellationReasons"][0]["Code"] == "ValidationError"
    assert client.get_item(TableName=table, Key=key)["Item"]["g"] == {"S": "x" * 2048}
