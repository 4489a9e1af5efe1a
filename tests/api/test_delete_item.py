"""DeleteItem: deletes, conditions, ReturnValues, key validation, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

KEY = {"pk": {"S": "k"}}


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.delete_item(**request)
    return error_of(excinfo)


def exists(client: Any, table: str, key: dict[str, Any]) -> bool:
    return "Item" in client.get_item(TableName=table, Key=key, ConsistentRead=True)


def test_delete_existing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"S": "x"}})
    response = client.delete_item(TableName=table, Key=KEY)
    assert set(response) == {"ResponseMetadata"}
    assert not exists(client, table, KEY)


def test_delete_missing_item_succeeds(client: Any, make_table: Any) -> None:
    table = make_table()
    response = client.delete_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"S": "b"}})
    assert set(response) == {"ResponseMetadata"}


def test_delete_only_the_addressed_item(client: Any, make_table: Any) -> None:
    table = make_table()
    client.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"S": "1"}})
    client.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"S": "2"}})
    client.delete_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"S": "1"}})
    assert not exists(client, table, {"pk": {"S": "a"}, "sk": {"S": "1"}})
    assert exists(client, table, {"pk": {"S": "a"}, "sk": {"S": "2"}})


def test_return_values_all_old(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "v": {"N": "1"}}
    client.put_item(TableName=table, Item=item)
    assert client.delete_item(TableName=table, Key=KEY, ReturnValues="ALL_OLD")["Attributes"] == item
    assert "Attributes" not in client.delete_item(TableName=table, Key=KEY, ReturnValues="ALL_OLD")


@pytest.mark.parametrize("return_values", ["UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"])
def test_other_return_values_refused(client: Any, make_table: Any, return_values: str) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Key=KEY, ReturnValues=return_values)
    assert code == "ValidationException"
    assert "ReturnValues can only be ALL_OLD or NONE" in message


def test_condition_expression(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "state": {"S": "open"}})
    code, message = refused(
        client,
        TableName=table,
        Key=KEY,
        ConditionExpression="#s = :closed",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":closed": {"S": "closed"}},
    )
    assert (code, message) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert exists(client, table, KEY)
    client.delete_item(
        TableName=table,
        Key=KEY,
        ConditionExpression="#s = :open",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":open": {"S": "open"}},
    )
    assert not exists(client, table, KEY)


def test_condition_failure_returns_item_when_asked(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "v": {"N": "1"}}
    client.put_item(TableName=table, Item=item)
    with pytest.raises(ClientError) as excinfo:
        client.delete_item(
            TableName=table,
            Key=KEY,
            ConditionExpression="attribute_not_exists(v)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert excinfo.value.response["Item"] == item


def test_condition_on_missing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, _ = refused(client, TableName=table, Key=KEY, ConditionExpression="attribute_exists(pk)")
    assert code == "ConditionalCheckFailedException"


def test_legacy_expected(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"N": "1"}})
    code, _ = refused(client, TableName=table, Key=KEY, Expected={"v": {"Value": {"N": "2"}}})
    assert code == "ConditionalCheckFailedException"
    client.delete_item(TableName=table, Key=KEY, Expected={"v": {"Value": {"N": "1"}}})
    assert not exists(client, table, KEY)


def test_mixing_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TableName=table, Key=KEY, Expected={"v": {"Exists": False}}, ConditionExpression="attribute_exists(v)"
    )
    assert code == "ValidationException"
    assert "Can not use both expression and non-expression parameters in the same request" in message


def test_missing_table(client: Any, unique_name: Any) -> None:
    code, message = refused(client, TableName=unique_name("missing"), Key=KEY)
    assert code == "ResourceNotFoundException"
    assert "Requested resource not found" in message


@pytest.mark.parametrize("key", [{}, {"pk": {"S": "a"}}, {"pk": {"S": "a"}, "sk": {"N": "1"}}])
def test_key_must_match_schema(client: Any, make_table: Any, key: dict[str, Any]) -> None:
    table = make_table()
    code, message = refused(client, TableName=table, Key=key)
    assert (code, message) == ("ValidationException", "The provided key element does not match the schema")


def test_capacity(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    missing = client.delete_item(TableName=table, Key=KEY, ReturnConsumedCapacity="TOTAL")
    assert missing["ConsumedCapacity"]["TableName"] == table
    assert missing["ConsumedCapacity"]["CapacityUnits"] == 1.0
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"S": "x" * 1500}})
    large = client.delete_item(TableName=table, Key=KEY, ReturnConsumedCapacity="INDEXES")
    assert large["ConsumedCapacity"]["CapacityUnits"] == 2.0
    assert large["ConsumedCapacity"]["Table"]["CapacityUnits"] == 2.0
