"""dynastore.types.size: DynamoDB's item size rules.

Property tests print a ``@reproduce_failure`` blob when they fail; paste it
on the test, or rerun with ``pytest --hypothesis-seed=<seed>``, to replay.
"""

from __future__ import annotations

import base64
from decimal import Decimal, localcontext
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore import limits
from dynastore.types.attribute_value import validate_attribute_value
from dynastore.types.number import normalize_number, significant_digits
from dynastore.types.size import (
    attribute_value_size,
    binary_length,
    item_size,
    key_value_size,
    number_size,
    utf8_length,
)
from tests.unit.test_number import in_range_numbers

# A loaded machine must not fail a property test for being slow to generate.
SLOW = [HealthCheck.too_slow]
PROPERTY = settings(max_examples=150, deadline=None, print_blob=True, suppress_health_check=SLOW)
# Nested documents are costly to generate; fewer of them still cover the shapes.
STRUCTURES = settings(max_examples=60, deadline=None, print_blob=True, suppress_health_check=SLOW)

NUMBER_SIZES = [
    ("0", 1),
    ("-0", 1),
    ("1", 2),
    ("9", 2),
    ("10", 2),
    ("12", 2),
    ("100", 2),
    ("123", 3),
    ("1234", 3),
    ("1.2", 3),  # digit pair split across the exponent: one more byte
    ("12.3456", 4),  # pinned by dynalite's capacity tests against DynamoDB
    ("0.12", 2),
    ("0.012", 3),
    ("0.5", 2),
    ("-1", 3),  # negatives carry a terminator byte
    ("-0.5", 3),
    ("1e125", 2),
    ("1e-130", 2),
    ("9.9999999999999999999999999999999999999e125", 20),
    ("9.9999999999999999999999999999999999999e124", 21),
    ("12345678901234567890123456789012345678", 20),
    ("-12345678901234567890123456789012345678", 21),
]


@pytest.mark.parametrize(("text", "size"), NUMBER_SIZES)
def test_number_size(text: str, size: int) -> None:
    assert number_size(normalize_number(text)) == size
    assert attribute_value_size({"N": normalize_number(text)}) == size


VALUE_SIZES: list[tuple[dict[str, Any], int]] = [
    ({"S": ""}, 0),
    ({"S": "abc"}, 3),
    ({"S": "é"}, 2),
    ({"S": "€"}, 3),
    ({"S": "\U0001f600"}, 4),
    ({"B": ""}, 0),
    ({"B": "AQ=="}, 1),
    ({"B": "AQI="}, 2),
    ({"B": "AQID"}, 3),
    ({"BOOL": True}, 1),
    ({"BOOL": False}, 1),
    ({"NULL": True}, 1),
    ({"SS": ["a", "bc", ""]}, 3),
    ({"NS": ["1", "12.3456"]}, 6),
    ({"BS": ["AQI=", "Ag==", "AQ=="]}, 4),
    ({"L": []}, 3),
    ({"M": {}}, 3),
    ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + 2 + 2 + 2),
    ({"M": {"ab": {"S": "cd"}}}, 3 + 1 + 2 + 2),
    ({"M": {"a": {"L": [{"NULL": True}]}}}, 3 + 1 + 1 + (3 + 1 + 1)),
]


@pytest.mark.parametrize(("value", "size"), VALUE_SIZES, ids=repr)
def test_attribute_value_size(value: dict[str, Any], size: int) -> None:
    assert attribute_value_size(value) == size


def test_item_size_counts_names_in_utf8() -> None:
    assert item_size({}) == 0
    assert item_size({"a": {"S": "b"}}) == 2
    assert item_size({"é": {"BOOL": True}, "id": {"N": "10"}}) == 2 + 1 + 2 + 2


def test_dynalite_capacity_boundary_items() -> None:
    """Two items dynalite bills against the live service: 1 and 2 write units."""
    key = "0123456789"
    small = {
        "a": {"S": key},
        "b": {"S": "b" * (1009 - len(key))},
        "c": {"N": "12.3456"},
        "d": {"B": "AQI="},
        "e": {"BS": ["AQI=", "Ag==", "AQ=="]},
    }
    larger = dict(small, b={"S": "b" * (1011 - len(key))}, e={"BS": ["AQI=", "Ag=="]})
    assert item_size(small) == limits.WRITE_UNIT_BYTES
    assert item_size(larger) == limits.WRITE_UNIT_BYTES + 1


def test_item_at_the_size_limit() -> None:
    """dynalite's "item is too big" case: one byte over ITEM_MAX_BYTES."""
    key = "k" * 10
    item = {"a": {"S": key}, "b": {"S": "a" * (limits.ITEM_MAX_BYTES - len(key) - 1)}}
    assert item_size(item) == limits.ITEM_MAX_BYTES + 1


