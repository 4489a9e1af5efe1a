"""PutItem: writes, key validation, conditions, ReturnValues, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

INVALID = "One or more parameter values were invalid: "


def get(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return item


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.put_item(**request)
    return error_of(excinfo)


# --- writes -------------------------------------------------------------------------------


def test_put_then_get_round_trips_every_type(client: Any, make_table: Any) -> None:
    table = make_table()
    item = {
        "pk": {"S": "a"},
        "sk": {"S": "b"},
        "n": {"N": "-56.789"},
        "b": {"B": b"b"},
        "t": {"BOOL": False},
        "z": {"NULL": True},
        "ss": {"SS": ["x"]},
        "ns": {"NS": ["1"]},
        "bs": {"BS": [b"b"]},
        "l": {"L": [{"S": "a"}, {"M": {}}]},
        "m": {"M": {"inner": {"L": []}}},
        "empty": {"S": ""},
    }
    response = client.put_item(TableName=table, Item=item)
    assert set(response) == {"ResponseMetadata"}
    assert get(client, table, {"pk": {"S": "a"}, "sk": {"S": "b"}}) == item


def test_put_replaces_the_whole_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "old": {"S": "x"}})
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "new": {"S": "y"}})
    assert get(client, table, {"pk": {"S": "k"}}) == {"pk": {"S": "k"}, "new": {"S": "y"}}


def test_numbers_are_stored_in_normal_form(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    client.put_item(TableName=table, Item={"pk": {"N": "0010.50"}, "v": {"N": "-0015.789e6"}})
    assert get(client, table, {"pk": {"N": "10.5"}}) == {"pk": {"N": "10.5"}, "v": {"N": "-15789000"}}


def test_binary_keys(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "B"), sk=("sk", "B"))
    item = {"pk": {"B": b"\x00\xff"}, "sk": {"B": b"\x01"}}
    client.put_item(TableName=table, Item=item)
    assert get(client, table, item) == item


# --- ReturnValues -------------------------------------------------------------------------


def test_return_values_all_old(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    first = client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"N": "1"}}, ReturnValues="ALL_OLD")
    assert "Attributes" not in first
    second = client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"N": "2"}}, ReturnValues="ALL_OLD")
    assert second["Attributes"] == {"pk": {"S": "k"}, "v": {"N": "1"}}
    none = client.put_item(TableName=table, Item={"pk": {"S": "k"}}, ReturnValues="NONE")
    assert "Attributes" not in none


@pytest.mark.parametrize("return_values", ["UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"])
def test_return_values_other_than_old_are_refused(client: Any, make_table: Any, return_values: str) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": {"S": "k"}}, ReturnValues=return_values)
    assert code == "ValidationException"
    assert "ReturnValues can only be ALL_OLD or NONE" in message


def test_return_item_collection_metrics_returns_nothing_without_lsi(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.put_item(TableName=table, Item={"pk": {"S": "k"}}, ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in response


# --- key validation -----------------------------------------------------------------------


def test_missing_table(client: Any, unique_name: Any) -> None:
    code, message = refused(client, TableName=unique_name("missing"), Item={"pk": {"S": "k"}})
    assert code == "ResourceNotFoundException"
    assert "Requested resource not found" in message


@pytest.mark.parametrize("item", [{}, {"other": {"S": "a"}}])
def test_missing_partition_key(client: Any, make_table: Any, item: dict[str, Any]) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item=item)
    assert (code, message) == ("ValidationException", INVALID + "Missing the key pk in the item")


def test_missing_sort_key(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(client, TableName=table, Item={"pk": {"S": "a"}})
    assert (code, message) == ("ValidationException", INVALID + "Missing the key sk in the item")


@pytest.mark.parametrize(
    "value", [{"N": "1"}, {"B": "YQ=="}, {"BOOL": True}, {"NULL": True}, {"SS": ["a"]}, {"L": []}, {"M": {}}]
)
def test_key_type_mismatch(client: Any, make_table: Any, value: dict[str, Any]) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": value})
    actual = next(iter(value))
    assert code == "ValidationException"
    assert message == INVALID + f"Type mismatch for key pk expected: S actual: {actual}"


def test_empty_string_key(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": {"S": ""}})
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values are not valid. The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: pk"
    )


def test_empty_binary_sort_key(client: Any, make_table: Any) -> None:
    table = make_table(sk=("sk", "B"))
    code, message = refused(client, TableName=table, Item={"pk": {"S": "a"}, "sk": {"B": b""}})
    assert code == "ValidationException"
    assert "cannot contain an empty binary value. Key: sk" in message


def test_invalid_number_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": {"S": "a"}, "n": {"N": "b"}})
    assert code == "ValidationException"
    assert "The parameter cannot be converted to a numeric value: b" in message


# --- conditions ---------------------------------------------------------------------------


def test_attribute_not_exists_guards_creation(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "v": {"N": "1"}}
    client.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(pk)")
    code, message = refused(
        client, TableName=table, Item={"pk": {"S": "k"}}, ConditionExpression="attribute_not_exists(pk)"
    )
    assert (code, message) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert get(client, table, {"pk": {"S": "k"}}) == item


def test_condition_with_names_and_values(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "version": {"N": "1"}})
    client.put_item(
        TableName=table,
        Item={"pk": {"S": "k"}, "version": {"N": "2"}},
        ConditionExpression="#v = :current",
        ExpressionAttributeNames={"#v": "version"},
        ExpressionAttributeValues={":current": {"N": "1"}},
    )
    code, _ = refused(
        client,
        TableName=table,
        Item={"pk": {"S": "k"}, "version": {"N": "2"}},
        ConditionExpression="#v = :current",
        ExpressionAttributeNames={"#v": "version"},
        ExpressionAttributeValues={":current": {"N": "1"}},
    )
    assert code == "ConditionalCheckFailedException"


def test_condition_check_failure_returns_old_item_when_asked(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {"pk": {"S": "k"}, "v": {"S": "old"}}
    client.put_item(TableName=table, Item=item)
    with pytest.raises(ClientError) as excinfo:
        client.put_item(
            TableName=table,
            Item={"pk": {"S": "k"}},
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert excinfo.value.response["Item"] == item


def test_condition_check_failure_without_item_has_none(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    with pytest.raises(ClientError) as excinfo:
        client.put_item(
            TableName=table,
            Item={"pk": {"S": "k"}},
            ConditionExpression="attribute_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert "Item" not in excinfo.value.response


def test_legacy_expected(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}}, Expected={"pk": {"Exists": False}})
    code, _ = refused(client, TableName=table, Item={"pk": {"S": "k"}}, Expected={"pk": {"Exists": False}})
    assert code == "ConditionalCheckFailedException"
    client.put_item(
        TableName=table,
        Item={"pk": {"S": "k"}, "v": {"N": "1"}},
        Expected={"pk": {"Value": {"S": "k"}}, "v": {"ComparisonOperator": "NULL"}},
    )


def test_expected_and_condition_expression_cannot_mix(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Item={"pk": {"S": "k"}},
        Expected={"pk": {"Exists": False}},
        ConditionExpression="attribute_not_exists(pk)",
    )
    assert code == "ValidationException"
    assert message == (  # in the request envelope (dynoxide's capture of the service)
        "1 validation error detected: Can not use both expression and non-expression parameters in "
        "the same request: Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}"
    )


def test_unused_expression_values_are_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Item={"pk": {"S": "k"}},
        ConditionExpression="attribute_not_exists(pk)",
        ExpressionAttributeValues={":unused": {"S": "x"}},
    )
    assert code == "ValidationException"
    assert "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}" in message


def test_unused_expression_names_are_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Item={"pk": {"S": "k"}},
        ConditionExpression="attribute_not_exists(pk)",
        ExpressionAttributeNames={"#unused": "x"},
    )
    assert code == "ValidationException"
    assert "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}" in message


def test_expression_values_without_expression_are_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TableName=table, Item={"pk": {"S": "k"}}, ExpressionAttributeValues={":v": {"S": "x"}}
    )
    assert code == "ValidationException"
    assert "ExpressionAttributeValues can only be specified when using expressions" in message


def test_undefined_expression_value_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TableName=table, Item={"pk": {"S": "k"}}, ConditionExpression="pk = :missing"
    )
    assert code == "ValidationException"
    assert "An expression attribute value used in expression is not defined" in message


def test_validation_comes_before_table_lookup(client: Any, unique_name: Any) -> None:
    code, message = refused(
        client, TableName=unique_name("missing"), Item={"pk": {"S": "k"}}, ReturnValues="ALL_NEW"
    )
    assert code == "ValidationException"
    assert "ReturnValues can only be ALL_OLD or NONE" in message


# --- capacity -----------------------------------------------------------------------------


def test_consumed_capacity_total_and_indexes(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    small = {"pk": {"S": "k"}, "v": {"S": "x" * 100}}
    total = client.put_item(TableName=table, Item=small, ReturnConsumedCapacity="TOTAL")
    assert total["ConsumedCapacity"]["TableName"] == table
    assert total["ConsumedCapacity"]["CapacityUnits"] == 1.0
    indexes = client.put_item(TableName=table, Item=small, ReturnConsumedCapacity="INDEXES")
    assert indexes["ConsumedCapacity"]["Table"]["CapacityUnits"] == 1.0
    none = client.put_item(TableName=table, Item=small, ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in none


def test_write_is_charged_on_the_larger_of_old_and_new(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    large = {"pk": {"S": "k"}, "v": {"S": "x" * 2500}}  # 3 KB -> 3 WCU
    first = client.put_item(TableName=table, Item=large, ReturnConsumedCapacity="TOTAL")
    assert first["ConsumedCapacity"]["CapacityUnits"] == 3.0
    replace = client.put_item(TableName=table, Item={"pk": {"S": "k"}}, ReturnConsumedCapacity="TOTAL")
    assert replace["ConsumedCapacity"]["CapacityUnits"] == 3.0
    again = client.put_item(TableName=table, Item={"pk": {"S": "k"}}, ReturnConsumedCapacity="TOTAL")
    assert again["ConsumedCapacity"]["CapacityUnits"] == 1.0


def test_one_kilobyte_boundary(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    # name "pk" (2) + "k" (1) + name "v" (1) + value = 1024 bytes exactly -> 1 WCU
    exact = {"pk": {"S": "k"}, "v": {"S": "x" * 1020}}
    response = client.put_item(TableName=table, Item=exact, ReturnConsumedCapacity="TOTAL")
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0
    client.delete_item(TableName=table, Key={"pk": {"S": "k"}})
    over = {"pk": {"S": "k"}, "v": {"S": "x" * 1021}}
    response = client.put_item(TableName=table, Item=over, ReturnConsumedCapacity="TOTAL")
    assert response["ConsumedCapacity"]["CapacityUnits"] == 2.0


def test_legacy_conditional_operator_or(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "a": {"N": "1"}})
    client.put_item(
        TableName=table,
        Item={"pk": {"S": "k"}, "a": {"N": "2"}},
        Expected={"a": {"Value": {"N": "9"}}, "b": {"Exists": False}},
        ConditionalOperator="OR",
    )
    code, _ = refused(
        client,
        TableName=table,
        Item={"pk": {"S": "k"}},
        Expected={"a": {"Value": {"N": "9"}}, "pk": {"Exists": False}},
        ConditionalOperator="OR",
    )
    assert code == "ConditionalCheckFailedException"


def test_null_must_be_true(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": {"S": "k"}, "z": {"NULL": False}})
    assert code == "ValidationException"
    assert "Null attribute value types must have the value of true" in message


def test_empty_set_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Item={"pk": {"S": "k"}, "s": {"SS": []}})
    assert code == "ValidationException"
    assert "An string set  may not be empty" in message
