"""ConsumedCapacity's shape (issue 17): a plain read or write reports the
aggregate CapacityUnits alone, at the top level and on Table/indexes under
INDEXES; only the transactional operations add ReadCapacityUnits or
WriteCapacityUnits (a conformance suite's captures of the service, eu-west-2,
2026; dynalite's recorded answers)."""

from __future__ import annotations

from typing import Any


def test_plain_operations_report_no_read_write_split(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "l")],
        LocalSecondaryIndexes=[{"IndexName": "by-l", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                  {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
    )
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    put = client.put_item(TableName=table, Item={**key, "l": {"S": "x"}}, ReturnConsumedCapacity="INDEXES")
    assert put["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                                       "LocalSecondaryIndexes": {"by-l": {"CapacityUnits": 1.0}}}
    got = client.get_item(TableName=table, Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    assert got["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    got = client.get_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL")
    assert got["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
    queried = client.query(TableName=table, KeyConditionExpression="pk = :p", ExpressionAttributeValues={
        ":p": {"S": "a"}}, ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert queried["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}
    by_index = client.query(TableName=table, IndexName="by-l", KeyConditionExpression="pk = :p",
                            ExpressionAttributeValues={":p": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    assert by_index["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
                                            "LocalSecondaryIndexes": {"by-l": {"CapacityUnits": 0.5}}}
    scanned = client.scan(TableName=table, ReturnConsumedCapacity="TOTAL")
    assert scanned["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
    written = client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": {**key, "v": {"S": "1"}}}}]},
                                      ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0}]
    batch = client.batch_get_item(RequestItems={table: {"Keys": [key]}}, ReturnConsumedCapacity="TOTAL")
    assert batch["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 0.5}]
    deleted = client.delete_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL")
    assert deleted["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}  # no longer in the LSI


def test_transactions_split_reads_and_writes(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    key = {"pk": {"S": "a"}}
    written = client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": key}}],
                                          ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]
    read = client.transact_get_items(TransactItems=[{"Get": {"TableName": table, "Key": key}}],
                                     ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}]
