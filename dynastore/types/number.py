"""DynamoDB numbers: 38 significant digits, magnitude 1E-130 .. 9.99..9E+125.

Numbers travel as strings (``{"N": "1.50"}``) and are stored and returned in
DynamoDB's normal form: no exponent, no leading or trailing zeros, no ``+``,
``-0`` is ``0`` (so ``"1.50"`` comes back as ``"1.5"`` and ``"1e3"`` as
``"1000"``). Arithmetic runs in exact decimal; a result that does not fit
raises DynamoDB's overflow/underflow/precision error.

Accepted spellings are Java BigDecimal's, as DynamoDB's: ``+3``, ``.123``,
``0001.23``, ``1e+5``, ``0e1000``; not ``NaN``, ``Infinity``, hex, or any
surrounding whitespace (``" 1"`` fails; ScyllaDB's suite checks this against
the service).

Parsing is string work, not ``Decimal``: hot paths (every N written, every
number key encoded) first recognise text already in normal form, and other
spellings are taken apart with a regex and a few linear scans. ``Decimal``
is used only for arithmetic and for comparing long numbers.
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext

from dynastore import limits
from dynastore.errors import ValidationException

# Normal form, short enough that neither precision nor range can be exceeded:
# at most 38 characters hold at most 38 digits and an exponent within +-38.
_SHORT_NORMAL_PATTERN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")
_SHORT_NORMAL_MAX_LENGTH = limits.NUMBER_MAX_SIGNIFICANT_DIGITS


def is_short_normal(text: str) -> bool:
    """True when ``text`` is certainly an in-range number in normal form
    (the common case, checked without ``Decimal``); False means "look closer"."""
    if len(text) > _SHORT_NORMAL_MAX_LENGTH:
        return False
    if text.isdigit() and text.isascii():  # a plain integer, the commonest number
        return text[0] != "0" or len(text) == 1
    return _SHORT_NORMAL_PATTERN.fullmatch(text) is not None and text != "-0"


_NUMBER_PATTERN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

MESSAGE_NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
MESSAGE_TOO_PRECISE = "Attempting to store more than 38 significant digits in a Number"
MESSAGE_OVERFLOW = (
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
)
MESSAGE_UNDERFLOW = (
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)


# Java's BigDecimal (the service's parser) keeps its exponent in an int; a
# spelling whose exponent does not fit is "not numeric", whatever the digits.
_JAVA_INT_MAX = 2**31 - 1


def _parts(text: str) -> tuple[int, str, int]:
    """(sign, significant digits without leading/trailing zeros, exponent of last digit).

    Zero is ``(0, "", 0)``. Raises ValidationException for non-numbers. Plain
    string operations only: a 16 MB run of digits costs a few linear scans,
    not a 16-million-entry digit tuple.
    """
    if not isinstance(text, str) or not _NUMBER_PATTERN.fullmatch(text):
        if text == "" or not isinstance(text, str):
            raise ValidationException(MESSAGE_NOT_NUMERIC)
        raise ValidationException(f"{MESSAGE_NOT_NUMERIC}: {text}")
    mantissa, _, exponent_text = text.replace("E", "e").partition("e")
    sign = -1 if mantissa[0] == "-" else 1
    integer_part, _, fraction = mantissa.lstrip("+-").partition(".")
    exponent = _exponent_value(exponent_text, text) - len(fraction)
    digits = (integer_part + fraction).lstrip("0")
    if not digits:
        return 0, "", 0
    stripped = digits.rstrip("0")
    return sign, stripped, exponent + len(digits) - len(stripped)


def _exponent_value(exponent_text: str, text: str) -> int:
    magnitude = exponent_text.lstrip("+-").lstrip("0")
    if len(magnitude) > 10 or (magnitude and int(magnitude) > _JAVA_INT_MAX):
        raise ValidationException(f"{MESSAGE_NOT_NUMERIC}: {text}")
    return int(exponent_text) if exponent_text else 0


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


def _normal_parts(text: str) -> tuple[int, str, int] | None:
    """``_parts`` of ``text`` when it is already an in-range number in normal
    form (``"12"``, ``"-0.05"``, ``"1.5"``), found by a plain scan; else None."""
    if not text.isascii():
        return None
    sign = 1
    body = text
    if body[:1] == "-":
        sign, body = -1, body[1:]
    integer_part, dot, fraction = body.partition(".")
    if not integer_part.isdigit() or (dot and not fraction.isdigit()):
        return None
    if dot:
        if fraction[-1] == "0" or (integer_part[0] == "0" and len(integer_part) > 1):
            return None
        if integer_part == "0":
            significant = fraction.lstrip("0")
            exponent = -len(fraction)
        else:
            significant, exponent = integer_part + fraction, -len(fraction)
    else:
        if integer_part[0] == "0":
            return (0, "", 0) if integer_part == "0" and sign > 0 else None
        significant = integer_part.rstrip("0")
        exponent = len(integer_part) - len(significant)
    if len(significant) > limits.NUMBER_MAX_SIGNIFICANT_DIGITS:
        return None
    adjusted = exponent + len(significant) - 1
    if not limits.NUMBER_MIN_EXPONENT <= adjusted <= limits.NUMBER_MAX_EXPONENT:
        return None
    return sign, significant, exponent


def normalize_number(text: str) -> str:
    """Validate a wire number and return DynamoDB's normal form of it."""
    if type(text) is str and (is_short_normal(text) or _normal_parts(text) is not None):
        return text
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


