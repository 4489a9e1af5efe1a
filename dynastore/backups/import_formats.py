"""What ImportTable reads: an S3 object's bytes, decompressed, as items.

DynamoDB's input formats (developer guide, "DynamoDB data import from
Amazon S3: formats"):

- ``DYNAMODB_JSON``: one ``{"Item": {<attribute>: <AttributeValue>}}`` a
  line, what the data files of an ExportTableToPointInTime hold
  (``AWSDynamoDB/<export id>/data/*.json.gz``);
- ``ION``: Ion text, one ``{Item: {...}}`` struct per top-level value, with
  DynamoDB's type mapping: string -> S, int / decimal / float -> N,
  blob -> B, bool -> BOOL, null -> NULL, list -> L, struct -> M, and the
  annotated lists ``$dynamodb_SS::[...]``, ``$dynamodb_NS::[...]``,
  ``$dynamodb_BS::[...]`` -> SS, NS, BS;
- ``CSV``: a header line (or ``InputFormatOptions.Csv.HeaderList``, and then
  every line is data) naming the columns; a delimiter of ``, \\t : ; |`` or
  space. Every value is a string except the attributes the table's
  AttributeDefinitions type (the table's and its indexes' keys), which are
  typed so: N as the number written, B as the base64 written. An empty cell
  gives no attribute (a CSV cannot tell an empty string from a missing value).

Compression (``InputCompressionType``): NONE, GZIP (several members are read
as one stream, as gunzip does) or ZSTD (several frames likewise).

Nothing here holds more than one record (a line, an Ion value) and the
decompressor's buffer in memory: a file of any size streams through.
``records`` yields ``ParsedRecord``s; an ``error`` is a record DynamoDB would
count in ErrorCount and log, and the import goes on.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import orjson

DYNAMODB_JSON = "DYNAMODB_JSON"
ION = "ION"
CSV = "CSV"
INPUT_FORMATS = (CSV, DYNAMODB_JSON, ION)
NONE = "NONE"
GZIP = "GZIP"
ZSTD = "ZSTD"
COMPRESSION_TYPES = (GZIP, ZSTD, NONE)
CSV_DELIMITERS = (",", "\t", ":", ";", "|", " ")
DEFAULT_CSV_DELIMITER = ","

READ_CHUNK_BYTES = 64 * 1024
ZSTD_INPUT_CHUNK_BYTES = 512
"""zstd input fed at a time: zstd expands at most ~32,000 times (a 128 KB
run in a 4-byte block), so one feed's output stays under 16 MB whatever the
object (python-zstandard's decompressobj cannot bound its output itself, and
its stream_reader, which can, takes an object cut short for whole)."""


@dataclass(slots=True)
class ParsedRecord:
    """One record of an object: an item (wire-format attribute values, not
    yet validated) or why it is not one."""

    item: dict[str, Any] | None
    error: str | None
    line: int
    """1-based line (CSV, DynamoDB JSON) or value number (ION) in the object."""


class CountingReader(io.RawIOBase):
    """A binary stream that counts the bytes read through it (the object's
    compressed bytes: ProcessedSizeBytes)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        if not data:
            return 0
        size = len(data)
        buffer[:size] = data
        self.count += size
        return size


class ZstdFrames(io.RawIOBase):
    """The content of a stream of zstd frames, one after another (as zstd
    -d reads them). A stream that ends inside a frame is an error (EOFError,
    as gzip's), not a short read: an object cut short must not pass for whole."""

    def __init__(self, stream: Any) -> None:
        import zstandard

        self._stream = stream
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._frame = self._new()
        self._in_frame = False
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            data = self._stream.read(ZSTD_INPUT_CHUNK_BYTES)
            if not data:
                if self._in_frame:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
                return 0
            self._pending = memoryview(self._feed(data))
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _feed(self, data: bytes) -> bytes:
        out = []
        while data:
            self._in_frame = True
            out.append(self._frame.decompress(data))
            if not self._frame.eof:
                break
            data = self._frame.unused_data
            self._frame = self._new()
            self._in_frame = False
        return b"".join(out)


def decompressed(stream: io.RawIOBase | BinaryIO, compression: str) -> BinaryIO:
    """The object's content, decompressed as it is read."""
    if compression == GZIP:
        return cast(BinaryIO, gzip.GzipFile(fileobj=stream, mode="rb"))
    if compression == ZSTD:
        return cast(BinaryIO, io.BufferedReader(ZstdFrames(stream), READ_CHUNK_BYTES))
    return cast(BinaryIO, io.BufferedReader(cast(io.RawIOBase, stream), READ_CHUNK_BYTES))


def records(stream: BinaryIO, input_format: str, csv_options: dict[str, Any] | None,
            typed: dict[str, str]) -> Iterator[ParsedRecord]:
    """The records of one (decompressed) object. ``typed``: attribute name
    -> DynamoDB type for the CSV columns that are not strings."""
    if input_format == DYNAMODB_JSON:
        return _json_records(stream)
    if input_format == ION:
        return _ion_records(stream)
    return _csv_records(stream, csv_options or {}, typed)


