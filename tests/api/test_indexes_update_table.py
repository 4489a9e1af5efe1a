"""UpdateTable GlobalSecondaryIndexUpdates: Create with an online backfill
(CREATING -> ACTIVE, racing writes neither lost nor duplicated), Update of
throughput, Delete; DynamoDB's validation messages."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import make_client
from tests.api.helpers import error_of


def S(text: str) -> dict[str, str]:  # noqa: N802 - DynamoDB's type letter
    return {"S": text}


def create_action(name: str = "by-g", attribute: str = "g", **extra: Any) -> dict[str, Any]:
    return {
        "Create": {
            "IndexName": name,
            "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            **extra,
        }
    }


def definition(attribute: str = "g", kind: str = "S") -> list[dict[str, str]]:
    return [{"AttributeName": attribute, "AttributeType": kind}]


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


def fill(client: Any, table: str, count: int, group: int = 5) -> None:
    for start in range(0, count, 25):
        client.batch_write_item(RequestItems={table: [
            {"PutRequest": {"Item": {"pk": S(f"item{n:05}"), "sk": S("x"), "g": S(f"g{n % group}")}}}
            for n in range(start, min(start + 25, count))
        ]})


def wait_active(client: Any, table: str, index: str, timeout_s: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        description = client.describe_table(TableName=table)["Table"]
        for entry in description.get("GlobalSecondaryIndexes", []):
            if entry["IndexName"] == index and entry["IndexStatus"] == "ACTIVE":
                return dict(entry)
        time.sleep(0.02)
    raise AssertionError(f"index {index} did not become ACTIVE")


def index_keys(client: Any, table: str, index: str) -> list[str]:
    keys: list[str] = []
    arguments: dict[str, Any] = {"TableName": table, "IndexName": index}
    while True:
        page = client.scan(**arguments)
        keys += [item["pk"]["S"] for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            return keys
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_create_gsi_backfills_existing_items(client: Any, make_table: Any) -> None:
    table = make_table()
    fill(client, table, 60)
    client.put_item(TableName=table, Item={"pk": S("sparse"), "sk": S("x")})
    answer = client.update_table(
        TableName=table, AttributeDefinitions=definition(), GlobalSecondaryIndexUpdates=[create_action()]
    )["TableDescription"]
    assert answer["TableStatus"] == "UPDATING"
    (entry,) = answer["GlobalSecondaryIndexes"]
    assert (entry["IndexStatus"], entry["Backfilling"]) == ("CREATING", False)
    assert {"AttributeName": "g", "AttributeType": "S"} in answer["AttributeDefinitions"]
    active = wait_active(client, table, "by-g")
    assert active["ItemCount"] == 60
    result = client.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                          ExpressionAttributeValues={":g": S("g3")})
    assert result["Count"] == 12
    assert client.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"


def test_backfill_skips_items_with_wrong_key_type(client: Any, make_table: Any) -> None:
    table = make_table()
    client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("x"), "g": {"N": "1"}})
    client.put_item(TableName=table, Item={"pk": S("b"), "sk": S("x"), "g": S("ok")})
    client.update_table(TableName=table, AttributeDefinitions=definition(),
                        GlobalSecondaryIndexUpdates=[create_action()])
    assert wait_active(client, table, "by-g")["ItemCount"] == 1


def test_backfill_leaves_out_items_whose_key_is_too_large(client: Any, make_table: Any) -> None:
    """An item written before the index whose would-be index key is over the
    key size limits is not indexed (a DynamoDB index key violation), the
    others are; the item itself stays in the table."""
    table = make_table()
    client.put_item(TableName=table, Item={"pk": S("big"), "sk": S("x"), "g": S("g" * 2049)})
    client.put_item(TableName=table, Item={"pk": S("fits"), "sk": S("x"), "g": S("g" * 2048)})
    client.update_table(TableName=table, AttributeDefinitions=definition(),
                        GlobalSecondaryIndexUpdates=[create_action()])
    assert wait_active(client, table, "by-g")["ItemCount"] == 1
    assert index_keys(client, table, "by-g") == ["fits"]
    assert client.get_item(TableName=table, Key={"pk": S("big"), "sk": S("x")})["Item"]["g"] == S("g" * 2049)


def test_backfill_runs_online_and_racing_writes_are_kept_exactly_once(
    client: Any, make_table: Any, endpoint: str, transport: str
) -> None:
    if transport == "embedded":
        # The embedded API has no event loop of its own: UpdateTable there
        # backfills in bounded batches before answering (docs/embedded.md).
        pytest.skip("online backfill needs the server's event loop")
    table = make_table()
    # Enough items (47 backfill batches of 256) that a DescribeTable sent right
    # after UpdateTable always lands while the backfill is still running.
    total = 12000
    fill(client, table, total)
    stop = threading.Event()
    seen_creating: list[bool] = []
    writer_client = make_client(endpoint)

    def writer() -> None:
        number = 0
        while not stop.is_set() and number < 400:
            # Change the key of existing items (early and late in scan order),
            # delete some, add new ones: all while the backfill runs.
            writer_client.put_item(TableName=table, Item={
                "pk": S(f"item{(number * 7) % total:05}"), "sk": S("x"), "g": S("moved")})
            writer_client.delete_item(TableName=table, Key={"pk": S(f"item{(number * 13 + 1) % total:05}"),
                                                            "sk": S("x")})
            writer_client.put_item(TableName=table, Item={"pk": S(f"new{number:04}"), "sk": S("x"),
                                                          "g": S("g0")})
            number += 1

    thread = threading.Thread(target=writer)
    thread.start()
    client.update_table(TableName=table, AttributeDefinitions=definition(),
                        GlobalSecondaryIndexUpdates=[create_action()])
    while True:
        entry = client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"][0]
        if entry["IndexStatus"] == "ACTIVE":
            break
        seen_creating.append(entry.get("Backfilling", False))
    stop.set()
    thread.join()
    wait_active(client, table, "by-g")
    assert seen_creating, "the backfill blocked DescribeTable until it finished"
    expected: list[str] = []
    moved_in_table = 0
    arguments: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**arguments)
        expected += [item["pk"]["S"] for item in page["Items"] if "g" in item]
        moved_in_table += sum(1 for item in page["Items"] if item.get("g") == S("moved"))
        if "LastEvaluatedKey" not in page:
            break
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    indexed = index_keys(client, table, "by-g")
    assert len(indexed) == len(set(indexed))  # no duplicates
    assert sorted(indexed) == sorted(expected)  # nothing lost, nothing stale
    moved = client.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": S("moved")}, Select="COUNT")
    assert moved["Count"] == moved_in_table > 0


def test_query_on_creating_index_is_refused(client: Any, make_table: Any) -> None:
    table = make_table()
    fill(client, table, 2000)
    client.update_table(TableName=table, AttributeDefinitions=definition(),
                        GlobalSecondaryIndexUpdates=[create_action()])
    try:
        client.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                     ExpressionAttributeValues={":g": S("g1")})
    except ClientError as error:
        assert error.response["Error"]["Message"] == (
            "Cannot read from backfilling global secondary index: by-g"
        )
    wait_active(client, table, "by-g")


def test_delete_gsi(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("x"), "g": S("v")})
    answer = client.update_table(TableName=table, GlobalSecondaryIndexUpdates=[
        {"Delete": {"IndexName": "by-g"}}
    ])["TableDescription"]
    assert answer["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    described = client.describe_table(TableName=table)["Table"]
    assert "GlobalSecondaryIndexes" not in described
    assert [d["AttributeName"] for d in described["AttributeDefinitions"]] == ["pk", "sk"]
    code, message = refused(client.query, TableName=table, IndexName="by-g",
                            KeyConditionExpression="g = :g", ExpressionAttributeValues={":g": S("v")})
    assert message == "The table does not have the specified index: by-g"
    client.put_item(TableName=table, Item={"pk": S("b"), "sk": S("x"), "g": {"N": "1"}})  # no longer a key


def test_update_gsi_throughput(client: Any, unique_name: Any) -> None:
    table = unique_name("prov")
    client.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        }],
    )
    try:
        answer = client.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by-g", "ProvisionedThroughput": {"ReadCapacityUnits": 4, "WriteCapacityUnits": 2}}}])
        assert answer["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "UPDATING"
        entry = client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"][0]
        assert entry["ProvisionedThroughput"]["ReadCapacityUnits"] == 4
        assert entry["ProvisionedThroughput"]["WriteCapacityUnits"] == 2
        code, message = refused(client.update_table, TableName=table, GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "by-g",
                        "ProvisionedThroughput": {"ReadCapacityUnits": 4, "WriteCapacityUnits": 2}}}])
        assert message.startswith("The provisioned throughput for the index by-g will not change.")
        code, message = refused(client.update_table, TableName=table, AttributeDefinitions=[
            {"AttributeName": "h", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[create_action("by-h", "h")])
        assert message == (
            "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: by-h"
        )
    finally:
        client.delete_table(TableName=table)


def test_update_table_index_validation(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "S"},
        ],
        LocalSecondaryIndexes=[{
            "IndexName": "local",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    cases = [
        ([{}], "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, "
               "GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null"),
        ([{"Delete": {"IndexName": "a1x"}, "Create": create_action()["Create"]}],
         "One or more parameter values were invalid: Only one global secondary index action is allowed "
         "per GlobalSecondaryIndexUpdate object"),
        ([{"Delete": {"IndexName": "abc"}}, {"Update": {"IndexName": "abc", "ProvisionedThroughput": {
            "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}],
         "One or more parameter values were invalid: Only one global secondary index update per index "
         "is allowed simultaneously. Index: abc"),
        ([{"Delete": {"IndexName": "local"}}],
         "Cannot delete an index that is not a GlobalSecondaryIndex: local"),
        ([create_action("local", "g")], "Attempting to create an index which already exists"),
        ([create_action()], "One or more parameter values were invalid: AttributeDefinitions is not "
                            "specified for index: by-g"),
    ]
    for updates, expected in cases:
        assert refused(client.update_table, TableName=table, GlobalSecondaryIndexUpdates=updates) == (
            "ValidationException", expected)
    code, message = refused(client.update_table, TableName=table, AttributeDefinitions=definition(),
                            GlobalSecondaryIndexUpdates=[create_action("one"), create_action("two")])
    assert (code, message) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    code, _ = refused(client.update_table, TableName=table,
                      GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "missing"}}])
    assert code == "ResourceNotFoundException"


def test_gsi_created_by_update_survives_and_is_maintained(client: Any, make_table: Any) -> None:
    table = make_table()
    client.update_table(TableName=table, AttributeDefinitions=definition(),
                        GlobalSecondaryIndexUpdates=[create_action()])
    wait_active(client, table, "by-g")
    client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("x"), "g": S("v")})
    code, message = refused(client.put_item, TableName=table,
                            Item={"pk": S("b"), "sk": S("x"), "g": {"N": "1"}})
    assert "Type mismatch for Index Key g Expected: S Actual: N IndexName: by-g" in message
    assert index_keys(client, table, "by-g") == ["a"]
