"""DAX's wire format: a stream of CBOR data items in both directions.

Learned from the published DAX clients (``amazon-dax-client`` for Python,
``@amazon-dax-sdk/client-dax`` for JavaScript) and the AWS documentation;
written here from that description, nothing copied.

A connection opens with the client's hello: the 8 bytes ``gJ7yne5G``, then
four items (layering 0, a session id or null, a map of client properties,
0). After it, each request is ``1, METHOD_ID, ARG...`` with a fixed number of
arguments per method (``ARGUMENT_COUNTS``); nothing delimits a request but
the items themselves. Each answer starts with an empty array (success) and
the method's result, or with an array of error codes, a message and an
array of details (request id, DynamoDB error type, HTTP status, and for a
cancelled transaction its reasons).

Items travel in DAX's own shape: a key is a byte string (a single partition
key as its raw bytes, or CBOR for a number; a composite key as the CBOR of
the partition key followed by the sort key's raw bytes, a number as an
order-preserving decimal, ``lex_encode``). The other attributes are an
*attribute list id* (a number standing for the sorted list of their names,
defined by the ``defineAttributeListId`` call) followed by their values in
that order. Attribute values are plain CBOR (strings, byte strings, numbers
with tag 4 for decimals, arrays for L, maps for M, null, booleans) with tags
3321-3323 for the three set types.
"""

from __future__ import annotations

import io
from decimal import Context, Decimal
from typing import Any

import cbor2

MAGIC = b"gJ7yne5G"
"""The first bytes of every DAX connection."""

SERVICE_ID = 1
"""Every request starts with this number."""

TAG_POSITIVE_BIGNUM = 2
TAG_NEGATIVE_BIGNUM = 3
TAG_DECIMAL = 4
TAG_STRING_SET = 3321
TAG_NUMBER_SET = 3322
TAG_BINARY_SET = 3323
TAG_DOCUMENT_PATH_ORDINAL = 3324

SET_TAGS = {TAG_STRING_SET: "SS", TAG_NUMBER_SET: "NS", TAG_BINARY_SET: "BS"}
SET_TAG_OF = {kind: tag for tag, kind in SET_TAGS.items()}

SUCCESS = b"\x80"
"""An empty array: the header of every successful answer."""

_MAX_UINT64 = (1 << 64) - 1


class MalformedFrame(Exception):
    """The bytes are not DAX's CBOR stream: the connection must close."""


class Incomplete(Exception):
    """More bytes are needed before the next request is complete."""


# --- decoding ---------------------------------------------------------------------


class ItemReader:
    """Reads complete CBOR data items from the start of a buffer."""

    __slots__ = ("_stream", "_decoder")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._stream = io.BytesIO(data)
        self._decoder = cbor2.CBORDecoder(self._stream)

    @property
    def offset(self) -> int:
        return self._stream.tell()

    def skip_to(self, offset: int) -> None:
        self._stream.seek(offset)

    def at_end(self) -> bool:
        return self._stream.tell() >= len(self._stream.getbuffer())

    def raw(self, size: int) -> bytes:
        data = self._stream.read(size)
        if len(data) < size:
            raise Incomplete()
        return data

    def item(self) -> Any:
        """The next data item; Incomplete if the buffer ends inside it."""
        if self.at_end():
            raise Incomplete()
        try:
            return self._decoder.decode()
        except cbor2.CBORDecodeEOF:
            raise Incomplete() from None
        except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, MemoryError) as error:
            raise MalformedFrame(str(error)) from None


def byte_string_at(data: bytes, offset: int) -> tuple[int, int] | None:
    """(start, end) of the definite-length byte string whose head is at
    ``offset``, or None (another item, or not all there)."""
    if offset >= len(data):
        return None
    initial = data[offset]
    if initial >> 5 != 2:
        return None
    info = initial & 31
    if info < 24:
        start, size = offset + 1, info
    elif info == 24 and offset + 1 < len(data):
        start, size = offset + 2, data[offset + 1]
    elif info == 25 and offset + 2 < len(data):
        start, size = offset + 3, int.from_bytes(data[offset + 1:offset + 3], "big")
    else:
        return None
    end = start + size
    return (start, end) if end <= len(data) else None


