"""BatchGetItem, BatchWriteItem, TransactGetItems, TransactWriteItems, and
Query/Scan paging through the Python DAX client."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.dax.conftest import create_table, unique


def test_batch_write_then_batch_get_across_tables(dax: Any, ddb: Any, table: str, hash_table: str) -> None:
    pk = {"S": unique()}
    written = dax.batch_write_item(RequestItems={
        table: [{"PutRequest": {"Item": {"pk": pk, "sk": {"N": str(n)}, "v": {"N": str(n)}}}} for n in range(4)],
        hash_table: [{"PutRequest": {"Item": {"pk": pk, "other": {"S": "x"}}}}],
    }, ReturnConsumedCapacity="TOTAL")
    assert written["UnprocessedItems"] == {}
    assert sorted((c["TableName"], c["CapacityUnits"]) for c in written["ConsumedCapacity"]) == sorted(
        [(table, 4.0), (hash_table, 1.0)])
    over_http = ddb.scan(TableName=table, ConsistentRead=True)["Items"]
    assert len([item for item in over_http if item["pk"] == pk]) == 4
    got = dax.batch_get_item(RequestItems={
        table: {"Keys": [{"pk": pk, "sk": {"N": str(n)}} for n in (0, 2, 9)]},
        hash_table: {"Keys": [{"pk": pk}], "ProjectionExpression": "other"},
    })
    assert sorted(item["v"]["N"] for item in got["Responses"][table]) == ["0", "2"]
    assert got["Responses"][hash_table] == [{"other": {"S": "x"}}]
    assert got["UnprocessedKeys"] == {}
    dax.batch_write_item(RequestItems={table: [{"DeleteRequest": {"Key": {"pk": pk, "sk": {"N": "0"}}}}]})
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": pk, "sk": {"N": "0"}})
    again = dax.batch_get_item(RequestItems={table: {"Keys": [{"pk": pk, "sk": {"N": "0"}}]}})
    assert again["Responses"][table] == []  # written through: the delete is in the cache


def test_batch_get_item_is_cached_per_key_and_consistent_reads_pass_through(dax: Any, ddb: Any, table: str) -> None:
    key = {"pk": {"S": unique()}, "sk": {"N": "1"}}
    ddb.put_item(TableName=table, Item={**key, "v": {"S": "old"}})
    assert dax.batch_get_item(RequestItems={table: {"Keys": [key]}})["Responses"][table][0]["v"] == {"S": "old"}
    ddb.put_item(TableName=table, Item={**key, "v": {"S": "new"}})
    assert dax.get_item(TableName=table, Key=key)["Item"]["v"] == {"S": "old"}  # one item cache
    assert dax.batch_get_item(RequestItems={table: {"Keys": [key]}})["Responses"][table][0]["v"] == {"S": "old"}
    fresh = dax.batch_get_item(RequestItems={table: {"Keys": [key], "ConsistentRead": True}})
    assert fresh["Responses"][table][0]["v"] == {"S": "new"}


def test_batch_errors_are_dynamodbs(dax: Any, table: str) -> None:
    with pytest.raises(ClientError) as caught:
        dax.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": "1"},
                                                                            "big": {"S": "x" * 409_600}}}}]})
    assert caught.value.response["Error"]["Code"] == "ValidationException"


def test_transact_write_items_and_transact_get_items(dax: Any, ddb: Any, table: str) -> None:
    pk = {"S": unique()}
    ddb.put_item(TableName=table, Item={"pk": pk, "sk": {"N": "1"}, "balance": {"N": "10"}})
    dax.get_item(TableName=table, Key={"pk": pk, "sk": {"N": "1"}})  # cached: 10
    result = dax.transact_write_items(TransactItems=[
        {"Update": {"TableName": table, "Key": {"pk": pk, "sk": {"N": "1"}},
                    "UpdateExpression": "SET balance = balance - :five", "ConditionExpression": "balance >= :five",
                    "ExpressionAttributeValues": {":five": {"N": "5"}}}},
        {"Put": {"TableName": table, "Item": {"pk": pk, "sk": {"N": "2"}, "balance": {"N": "5"}},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ], ReturnConsumedCapacity="TOTAL", ClientRequestToken=unique())
    assert result["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    assert dax.get_item(TableName=table, Key={"pk": pk, "sk": {"N": "1"}})["Item"]["balance"] == {"N": "5"}
    got = dax.transact_get_items(TransactItems=[
        {"Get": {"TableName": table, "Key": {"pk": pk, "sk": {"N": "1"}}}},
        {"Get": {"TableName": table, "Key": {"pk": pk, "sk": {"N": "2"}}, "ProjectionExpression": "balance"}},
        {"Get": {"TableName": table, "Key": {"pk": pk, "sk": {"N": "3"}}}},
    ])
    assert got["Responses"] == [
        {"Item": {"pk": pk, "sk": {"N": "1"}, "balance": {"N": "5"}}},
        {"Item": {"balance": {"N": "5"}}},
        {},
    ]


def test_a_cancelled_transaction_names_its_reasons_and_writes_nothing(dax: Any, ddb: Any, table: str) -> None:
    pk = {"S": unique()}
    ddb.put_item(TableName=table, Item={"pk": pk, "sk": {"N": "1"}, "v": {"N": "1"}})
    with pytest.raises(ClientError) as caught:
        dax.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": pk, "sk": {"N": "2"}}}},
            {"ConditionCheck": {"TableName": table, "Key": {"pk": pk, "sk": {"N": "1"}},
                                "ConditionExpression": "v = :two", "ExpressionAttributeValues": {":two": {"N": "2"}},
                                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        ])
    error = caught.value
    assert error.response["Error"]["Code"] == "TransactionCanceledException"
    assert error.response["Error"]["Message"].endswith("[None, ConditionalCheckFailed]")
    reasons = error.cancellation_reasons  # type: ignore[attr-defined]  # code, message, item for each action
    assert reasons[0::3] == ["None", "ConditionalCheckFailed"]
    assert reasons[1::3] == [None, "The conditional request failed"]
    assert reasons[2] is None and isinstance(reasons[5], bytes)  # ALL_OLD: the old item, in DAX's shape
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": pk, "sk": {"N": "2"}})


def test_query_and_scan_pages_through_dax(dax: Any, ddb: Any) -> None:
    name = create_table(ddb, ExtraDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [
                            {"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}])
    pk = {"S": unique()}
    for n in range(7):
        dax.put_item(TableName=name, Item={"pk": pk, "sk": {"N": str(n)}, "g": {"S": "G"}, "v": {"N": str(n * 10)}})
    seen, start = [], None
    while True:
        page = dax.query(TableName=name, KeyConditionExpression="pk = :p AND sk >= :one",
                         FilterExpression="v <> :twenty", ProjectionExpression="sk, v",
                         ExpressionAttributeValues={":p": pk, ":one": {"N": "1"}, ":twenty": {"N": "20"}},
                         Limit=2, ScanIndexForward=False, ConsistentRead=True,
                         **({"ExclusiveStartKey": start} if start else {}))
        seen += [item["sk"]["N"] for item in page["Items"]]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    assert seen == ["6", "5", "4", "3", "1"]
    on_index, start = [], None
    while True:
        page = dax.query(TableName=name, IndexName="by-g", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "G"}}, Limit=3,
                         **({"ExclusiveStartKey": start} if start else {}))
        on_index += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
        assert set(start) == {"pk", "sk", "g"}
    assert len(on_index) == 7
    counted = dax.scan(TableName=name, Select="COUNT", Segment=0, TotalSegments=1)
    assert counted["Count"] == 7 and "Items" not in counted
