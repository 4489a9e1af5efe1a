"""UpdateItem: upserts, key protection, ReturnValues, legacy AttributeUpdates, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

KEY = {"pk": {"S": "k"}}


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.update_item(**request)
    return error_of(excinfo)


def get(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return item


def test_update_creates_missing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.update_item(
        TableName=table, Key=KEY, UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"S": "x"}}
    )
    assert set(response) == {"ResponseMetadata"}
    assert get(client, table, KEY) == {"pk": {"S": "k"}, "v": {"S": "x"}}


def test_update_without_expression_creates_key_only_item(client: Any, make_table: Any) -> None:
    table = make_table()
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    assert set(client.update_item(TableName=table, Key=key)) == {"ResponseMetadata"}
    assert get(client, table, key) == key


def test_update_without_expression_leaves_existing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "v": {"N": "1"}}
    client.put_item(TableName=table, Item=item)
    response = client.update_item(TableName=table, Key=KEY, ReturnValues="ALL_NEW")
    assert response["Attributes"] == item


def test_set_remove_add_delete(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(
        TableName=table,
        Item={"pk": {"S": "k"}, "gone": {"S": "x"}, "count": {"N": "1"}, "tags": {"SS": ["a", "b"]}},
    )
    client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="SET #n = :name REMOVE gone ADD #c :one DELETE tags :a",
        ExpressionAttributeNames={"#n": "name", "#c": "count"},
        ExpressionAttributeValues={":name": {"S": "N"}, ":one": {"N": "1"}, ":a": {"SS": ["a"]}},
    )
    assert get(client, table, KEY) == {
        "pk": {"S": "k"},
        "name": {"S": "N"},
        "count": {"N": "2"},
        "tags": {"SS": ["b"]},
    }


def test_return_values(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "a": {"N": "1"}, "b": {"S": "keep"}})

    def update(return_values: str, value: str) -> Any:
        return client.update_item(
            TableName=table,
            Key=KEY,
            UpdateExpression="SET a = :v",
            ExpressionAttributeValues={":v": {"N": value}},
            ReturnValues=return_values,
        ).get("Attributes")

    assert update("NONE", "2") is None
    assert update("ALL_OLD", "3") == {"pk": {"S": "k"}, "a": {"N": "2"}, "b": {"S": "keep"}}
    assert update("UPDATED_OLD", "4") == {"a": {"N": "3"}}
    assert update("ALL_NEW", "5") == {"pk": {"S": "k"}, "a": {"N": "5"}, "b": {"S": "keep"}}
    assert update("UPDATED_NEW", "6") == {"a": {"N": "6"}}


def test_updated_new_returns_only_the_nested_path(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(
        TableName=table, Item={"pk": {"S": "k"}, "m": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}}}
    )
    response = client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="SET m.x = :v",
        ExpressionAttributeValues={":v": {"N": "9"}},
        ReturnValues="UPDATED_NEW",
    )
    assert response["Attributes"] == {"m": {"M": {"x": {"N": "9"}}}}


def test_updated_old_of_created_item_is_empty(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"N": "1"}},
        ReturnValues="UPDATED_OLD",
    )
    assert "Attributes" not in response
    response = client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="REMOVE v",
        ReturnValues="UPDATED_NEW",
    )
    assert "Attributes" not in response


@pytest.mark.parametrize(
    ("expression", "values"),
    [
        ("SET pk = :v", {":v": {"S": "x"}}),
        ("REMOVE pk", None),
        ("SET extra = :v, pk = :v", {":v": {"S": "x"}}),
        ("ADD pk :n", {":n": {"N": "1"}}),
    ],
)
def test_key_attributes_cannot_be_updated(
    client: Any, make_table: Any, expression: str, values: dict[str, Any] | None
) -> None:
    table = make_table(sk=None)
    request: dict[str, Any] = {"TableName": table, "Key": KEY, "UpdateExpression": expression}
    if values:
        request["ExpressionAttributeValues"] = values
    code, message = refused(client, **request)
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: Cannot update attribute pk. "
        "This attribute is part of the key"
    )


def test_sort_key_cannot_be_updated(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(
        client,
        TableName=table,
        Key={"pk": {"S": "a"}, "sk": {"S": "b"}},
        AttributeUpdates={"sk": {"Value": {"S": "c"}}},
    )
    assert code == "ValidationException"
    assert "Cannot update attribute sk. This attribute is part of the key" in message


def test_condition_failure(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "version": {"N": "2"}})
    with pytest.raises(ClientError) as excinfo:
        client.update_item(
            TableName=table,
            Key=KEY,
            UpdateExpression="SET version = :next",
            ConditionExpression="version = :current",
            ExpressionAttributeValues={":next": {"N": "2"}, ":current": {"N": "1"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert excinfo.value.response["Item"] == {"pk": {"S": "k"}, "version": {"N": "2"}}


def test_condition_on_missing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, _ = refused(
        client, TableName=table, Key=KEY, UpdateExpression="SET v = :v",
        ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":v": {"N": "1"}},
    )
    assert code == "ConditionalCheckFailedException"
    assert get(client, table, KEY) is None


def test_legacy_attribute_updates(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.update_item(
        TableName=table,
        Key=KEY,
        AttributeUpdates={
            "a": {"Value": {"S": "x"}},
            "n": {"Action": "ADD", "Value": {"N": "5"}},
            "s": {"Action": "ADD", "Value": {"SS": ["a", "b"]}},
        },
    )
    response = client.update_item(
        TableName=table,
        Key=KEY,
        AttributeUpdates={"a": {"Action": "DELETE"}, "s": {"Action": "DELETE", "Value": {"SS": ["a"]}}},
        Expected={"n": {"Value": {"N": "5"}}},
        ReturnValues="ALL_NEW",
    )
    assert response["Attributes"] == {"pk": {"S": "k"}, "n": {"N": "5"}, "s": {"SS": ["b"]}}


def test_legacy_and_expression_cannot_mix(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Key=KEY,
        AttributeUpdates={"a": {"Value": {"S": "x"}}},
        UpdateExpression="SET a = :v",
        ExpressionAttributeValues={":v": {"S": "x"}},
    )
    assert code == "ValidationException"
    assert message == (  # in the request envelope (dynoxide's capture of the service)
        "1 validation error detected: Can not use both expression and non-expression parameters in "
        "the same request: Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}"
    )


def test_unused_expression_values(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Key=KEY,
        UpdateExpression="REMOVE a",
        ConditionExpression="b = :b",
        ExpressionAttributeValues={":b": {"S": "x"}, ":c": {"S": "y"}},
    )
    assert code == "ValidationException"
    assert "Value provided in ExpressionAttributeValues unused in expressions: keys: {:c}" in message


def test_update_expression_syntax_error(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Key=KEY, UpdateExpression="SET a")
    assert code == "ValidationException"
    assert "Invalid UpdateExpression: Syntax error" in message


def test_item_too_large_after_update(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "a": {"S": "x" * 300_000}})
    code, message = refused(
        client,
        TableName=table,
        Key=KEY,
        UpdateExpression="SET b = :v",
        ExpressionAttributeValues={":v": {"S": "y" * 200_000}},
    )
    assert (code, message) == ("ValidationException", "Item size to update has exceeded the maximum allowed size")
    item = get(client, table, KEY)
    assert item is not None and "b" not in item


def test_missing_table(client: Any, unique_name: Any) -> None:
    code, message = refused(client, TableName=unique_name("missing"), Key=KEY)
    assert code == "ResourceNotFoundException"
    assert "Requested resource not found" in message


def test_key_must_match_schema(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(client, TableName=table, Key=KEY, UpdateExpression="REMOVE a")
    assert (code, message) == ("ValidationException", "The provided key element does not match the schema")


def test_capacity_is_the_larger_of_old_and_new(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "big": {"S": "x" * 3000}})
    response = client.update_item(
        TableName=table, Key=KEY, UpdateExpression="REMOVE big", ReturnConsumedCapacity="TOTAL"
    )
    assert response["ConsumedCapacity"]["CapacityUnits"] == 3.0
    response = client.update_item(
        TableName=table, Key=KEY, UpdateExpression="REMOVE big", ReturnConsumedCapacity="INDEXES"
    )
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0
    assert response["ConsumedCapacity"]["Table"]["CapacityUnits"] == 1.0


def test_updated_new_of_a_list_element(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]}})
    response = client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="SET l[1] = :v",
        ExpressionAttributeValues={":v": {"S": "B"}},
        ReturnValues="UPDATED_NEW",
    )
    assert response["Attributes"] == {"l": {"L": [{"S": "B"}]}}


def test_counter_with_if_not_exists_and_arithmetic(client: Any, make_table: Any) -> None:
    table = make_table()
    key = {"pk": {"S": "page"}, "sk": {"S": "views"}}
    for expected in ("1", "2", "3"):
        response = client.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET #c = if_not_exists(#c, :zero) + :one",
            ExpressionAttributeNames={"#c": "count"},
            ExpressionAttributeValues={":zero": {"N": "0"}, ":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        assert response["Attributes"] == {"count": {"N": expected}}


def test_deleting_the_last_set_member_removes_the_attribute(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.update_item(
        TableName=table, Key=KEY, UpdateExpression="ADD tags :t", ExpressionAttributeValues={":t": {"SS": ["x"]}}
    )
    response = client.update_item(
        TableName=table,
        Key=KEY,
        UpdateExpression="DELETE tags :t",
        ExpressionAttributeValues={":t": {"SS": ["x"]}},
        ReturnValues="ALL_NEW",
    )
    assert response["Attributes"] == {"pk": {"S": "k"}}


def test_singleton_guarded_by_version(client: Any, make_table: Any) -> None:
    """The mission's singleton pattern: flags changed only from the version read."""
    table = make_table()
    key = {"pk": {"S": "SETTINGS#APP"}, "sk": {"S": "FLAGS#V1"}}
    client.put_item(TableName=table, Item=dict(key, schema_version={"N": "1"}))
    request = {
        "TableName": table,
        "Key": key,
        "UpdateExpression": "SET flag = :on, schema_version = :next",
        "ConditionExpression": "schema_version = :current",
        "ExpressionAttributeValues": {":on": {"BOOL": True}, ":next": {"N": "2"}, ":current": {"N": "1"}},
    }
    client.update_item(**request)
    code, _ = refused(client, **request)  # a stale writer
    assert code == "ConditionalCheckFailedException"
    item = get(client, table, key)
    assert item == dict(key, schema_version={"N": "2"}, flag={"BOOL": True})