def test_key_value_size() -> None:
    assert key_value_size({"S": "é" * 1024}) == 2048
    assert key_value_size({"B": base64.b64encode(b"x" * 1025).decode()}) == 1025
    assert key_value_size({"N": "12"}) == 2


def test_utf8_and_binary_lengths() -> None:
    assert utf8_length("abc") == 3
    assert utf8_length("aé") == 3
    assert binary_length("") == 0


# --- properties -----------------------------------------------------------------

UTF8_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
NUMBERS = in_range_numbers()
SCALARS = st.one_of(
    UTF8_TEXT.map(lambda text: {"S": text}),
    NUMBERS.map(lambda text: {"N": normalize_number(text)}),
    st.binary(max_size=20).map(lambda data: {"B": base64.b64encode(data).decode()}),
    st.booleans().map(lambda flag: {"BOOL": flag}),
    st.just({"NULL": True}),
    st.lists(UTF8_TEXT, min_size=1, max_size=4, unique=True).map(lambda members: {"SS": members}),
    st.lists(NUMBERS.map(normalize_number), min_size=1, max_size=4, unique=True).map(
        lambda members: {"NS": members}
    ),
    st.lists(st.binary(max_size=8), min_size=1, max_size=4, unique=True).map(
        lambda members: {"BS": [base64.b64encode(member).decode() for member in members]}
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda elements: {"L": elements}),
        st.dictionaries(UTF8_TEXT, children, max_size=4).map(lambda fields: {"M": fields}),
    ),
    max_leaves=8,
)
ITEMS = st.dictionaries(UTF8_TEXT, VALUES, max_size=5)


@PROPERTY
@given(st.binary(max_size=64))
def test_binary_length_matches_decoding(data: bytes) -> None:
    assert binary_length(base64.b64encode(data).decode()) == len(data)


@PROPERTY
@given(UTF8_TEXT)
def test_utf8_length_matches_encoding(text: str) -> None:
    assert utf8_length(text) == len(text.encode("utf-8"))


@PROPERTY
@given(NUMBERS)
def test_number_size_follows_the_guide(text: str) -> None:
    """About one byte per two significant digits plus one (guide's wording):
    never less than that, at most two bytes more (alignment, sign)."""
    normalized = normalize_number(text)
    size = number_size(normalized)
    if normalized == "0":
        assert size == 1
        return
    guide = (significant_digits(normalized) + 1) // 2 + 1
    assert guide <= size <= guide + 2


def reference_number_size(text: str) -> int:
    """The same rule computed from Decimal's view of the number: one exponent
    byte, the digits in base-100 pairs aligned on an even exponent, a
    terminator byte for negatives."""
    with localcontext() as context:
        context.prec = 400  # normalize() rounds to the context's precision
        sign, digits, exponent = Decimal(text).normalize().as_tuple()
    assert isinstance(exponent, int)
    if digits == (0,):
        return 1
    adjusted = exponent + len(digits) - 1
    # Pair boundaries sit on even powers of ten: count pairs covering the digits.
    top_pair, bottom_pair = adjusted // 2, exponent // 2
    return 1 + (top_pair - bottom_pair + 1) + sign


@PROPERTY
@given(NUMBERS)
def test_number_size_matches_base_100_layout(text: str) -> None:
    assert number_size(normalize_number(text)) == reference_number_size(text)


@STRUCTURES
@given(VALUES)
def test_values_are_validated_unchanged_and_sized(value: dict[str, Any]) -> None:
    assert validate_attribute_value(value) == value
    assert attribute_value_size(value) >= 0


@STRUCTURES
@given(ITEMS, UTF8_TEXT, VALUES)
def test_adding_an_attribute_grows_the_item(
    item: dict[str, Any], name: str, value: dict[str, Any]
) -> None:
    item.pop(name, None)
    before = item_size(item)
    grown = dict(item, **{name: value})
    assert item_size(grown) == before + utf8_length(name) + attribute_value_size(value)
    assert item_size(grown) > before or (name == "" and attribute_value_size(value) == 0)


@STRUCTURES
@given(st.lists(VALUES, max_size=5), VALUES)
def test_containers_grow_with_each_element(
    elements: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    as_list = {"L": elements}
    assert attribute_value_size({"L": [*elements, extra]}) == (
        attribute_value_size(as_list) + 1 + attribute_value_size(extra)
    )
    assert attribute_value_size({"M": {"x": as_list}}) == 3 + 1 + 1 + attribute_value_size(as_list)
