"""The legacy-parameter converters (dynastore.engine.legacy), table-driven.

Messages are DynamoDB's, as asserted by dynalite's conformance tests and by
dual-target suites run against the real service.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.engine import legacy
from dynastore.errors import ValidationException

INVALID = "One or more parameter values were invalid: "


def message_of(call: Any, *args: Any) -> str:
    with pytest.raises(ValidationException) as excinfo:
        call(*args)
    return str(excinfo.value.message)


# --- check_no_mixing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "request_", "expected"),
    [
        (
            "UpdateItem",
            {
                "AttributeUpdates": {}, "Expected": {}, "ConditionalOperator": "AND",
                "UpdateExpression": "SET a = :v", "ConditionExpression": "x",
            },
            "Non-expression parameters: {AttributeUpdates, Expected, ConditionalOperator} "
            "Expression parameters: {UpdateExpression, ConditionExpression}",
        ),
        (
            "Query",
            {
                "KeyConditions": {}, "QueryFilter": {}, "ConditionalOperator": "AND",
                "KeyConditionExpression": "k", "FilterExpression": "f", "ProjectionExpression": "p",
            },
            "Non-expression parameters: {QueryFilter, ConditionalOperator, KeyConditions} "
            "Expression parameters: {ProjectionExpression, FilterExpression, KeyConditionExpression}",
        ),
        (
            "Scan",
            {"AttributesToGet": ["a"], "ScanFilter": {}, "FilterExpression": "f", "ProjectionExpression": "b"},
            "Non-expression parameters: {AttributesToGet, ScanFilter} "
            "Expression parameters: {ProjectionExpression, FilterExpression}",
        ),
        (
            "GetItem",
            {"AttributesToGet": ["a"], "ProjectionExpression": "a"},
            "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
        ),
        (
            "PutItem",
            {"Expected": {"a": {}}, "ConditionalOperator": "AND", "ConditionExpression": "c"},
            "Non-expression parameters: {Expected, ConditionalOperator} "
            "Expression parameters: {ConditionExpression}",
        ),
    ],
)
def test_mixing_lists_both_sides_in_dynamodb_order(
    operation: str, request_: dict[str, Any], expected: str
) -> None:
    message = message_of(legacy.check_request, operation, request_)
    assert message == (
        "Can not use both expression and non-expression parameters in the same request: " + expected
    )


def test_key_conditions_may_go_with_filter_and_projection_expressions() -> None:
    legacy.check_request(
        "Query",
        {"KeyConditions": {"a": {}}, "FilterExpression": "f", "ProjectionExpression": "p",
         "ExpressionAttributeValues": {":v": {"S": "x"}}},
    )


def test_expression_attribute_names_need_an_expression() -> None:
    assert message_of(legacy.check_request, "Query", {"ExpressionAttributeNames": {}}) == (
        "ExpressionAttributeNames can only be specified when using expressions"
    )


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        ("Query", "FilterExpression and KeyConditionExpression are null"),
        ("Scan", "FilterExpression is null"),
        ("UpdateItem", "UpdateExpression and ConditionExpression are null"),
        ("PutItem", "ConditionExpression is null"),
    ],
)
def test_expression_attribute_values_need_an_expression(operation: str, expected: str) -> None:
    request = {"ExpressionAttributeValues": {":a": {"S": "a"}}, "ProjectionExpression": "a"}
    if operation in ("UpdateItem", "PutItem"):
        request.pop("ProjectionExpression")
    assert message_of(legacy.check_request, operation, request) == (
        "ExpressionAttributeValues can only be specified when using expressions: " + expected
    )


@pytest.mark.parametrize(
    ("operation", "request_", "expected"),
    [
        ("Scan", {"ConditionalOperator": "AND"}, legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE),
        ("Scan", {"ConditionalOperator": "OR", "ScanFilter": {}}, legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE),
        (
            "Scan",
            {"ConditionalOperator": "AND", "AttributesToGet": ["a", "b"]},
            legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE,
        ),
        ("Query", {"ConditionalOperator": "AND"}, legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE),
        (
            "Query",
            {"ConditionalOperator": "AND", "QueryFilter": {"a": {}}},
            legacy.MESSAGE_CONDITIONAL_OPERATOR_ONE,
        ),
        ("PutItem", {"ConditionalOperator": "AND", "Expected": {"a": {}}}, legacy.MESSAGE_CONDITIONAL_OPERATOR_ONE),
        ("DeleteItem", {"ConditionalOperator": "AND"}, legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE),
        (
            "UpdateItem",
            {"ConditionalOperator": "AND", "AttributeUpdates": {"a": {}}},
            legacy.MESSAGE_CONDITIONAL_OPERATOR_ALONE,
        ),
    ],
)
def test_conditional_operator_needs_two_conditions(
    operation: str, request_: dict[str, Any], expected: str
) -> None:
    assert message_of(legacy.check_request, operation, request_) == expected


def test_mixing_is_reported_before_the_conditional_operator() -> None:
    message = message_of(
        legacy.check_request, "Scan", {"ConditionalOperator": "AND", "FilterExpression": "a = :v"}
    )
    assert message.endswith("Non-expression parameters: {ConditionalOperator} "
                            "Expression parameters: {FilterExpression}")


def test_conditional_operator_with_two_conditions_is_fine() -> None:
    legacy.check_request("Scan", {"ConditionalOperator": "OR", "ScanFilter": {"a": {}, "b": {}}})


# --- Expected ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "operator", "text"),
    [
        ({"a": {"Value": {"S": "x"}}}, None, "#le0 = :le0"),
        ({"a": {"Exists": True, "Value": {"S": "x"}}}, None, "#le0 = :le0"),
        ({"a": {"Exists": False}}, None, "attribute_not_exists(#le0)"),
        ({"a": {"ComparisonOperator": "NULL"}}, None, "attribute_not_exists(#le0)"),
        ({"a": {"ComparisonOperator": "NOT_NULL", "AttributeValueList": []}}, None, "attribute_exists(#le0)"),
        ({"a": {"ComparisonOperator": "NE", "Value": {"N": "1"}}}, None, "#le0 <> :le0"),
        (
            {"a": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "x"}]}},
            None,
            "(attribute_exists(#le0) AND NOT contains(#le0, :le0))",
        ),
        (
            {"a": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "1"}, {"N": "2"}]}},
            None,
            "#le0 IN (:le0, :le1)",
        ),
        (
            {"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}, {"N": "2"}]}},
            None,
            "#le0 BETWEEN :le0 AND :le1",
        ),
        (
            {"a": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "x"}]}},
            None,
            "begins_with(#le0, :le0)",
        ),
        (
            {"a": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"N": "3"}]}},
            None,
            "contains(#le0, :le0)",
        ),
        (
            {"a": {"Value": {"S": "x"}}, "b": {"Exists": False}},
            "OR",
            "(#le0 = :le0) OR (attribute_not_exists(#le1))",
        ),
        (
            {"a": {"Value": {"S": "x"}}, "b": {"Exists": False}},
            None,
            "(#le0 = :le0) AND (attribute_not_exists(#le1))",
        ),
    ],
)
def test_expected_becomes_a_condition(
    expected: dict[str, Any], operator: str | None, text: str
) -> None:
    converted = legacy.expected_to_condition(expected, operator)
    assert converted is not None
    assert converted[0] == text
    assert set(converted[1].values()) == set(expected)


def test_expected_names_are_literal_and_numbers_normalized() -> None:
    converted = legacy.expected_to_condition({"a.b[0]": {"Value": {"N": "01.50"}}}, None)
    assert converted == ("#le0 = :le0", {"#le0": "a.b[0]"}, {":le0": {"N": "1.5"}})


def test_empty_expected_is_no_condition() -> None:
    assert legacy.expected_to_condition({}, None) is None


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        ({"a": {"Exists": True}}, INVALID + "Value must be provided when Exists is true for Attribute: a"),
        ({"a": {}}, INVALID + "Value must be provided when Exists is null for Attribute: a"),
        (
            {"a": {"Exists": False, "Value": {"S": "x"}}},
            INVALID + "Value cannot be used when Exists is false for Attribute: a",
        ),
        (
            {"a": {"Exists": False, "ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}]}},
            INVALID + "Exists and ComparisonOperator cannot be used together for Attribute: a",
        ),
        (
            {"a": {"Value": {"S": "x"}, "ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}]}},
            INVALID + "Value and AttributeValueList cannot be used together for Attribute: a",
        ),
        (
            {"a": {"AttributeValueList": [{"S": "x"}]}},
            INVALID + "AttributeValueList can only be used with a ComparisonOperator for Attribute: a",
        ),
        (
            {"a": {"ComparisonOperator": "EQ"}},
            INVALID + "Value or AttributeValueList must be used with ComparisonOperator: EQ for Attribute: a",
        ),
        (
            {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}, {"S": "y"}]}},
            INVALID + "Invalid number of argument(s) for the EQ ComparisonOperator",
        ),
        (
            {"a": {"ComparisonOperator": "NULL", "AttributeValueList": [{"S": "x"}]}},
            INVALID + "Invalid number of argument(s) for the NULL ComparisonOperator",
        ),
        (
            {"a": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "3"}, {"S": "dog"}]}},
            INVALID + "AttributeValues inside AttributeValueList must be of same type",
        ),
        (
            {"a": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"N": "3"}]}},
            INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type",
        ),
        (
            {"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "4"}, {"N": "3"}]}},
            legacy.MESSAGE_BETWEEN_BOUNDS,
        ),
        (
            {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "x"}]}},
            "The parameter cannot be converted to a numeric value: x",
        ),
    ],
)
def test_expected_errors(expected: dict[str, Any], message: str) -> None:
    assert message_of(legacy.expected_to_condition, expected, None) == message


# --- filters -------------------------------------------------------------------------


@pytest.mark.parametrize("operator", ["LT", "LE", "GT", "GE", "IN"])
@pytest.mark.parametrize(
    "value",
    [{"BOOL": True}, {"NULL": True}, {"SS": ["a"]}, {"NS": ["1"]}, {"BS": ["abcd"]}, {"M": {}}, {"L": []}],
)
def test_ordering_operators_take_scalars_only(operator: str, value: dict[str, Any]) -> None:
    kind = next(iter(value))
    conditions = {"a": {"ComparisonOperator": operator, "AttributeValueList": [value]}}
    assert message_of(legacy.filter_to_condition, conditions, None, "ScanFilter") == (
        f"{INVALID}ComparisonOperator {operator} is not valid for {kind} AttributeValue type"
    )


@pytest.mark.parametrize("operator", ["CONTAINS", "NOT_CONTAINS"])
@pytest.mark.parametrize("value", [{"SS": ["a"]}, {"NS": ["1"]}, {"M": {}}, {"L": []}])
def test_contains_takes_no_collections(operator: str, value: dict[str, Any]) -> None:
    kind = next(iter(value))
    conditions = {"a": {"ComparisonOperator": operator, "AttributeValueList": [value]}}
    assert message_of(legacy.filter_to_condition, conditions, None, "QueryFilter") == (
        f"{INVALID}ComparisonOperator {operator} is not valid for {kind} AttributeValue type"
    )


@pytest.mark.parametrize(
    ("operator", "count"),
    [("EQ", 0), ("NE", 2), ("BETWEEN", 1), ("BETWEEN", 3), ("IN", 0), ("NOT_NULL", 1), ("BEGINS_WITH", 2)],
)
def test_filter_argument_counts(operator: str, count: int) -> None:
    conditions = {"a": {"ComparisonOperator": operator, "AttributeValueList": [{"S": "a"}] * count}}
    assert message_of(legacy.filter_to_condition, conditions, None, "ScanFilter") == (
        f"{INVALID}Invalid number of argument(s) for the {operator} ComparisonOperator"
    )


def test_filter_values_are_validated_before_counting() -> None:
    conditions = {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}, {"S": "a", "N": "1"}]}}
    assert message_of(legacy.filter_to_condition, conditions, None, "ScanFilter") == (
        "Supplied AttributeValue has more than one datatypes set, "
        "must contain exactly one of the supported datatypes"
    )


def test_filter_converts_and_joins() -> None:
    converted = legacy.filter_to_condition(
        {
            "a": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]},
            "b": {"ComparisonOperator": "NOT_NULL"},
        },
        "OR",
        "ScanFilter",
    )
    assert converted == (
        "(#lf0 > :lf0) OR (attribute_exists(#lf1))",
        {"#lf0": "a", "#lf1": "b"},
        {":lf0": {"N": "1"}},
    )


def test_empty_filter_is_no_condition() -> None:
    assert legacy.filter_to_condition({}, None, "ScanFilter") is None


# --- KeyConditions ---------------------------------------------------------------------


def test_key_conditions_convert() -> None:
    assert legacy.key_conditions_to_expression(
        {
            "p": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}]},
            "s": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "y"}]},
        }
    ) == (
        "#lk0 = :lk0 AND begins_with(#lk1, :lk1)",
        {"#lk0": "p", "#lk1": "s"},
        {":lk0": {"S": "x"}, ":lk1": {"S": "y"}},
    )


@pytest.mark.parametrize("operator", ["NULL", "NOT_NULL", "NE", "CONTAINS", "NOT_CONTAINS", "IN"])
def test_key_conditions_refuse_non_indexable_operators(operator: str) -> None:
    values = [] if operator in ("NULL", "NOT_NULL") else [{"S": "a"}]
    conditions = {"a": {"ComparisonOperator": operator, "AttributeValueList": values}}
    assert message_of(legacy.key_conditions_to_expression, conditions) == (
        "Attempted conditional constraint is not an indexable operation"
    )


def test_key_conditions_length() -> None:
    conditions = {name: {"ComparisonOperator": "NULL"} for name in "abc"}
    assert message_of(legacy.key_conditions_to_expression, conditions) == (
        "Conditions can be of length 1 or 2 only"
    )


# --- AttributeUpdates ----------------------------------------------------------------


def test_attribute_updates_convert_every_action() -> None:
    converted = legacy.attribute_updates_to_update(
        {
            "put": {"Action": "PUT", "Value": {"S": "x"}},
            "default": {"Value": {"N": "1"}},
            "gone": {"Action": "DELETE"},
            "members": {"Action": "DELETE", "Value": {"SS": ["z"]}},
            "counter": {"Action": "ADD", "Value": {"N": "2"}},
            "log": {"Action": "ADD", "Value": {"L": [{"S": "q"}]}},
        }
    )
    assert converted is not None
    text, names, values = converted
    assert text == (
        "SET #lu0 = :lu0, #lu1 = :lu1, #lu5 = list_append(if_not_exists(#lu5, :lu4), :lu5) "
        "REMOVE #lu2 ADD #lu4 :lu3 DELETE #lu3 :lu2"
    )
    assert names == {
        "#lu0": "put", "#lu1": "default", "#lu2": "gone", "#lu3": "members",
        "#lu4": "counter", "#lu5": "log",
    }
    assert values[":lu4"] == {"L": []}
    assert values[":lu5"] == {"L": [{"S": "q"}]}


def test_empty_attribute_updates_is_no_update() -> None:
    assert legacy.attribute_updates_to_update({}) is None


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"Action": "PUT"}, INVALID + "Only DELETE action is allowed when no attribute value is specified"),
        ({"Action": "ADD"}, INVALID + "Only DELETE action is allowed when no attribute value is specified"),
        ({"Action": "DELETE", "Value": {"S": "x"}}, INVALID + "DELETE action with value is not supported for the type S"),
        ({"Action": "ADD", "Value": {"S": "x"}}, INVALID + "ADD action is not supported for the type S"),
        ({"Action": "ADD", "Value": {"M": {}}}, INVALID + "ADD action is not supported for the type M"),
    ],
)
def test_attribute_updates_errors(update: dict[str, Any], message: str) -> None:
    assert message_of(legacy.attribute_updates_to_update, {"a": update}) == message


# --- AttributesToGet -------------------------------------------------------------------


def test_attributes_to_get_convert() -> None:
    assert legacy.attributes_to_get_to_projection(["a", "b.c"]) == (
        "#lp0, #lp1", {"#lp0": "a", "#lp1": "b.c"}, {}
    )


def test_attributes_to_get_refuse_duplicates() -> None:
    assert message_of(legacy.attributes_to_get_to_projection, ["a", "b", "a"]) == (
        INVALID + "Duplicate value in attribute name: a"
    )
