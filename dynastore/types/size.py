"""Item size by DynamoDB's rules ("DynamoDB item sizes and formats").

- attribute names and S values: their UTF-8 bytes;
- B: the raw (decoded) bytes, computed from the base64 text without decoding;
- N: 1 byte of exponent plus the significant digits packed two per byte,
  aligned on the decimal exponent, plus 1 byte for a negative number; zero is
  1 byte. The guide says "about 1 byte per two significant digits + 1"; the
  exact rule is the one dynalite measured against the service (it bills
  capacity on it): ``1 + ceil(n / 2)``, one more when the digit count ``n``
  and the adjusted exponent are both even, one more when negative;
- BOOL and NULL: 1 byte;
- SS/NS/BS: the sum of their members' sizes;
- L and M: 3 bytes of overhead plus 1 byte per element, plus the elements
  (for M each element also counts its name's UTF-8 bytes).

Values are assumed validated (numbers in normal form, canonical base64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def utf8_length(text: str) -> int:
    """Bytes of ``text`` in UTF-8, without encoding when it is ASCII."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def binary_length(base64_text: str) -> int:
    """Raw byte count of a canonical base64 text, without decoding it."""
    length = len(base64_text)
    if not length:
        return 0
    padding = 2 if base64_text.endswith("==") else (1 if base64_text[-1] == "=" else 0)
    return length // 4 * 3 - padding


def number_size(normalized: str) -> int:
    """Stored size of a number in DynamoDB's normal form (see module doc)."""
    negative = normalized[0] == "-"
    if "." in normalized:
        integer_part, _, fraction = normalized.partition(".")
        if negative:
            integer_part = integer_part[1:]
        if integer_part == "0":  # 0.00ddd: the exponent is below zero
            digit_count = len(fraction.lstrip("0"))
            exponent = digit_count - len(fraction) - 1
        else:
            digit_count = len(integer_part) + len(fraction)
            exponent = len(integer_part) - 1
    elif normalized == "0":
        return 1
    else:  # an integer: trailing zeros are exponent, not digits
        digit_count = len(normalized.rstrip("0")) - negative
        exponent = len(normalized) - negative - 1
    size = 2 + digit_count // 2 if digit_count % 2 else 1 + digit_count // 2 + (exponent % 2 == 0)
    return size + negative


def _string_set_size(members: list[str]) -> int:
    return sum(map(utf8_length, members))


def _number_set_size(members: list[str]) -> int:
    return sum(map(number_size, members))


def _binary_set_size(members: list[str]) -> int:
    return sum(map(binary_length, members))


def _one_byte(_: Any) -> int:
    return 1


def _list_size(elements: list[dict[str, Any]]) -> int:
    total = 3 + len(elements)  # 3 bytes of overhead, 1 per element
    for element in elements:
        ((type_key, inner),) = element.items()
        total += _SIZERS[type_key](inner)
    return total


def _map_size(attributes: dict[str, dict[str, Any]]) -> int:
    return 3 + len(attributes) + item_size(attributes)


_SIZERS: dict[str, Callable[[Any], int]] = {
    "S": utf8_length,
    "N": number_size,
    "B": binary_length,
    "BOOL": _one_byte,
    "NULL": _one_byte,
    "SS": _string_set_size,
    "NS": _number_set_size,
    "BS": _binary_set_size,
    "L": _list_size,
    "M": _map_size,
}


def attribute_value_size(value: dict[str, Any]) -> int:
    """Size in bytes of one validated attribute value (its name not included)."""
    ((type_key, inner),) = value.items()
    return _SIZERS[type_key](inner)


def item_size(item: dict[str, dict[str, Any]]) -> int:
    """Size in bytes of a validated item: names plus values, DynamoDB's way."""
    total = 0
    for name, value in item.items():
        ((type_key, inner),) = value.items()
        name_bytes = len(name) if name.isascii() else len(name.encode("utf-8"))
        if type_key == "S" and inner.isascii():  # the commonest value, without a call
            total += name_bytes + len(inner)
        else:
            total += name_bytes + _SIZERS[type_key](inner)
    return total


def key_value_size(value: dict[str, Any]) -> int:
    """Bytes a key attribute's value counts against the 2048-byte partition key
    and 1024-byte sort key limits: UTF-8 bytes for S, raw bytes for B. A number
    key is bounded by its 38 digits and never reaches either limit; its stored
    size is returned."""
    for type_key, inner in value.items():
        if type_key == "S":
            return utf8_length(inner)
        if type_key == "B":
            return binary_length(inner)
        return attribute_value_size(value)
    return 0


def oversized(value: dict[str, Any], max_bytes: int) -> bool:
    """Whether a key value is over ``max_bytes``; short values (the usual
    case) are decided from their length alone: a character is at most 4
    UTF-8 bytes, and base64 text is longer than the bytes it encodes; a
    number's 38 digits never reach either limit."""
    for type_key, inner in value.items():
        if type_key == "N":
            return False
        worst_case = len(inner) * 4 if type_key == "S" else len(inner)
        return worst_case > max_bytes and key_value_size(value) > max_bytes
    return False