def decode_all(data: bytes) -> list[Any]:
    """Every data item of a complete byte string (an item's attribute values)."""
    reader = ItemReader(data)
    items = []
    while not reader.at_end():
        try:
            items.append(reader.item())
        except Incomplete:
            raise MalformedFrame("a value ends before its data") from None
    return items


def decode_one(data: bytes) -> Any:
    items = decode_all(data)
    if len(items) != 1:
        raise MalformedFrame(f"expected one CBOR item, found {len(items)}")
    return items[0]


def number_text(value: Any) -> str:
    """A CBOR number as DynamoDB's N text."""
    if type(value) is bool:
        raise MalformedFrame("a boolean where a number was expected")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise MalformedFrame(f"not a number: {type(value).__name__}")


def attribute_value(value: Any) -> dict[str, Any]:
    """A decoded CBOR item as a DynamoDB JSON attribute value."""
    if value is None:
        return {"NULL": True}
    if value is True or value is False:
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes | bytearray):
        return {"B": _base64(bytes(value))}
    if isinstance(value, int | Decimal | float):
        return {"N": number_text(value)}
    if isinstance(value, list | tuple):
        return {"L": [attribute_value(element) for element in value]}
    if isinstance(value, dict):
        members = {}
        for name, member in value.items():
            if not isinstance(name, str):
                raise MalformedFrame("a map attribute's names must be strings")
            members[name] = attribute_value(member)
        return {"M": members}
    if isinstance(value, cbor2.CBORTag) and value.tag in SET_TAGS:
        kind = SET_TAGS[value.tag]
        elements = value.value
        if not isinstance(elements, list | tuple):
            raise MalformedFrame("a set must be an array")
        if kind == "SS":
            if not all(isinstance(element, str) for element in elements):
                raise MalformedFrame("a string set holds strings only")
            return {"SS": list(elements)}
        if kind == "NS":
            return {"NS": [number_text(element) for element in elements]}
        if not all(isinstance(element, bytes | bytearray) for element in elements):
            raise MalformedFrame("a binary set holds byte strings only")
        return {"BS": [_base64(bytes(element)) for element in elements]}
    raise MalformedFrame(f"not an attribute value: {type(value).__name__}")


def _base64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


def _unbase64(text: str) -> bytes:
    import base64

    return base64.b64decode(text)


# --- encoding -----------------------------------------------------------------------


def head(out: bytearray, major: int, value: int) -> None:
    """A CBOR head: major type (0-7) and its argument."""
    base = major << 5
    if value < 24:
        out.append(base | value)
    elif value <= 0xFF:
        out.append(base | 24)
        out.append(value)
    elif value <= 0xFFFF:
        out.append(base | 25)
        out += value.to_bytes(2, "big")
    elif value <= 0xFFFFFFFF:
        out.append(base | 26)
        out += value.to_bytes(4, "big")
    else:
        out.append(base | 27)
        out += value.to_bytes(8, "big")


