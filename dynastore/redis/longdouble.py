"""INCRBYFLOAT's arithmetic as Redis does it: in an x87 long double (a
64-bit mantissa), printed with ``%.17Lf`` and its trailing zeros removed,
so ``10.6 - 5000`` is ``-4989.39999999999999991`` there and here alike.
Emulated exactly with fractions."""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

MANTISSA_BITS = 64


def round_to_long_double(value: Fraction) -> Fraction:
    """The long double nearest ``value`` (ties to even)."""
    if value == 0:
        return value
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    elif Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    scale = MANTISSA_BITS - 1 - exponent
    mantissa = round(magnitude * Fraction(2) ** scale)
    rounded = Fraction(mantissa) / Fraction(2) ** scale
    return rounded if value > 0 else -rounded


def parse(text: bytes) -> Fraction | None:
    """strtold's value of ``text`` (None: not a number, infinite or NaN)."""
    try:
        number = Decimal(text.decode("ascii"))
    except (InvalidOperation, UnicodeDecodeError, ValueError):
        return None
    if not number.is_finite() or text[:1].isspace() or text[-1:].isspace():
        return None
    if b"_" in text:
        return None
    return round_to_long_double(Fraction(number))


def format_human(value: Fraction) -> bytes:
    """``%.17Lf`` with the trailing zeros (and a bare point) removed."""
    scaled = round(abs(value) * 10**17)
    whole, fraction = divmod(scaled, 10**17)
    text = f"{whole}.{fraction:017d}".rstrip("0").rstrip(".")
    if value < 0 and text != "0":
        text = "-" + text
    return text.encode()


LONG_DOUBLE_MAX = Fraction(2) ** 16384


def add(current: Fraction, increment: Fraction) -> Fraction | None:
    """The long double sum, None if it overflows (Redis: NaN or Infinity)."""
    total = round_to_long_double(current + increment)
    if abs(total) >= LONG_DOUBLE_MAX or math.isinf(float(min(abs(total), Fraction(1)))):
        return None
    return total
