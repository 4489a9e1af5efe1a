"""KeyConditionExpression: the shapes Query serves, and DynamoDB's refusals."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, compile_key_condition

VALUES: dict[str, Any] = {
    ":p": {"S": "p"},
    ":a": {"S": "a"},
    ":b": {"S": "b"},
    ":n": {"N": "1"},
    ":m": {"N": "2"},
}


def key(text: str, sort_key: str | None = "sk", **types: Any) -> Any:
    used = {name: value for name, value in VALUES.items() if name in text} or None
    names = {"#p": "pk", "#s": "sk"} if "#" in text else None
    return compile_key_condition(text, ExpressionContext(names, used), "pk", sort_key, **types)


SHAPES = [
    ("pk = :p", None, ()),
    (":p = pk", None, ()),
    ("#p = :p", None, ()),
    ("(pk = :p)", None, ()),
    ("pk = :p AND sk = :a", "EQ", ({"S": "a"},)),
    ("sk = :a AND pk = :p", "EQ", ({"S": "a"},)),
    ("pk = :p and sk < :a", "LT", ({"S": "a"},)),
    ("pk = :p AND sk <= :a", "LE", ({"S": "a"},)),
    ("pk = :p AND sk > :a", "GT", ({"S": "a"},)),
    ("pk = :p AND sk >= :a", "GE", ({"S": "a"},)),
    ("pk = :p AND :a < sk", "GT", ({"S": "a"},)),
    ("pk = :p AND :a >= #s", "LE", ({"S": "a"},)),
    ("pk = :p AND sk BETWEEN :a AND :b", "BETWEEN", ({"S": "a"}, {"S": "b"})),
    ("pk = :p AND begins_with(sk, :a)", "BEGINS_WITH", ({"S": "a"},)),
    ("(pk = :p) AND (begins_with(sk, :a))", "BEGINS_WITH", ({"S": "a"},)),
]


@pytest.mark.parametrize(("text", "operator", "values"), SHAPES)
def test_key_condition_shapes(text: str, operator: str | None, values: tuple[Any, ...]) -> None:
    condition = key(text)
    assert condition.partition_value == {"S": "p"}
    assert condition.sort_operator == operator
    assert condition.sort_values == values
    assert condition.partition_key == "pk"
    assert condition.sort_key == "sk"


ERRORS = [
    ("", "Invalid KeyConditionExpression: The expression can not be empty;"),
    ("pk = ", 'Invalid KeyConditionExpression: Syntax error; token: "<EOF>", near: "= "'),
    ("pk = :p OR sk = :a", "Invalid operator used in KeyConditionExpression: OR"),
    ("NOT pk = :p", "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk IN (:p, :a)", "Invalid operator used in KeyConditionExpression: IN"),
    ("pk <> :p", "Invalid operator used in KeyConditionExpression: <>"),
    ("attribute_exists(pk)", "Invalid operator used in KeyConditionExpression: attribute_exists"),
    ("attribute_not_exists(pk)", "Invalid operator used in KeyConditionExpression: attribute_not_exists"),
    ("contains(pk, :a)", "Invalid operator used in KeyConditionExpression: contains"),
    ("pk = :p AND size(sk) > :n", "KeyConditionExpressions cannot contain nested operations"),
    ("pk = :p AND :a BETWEEN sk AND :b", "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"),
    ("pk = :p AND begins_with(:a, sk)", "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand"),
    ("pk = sk", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("pk = :p AND sk BETWEEN col AND :b", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("pk.x = :p", "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk[0] = :p", "KeyConditionExpressions cannot have conditions on nested attributes"),
    (":p = :a", "Invalid condition in KeyConditionExpression: No key attribute specified"),
    ("pk = :p AND pk = :a", "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk > :a AND sk < :b", "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk > :a AND col = :b", "Conditions can be of length 1 or 2 only"),
    ("sk = :a", "Query condition missed key schema element: pk"),
    ("col = :a", "Query condition missed key schema element: pk"),
    ("pk = :p AND col = :a", "Query condition missed key schema element: sk"),
    ("pk < :p", "Query key condition not supported"),
    ("begins_with(pk, :p)", "Query key condition not supported"),
    ("pk BETWEEN :a AND :b", "Query key condition not supported"),
    ("pk = :p AND sk BETWEEN :b AND :a", "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {S:b}, upper bound operand: AttributeValue: {S:a}"),
    ("pk = :p AND sk BETWEEN :n AND :a", "Invalid KeyConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}"),
    ("pk = :p AND begins_with(sk, :n)", "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
    ("pk = :x", "Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x"),
    ("data = :p", "Invalid KeyConditionExpression: Attribute name is a reserved keyword; reserved keyword: data"),
    ("attribute_type(pk, :a)", "Invalid KeyConditionExpression: Invalid attribute type name found; type: a, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}"),
]


@pytest.mark.parametrize(("text", "expected"), ERRORS)
def test_key_condition_errors(text: str, expected: str) -> None:
    with pytest.raises(ValidationException) as raised:
        key(text)
    assert raised.value.message == expected


def test_hash_only_table() -> None:
    assert key("pk = :p", sort_key=None).sort_operator is None
    with pytest.raises(ValidationException) as raised:
        key("pk = :p AND sk = :a", sort_key=None)
    assert raised.value.message == "Query condition missed key schema element: pk"


@pytest.mark.parametrize(
    ("text", "types", "expected"),
    [
        ("pk = :n", {"partition_key_type": "S"}, "One or more parameter values were invalid: Condition parameter type does not match schema type"),
        ("pk = :p AND sk = :n", {"sort_key_type": "S"}, "One or more parameter values were invalid: Condition parameter type does not match schema type"),
        ("pk = :p AND sk BETWEEN :a AND :b", {"sort_key_type": "N"}, "One or more parameter values were invalid: Condition parameter type does not match schema type"),
    ],
)
def test_key_types_when_given(text: str, types: dict[str, str], expected: str) -> None:
    with pytest.raises(ValidationException) as raised:
        key(text, **types)
    assert raised.value.message == expected


def test_empty_key_string() -> None:
    context = ExpressionContext(None, {":e": {"S": ""}})
    with pytest.raises(ValidationException) as raised:
        compile_key_condition("pk = :e", context, "pk", None, partition_key_type="S")
    assert raised.value.message == (
        "One or more parameter values are not valid. The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: pk"
    )


@pytest.mark.parametrize(
    ("text", "sort_value", "expected"),
    [
        ("pk = :p", {"S": "anything"}, True),
        ("pk = :p AND sk = :a", {"S": "a"}, True),
        ("pk = :p AND sk = :a", {"S": "b"}, False),
        ("pk = :p AND sk < :b", {"S": "a"}, True),
        ("pk = :p AND sk <= :b", {"S": "b"}, True),
        ("pk = :p AND sk > :a", {"S": "a"}, False),
        ("pk = :p AND sk >= :a", {"S": "a"}, True),
        ("pk = :p AND sk BETWEEN :a AND :b", {"S": "aa"}, True),
        ("pk = :p AND sk BETWEEN :a AND :b", {"S": "c"}, False),
        ("pk = :p AND begins_with(sk, :a)", {"S": "abc"}, True),
        ("pk = :p AND begins_with(sk, :a)", {"S": "bac"}, False),
        ("pk = :p AND sk > :n", {"N": "1.5"}, True),
        ("pk = :p AND sk > :n", {"S": "x"}, False),
    ],
)
def test_sort_matches(text: str, sort_value: Any, expected: bool) -> None:
    assert key(text).sort_matches(sort_value) is expected