# --- DynamoDB JSON ------------------------------------------------------------------------


def _json_records(stream: BinaryIO) -> Iterator[ParsedRecord]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            document = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            yield ParsedRecord(None, f"Invalid JSON: {error}", number)
            continue
        item = document.get("Item") if isinstance(document, dict) else None
        if not isinstance(item, dict):
            yield ParsedRecord(None, 'Expected an object {"Item": {...}}', number)
            continue
        yield ParsedRecord(item, None, number)


# --- ION ---------------------------------------------------------------------------------


_SET_ANNOTATIONS = {"$dynamodb_SS": "SS", "$dynamodb_NS": "NS", "$dynamodb_BS": "BS"}


def _ion_records(stream: BinaryIO) -> Iterator[ParsedRecord]:
    from amazon.ion import simpleion  # type: ignore[import-untyped]

    number = 0
    values = simpleion.load(stream, single_value=False, parse_eagerly=False)
    while True:
        number += 1
        try:
            value = next(values)
        except StopIteration:
            return
        except Exception as error:  # amazon.ion raises IonException, ValueError...
            # The reader cannot find the next value after a syntax error.
            yield ParsedRecord(None, f"Invalid Ion: {error}", number)
            return
        item = value.get("Item") if isinstance(value, Mapping) else None
        if not isinstance(item, Mapping):
            yield ParsedRecord(None, "Expected a struct {Item: {...}}", number)
            continue
        try:
            yield ParsedRecord({name: ion_to_attribute(field) for name, field in item.items()}, None, number)
        except ValueError as error:
            yield ParsedRecord(None, str(error), number)


def ion_to_attribute(value: Any) -> dict[str, Any]:
    """DynamoDB's AttributeValue of one Ion value (module docstring)."""
    from amazon.ion.core import IonType  # type: ignore[import-untyped]

    ion_type = getattr(value, "ion_type", None)
    annotations = [str(getattr(a, "text", a)) for a in getattr(value, "ion_annotations", ())]
    if value is None or ion_type == IonType.NULL or getattr(value, "is_null", False):
        return {"NULL": True}
    if ion_type == IonType.BOOL:
        return {"BOOL": bool(value)}
    if ion_type in (IonType.INT, IonType.DECIMAL, IonType.FLOAT):
        return {"N": _ion_number(value)}
    if ion_type in (IonType.STRING, IonType.SYMBOL):
        return {"S": str(value)}
    if ion_type in (IonType.BLOB, IonType.CLOB):
        return {"B": base64.b64encode(bytes(value)).decode()}
    if ion_type in (IonType.LIST, IonType.SEXP):
        set_type = next((_SET_ANNOTATIONS[a] for a in annotations if a in _SET_ANNOTATIONS), None)
        if set_type is None:
            return {"L": [ion_to_attribute(member) for member in value]}
        members = [ion_to_attribute(member) for member in value]
        wanted = set_type[0]
        if any(wanted not in member for member in members):
            raise ValueError(f"A {set_type} set holds a value that is not of type {wanted}")
        return {set_type: [member[wanted] for member in members]}
    if ion_type == IonType.STRUCT:
        return {"M": {str(name): ion_to_attribute(field) for name, field in value.items()}}
    raise ValueError(f"Unsupported Ion type: {ion_type}")


def _ion_number(value: Any) -> str:
    from decimal import Decimal

    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, Decimal):
        return format(value, "f") if value == value.to_integral_value() and abs(value) < 10**38 else str(value)
    return str(int(value))


# --- CSV ---------------------------------------------------------------------------------


def _csv_records(stream: BinaryIO, options: dict[str, Any], typed: dict[str, str]) -> Iterator[ParsedRecord]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.reader(text, delimiter=options.get("Delimiter") or DEFAULT_CSV_DELIMITER)
    header: list[str] | None = list(options["HeaderList"]) if options.get("HeaderList") else None
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield ParsedRecord(None, f"Invalid CSV: {error}", reader.line_num)
            continue
        if header is None:
            header = row
            continue
        if not row:
            continue
        if len(row) > len(header):
            yield ParsedRecord(None, f"The line has {len(row)} values for {len(header)} columns",
                               reader.line_num)
            continue
        try:
            item = {name: _csv_value(cell, typed.get(name))
                    for name, cell in zip(header, row, strict=False) if cell != ""}
        except ValueError as error:
            yield ParsedRecord(None, str(error), reader.line_num)
            continue
        yield ParsedRecord(item, None, reader.line_num)


def _csv_value(cell: str, attribute_type: str | None) -> dict[str, Any]:
    if attribute_type == "N":
        return {"N": cell.strip()}
    if attribute_type == "B":
        return {"B": cell.strip()}
    return {"S": cell}
