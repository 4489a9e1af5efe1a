"""DynamoDB numbers: 38 significant digits, magnitude 1E-130 .. 9.99..9E+125.

Numbers travel as strings (``{"N": "1.50"}``) and are stored and returned in
DynamoDB's normal form: no exponent, no leading or trailing zeros, no ``+``,
``-0`` is ``0`` (so ``"1.50"`` comes back as ``"1.5"`` and ``"1e3"`` as
``"1000"``). Arithmetic runs in exact decimal; a result that does not fit
raises DynamoDB's overflow/underflow/precision error.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext

from dynastore import limits
from dynastore.errors import ValidationException

_NUMBER_PATTERN = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")

MESSAGE_NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
MESSAGE_TOO_PRECISE = "Attempting to store more than 38 significant digits in a Number"
MESSAGE_OVERFLOW = (
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
)
MESSAGE_UNDERFLOW = (
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)


def _parts(text: str) -> tuple[int, str, int]:
    """(sign, significant digits without leading/trailing zeros, exponent of last digit).

    Zero is ``(0, "", 0)``. Raises ValidationException for non-numbers.
    """
    if not isinstance(text, str) or not _NUMBER_PATTERN.fullmatch(text):
        if text == "" or not isinstance(text, str):
            raise ValidationException(MESSAGE_NOT_NUMERIC)
        raise ValidationException(f"{MESSAGE_NOT_NUMERIC}: {text}")
    try:
        value = Decimal(text.strip())
    except InvalidOperation:  # pragma: no cover - the pattern excludes these
        raise ValidationException(f"{MESSAGE_NOT_NUMERIC}: {text}") from None
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return 0, "", 0
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return (-1 if sign else 1), stripped, exponent


def _check_range(digits: str, exponent: int) -> None:
    if len(digits) > limits.NUMBER_MAX_SIGNIFICANT_DIGITS:
        raise ValidationException(MESSAGE_TOO_PRECISE)
    adjusted = exponent + len(digits) - 1
    if adjusted > limits.NUMBER_MAX_EXPONENT:
        raise ValidationException(MESSAGE_OVERFLOW)
    if adjusted < limits.NUMBER_MIN_EXPONENT:
        raise ValidationException(MESSAGE_UNDERFLOW)


def _format(sign: int, digits: str, exponent: int) -> str:
    if not digits:
        return "0"
    if exponent >= 0:
        body = digits + "0" * exponent
    elif -exponent >= len(digits):
        body = "0." + "0" * (-exponent - len(digits)) + digits
    else:
        body = digits[:exponent] + "." + digits[exponent:]
    return "-" + body if sign < 0 else body


def normalize_number(text: str) -> str:
    """Validate a wire number and return DynamoDB's normal form of it."""
    sign, digits, exponent = _parts(text)
    if digits:
        _check_range(digits, exponent)
    return _format(sign, digits, exponent)


def significant_digits(normalized: str) -> int:
    """Count of significant digits of a normalized number (0 for zero)."""
    return len(normalized.lstrip("-").replace(".", "").strip("0"))


def to_decimal(normalized: str) -> Decimal:
    return Decimal(normalized)


def from_decimal(value: Decimal) -> str:
    """Normal form of an exact decimal result, with DynamoDB's range errors."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return "0"
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    _check_range(stripped, exponent)
    return _format(-1 if sign else 1, stripped, exponent)


def add_numbers(left: str, right: str) -> str:
    """``left + right`` exactly, then DynamoDB's range and precision checks."""
    with localcontext() as context:
        context.prec = 400  # enough for any exact sum of two in-range numbers
        return from_decimal(Decimal(left) + Decimal(right))


def subtract_numbers(left: str, right: str) -> str:
    with localcontext() as context:
        context.prec = 400
        return from_decimal(Decimal(left) - Decimal(right))


def compare_numbers(left: str, right: str) -> int:
    """-1, 0 or 1. Both are normalized, so equal values are equal strings."""
    if left == right:
        return 0
    a, b = Decimal(left), Decimal(right)
    return -1 if a < b else (1 if a > b else 0)


def encode_number_key(normalized: str) -> bytes:
    """An encoding of a normalized number whose byte order is numeric order.

    Layout: a class byte (1 negative, 2 zero, 3 positive), the adjusted
    exponent shifted into 0..255 (inverted for negatives), then the significant
    digits as ASCII (nine's complement plus a 0xFF terminator for negatives,
    so a longer negative mantissa sorts first).
    """
    sign, digits, exponent = _parts(normalized)
    if not digits:
        return b"\x02"
    adjusted = exponent + len(digits) - 1 - limits.NUMBER_MIN_EXPONENT  # 0..255
    if sign > 0:
        return b"\x03" + bytes((adjusted,)) + digits.encode("ascii")
    complement = digits.translate(_NINES_COMPLEMENT).encode("ascii")
    return b"\x01" + bytes((255 - adjusted,)) + complement + b"\xff"


_NINES_COMPLEMENT = str.maketrans("0123456789", "9876543210")