def test_condition_failure_on_missing_item_has_no_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    with pytest.raises(ClientError) as excinfo:
        client.update_item(
            TableName=table,
            Key=KEY,
            UpdateExpression="REMOVE a",
            ConditionExpression="attribute_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert "Item" not in excinfo.value.response


def test_wrong_operand_type_leaves_item_unchanged(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "s": {"S": "text"}, "n": {"N": "1"}}
    client.put_item(TableName=table, Item=item)
    code, message = refused(
        client,
        TableName=table,
        Key=KEY,
        UpdateExpression="SET n = :two ADD s :one",
        ExpressionAttributeValues={":one": {"N": "1"}, ":two": {"N": "2"}},
    )
    assert code == "ValidationException"
    assert "An operand in the update expression has an incorrect data type" in message
    assert get(client, table, KEY) == item


# What an update that only takes away does to a missing item: DynamoDB creates
# nothing (ScyllaDB's suite, run against DynamoDB: test_update_item_non_existent
# and test_update_item_delete in test/alternator/test_item.py).
ONLY_REMOVING_UPDATES = {
    "remove": {"UpdateExpression": "REMOVE a, b"},
    "delete-from-set": {"UpdateExpression": "DELETE s :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
    "remove-and-delete": {"UpdateExpression": "REMOVE a DELETE s :v",
                          "ExpressionAttributeValues": {":v": {"NS": ["1"]}}},
    "legacy-delete": {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    "legacy-delete-from-set": {"AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"SS": ["x"]}}}},
}


@pytest.mark.parametrize("case", sorted(ONLY_REMOVING_UPDATES))
@pytest.mark.parametrize("return_values", ["NONE", "ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD"])
def test_an_update_that_only_removes_creates_no_item(
    client: Any, make_table: Any, case: str, return_values: str
) -> None:
    table = make_table(sk=None)
    response = client.update_item(TableName=table, Key=KEY, ReturnValues=return_values,
                                  **ONLY_REMOVING_UPDATES[case])
    assert set(response) == {"ResponseMetadata"}
    assert get(client, table, KEY) is None
    assert client.scan(TableName=table)["Count"] == 0


def test_an_only_removing_update_still_checks_its_condition_and_charges(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.update_item(TableName=table, Key=KEY, UpdateExpression="REMOVE a",
                                  ConditionExpression="attribute_not_exists(pk)", ReturnConsumedCapacity="TOTAL")
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0
    assert get(client, table, KEY) is None
    code, _ = refused(client, TableName=table, Key=KEY, UpdateExpression="REMOVE a",
                      ConditionExpression="attribute_exists(pk)")
    assert code == "ConditionalCheckFailedException"


def test_an_update_that_also_sets_creates_the_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.update_item(TableName=table, Key=KEY, UpdateExpression="REMOVE a SET b = :v",
                                  ExpressionAttributeValues={":v": {"N": "1"}}, ReturnValues="ALL_NEW")
    assert response["Attributes"] == {"pk": {"S": "k"}, "b": {"N": "1"}}
    legacy = {"pk": {"S": "legacy"}}
    client.update_item(TableName=table, Key=legacy,
                       AttributeUpdates={"a": {"Action": "DELETE"}, "n": {"Action": "ADD", "Value": {"N": "2"}}})
    assert get(client, table, legacy) == {"pk": {"S": "legacy"}, "n": {"N": "2"}}


def test_a_transaction_update_that_only_removes_creates_no_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    other = {"pk": {"S": "other"}}
    client.transact_write_items(TransactItems=[
        {"Update": {"TableName": table, "Key": KEY, "UpdateExpression": "REMOVE a"}},
        {"Update": {"TableName": table, "Key": other, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": "x"}}}},
    ])
    assert get(client, table, KEY) is None
    assert get(client, table, other) == {"pk": {"S": "other"}, "v": {"S": "x"}}
