"""BatchGetItem: up to 100 items by key, across tables.

Every request is checked before anything is read: at most 100 keys in all,
no key twice in one table, each table's projection valid, then each table
must exist and each key match its schema. Items are read in request order
until the response would pass 16 MB; the keys not read come back in
UnprocessedKeys with their table's read options. Each key read costs its
own rounded read units (a missing item costs the minimum), summed per table.
Stored item bytes go into the response untouched (orjson.Fragment) when no
projection is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.engine.capacity import consumed_capacity, read_units
from dynastore.engine.item_ops import Item, check_key
from dynastore.engine.rows import item_of
from dynastore.engine.schema import TableSchema
from dynastore.errors import ValidationException
from dynastore.expressions import Projection
from dynastore.faults import hold_batch_reads
from dynastore.ops.get_item import read_projection
from dynastore.types.attribute_value import validate_item

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row

MESSAGE_TOO_MANY_KEYS = "Too many items requested for the BatchGetItem call"
MESSAGE_DUPLICATE_KEYS = "Provided list of item keys contains duplicates"
READ_OPTIONS = (
    "ConsistentRead",
    "ProjectionExpression",
    "ExpressionAttributeNames",
    "AttributesToGet",
)
"""A table entry's read options, kept with its UnprocessedKeys."""


@dataclass
class TableRead:
    name: str
    entry: dict[str, Any]
    keys: list[Item]
    projection: Projection | None
    schema: TableSchema | None = None
    units: float = 0.0


def handle(database: Database, request: dict[str, Any]) -> bytes:
    reads = [_parse_table(name, entry) for name, entry in (request.get("RequestItems") or {}).items()]
    if sum(len(read.keys) for read in reads) > limits.BATCH_GET_MAX_KEYS:
        raise ValidationException(MESSAGE_TOO_MANY_KEYS)
    for read in reads:
        read.schema = database.table(read.name)
    for read in reads:
        assert read.schema is not None
        for key in read.keys:
            check_key(read.schema, key)
    held = hold_batch_reads(database.faults, reads) if database.faults.armed else {}
    responses, unprocessed = _read_all(database, reads)
    for read in reads:  # keys an Unprocessed fault rule held back (dynastore/faults.py)
        if read.name in held:
            not_read = unprocessed.get(read.name, {}).get("Keys", [])
            unprocessed[read.name] = _unprocessed_entry(read, held[read.name] + not_read)
    body: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": unprocessed}
    mode = request.get("ReturnConsumedCapacity")
    if mode in ("TOTAL", "INDEXES"):
        body["ConsumedCapacity"] = [
            consumed_capacity(mode, read.name, read=read.units) for read in reads
        ]
    return orjson.dumps(body)


def _parse_table(name: str, entry: dict[str, Any]) -> TableRead:
    """One table's entry, validated without the table: projection, key values,
    duplicate keys (compared by value: numbers are normalized)."""
    projection = read_projection("GetItem", entry)
    keys = [validate_item(key) for key in entry.get("Keys") or []]
    seen: set[bytes] = set()
    for key in keys:
        identity = orjson.dumps(key, option=orjson.OPT_SORT_KEYS)
        if identity in seen:
            raise ValidationException(MESSAGE_DUPLICATE_KEYS)
        seen.add(identity)
    return TableRead(name, entry, keys, projection)


def _read_all(database: Database, reads: list[TableRead]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Items per table, in request order, until 16 MB of items were read;
    every key after that point is left unprocessed."""
    responses: dict[str, list[Any]] = {}
    unprocessed: dict[str, Any] = {}
    total_bytes = 0
    full = False
    for read in reads:
        found = responses.setdefault(read.name, [])
        for index, key in enumerate(read.keys):
            row = None if full else _get(database, read, key)
            size_bytes = 0 if row is None else row.size
            full = full or total_bytes + size_bytes > limits.BATCH_GET_RESPONSE_MAX_BYTES
            if full:
                unprocessed[read.name] = _unprocessed_entry(read, read.keys[index:])
                break
            total_bytes += size_bytes
            read.units += read_units(size_bytes, bool(read.entry.get("ConsistentRead")))
            if row is not None:
                found.append(_response_item(read, row))
    return responses, unprocessed


def _get(database: Database, read: TableRead, key: Item) -> Row | None:
    assert read.schema is not None
    return database.storage.get(read.schema.table_id, *read.schema.encode_key(key))


def _response_item(read: TableRead, row: Row) -> Any:
    if read.projection is None:
        return orjson.Fragment(row.item)
    return read.projection.apply(item_of(row))


def _unprocessed_entry(read: TableRead, keys: list[Item]) -> dict[str, Any]:
    entry = {name: read.entry[name] for name in READ_OPTIONS if name in read.entry}
    entry["Keys"] = keys
    return entry
