"""dynastore.types.attribute_value: validation messages, normalisation,
equality and order. Messages are DynamoDB's (dynalite's conformance tests,
dynoxide's captures).

Property tests print a ``@reproduce_failure`` blob when they fail; paste it
on the test, or rerun with ``pytest --hypothesis-seed=<seed>``, to replay.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore import limits
from dynastore.errors import SerializationException, ValidationException
from dynastore.types.attribute_value import (
    RequestValidationError,
    SetValidationError,
    compare_values,
    decode_base64,
    type_of,
    validate_attribute_value,
    validate_item,
    values_equal,
)
from dynastore.types.size import attribute_value_size
from tests.unit.test_size import VALUES

# A loaded machine must not fail a property test for being slow to generate.
SLOW = [HealthCheck.too_slow]
PROPERTY = settings(max_examples=200, deadline=None, print_blob=True, suppress_health_check=SLOW)
# Lone surrogates cannot travel in UTF-8 JSON, so they never reach the engine.
UTF8_CHARACTERS = st.characters(exclude_categories=["Cs"])
INVALID = "One or more parameter values were invalid: "


def nested(depth: int, kind: str = "M") -> dict[str, Any]:
    """A chain of ``depth`` values: depth-1 containers around {"S": "x"}."""
    value: dict[str, Any] = {"S": "x"}
    for _ in range(depth - 1):
        value = {"M": {"a": value}} if kind == "M" else {"L": [value]}
    return value


VALIDATION_CASES: list[tuple[str, Any, str]] = [
    (
        "empty",
        {},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    ),
    (
        "unknown type",
        {"a": ""},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    ),
    (
        "null type value",
        {"S": None},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    ),
    (
        "null value",
        None,
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    ),
    (
        "two types",
        {"S": "a", "N": "1"},
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
    ),
    (
        "two types, bad number first",
        {"S": "a", "N": "b"},
        "The parameter cannot be converted to a numeric value: b",
    ),
    (
        "null false",
        {"NULL": False},
        INVALID + "Null attribute value types must have the value of true",
    ),
    ("null no", {"NULL": "no"}, INVALID + "Null attribute value types must have the value of true"),
    ("empty string set", {"SS": []}, INVALID + "An string set  may not be empty"),
    ("empty number set", {"NS": []}, INVALID + "An number set  may not be empty"),
    ("empty binary set", {"BS": []}, INVALID + "Binary sets should not be empty"),
    (
        "null in string set",
        {"SS": ["a", None]},
        INVALID + "An string set may not have a empty string as a member",
    ),
    (
        "null in binary set",
        {"BS": ["YQ==", None]},
        INVALID + "Binary sets may not contain null or empty values",
    ),
    (
        "empty number in set",
        {"NS": ["1", ""]},
        "The parameter cannot be converted to a numeric value",
    ),
    (
        "bad number in set",
        {"NS": ["1", "b", "a"]},
        "The parameter cannot be converted to a numeric value: b",
    ),
    (
        "duplicate strings",
        {"SS": ["a", "a"]},
        INVALID + "Input collection [a, a] contains duplicates.",
    ),
    ("duplicate numbers", {"NS": ["1", "1"]}, "Input collection contains duplicates"),
    (
        "numerically equal numbers",
        {"NS": ["1", "1.0", "2"]},
        "Input collection contains duplicates",
    ),
    (
        "duplicate binaries",
        {"BS": ["Yg==", "Yg=="]},
        INVALID + "Input collection [Yg==, Yg==]of type BS contains duplicates.",
    ),
    ("empty number", {"N": ""}, "The parameter cannot be converted to a numeric value"),
    ("bad number", {"N": "b"}, "The parameter cannot be converted to a numeric value: b"),
    (
        "too precise",
        {"N": "123456789012345678901234567890123456789"},
        "Attempting to store more than 38 significant digits in a Number",
    ),
    (
        "too precise fraction",
        {"N": "-1.23456789012345678901234567890123456789"},
        "Attempting to store more than 38 significant digits in a Number",
    ),
    (
        "overflow",
        {"N": "1e126"},
        "Number overflow. Attempting to store a number with magnitude larger than supported range",
    ),
    (
        "negative overflow",
        {"N": "-1e126"},
        "Number overflow. Attempting to store a number with magnitude larger than supported range",
    ),
    (
        "underflow",
        {"N": "1e-131"},
        "Number underflow. Attempting to store a number with magnitude smaller than supported range",
    ),
    (
        "negative underflow",
        {"N": "-1e-131"},
        "Number underflow. Attempting to store a number with magnitude smaller than supported range",
    ),
    (
        "bad number in map",
        {"M": {"a": {"N": "x"}}},
        "The parameter cannot be converted to a numeric value: x",
    ),
    (
        "empty value in list",
        {"L": [{"S": "a"}, {}]},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    ),
    ("empty set in map", {"M": {"a": {"SS": []}}}, INVALID + "An string set  may not be empty"),
    (
        "too deep map",
        nested(limits.NESTING_MAX_DEPTH + 1),
        "Nesting Levels have exceeded supported limits",
    ),
    (
        "too deep list",
        nested(limits.NESTING_MAX_DEPTH + 1, "L"),
        "Nesting Levels have exceeded supported limits",
    ),
]


@pytest.mark.parametrize(
    ("value", "message"),
    [case[1:] for case in VALIDATION_CASES],
    ids=[case[0] for case in VALIDATION_CASES],
)
def test_validation_errors(value: Any, message: str) -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_attribute_value(value)
    assert excinfo.value.message is not None
    assert excinfo.value.message.startswith(message)
    assert excinfo.value.to_wire()["__type"] == "com.amazon.coral.validate#ValidationException"


def test_nesting_message_is_dynamodbs_full_text() -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_attribute_value(nested(limits.NESTING_MAX_DEPTH + 1))
    assert excinfo.value.message == (
        "Nesting Levels have exceeded supported limits: "
        "Attributes in the item have nested levels beyond supported limit"
    )


@pytest.mark.parametrize("kind", ["M", "L"])
def test_nesting_limit_is_inclusive(kind: str) -> None:
    deepest = nested(limits.NESTING_MAX_DEPTH, kind)
    assert validate_attribute_value(deepest) is deepest


def test_empty_containers_at_the_limit_are_fine() -> None:
    value: dict[str, Any] = {"M": {}}
    for _ in range(limits.NESTING_MAX_DEPTH - 1):
        value = {"L": [value]}
    assert validate_attribute_value(value) is value
    with pytest.raises(ValidationException):
        validate_attribute_value({"L": [value]})


@pytest.mark.parametrize(
    "value",
    [
        {"SS": []},
        {"NS": []},
        {"BS": []},
        {"SS": ["a", "a"]},
        {"NS": ["1", "1"]},
        {"BS": ["YQ==", "YQ=="]},
    ],
)
def test_request_model_errors_are_marked_for_the_envelope(value: Any) -> None:
    with pytest.raises(RequestValidationError) as excinfo:
        validate_attribute_value(value)
    assert excinfo.value.to_wire()["__type"] == "com.amazon.coral.validate#ValidationException"
    assert SetValidationError is RequestValidationError  # the name the ops import


# dynalite's current conformance table ("AttrStruct" in test/helpers.js): the
# wrong JSON kinds for each place a JSON value sits in an attribute value.
START = "Start of structure or map found where not expected"
AV_CLASS = "com.amazonaws.dynamodb.v20120810.AttributeValue"
SCALARS: list[Any] = ["23", True, 23, -2147483648, 2147483648, 34.56]
STRING_MESSAGES: list[tuple[Any, str]] = [
    (True, "TRUE_VALUE cannot be converted to String"),
    (False, "FALSE_VALUE cannot be converted to String"),
    (23, "NUMBER_VALUE cannot be converted to String"),
    (-2147483648, "NUMBER_VALUE cannot be converted to String"),
    (2147483648, "NUMBER_VALUE cannot be converted to String"),
    (34.56, "DECIMAL_VALUE cannot be converted to String"),
    ([], "Unrecognized collection type class java.lang.String"),
    ({}, START),
]
BOOLEAN_MESSAGES: list[tuple[Any, str]] = [
    ("23", "Unexpected token received from parser"),
    ("maybe", "Unexpected token received from parser"),
    (23, "NUMBER_VALUE cannot be converted to Boolean"),
    (-2147483648, "NUMBER_VALUE cannot be converted to Boolean"),
    (2147483648, "NUMBER_VALUE cannot be converted to Boolean"),
    (34.56, "DECIMAL_VALUE cannot be converted to Boolean"),
    ([], "Unrecognized collection type class java.lang.Boolean"),
    ({}, START),
]
BLOB_MESSAGES: list[tuple[Any, str]] = [
    *[(bad, "only base-64-encoded strings are convertible to bytes") for bad in SCALARS[1:]],
    ([], "Unrecognized collection type class java.nio.ByteBuffer"),
    ({}, START),
    ("23456", "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
    ("0000=", "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
    ("=+/=", "Invalid last non-pad Base64 character dectected"),
    ("+/+=", "Invalid last non-pad Base64 character dectected"),
    ("YR==", "Invalid last non-pad Base64 character dectected"),
    ("ab!d", "Invalid last non-pad Base64 character dectected"),
]
LIST_MESSAGES: list[tuple[Any, str]] = [
    *[(bad, "Unexpected field type") for bad in SCALARS],
    ({}, START),
]
MAP_MESSAGES: list[tuple[Any, str]] = [
    *[(bad, "Unexpected field type") for bad in SCALARS],
    ([], f"Unrecognized collection type java.util.Map<java.lang.String, {AV_CLASS}>"),
]
VALUE_STRUCT_MESSAGES: list[tuple[Any, str]] = [
    *[(bad, "Unexpected value type in payload") for bad in SCALARS],
    ([], f"Unrecognized collection type class {AV_CLASS}"),
]


def _serialization_cases() -> list[tuple[Any, str]]:
    cases: list[tuple[Any, str]] = []
    for bad, message in VALUE_STRUCT_MESSAGES:
        cases += [(bad, message), ({"L": [bad]}, message), ({"M": {"a": bad}}, message)]
    for bad, message in STRING_MESSAGES:
        cases += [({"S": bad}, message), ({"N": bad}, message)]
        cases += [({"SS": [bad]}, message), ({"NS": [bad]}, message)]
    for bad, message in BLOB_MESSAGES:
        cases += [({"B": bad}, message), ({"BS": [bad]}, message)]
        cases += [({"L": [{"BS": [bad]}]}, message), ({"M": {"a": {"BS": [bad]}}}, message)]
    for bad, message in BOOLEAN_MESSAGES:
        cases += [({"BOOL": bad}, message), ({"NULL": bad}, message)]
    for bad, message in LIST_MESSAGES:
        cases += [({kind: bad}, message) for kind in ("SS", "NS", "BS", "L")]
        cases += [({"L": [{"BS": bad}]}, message), ({"M": {"a": {"BS": bad}}}, message)]
    for bad, message in MAP_MESSAGES:
        cases.append(({"M": bad}, message))
    return cases


@pytest.mark.parametrize(("value", "message"), _serialization_cases(), ids=repr)
def test_serialization_errors(value: Any, message: str) -> None:
    with pytest.raises(SerializationException) as excinfo:
        validate_attribute_value(value)
    assert excinfo.value.message == message
    assert excinfo.value.to_wire()["__type"] == "com.amazon.coral.service#SerializationException"


VALID_CASES: list[tuple[Any, Any]] = [
    ({"S": "a"}, {"S": "a"}),
    ({"S": ""}, {"S": ""}),  # empty strings are fine outside keys since 2020
    ({"B": ""}, {"B": ""}),
    ({"SS": ["", "a"]}, {"SS": ["", "a"]}),
    ({"BS": ["", "YQ=="]}, {"BS": ["", "YQ=="]}),
    ({"N": "1.50"}, {"N": "1.5"}),
    ({"N": "-0"}, {"N": "0"}),
    ({"N": "1e3"}, {"N": "1000"}),
    ({"N": "0001"}, {"N": "1"}),
    ({"NS": ["1.0", "2"]}, {"NS": ["1", "2"]}),
    ({"BOOL": True}, {"BOOL": True}),
    ({"BOOL": False}, {"BOOL": False}),
    ({"BOOL": "true"}, {"BOOL": True}),  # the service's parser takes a few words
    ({"BOOL": "No"}, {"BOOL": False}),
    ({"BOOL": "1"}, {"BOOL": True}),
    ({"NULL": "YES"}, {"NULL": True}),
    ({"NULL": True}, {"NULL": True}),
    ({"M": {}}, {"M": {}}),
    ({"L": []}, {"L": []}),
    ({"M": {"a": {"N": "01"}, "b": {"S": "x"}}}, {"M": {"a": {"N": "1"}, "b": {"S": "x"}}}),
    ({"L": [{"S": "x"}, {"N": "2.0"}]}, {"L": [{"S": "x"}, {"N": "2"}]}),
    ({"S": "a", "x": "ignored"}, {"S": "a"}),
    ({"S": "a", "N": None}, {"S": "a"}),
]


@pytest.mark.parametrize(("value", "expected"), VALID_CASES, ids=repr)
def test_valid_values_normalize(value: Any, expected: Any) -> None:
    assert validate_attribute_value(value) == expected


def test_unchanged_values_are_returned_as_is() -> None:
    value = {"M": {"a": {"L": [{"N": "1"}, {"SS": ["x"]}]}, "b": {"B": "YQ=="}}}
    assert validate_attribute_value(value) is value
    item = {"pk": {"S": "a"}, "n": {"N": "5"}, "doc": value}
    assert validate_item(item) is item


def test_changed_values_do_not_mutate_the_input() -> None:
    inner = {"N": "1.0"}
    item = {"pk": {"S": "a"}, "m": {"M": {"x": inner}}}
    result = validate_item(item)
    assert result == {"pk": {"S": "a"}, "m": {"M": {"x": {"N": "1"}}}}
    assert inner == {"N": "1.0"}
    assert result["pk"] is item["pk"]


def test_validate_item_rejects_non_maps() -> None:
    with pytest.raises(SerializationException) as excinfo:
        validate_item([])
    assert excinfo.value.message == (
        "Unrecognized collection type java.util.Map<java.lang.String, "
        "com.amazonaws.dynamodb.v20120810.AttributeValue>"
    )
    with pytest.raises(SerializationException) as scalar:
        validate_item("23")
    assert scalar.value.message == "Unexpected field type"
    with pytest.raises(ValidationException) as validation:
        validate_item({"a": {"N": "x"}})
    assert validation.value.message == "The parameter cannot be converted to a numeric value: x"


def test_decode_base64() -> None:
    assert decode_base64("") == b""
    assert decode_base64("YWJj") == b"abc"
    with pytest.raises(SerializationException):
        decode_base64("YW\nJj")


def test_type_of() -> None:
    assert type_of({"SS": ["a"]}) == "SS"
    assert type_of({"NULL": True}) == "NULL"


EQUAL = [
    ({"S": "a"}, {"S": "a"}),
    ({"N": "1"}, {"N": "1.0"}),
    ({"B": "YQ=="}, {"B": "YQ=="}),
    ({"SS": ["a", "b"]}, {"SS": ["b", "a"]}),
    ({"NS": ["1", "2"]}, {"NS": ["2.0", "1"]}),
    ({"BS": ["YQ==", "Yg=="]}, {"BS": ["Yg==", "YQ=="]}),
    ({"BOOL": False}, {"BOOL": False}),
    ({"NULL": True}, {"NULL": True}),
    ({"M": {"a": {"N": "1"}, "b": {"L": []}}}, {"M": {"b": {"L": []}, "a": {"N": "1.00"}}}),
    ({"L": [{"S": "a"}, {"N": "2"}]}, {"L": [{"S": "a"}, {"N": "2"}]}),
]
NOT_EQUAL = [
    ({"S": "a"}, {"S": "b"}),
    ({"S": "1"}, {"N": "1"}),
    ({"N": "1"}, {"N": "-1"}),
    ({"B": "YQ=="}, {"B": "Yg=="}),
    ({"B": "YQ=="}, {"S": "YQ=="}),
    ({"SS": ["a"]}, {"SS": ["a", "b"]}),
    ({"NS": ["1"]}, {"NS": ["2"]}),
    ({"SS": ["1"]}, {"NS": ["1"]}),
    ({"BOOL": True}, {"BOOL": False}),
    ({"M": {"a": {"N": "1"}}}, {"M": {"a": {"N": "2"}}}),
    ({"M": {"a": {"N": "1"}}}, {"M": {"b": {"N": "1"}}}),
    ({"L": [{"S": "a"}, {"S": "b"}]}, {"L": [{"S": "b"}, {"S": "a"}]}),
    ({"L": [{"S": "a"}]}, {"L": [{"S": "a"}, {"S": "a"}]}),
    ({"L": []}, {"M": {}}),
]


@pytest.mark.parametrize(("a", "b"), EQUAL, ids=repr)
def test_values_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert values_equal(a, b)
    assert values_equal(b, a)


@pytest.mark.parametrize(("a", "b"), NOT_EQUAL, ids=repr)
def test_values_not_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert not values_equal(a, b)
    assert not values_equal(b, a)


ORDERED = [
    ({"S": "a"}, {"S": "b"}),
    ({"S": "Z"}, {"S": "a"}),
    ({"S": "a"}, {"S": "ab"}),
    ({"S": "\uffff"}, {"S": "\U0001f600"}),  # UTF-8 order, not UTF-16 order
    ({"N": "-10"}, {"N": "-9"}),
    ({"N": "9"}, {"N": "10"}),
    ({"N": "0.5"}, {"N": "1"}),
    ({"B": "AA=="}, {"B": "/w=="}),  # 0x00 < 0xff, unsigned
    ({"B": "fw=="}, {"B": "gA=="}),  # 0x7f < 0x80
    ({"B": ""}, {"B": "AA=="}),
]


@pytest.mark.parametrize(("low", "high"), ORDERED, ids=repr)
def test_compare_values_orders(low: dict[str, Any], high: dict[str, Any]) -> None:
    assert compare_values(low, high) == -1
    assert compare_values(high, low) == 1
    assert compare_values(low, low) == 0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"S": "1"}, {"N": "1"}),
        ({"BOOL": True}, {"BOOL": False}),
        ({"NULL": True}, {"NULL": True}),
        ({"SS": ["a"]}, {"SS": ["a"]}),
        ({"L": []}, {"L": []}),
        ({"M": {}}, {"M": {}}),
    ],
    ids=repr,
)
def test_compare_values_incomparable(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert compare_values(a, b) is None


def test_compare_numbers_numerically() -> None:
    assert compare_values({"N": "1.0"}, {"N": "1"}) == 0
    assert compare_values({"N": "1e2"}, {"N": "99"}) == 1


@PROPERTY
@given(st.text(UTF8_CHARACTERS), st.text(UTF8_CHARACTERS))
def test_string_order_is_utf8_byte_order(a: str, b: str) -> None:
    expected = (a.encode() > b.encode()) - (a.encode() < b.encode())
    assert compare_values({"S": a}, {"S": b}) == expected


@PROPERTY
@given(st.binary(), st.binary())
def test_binary_order_is_unsigned_byte_order(a: bytes, b: bytes) -> None:
    left, right = base64.b64encode(a).decode(), base64.b64encode(b).decode()
    assert compare_values({"B": left}, {"B": right}) == (a > b) - (a < b)
    assert values_equal({"B": left}, {"B": right}) == (a == b)


@PROPERTY
@given(st.binary())
def test_every_canonical_base64_is_accepted(data: bytes) -> None:
    text = base64.b64encode(data).decode()
    assert validate_attribute_value({"B": text}) == {"B": text}
    assert decode_base64(text) == data


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS", "x"]),
            children,
            max_size=2,
        )
    ),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None, print_blob=True, suppress_health_check=SLOW)
@given(JSON)
def test_arbitrary_json_is_valid_or_a_dynamodb_error(value: Any) -> None:
    """Whatever a client sends, the answer is a value or one of DynamoDB's
    two error types, never a crash; and validation is idempotent."""
    try:
        normalized = validate_attribute_value(value)
    except (ValidationException, SerializationException) as error:
        assert error.message
        return
    again = validate_attribute_value(normalized)
    assert again is normalized
    assert values_equal(normalized, again)
    attribute_value_size(normalized)


@pytest.mark.parametrize(
    "item",
    [
        {"a": {"SS": []}, "b": {"S": 5}},
        {"a": {"N": "x"}, "b": {"M": {"c": {"BOOL": []}}}},
        {"a": {"NS": ["1", "1"]}, "b": {"L": [{"B": "!!!!"}]}},
        {"a": {"NULL": False}, "b": {"BS": [1]}},
    ],
    ids=repr,
)
def test_a_wrong_json_kind_anywhere_wins_over_validation(item: dict[str, Any]) -> None:
    """The service deserializes the whole request before validating it."""
    with pytest.raises(SerializationException):
        validate_item(item)
    with pytest.raises(SerializationException):
        validate_attribute_value({"M": item})


def test_shape_check_is_bounded_on_hostile_depth() -> None:
    value: Any = {"S": 5}
    for _ in range(5000):
        value = {"L": [value]}
    with pytest.raises(ValidationException) as excinfo:
        validate_attribute_value(value)
    assert excinfo.value.message == (
        "Nesting Levels have exceeded supported limits: "
        "Attributes in the item have nested levels beyond supported limit"
    )


BASE64_MESSAGES = (
    "Base64 encoded length is expected a multiple of 4 bytes but found: ",
    "Invalid last non-pad Base64 character dectected",
)
BASE64_LIKE = st.text(
    st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ "),
    max_size=12,
)


@PROPERTY
@given(BASE64_LIKE)
def test_only_canonical_base64_is_accepted(text: str) -> None:
    try:
        canonical = base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except ValueError:
        canonical = False
    try:
        decode_base64(text)
    except SerializationException as error:
        assert not canonical
        assert error.message is not None
        assert error.message.startswith(BASE64_MESSAGES)
    else:
        assert canonical


def reorder_sets(value: dict[str, Any]) -> dict[str, Any]:
    """The same value with every set's members reversed, at every depth."""
    ((type_key, inner),) = value.items()
    if type_key in ("SS", "NS", "BS"):
        return {type_key: list(reversed(inner))}
    if type_key == "L":
        return {"L": [reorder_sets(element) for element in inner]}
    if type_key == "M":
        return {"M": {name: reorder_sets(child) for name, child in reversed(inner.items())}}
    return value


@settings(max_examples=100, deadline=None, print_blob=True, suppress_health_check=SLOW)
@given(VALUES, VALUES)
def test_equality_is_an_equivalence_that_ignores_set_order(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    assert values_equal(a, a)
    assert values_equal(a, reorder_sets(a))
    assert values_equal(a, b) == values_equal(b, a)
    if values_equal(a, b):
        assert attribute_value_size(a) == attribute_value_size(b)
