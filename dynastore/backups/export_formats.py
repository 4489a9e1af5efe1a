"""The files of an export, as DynamoDB writes them (docs/export-import.md).

- data files ``data/<name>.json.gz`` (DYNAMODB_JSON: one ``{"Item": {...}}`` a
  line; an incremental export's lines are ``{"Metadata":
  {"WriteTimestampMicros": {"N": ...}}, "Keys": ..., "NewImage": ...,
  "OldImage": ...}``) or ``data/<name>.ion.gz`` (ION: Ion text,
  ``$ion_1_0 {Item:{...}}`` a line, with DynamoDB's type mapping below);
  gzip-compressed;
- ``manifest-files.json`` (one JSON object a line per data file) and
  ``manifest-summary.json``, each with its checksum files.

DynamoDB's Ion mapping (developer guide, "DynamoDB table export output
format"): S -> string, N -> decimal, B -> blob, BOOL -> bool, NULL -> null,
L -> list, M -> struct, SS / NS / BS -> a list annotated
``$dynamodb_SS`` / ``$dynamodb_NS`` / ``$dynamodb_BS``.

The encoders take an item as its DynamoDB JSON bytes (what storage keeps,
``Row.item``), so a DYNAMODB_JSON line is a concatenation, never a parse.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import secrets
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any, BinaryIO

import orjson

DYNAMODB_JSON = "DYNAMODB_JSON"
ION = "ION"
EXPORT_FORMATS = (DYNAMODB_JSON, ION)
NEW_IMAGE = "NEW_IMAGE"
NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"
MANIFEST_VERSION = "2020-06-30"
"""manifest-summary.json's "version" (DynamoDB's documented example)."""

EXTENSIONS = {DYNAMODB_JSON: ".json.gz", ION: ".ion.gz"}
GZIP_LEVEL = 1
"""Fastest: at gzip's default (6) compression took half of an export's time
(bench/export_import.py); readers do not care which level wrote a file."""


# --- DynamoDB JSON lines ----------------------------------------------------------------


def item_line(item: bytes, export_format: str) -> bytes:
    """One FULL_EXPORT line for ``item`` (DynamoDB JSON bytes)."""
    if export_format == ION:
        return b"$ion_1_0 {Item:" + ion_item(orjson.loads(item)) + b"}\n"
    return b'{"Item":' + item + b"}\n"


def change_line(keys: dict[str, Any], new: bytes | None, old: bytes | None, micros: int,
                export_format: str, view_type: str) -> bytes:
    """One INCREMENTAL_EXPORT line: a change of the item ``keys`` written at
    ``micros`` (epoch microseconds); ``new`` None for a delete, ``old`` None
    for an insert (and always left out with NEW_IMAGE)."""
    if view_type == NEW_IMAGE:
        old = None
    if export_format == ION:
        parts = [b"Metadata:{WriteTimestampMicros:" + ion_decimal(str(micros)) + b"}",
                 b"Keys:" + ion_item(keys)]
        if new is not None:
            parts.append(b"NewImage:" + ion_item(orjson.loads(new)))
        if old is not None:
            parts.append(b"OldImage:" + ion_item(orjson.loads(old)))
        return b"$ion_1_0 {" + b",".join(parts) + b"}\n"
    line = b'{"Metadata":{"WriteTimestampMicros":{"N":"' + str(micros).encode() + b'"}},"Keys":' + orjson.dumps(keys)
    if new is not None:
        line += b',"NewImage":' + new
    if old is not None:
        line += b',"OldImage":' + old
    return line + b"}\n"


# --- Ion text ---------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_ION_KEYWORDS = frozenset(("null", "true", "false", "nan"))


def ion_symbol(name: str) -> bytes:
    """A struct field name: bare when it is an identifier, else 'quoted'."""
    if _IDENTIFIER.match(name) and name not in _ION_KEYWORDS and not re.match(r"^\$[0-9]", name) \
            and not name.startswith("$ion"):
        return name.encode()
    escaped = name.replace("\\", "\\\\").replace("'", "\\'")
    escaped = re.sub(r"[\x00-\x1f\x7f]", lambda match: f"\\x{ord(match.group()):02x}", escaped)
    return b"'" + escaped.encode() + b"'"


def ion_string(text: str) -> bytes:
    # JSON's string escapes (\", \\, \n, \uXXXX) are all Ion's too.
    return orjson.dumps(text)


def ion_decimal(number: str) -> bytes:
    """A DynamoDB number as an Ion decimal: ``103.``, ``3.14``, ``2d1`` (never a
    float: Ion's ``e`` means float, ``d`` a decimal exponent)."""
    mantissa, marker, exponent = number.lower().partition("e")
    if marker:
        return f"{mantissa}d{int(exponent)}".encode()
    return (number if "." in number else number + ".").encode()


def ion_blob(encoded: str) -> bytes:
    return b"{{" + encoded.encode() + b"}}"


def ion_value(value: dict[str, Any]) -> bytes:
    """One DynamoDB attribute value (``{"S": ...}``...) as Ion text."""
    ((kind, inner),) = value.items()
    if kind == "S":
        return ion_string(inner)
    if kind == "N":
        return ion_decimal(inner)
    if kind == "B":
        return ion_blob(inner)
    if kind == "BOOL":
        return b"true" if inner else b"false"
    if kind == "NULL":
        return b"null"
    if kind == "L":
        return b"[" + b",".join(ion_value(element) for element in inner) + b"]"
    if kind == "M":
        return ion_item(inner)
    encode: Callable[[str], bytes] = {"SS": ion_string, "NS": ion_decimal, "BS": ion_blob}[kind]
    return b"$dynamodb_" + kind.encode() + b"::[" + b",".join(encode(element) for element in inner) + b"]"


def ion_item(item: dict[str, Any]) -> bytes:
    return b"{" + b",".join(ion_symbol(name) + b":" + ion_value(value) for name, value in item.items()) + b"}"


# --- data files ---------------------------------------------------------------------------


def data_file_name(seed: str | None = None) -> str:
    """A data file's name: 26 lowercase base32 characters, like DynamoDB's;
    the same for the same ``seed`` (random without one)."""
    raw = secrets.token_bytes(16) if seed is None else hashlib.sha256(seed.encode()).digest()[:16]
    return base64.b32encode(raw).decode().lower().rstrip("=")


class _Digesting:
    """A binary file that passes writes on and keeps their MD5 and size."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0

    def write(self, data: bytes) -> int:
        self.md5.update(data)
        self.size += len(data)
        self.out.write(data)
        return len(data)

    def flush(self) -> None:
        self.out.flush()


class DataFile:
    """One gzip data file being written into a bucket: ``write`` lines,
    ``close`` makes the object appear whole and returns its manifest-files
    entry. Memory: gzip's window, and the bucket's spool (buckets.py)."""

    def __init__(self, buckets: Any, bucket: str, key: str) -> None:
        self.key = key
        self.items = 0
        self.raw_bytes = 0
        self._stack = ExitStack()
        out = self._stack.enter_context(buckets.open_write(bucket, key))
        self._digest = _Digesting(out)
        self._gzip = gzip.GzipFile(fileobj=self._digest, mode="wb",
                                   compresslevel=GZIP_LEVEL, mtime=0)

    def write_lines(self, lines: list[bytes]) -> None:
        chunk = b"".join(lines)  # one call per page: gzip's per-write cost is not small
        self._gzip.write(chunk)
        self.items += len(lines)
        self.raw_bytes += len(chunk)

    def close(self) -> dict[str, Any]:
        self._gzip.close()
        self._stack.close()  # the object appears here (or the error is raised)
        digest = self._digest.md5.digest()
        return {"itemCount": self.items, "md5Checksum": base64.b64encode(digest).decode(),
                "etag": digest.hex(), "dataFileS3Key": self.key}

    def abandon(self) -> None:
        """Drop the file: nothing appears."""
        try:
            self._stack.__exit__(RuntimeError, RuntimeError("abandoned"), None)
        except RuntimeError:
            pass


def write_object(buckets: Any, bucket: str, key: str, body: bytes) -> None:
    with buckets.open_write(bucket, key) as out:
        out.write(body)


def checksum_of(body: bytes) -> bytes:
    """A manifest's checksum file: the base64 MD5 of the manifest."""
    return base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest())


def iso_time(seconds: float) -> str:
    """``2020-11-04T07:28:34.028Z``, as the manifests write times."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def manifest_files_body(entries: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(entry) + b"\n" for entry in entries)