def _arithmetic_result(value: Decimal) -> str:
    """``from_decimal`` for a sum or difference. DynamoDB reports a result
    that needs more than 38 digits (``1e50 + 1``) as an *overflow*, not as
    "more than 38 significant digits" (ScyllaDB's suite records this
    against the service)."""
    try:
        return from_decimal(value)
    except ValidationException as error:
        if error.message == MESSAGE_TOO_PRECISE:
            raise ValidationException(MESSAGE_OVERFLOW) from None
        raise


def add_numbers(left: str, right: str) -> str:
    """``left + right`` exactly, then DynamoDB's range and precision checks."""
    with localcontext() as context:
        context.prec = 400  # enough for any exact sum of two in-range numbers
        return _arithmetic_result(Decimal(left) + Decimal(right))


def subtract_numbers(left: str, right: str) -> str:
    with localcontext() as context:
        context.prec = 400
        return _arithmetic_result(Decimal(left) - Decimal(right))


# A decimal of at most 15 significant digits survives a trip through a double
# (DBL_DIG), and rounding to the nearest double is monotonic, so two such
# numbers order exactly like their floats. 15 characters hold at most 15 digits.
_FLOAT_EXACT_MAX_LENGTH = 15


def compare_numbers(left: str, right: str) -> int:
    """-1, 0 or 1. Both are normalized, so equal values are equal strings."""
    if left == right:
        return 0
    if len(left) <= _FLOAT_EXACT_MAX_LENGTH and len(right) <= _FLOAT_EXACT_MAX_LENGTH:
        a_float, b_float = float(left), float(right)
        return -1 if a_float < b_float else (1 if a_float > b_float else 0)
    a, b = Decimal(left), Decimal(right)
    return -1 if a < b else (1 if a > b else 0)


def encode_number_key(normalized: str) -> bytes:
    """An encoding of a normalized number whose byte order is numeric order.

    Layout: a class byte (1 negative, 2 zero, 3 positive), the adjusted
    exponent shifted into 0..255 (inverted for negatives), then the significant
    digits as ASCII (nine's complement plus a 0xFF terminator for negatives,
    so a longer negative mantissa sorts first).
    """
    parts = _normal_parts(normalized)
    sign, digits, exponent = parts if parts is not None else _parts(normalized)
    if not digits:
        return b"\x02"
    adjusted = exponent + len(digits) - 1 - limits.NUMBER_MIN_EXPONENT  # 0..255
    if sign > 0:
        return b"\x03" + bytes((adjusted,)) + digits.encode("ascii")
    complement = digits.translate(_NINES_COMPLEMENT).encode("ascii")
    return b"\x01" + bytes((255 - adjusted,)) + complement + b"\xff"


_NINES_COMPLEMENT = str.maketrans("0123456789", "9876543210")
