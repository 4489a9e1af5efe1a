"""dynastore.types.keys: the byte order of encoded keys is DynamoDB's order.

Property tests print a ``@reproduce_failure`` blob when they fail; paste it
on the test, or rerun with ``pytest --hypothesis-seed=<seed>``, to replay.
"""

from __future__ import annotations

import base64
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore.types.attribute_value import compare_values
from dynastore.types.keys import encode_attribute, encode_key_value, partition_hash
from dynastore.types.number import encode_number_key, normalize_number
from tests.unit.test_number import in_range_numbers

# A loaded machine must not fail a property test for being slow to generate.
SLOW = [HealthCheck.too_slow]
PROPERTY = settings(max_examples=200, deadline=None, print_blob=True, suppress_health_check=SLOW)
# Lone surrogates cannot travel in UTF-8 JSON, so they never reach the engine.
UTF8_TEXT = st.text(st.characters(exclude_categories=["Cs"]))


def order(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


def test_examples() -> None:
    assert encode_key_value("S", "aé") == "aé".encode()
    assert encode_key_value("B", "AAH/") == b"\x00\x01\xff"
    assert encode_key_value("N", "0") == b"\x02"
    assert (
        encode_key_value("N", "-1") < encode_key_value("N", "0") < encode_key_value("N", "1e-130")
    )
    assert encode_attribute("N", {"N": "12"}) == encode_key_value("N", "12")


def test_utf8_order_differs_from_utf16_order() -> None:
    """U+FFFF sorts before U+1F600 in UTF-8 (and code points), after it in UTF-16."""
    high_bmp, astral = "\uffff", "\U0001f600"
    assert encode_key_value("S", high_bmp) < encode_key_value("S", astral)
    assert high_bmp.encode("utf-16-be") > astral.encode("utf-16-be")


def test_partition_hash_is_stable_and_32_bit() -> None:
    assert partition_hash(b"abc") == partition_hash(b"abc")
    assert 0 <= partition_hash(b"") < 2**32
    assert partition_hash(b"abc") != partition_hash(b"abd")


@PROPERTY
@given(in_range_numbers(), in_range_numbers())
def test_number_keys_sort_numerically(a: str, b: str) -> None:
    left, right = normalize_number(a), normalize_number(b)
    encoded = order(encode_key_value("N", left), encode_key_value("N", right))
    assert encoded == order(Decimal(left), Decimal(right))
    assert encoded == compare_values({"N": left}, {"N": right})


@PROPERTY
@given(UTF8_TEXT, UTF8_TEXT)
def test_string_keys_sort_by_utf8_bytes(a: str, b: str) -> None:
    encoded = order(encode_key_value("S", a), encode_key_value("S", b))
    assert encoded == order(a.encode("utf-8"), b.encode("utf-8"))
    assert encoded == compare_values({"S": a}, {"S": b})


@PROPERTY
@given(st.binary(), st.binary())
def test_binary_keys_sort_by_unsigned_bytes(a: bytes, b: bytes) -> None:
    left, right = base64.b64encode(a).decode(), base64.b64encode(b).decode()
    encoded = order(encode_key_value("B", left), encode_key_value("B", right))
    assert encoded == order(a, b)
    assert encoded == compare_values({"B": left}, {"B": right})


@PROPERTY
@given(in_range_numbers())
def test_any_spelling_encodes_like_its_normal_form(text: str) -> None:
    assert encode_number_key(text) == encode_number_key(normalize_number(text))
