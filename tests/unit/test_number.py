"""dynastore.types.number: normal form, range errors, exact arithmetic, and the
order-preserving key encoding.

Property tests print a ``@reproduce_failure`` blob when they fail; paste it
on the test, or rerun with ``pytest --hypothesis-seed=<seed>``, to replay.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynastore import limits
from dynastore.errors import ValidationException
from dynastore.types.number import (
    MESSAGE_NOT_NUMERIC,
    MESSAGE_OVERFLOW,
    MESSAGE_TOO_PRECISE,
    MESSAGE_UNDERFLOW,
    add_numbers,
    compare_numbers,
    encode_number_key,
    from_decimal,
    is_short_normal,
    normalize_number,
    significant_digits,
    subtract_numbers,
)

# A loaded machine must not fail a property test for being slow to generate.
SLOW = [HealthCheck.too_slow]
PROPERTY = settings(max_examples=200, deadline=None, print_blob=True, suppress_health_check=SLOW)


@st.composite
def in_range_numbers(
    draw: st.DrawFn, max_digits: int = limits.NUMBER_MAX_SIGNIFICANT_DIGITS
) -> str:
    """Any number DynamoDB can store, as wire text in a random spelling."""
    digit_count = draw(st.integers(1, max_digits))
    mantissa = draw(st.integers(0, 10**digit_count - 1))
    if mantissa == 0:
        return draw(st.sampled_from(["0", "-0", "0.0", "000", "0e5", "-0.000"]))
    digits = str(mantissa)
    lowest = limits.NUMBER_MIN_EXPONENT - (len(digits) - 1)
    highest = limits.NUMBER_MAX_EXPONENT - (len(digits) - 1)
    exponent = draw(st.integers(lowest, highest))
    sign = draw(st.sampled_from(["", "-"]))
    value = Decimal(f"{sign}{digits}E{exponent}")
    spelling = draw(st.sampled_from(["f", "e", "E", "padded"]))
    if spelling == "f":
        return format(value, "f")
    if spelling == "padded":
        return (
            sign
            + "00"
            + format(value.copy_abs(), "f")
            + ("" if "." in format(value, "f") else ".000")
        )
    return format(value, "e").replace("e", spelling)


NORMAL_FORMS = [
    ("1.50", "1.5"),
    ("1e3", "1000"),
    ("1E3", "1000"),
    ("1e+3", "1000"),
    ("-0", "0"),
    ("0.000", "0"),
    ("00012", "12"),
    ("0012.3400", "12.34"),
    (".5", "0.5"),
    ("5.", "5"),
    ("+3", "3"),
    ("0001.23", "1.23"),
    ("-17e5", "-1700000"),
    ("-17.4E37", "-174" + "0" * 36),
    ("1e+5", "100000"),
    ("0e1000", "0"),
    ("-0.0500", "-0.05"),
    ("10.50", "10.5"),
    ("3.1415926535897932384626433832795028841", "3.1415926535897932384626433832795028841"),
    ("-5e-3", "-0.005"),
    ("1e-130", "0." + "0" * 129 + "1"),
    ("1e125", "1" + "0" * 125),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("123456789012345678901234567890123456780", "123456789012345678901234567890123456780"),
]


@pytest.mark.parametrize(("text", "normal"), NORMAL_FORMS)
def test_normal_form(text: str, normal: str) -> None:
    assert normalize_number(text) == normal


ERRORS = [
    ("", MESSAGE_NOT_NUMERIC),
    ("b", MESSAGE_NOT_NUMERIC + ": b"),
    ("1.2.3", MESSAGE_NOT_NUMERIC + ": 1.2.3"),
    ("NaN", MESSAGE_NOT_NUMERIC + ": NaN"),
    ("Infinity", MESSAGE_NOT_NUMERIC + ": Infinity"),
    ("0x10", MESSAGE_NOT_NUMERIC + ": 0x10"),
    ("1e", MESSAGE_NOT_NUMERIC + ": 1e"),
    ("123456789012345678901234567890123456789", MESSAGE_TOO_PRECISE),
    ("-1.23456789012345678901234567890123456789", MESSAGE_TOO_PRECISE),
    ("1e126", MESSAGE_OVERFLOW),
    ("-1e126", MESSAGE_OVERFLOW),
    ("10e125", MESSAGE_OVERFLOW),
    ("1e-131", MESSAGE_UNDERFLOW),
    ("-1e-131", MESSAGE_UNDERFLOW),
    ("0.1e-130", MESSAGE_UNDERFLOW),
    (" 1", MESSAGE_NOT_NUMERIC + ":  1"),  # the service rejects surrounding spaces
    ("1 ", MESSAGE_NOT_NUMERIC + ": 1 "),
    ("-dog", MESSAGE_NOT_NUMERIC + ": -dog"),
    ("-Infinity", MESSAGE_NOT_NUMERIC + ": -Infinity"),
    ("١", MESSAGE_NOT_NUMERIC + ": ١"),  # only ASCII digits
    ("--1", MESSAGE_NOT_NUMERIC + ": --1"),
    # Java keeps the exponent in an int: beyond it the text is not a number.
    ("1e2147483648", MESSAGE_NOT_NUMERIC + ": 1e2147483648"),
    ("0e-2147483648", MESSAGE_NOT_NUMERIC + ": 0e-2147483648"),
    ("1e2147483647", MESSAGE_OVERFLOW),
    ("1e-2147483647", MESSAGE_UNDERFLOW),
    ("1" * 1_000_000, MESSAGE_TOO_PRECISE),
    ("+-1", MESSAGE_NOT_NUMERIC + ": +-1"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS, ids=lambda text: str(text)[:40])
def test_errors(text: str, message: str) -> None:
    with pytest.raises(ValidationException) as excinfo:
        normalize_number(text)
    assert excinfo.value.message == message


def test_messages_are_dynamodbs() -> None:
    assert MESSAGE_NOT_NUMERIC == "The parameter cannot be converted to a numeric value"
    assert MESSAGE_TOO_PRECISE == "Attempting to store more than 38 significant digits in a Number"
    assert MESSAGE_OVERFLOW == (
        "Number overflow. Attempting to store a number with magnitude larger than supported range"
    )
    assert MESSAGE_UNDERFLOW == (
        "Number underflow. Attempting to store a number with magnitude smaller than supported range"
    )


def test_arithmetic() -> None:
    assert add_numbers("0.1", "0.2") == "0.3"
    assert subtract_numbers("1", "1.5") == "-0.5"
    assert add_numbers("1", "10000000000000000000000") == "10000000000000000000001"
    assert subtract_numbers("10000000000000000000000", "1") == "9999999999999999999999"


ARITHMETIC_ERRORS = [
    (add_numbers, "9e125", "9e125", MESSAGE_OVERFLOW),
    (subtract_numbers, "9e125", "-9e125", MESSAGE_OVERFLOW),
    (add_numbers, "9.9999999999999999999999999999999999999e125", "1e125", MESSAGE_OVERFLOW),
    # More than 38 digits: DynamoDB words it as an overflow (ScyllaDB's suite).
    (add_numbers, "1e50", "1", MESSAGE_OVERFLOW),
    (subtract_numbers, "1e50", "1", MESSAGE_OVERFLOW),
    (add_numbers, "1e-50", "1", MESSAGE_OVERFLOW),
    (subtract_numbers, "1.234e-130", "1.233e-130", MESSAGE_UNDERFLOW),
]


@pytest.mark.parametrize(("operation", "left", "right", "message"), ARITHMETIC_ERRORS)
def test_arithmetic_errors(operation: object, left: str, right: str, message: str) -> None:
    assert callable(operation)
    with pytest.raises(ValidationException) as excinfo:
        operation(normalize_number(left), normalize_number(right))
    assert excinfo.value.message == message


def test_conversions() -> None:
    assert from_decimal(Decimal("-0.00")) == "0"
    assert significant_digits("-120.05") == 5
    assert significant_digits("0") == 0


def test_compare_numbers() -> None:
    assert compare_numbers("1", "1") == 0
    assert compare_numbers("-1", "1") == -1
    assert compare_numbers("10", "9") == 1


# --- properties -----------------------------------------------------------------


@PROPERTY
@given(in_range_numbers())
def test_normalize_is_idempotent_and_exact(text: str) -> None:
    normal = normalize_number(text)
    assert normalize_number(normal) == normal
    assert Decimal(normal) == Decimal(text)
    assert "e" not in normal and "E" not in normal and "+" not in normal
    assert normal == "0" or not normal.lstrip("-").startswith("00")
    assert "." not in normal or not normal.endswith(("0", "."))


@PROPERTY
@given(in_range_numbers(), in_range_numbers())
def test_key_encoding_order_is_numeric_order(a: str, b: str) -> None:
    _assert_encoded_order_is_numeric(a, b)


@PROPERTY
@given(in_range_numbers(max_digits=4), in_range_numbers(max_digits=4))
def test_key_encoding_order_on_close_numbers(a: str, b: str) -> None:
    """Short mantissas collide on exponents and prefixes far more often."""
    _assert_encoded_order_is_numeric(a, b)


def _assert_encoded_order_is_numeric(a: str, b: str) -> None:
    left, right = normalize_number(a), normalize_number(b)
    numeric = (Decimal(left) > Decimal(right)) - (Decimal(left) < Decimal(right))
    encoded_left, encoded_right = encode_number_key(left), encode_number_key(right)
    assert ((encoded_left > encoded_right) - (encoded_left < encoded_right)) == numeric
    assert compare_numbers(left, right) == numeric


@PROPERTY
@given(in_range_numbers(), in_range_numbers())
def test_sum_is_exact_or_a_range_error(a: str, b: str) -> None:
    left, right = normalize_number(a), normalize_number(b)
    try:
        total = add_numbers(left, right)
    except ValidationException as error:
        assert error.message in (MESSAGE_OVERFLOW, MESSAGE_UNDERFLOW)
        return
    with localcontext() as context:
        context.prec = 400
        assert Decimal(total) == Decimal(left) + Decimal(right)
    assert normalize_number(total) == total


NUMBER_LIKE = st.text(st.sampled_from("0123456789.-+eE"), max_size=45)


@PROPERTY
@given(st.one_of(NUMBER_LIKE, in_range_numbers()))
def test_any_text_normalizes_or_fails_with_dynamodbs_message(text: str) -> None:
    try:
        normal = normalize_number(text)
    except ValidationException as error:
        assert error.message is not None
        assert error.message.startswith(MESSAGE_NOT_NUMERIC) or error.message in (
            MESSAGE_TOO_PRECISE,
            MESSAGE_OVERFLOW,
            MESSAGE_UNDERFLOW,
        )
        return
    assert Decimal(normal) == Decimal(text)
    assert normalize_number(normal) == normal


@PROPERTY
@given(st.one_of(NUMBER_LIKE, in_range_numbers(), st.integers().map(str)))
def test_fast_path_only_accepts_normal_forms(text: str) -> None:
    """``is_short_normal`` is a shortcut: whatever it accepts must be exactly
    what the full parse would return."""
    if is_short_normal(text):
        assert _full_normal_form(text) == text


def _full_normal_form(text: str) -> str:
    with localcontext() as context:
        context.prec = 400
        value = Decimal(text)
    return from_decimal(value)


@pytest.mark.parametrize(
    ("text", "short_normal"),
    [
        ("0", True),
        ("-0", False),
        ("7", True),
        ("-0.5", True),
        ("0.50", False),
        ("00", False),
        ("1" * 38, True),
        ("1" * 39, False),  # too long for the shortcut; the full parse decides
        ("1.5e3", False),
        ("+1", False),
    ],
)
def test_short_normal_examples(text: str, short_normal: bool) -> None:
    assert is_short_normal(text) is short_normal


@PROPERTY
@given(in_range_numbers(max_digits=15), in_range_numbers(max_digits=15))
def test_short_numbers_compare_exactly(a: str, b: str) -> None:
    """compare_numbers takes a float shortcut for short texts; it must agree
    with exact decimal order, including numbers one unit apart."""
    left, right = normalize_number(a), normalize_number(b)
    expected = (Decimal(left) > Decimal(right)) - (Decimal(left) < Decimal(right))
    assert compare_numbers(left, right) == expected
    assert compare_numbers(right, left) == -expected


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("99999999999999", "99999999999999.1"),  # 15 characters against 16
        ("0.000000000001", "0.000000000002"),
        ("-0.10000000001", "-0.1"),
        ("123456789012345", "123456789012346"),
        ("-99999999999999", "-99999999999998"),
    ],
)
def test_close_numbers_compare_exactly(low: str, high: str) -> None:
    assert compare_numbers(low, high) == -1
    assert compare_numbers(high, low) == 1
