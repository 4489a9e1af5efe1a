"""The legacy (pre-expression) parameters of the item operations, black-box:
Expected + ConditionalOperator, AttributeUpdates, AttributesToGet, and the
mixing rules. (Query's KeyConditions/QueryFilter and Scan's ScanFilter are
tested in test_query.py and test_scan.py.)

Semantics follow the legacy API where it differs from expressions: NULL and
NOT_NULL test existence, NOT_CONTAINS is false on a missing attribute, NE is
true on one, and ADD of a list appends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

INVALID = "One or more parameter values were invalid: "
ENVELOPE = "1 validation error detected: "
"""PutItem and UpdateItem report request-validation errors inside this envelope
(captures of the service by dynoxide and floci, eu-west-2); DeleteItem bare."""
KEY = {"pk": {"S": "k"}}


@pytest.fixture
def table(client: Any, make_table: Callable[..., str]) -> str:
    name = make_table(sk=None)
    client.put_item(
        TableName=name,
        Item={
            "pk": {"S": "k"}, "n": {"N": "1"}, "s": {"S": "hello"}, "ns": {"NS": ["2", "4", "7"]},
            "l": {"L": [{"N": "2"}, {"N": "4"}]}, "b": {"B": b"hi there"},
        },
    )
    return name


def item_of(client: Any, table: str) -> dict[str, Any]:
    return client.get_item(TableName=table, Key=KEY, ConsistentRead=True).get("Item", {})


def update(client: Any, table: str, **arguments: Any) -> dict[str, Any]:
    return client.update_item(TableName=table, Key=KEY, **arguments)


def expect_condition_failure(client: Any, table: str, expected: dict[str, Any], **extra: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        update(
            client, table, AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "9"}}},
            Expected=expected, **extra,
        )
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")


def expect_condition_success(client: Any, table: str, expected: dict[str, Any], **extra: Any) -> None:
    update(client, table, AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "9"}}}, Expected=expected, **extra)
    assert item_of(client, table)["z"] == {"N": "9"}


def expect_validation(call: Callable[..., Any], message: str, **arguments: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    assert error_of(excinfo) == ("ValidationException", message)


def cond(operator: str, *values: dict[str, Any]) -> dict[str, Any]:
    return {"ComparisonOperator": operator, "AttributeValueList": list(values)}


# --- Expected -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expected",
    [
        {"n": {"Value": {"N": "1"}}},
        {"n": {"Exists": True, "Value": {"N": "1.0"}}},
        {"missing": {"Exists": False}},
        {"n": cond("EQ", {"N": "1"})},
        {"n": cond("NE", {"N": "2"})},
        {"missing": cond("NE", {"N": "2"})},
        {"n": cond("NE", {"S": "1"})},
        {"n": cond("LE", {"N": "1"})},
        {"n": cond("LT", {"N": "2"})},
        {"s": cond("GE", {"S": "hello"})},
        {"s": cond("GT", {"S": "aardvark"})},
        {"missing": cond("NULL")},
        {"n": cond("NOT_NULL")},
        {"s": cond("CONTAINS", {"S": "ell"})},
        {"ns": cond("CONTAINS", {"N": "4"})},
        {"l": cond("CONTAINS", {"N": "4"})},
        {"b": cond("CONTAINS", {"B": b"here"})},
        {"s": cond("NOT_CONTAINS", {"S": "dog"})},
        {"ns": cond("NOT_CONTAINS", {"N": "1"})},
        {"s": cond("BEGINS_WITH", {"S": "hell"})},
        {"b": cond("BEGINS_WITH", {"B": b"hi"})},
        {"n": cond("IN", {"N": "3"}, {"N": "1"})},
        {"n": cond("BETWEEN", {"N": "1"}, {"N": "3"})},
        {"ns": cond("EQ", {"NS": ["7", "2", "4"]})},
    ],
)
def test_expected_true(client: Any, table: str, expected: dict[str, Any]) -> None:
    expect_condition_success(client, table, expected)


@pytest.mark.parametrize(
    "expected",
    [
        {"n": {"Value": {"N": "2"}}},
        {"missing": {"Value": {"N": "1"}}},
        {"n": {"Exists": False}},
        {"n": cond("EQ", {"S": "1"})},
        {"n": cond("NE", {"N": "1"})},
        {"n": cond("LT", {"N": "1"})},
        {"n": cond("LT", {"S": "1"})},
        {"missing": cond("GT", {"N": "0"})},
        {"n": cond("NULL")},
        {"missing": cond("NOT_NULL")},
        {"s": cond("CONTAINS", {"S": "dog"})},
        {"missing": cond("CONTAINS", {"N": "1"})},
        {"s": cond("NOT_CONTAINS", {"S": "ell"})},
        {"missing": cond("NOT_CONTAINS", {"N": "1"})},
        {"n": cond("BEGINS_WITH", {"S": "1"})},
        {"ns": cond("IN", {"N": "2"})},
        {"n": cond("BETWEEN", {"N": "2"}, {"N": "3"})},
    ],
)
def test_expected_false(client: Any, table: str, expected: dict[str, Any]) -> None:
    expect_condition_failure(client, table, expected)
    assert "z" not in item_of(client, table)


def test_expected_and_is_the_default(client: Any, table: str) -> None:
    expect_condition_failure(client, table, {"n": {"Value": {"N": "1"}}, "s": {"Value": {"S": "x"}}})
    expect_condition_success(client, table, {"n": {"Value": {"N": "1"}}, "s": {"Value": {"S": "hello"}}})


def test_expected_or(client: Any, table: str) -> None:
    expect_condition_success(
        client, table, {"n": {"Value": {"N": "5"}}, "s": {"Value": {"S": "hello"}}}, ConditionalOperator="OR"
    )
    expect_condition_failure(
        client, table, {"n": {"Value": {"N": "5"}}, "s": {"Value": {"S": "x"}}}, ConditionalOperator="OR"
    )


def test_empty_expected_is_no_condition(client: Any, table: str) -> None:
    expect_condition_success(client, table, {})


def test_put_item_expected(client: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.put_item(TableName=table, Item={"pk": {"S": "k"}}, Expected={"n": {"Value": {"N": "2"}}})
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"S": "new"}}, Expected={"n": {"Value": {"N": "1"}}})
    assert item_of(client, table) == {"pk": {"S": "k"}, "v": {"S": "new"}}
    client.put_item(TableName=table, Item={"pk": {"S": "fresh"}}, Expected={"pk": {"Exists": False}})


def test_delete_item_expected(client: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.delete_item(TableName=table, Key=KEY, Expected={"n": {"Value": {"N": "2"}}})
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    client.delete_item(TableName=table, Key=KEY, Expected={"n": {"Value": {"N": "1"}}})
    assert item_of(client, table) == {}


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        ({"n": {"Exists": True}}, INVALID + "Value must be provided when Exists is true for Attribute: n"),
        ({"n": {"Exists": False, "Value": {"N": "1"}}}, INVALID + "Value cannot be used when Exists is false for Attribute: n"),
        (
            {"n": {"Exists": False, "ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}},
            INVALID + "Exists and ComparisonOperator cannot be used together for Attribute: n",
        ),
        ({"n": cond("EQ", {"N": "1"}, {"N": "2"})}, INVALID + "Invalid number of argument(s) for the EQ ComparisonOperator"),
        ({"n": cond("IN")}, INVALID + "Invalid number of argument(s) for the IN ComparisonOperator"),
        ({"n": cond("NOT_NULL", {"N": "2"})}, INVALID + "Invalid number of argument(s) for the NOT_NULL ComparisonOperator"),
        ({"n": cond("IN", {"N": "1"}, {"S": "a"})}, INVALID + "AttributeValues inside AttributeValueList must be of same type"),
        ({"n": cond("BEGINS_WITH", {"N": "1"})}, INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
        ({"n": cond("CONTAINS", {"L": [{"N": "1"}]})}, INVALID + "ComparisonOperator CONTAINS is not valid for L AttributeValue type"),
        (
            {"n": cond("BETWEEN", {"N": "4"}, {"N": "3"})},
            "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
        ),
    ],
)
def test_expected_validation(client: Any, table: str, expected: dict[str, Any], message: str) -> None:
    expect_validation(
        client.update_item, ENVELOPE + message, TableName=table, Key=KEY,
        AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "9"}}}, Expected=expected,
    )


def test_conditional_operator_needs_two_expected_conditions(client: Any, table: str) -> None:
    expect_validation(
        client.put_item,
        ENVELOPE + "ConditionalOperator can only be used when Filter or Expected has two or more elements",
        TableName=table, Item=KEY, Expected={"n": {"Value": {"N": "1"}}}, ConditionalOperator="AND",
    )
    expect_validation(
        client.delete_item,
        "ConditionalOperator cannot be used without Filter or Expected",
        TableName=table, Key=KEY, ConditionalOperator="OR",
    )


def test_expected_with_condition_expression(client: Any, table: str) -> None:
    expect_validation(
        client.put_item,
        ENVELOPE + "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
        TableName=table, Item=KEY, Expected={"n": {"Exists": False}}, ConditionExpression="attribute_exists(n)",
    )


# --- AttributeUpdates -------------------------------------------------------------------------


def test_attribute_updates_put_and_delete(client: Any, table: str) -> None:
    update(
        client, table,
        AttributeUpdates={
            "s": {"Action": "PUT", "Value": {"S": "bye"}},
            "fresh": {"Value": {"BOOL": True}},  # PUT is the default action
            "n": {"Action": "DELETE"},
        },
    )
    item = item_of(client, table)
    assert (item["s"], item["fresh"]) == ({"S": "bye"}, {"BOOL": True})
    assert "n" not in item


def test_attribute_updates_add(client: Any, table: str) -> None:
    update(
        client, table,
        AttributeUpdates={
            "n": {"Action": "ADD", "Value": {"N": "2.5"}},
            "counter": {"Action": "ADD", "Value": {"N": "3"}},
            "ns": {"Action": "ADD", "Value": {"NS": ["1", "2"]}},
            "tags": {"Action": "ADD", "Value": {"SS": ["a"]}},
        },
    )
    item = item_of(client, table)
    assert item["n"] == {"N": "3.5"}
    assert item["counter"] == {"N": "3"}
    assert sorted(item["ns"]["NS"], key=float) == ["1", "2", "4", "7"]
    assert item["tags"] == {"SS": ["a"]}


def test_attribute_updates_add_appends_to_a_list(client: Any, table: str) -> None:
    update(client, table, AttributeUpdates={"l": {"Action": "ADD", "Value": {"L": [{"S": "x"}]}}})
    assert item_of(client, table)["l"] == {"L": [{"N": "2"}, {"N": "4"}, {"S": "x"}]}
    update(client, table, AttributeUpdates={"new": {"Action": "ADD", "Value": {"L": [{"S": "y"}]}}})
    assert item_of(client, table)["new"] == {"L": [{"S": "y"}]}


def test_attribute_updates_delete_from_a_set(client: Any, table: str) -> None:
    update(client, table, AttributeUpdates={"ns": {"Action": "DELETE", "Value": {"NS": ["2", "7"]}}})
    assert item_of(client, table)["ns"] == {"NS": ["4"]}


def test_attribute_updates_create_the_item(client: Any, table: str) -> None:
    client.update_item(
        TableName=table, Key={"pk": {"S": "new"}},
        AttributeUpdates={"a": {"Action": "PUT", "Value": {"S": "x"}}},
    )
    got = client.get_item(TableName=table, Key={"pk": {"S": "new"}})["Item"]
    assert got == {"pk": {"S": "new"}, "a": {"S": "x"}}


def test_attribute_updates_with_return_values(client: Any, table: str) -> None:
    response = update(
        client, table,
        AttributeUpdates={"n": {"Action": "ADD", "Value": {"N": "1"}}},
        ReturnValues="UPDATED_NEW",
    )
    assert response["Attributes"] == {"n": {"N": "2"}}


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        ({"a": {"Action": "PUT"}}, INVALID + "Only DELETE action is allowed when no attribute value is specified"),
        ({"a": {"Action": "DELETE", "Value": {"S": "x"}}}, INVALID + "DELETE action with value is not supported for the type S"),
        ({"a": {"Action": "ADD", "Value": {"S": "x"}}}, INVALID + "ADD action is not supported for the type S"),
    ],
)
def test_attribute_updates_validation(client: Any, table: str, updates: dict[str, Any], message: str) -> None:
    expect_validation(client.update_item, ENVELOPE + message, TableName=table, Key=KEY, AttributeUpdates=updates)


def test_attribute_updates_with_update_expression(client: Any, table: str) -> None:
    expect_validation(
        client.update_item,
        ENVELOPE + "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}",
        TableName=table, Key=KEY, AttributeUpdates={"a": {"Action": "DELETE"}},
        UpdateExpression="REMOVE b",
    )


# --- AttributesToGet -------------------------------------------------------------------------


def test_get_item_attributes_to_get(client: Any, table: str) -> None:
    response = client.get_item(TableName=table, Key=KEY, AttributesToGet=["n", "s", "nothing"])
    assert response["Item"] == {"n": {"N": "1"}, "s": {"S": "hello"}}


def test_get_item_attributes_to_get_are_literal_names(client: Any, table: str) -> None:
    client.put_item(TableName=table, Item={"pk": {"S": "dots"}, "a.b": {"S": "literal"}})
    response = client.get_item(TableName=table, Key={"pk": {"S": "dots"}}, AttributesToGet=["a.b"])
    assert response["Item"] == {"a.b": {"S": "literal"}}


def test_get_item_duplicate_attributes_to_get(client: Any, table: str) -> None:
    expect_validation(
        client.get_item, INVALID + "Duplicate value in attribute name: n",
        TableName=table, Key=KEY, AttributesToGet=["n", "n"],
    )


def test_get_item_attributes_to_get_with_projection_expression(client: Any, table: str) -> None:
    expect_validation(
        client.get_item,
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
        TableName=table, Key=KEY, AttributesToGet=["n"], ProjectionExpression="n",
    )


def test_batch_get_item_attributes_to_get(client: Any, table: str) -> None:
    response = client.batch_get_item(RequestItems={table: {"Keys": [KEY], "AttributesToGet": ["s"]}})
    assert response["Responses"][table] == [{"s": {"S": "hello"}}]


def test_expression_attribute_names_without_expression(client: Any, table: str) -> None:
    expect_validation(
        client.get_item, "ExpressionAttributeNames can only be specified when using expressions",
        TableName=table, Key=KEY, ExpressionAttributeNames={"#n": "n"},
    )
