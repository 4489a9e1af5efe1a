"""Order-preserving key encoding and the partition hash.

A key attribute value becomes bytes whose unsigned byte order is DynamoDB's
sort order for that type: S by UTF-8 bytes, B by unsigned bytes, N
numerically. A table's key types are fixed, so encodings of different types
never meet in one comparison.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from dynastore.types.number import encode_number_key


def encode_key_value(key_type: str, value: str) -> bytes:
    """Encode the scalar ``value`` of a key attribute of type S, N or B.

    ``value`` is the wire string: text for S, a normalized number for N,
    base64 for B. Validation happens before this is called.
    """
    if key_type == "S":
        return value.encode("utf-8")
    if key_type == "N":
        return encode_number_key(value)
    return base64.b64decode(value)


def encode_attribute(key_type: str, attribute_value: dict[str, Any]) -> bytes:
    return encode_key_value(key_type, attribute_value[key_type])


def partition_hash(pk: bytes) -> int:
    """A stable 32-bit hash of an encoded partition key (Scan order, segments)."""
    return int.from_bytes(hashlib.blake2b(pk, digest_size=4).digest(), "big")