def put_int(out: bytearray, value: int) -> None:
    if value >= 0:
        if value <= _MAX_UINT64:
            head(out, 0, value)
        else:
            head(out, 6, TAG_POSITIVE_BIGNUM)
            put_bytes(out, value.to_bytes((value.bit_length() + 7) // 8, "big"))
    else:
        magnitude = -1 - value
        if magnitude <= _MAX_UINT64:
            head(out, 1, magnitude)
        else:
            head(out, 6, TAG_NEGATIVE_BIGNUM)
            put_bytes(out, magnitude.to_bytes((magnitude.bit_length() + 7) // 8, "big"))


def put_bytes(out: bytearray, data: bytes | bytearray) -> None:
    head(out, 2, len(data))
    out += data


def put_text(out: bytearray, text: str) -> None:
    data = text.encode("utf-8")
    head(out, 3, len(data))
    out += data


def put_array_head(out: bytearray, size: int) -> None:
    head(out, 4, size)


def put_map_head(out: bytearray, size: int) -> None:
    head(out, 5, size)


def put_null(out: bytearray) -> None:
    out.append(0xF6)


def put_bool(out: bytearray, value: bool) -> None:
    out.append(0xF5 if value else 0xF4)


def put_float(out: bytearray, value: float) -> None:
    import struct

    out.append(0xFB)
    out += struct.pack(">d", value)


def put_number(out: bytearray, text: str) -> None:
    """DynamoDB's N text as CBOR: an integer when it has no fraction, else a
    decimal fraction (tag 4: [exponent, mantissa])."""
    if "." not in text and "e" not in text and "E" not in text:
        put_int(out, int(text))
        return
    value = Decimal(text)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)) or "0")
    if exponent >= 0:
        put_int(out, -mantissa * 10**exponent if sign else mantissa * 10**exponent)
        return
    head(out, 6, TAG_DECIMAL)
    put_array_head(out, 2)
    put_int(out, exponent)
    put_int(out, -mantissa if sign else mantissa)


def put_attribute_value(out: bytearray, value: dict[str, Any]) -> None:
    """A DynamoDB JSON attribute value in DAX's CBOR."""
    for kind, content in value.items():
        if kind == "S":
            put_text(out, content)
        elif kind == "N":
            put_number(out, content)
        elif kind == "B":
            put_bytes(out, _unbase64(content))
        elif kind == "BOOL":
            put_bool(out, content)
        elif kind == "NULL":
            put_null(out)
        elif kind == "M":
            put_map_head(out, len(content))
            for name in sorted(content):
                put_text(out, name)
                put_attribute_value(out, content[name])
        elif kind == "L":
            put_array_head(out, len(content))
            for element in content:
                put_attribute_value(out, element)
        elif kind in SET_TAG_OF:
            head(out, 6, SET_TAG_OF[kind])
            put_array_head(out, len(content))
            for element in content:
                if kind == "SS":
                    put_text(out, element)
                elif kind == "NS":
                    put_number(out, element)
                else:
                    put_bytes(out, _unbase64(element))
        else:
            raise ValueError(f"unknown attribute type {kind}")
        return


def encoded_attribute_value(value: dict[str, Any]) -> bytes:
    out = bytearray()
    put_attribute_value(out, value)
    return bytes(out)


# --- keys ---------------------------------------------------------------------------


def _key_part_bytes(value: dict[str, Any], kind: str) -> bytes:
    """A sort key (or a lone partition key) as raw bytes."""
    text = value.get(kind)
    if not isinstance(text, str):
        raise ValueError("a key attribute of the wrong type")
    if kind == "S":
        return text.encode("utf-8")
    if kind == "B":
        return _unbase64(text)
    return lex_encode(text)


def encode_key(key: dict[str, Any], schema: list[tuple[str, str]]) -> bytes:
    """A table key (DynamoDB JSON) in DAX's key bytes."""
    (hash_name, hash_kind), *rest = schema
    hash_value = key[hash_name]
    out = bytearray()
    if not rest:
        if hash_kind == "N":
            put_number(out, hash_value["N"])
            return bytes(out)
        return _key_part_bytes(hash_value, hash_kind)
    put_attribute_value(out, hash_value)
    range_name, range_kind = rest[0]
    out += _key_part_bytes(key[range_name], range_kind)
    return bytes(out)


def decode_key(data: Any, schema: list[tuple[str, str]]) -> dict[str, Any]:
    """DAX's key bytes as a DynamoDB JSON key."""
    if not isinstance(data, bytes | bytearray):
        raise MalformedFrame("a key must be a byte string")
    data = bytes(data)
    (hash_name, hash_kind), *rest = schema
    if not rest:
        return {hash_name: _raw_key_part(data, hash_kind, whole_cbor=True)}
    reader = ItemReader(data)
    try:
        hash_item = reader.item()
    except Incomplete:
        raise MalformedFrame("a key ends before its partition key") from None
    hash_value = _typed(attribute_value(hash_item), hash_kind)
    range_name, range_kind = rest[0]
    tail = data[reader.offset:]
    return {hash_name: hash_value, range_name: _raw_key_part(tail, range_kind, whole_cbor=False)}


def _typed(value: dict[str, Any], kind: str) -> dict[str, Any]:
    if kind not in value:
        raise MalformedFrame(f"a key attribute is not of type {kind}")
    return value


def _raw_key_part(data: bytes, kind: str, whole_cbor: bool) -> dict[str, Any]:
    if kind == "S":
        try:
            return {"S": data.decode("utf-8")}
        except UnicodeDecodeError:
            raise MalformedFrame("a string key is not UTF-8") from None
    if kind == "B":
        return {"B": _base64(data)}
    if whole_cbor:
        return _typed(attribute_value(decode_one(data)), "N")
    return {"N": lex_decode(data)}


# --- DAX's order-preserving decimal (a sort key's number) ---------------------------
#
# A nonzero number 0.DDD... x 10^E is one header byte holding its sign and E
# (0xC0 + E for a positive number, 0x3F - E for a negative one, when
# -62 <= E < 62; otherwise a marker byte and E in 4 bytes), then its digits
# in groups of three, each group a 10-bit value (group + 12, or 1011 - group
# when negative), then a 10-bit terminator saying how many digits the last
# group holds (0, 1, 2 for 1, 2, 3 digits; 1023 minus that when negative),
# packed big-endian, the last byte padded with zero bits. Zero is 0x80.

_SHORT_EXPONENT = 62
_EXACT = Context(prec=80, Emax=999_999, Emin=-999_999)
"""Room for any DynamoDB number (38 digits) without rounding."""


def lex_encode(text: str) -> bytes:
    value = Decimal(text)
    if value.is_zero():
        return b"\x80"
    sign, digit_tuple, exponent = value.normalize(_EXACT).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    position = len(digits) + exponent  # E: the decimal point's place
    out = bytearray()
    if not sign:
        if -_SHORT_EXPONENT <= position < _SHORT_EXPONENT:
            out.append(0xC0 + position)
        else:
            out.append(0x81 if position < 0 else 0xFE)
            out += ((position & 0xFFFFFFFF) ^ 0x80000000).to_bytes(4, "big")
    else:
        if -_SHORT_EXPONENT <= position < _SHORT_EXPONENT:
            out.append(0x3F - position)
        else:
            out.append(0x7E if position < 0 else 0x01)
            out += ((position & 0xFFFFFFFF) ^ 0x7FFFFFFF).to_bytes(4, "big")
    last_group_digits = len(digits) % 3 or 3
    padded = digits + "0" * (-len(digits) % 3)
    groups = [int(padded[index:index + 3]) for index in range(0, len(padded), 3)]
    values = [1011 - group if sign else group + 12 for group in groups]
    terminator = last_group_digits - 1
    values.append(1023 - terminator if sign else terminator)
    accumulator = 0
    bits = 0
    for ten_bits in values:
        accumulator = (accumulator << 10) | ten_bits
        bits += 10
        while bits >= 8:
            bits -= 8
            out.append((accumulator >> bits) & 0xFF)
        accumulator &= (1 << bits) - 1
    if bits:
        out.append((accumulator << (8 - bits)) & 0xFF)
    return bytes(out)


def lex_decode(data: bytes) -> str:
    if not data:
        raise MalformedFrame("an empty number")
    header = data[0]
    if header in (0x80, 0x7F):
        return "0"
    offset = 1
    if header in (0x01, 0x7E, 0x81, 0xFE):
        if len(data) < 5:
            raise MalformedFrame("a number's exponent is cut short")
        raw = int.from_bytes(data[1:5], "big")
        negative = header in (0x01, 0x7E)
        unsigned = raw ^ (0x7FFFFFFF if negative else 0x80000000)
        position = unsigned - (1 << 32) if unsigned & 0x80000000 else unsigned
        offset = 5
    elif header >= 0x82:
        negative = False
        position = header - 0xC0
    else:
        negative = True
        position = 0x3F - header
    digits: list[str] = []
    accumulator = 0
    bits = 0
    for byte in data[offset:]:
        accumulator = (accumulator << 8) | byte
        bits += 8
        if bits < 10:
            continue
        bits -= 10
        ten_bits = (accumulator >> bits) & 0x3FF
        accumulator &= (1 << bits) - 1
        marker = 1023 - ten_bits if negative else ten_bits
        if marker <= 2:
            if not digits:
                raise MalformedFrame("a number without digits")
            digits[-1] = digits[-1][:marker + 1]
            break
        group = 1011 - ten_bits if negative else ten_bits - 12
        if not 0 <= group <= 999:
            raise MalformedFrame("a number's digit group is out of range")
        digits.append(f"{group:03d}")
    else:
        raise MalformedFrame("a number without its terminator")
    text = "".join(digits)
    value = Decimal((1 if negative else 0, tuple(int(digit) for digit in text), position - len(text)))
    return _plain(value)


def _plain(value: Decimal) -> str:
    """A Decimal as DynamoDB writes numbers: no exponent, no trailing zeros."""
    normalized = value.normalize(_EXACT)
    return format(normalized, "f")
