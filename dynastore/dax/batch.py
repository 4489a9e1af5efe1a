"""BatchGetItem (per key through the item cache) and BatchWriteItem (its
writes written through), in DAX's shapes (docs/dax.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.dax.cache import MISSING
from dynastore.dax.expressions import Renderer
from dynastore.dax.items import (
    KeySchema,
    item_from_parts,
    put_projection,
    stream_item,
)
from dynastore.dax.methods import (
    common_parameters,
    key_schema,
    parameters,
    put_capacity_list,
    put_collection_metrics_by_table,
    result_of,
    text_argument,
)
from dynastore.dax.wire import (
    SUCCESS,
    MalformedFrame,
    decode_key,
    encode_key,
    put_array_head,
    put_bytes,
    put_map_head,
    put_null,
    put_text,
)
from dynastore.types.attribute_value import validate_item

if TYPE_CHECKING:
    from dynastore.dax.service import DaxService, Session


# --- BatchGetItem and BatchWriteItem ------------------------------------------------------


class TableReads:
    """One table's part of a BatchGetItem: its keys, which the cache answered."""

    __slots__ = ("table", "schema", "consistent", "paths", "keys", "cached")

    def __init__(self, session: Session, table: str, entry: Any) -> None:
        if not isinstance(entry, list | tuple) or len(entry) != 3 or not isinstance(entry[2], list | tuple):
            raise MalformedFrame("a BatchGetItem table entry must be [consistent, projection, keys]")
        self.table = table
        self.schema = key_schema(session.database, table)
        self.consistent = bool(entry[0])
        self.paths = None if entry[1] is None else Renderer().projection(entry[1])[1]
        keys = [(decode_key(key, self.schema), key) for key in entry[2]]  # checks each is a byte string
        self.keys = [(bytes(raw), decoded) for decoded, raw in keys]
        self.cached: dict[bytes, dict[str, Any] | None] = {}


def batch_get_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    database = session.database
    requested = arguments[0]
    if not isinstance(requested, dict):
        raise MalformedFrame("BatchGetItem's tables must be a map")
    tables = [TableReads(session, text_argument(name, "TableName"), entry) for name, entry in requested.items()]
    given = parameters(arguments[1])
    now = database.now()
    request_items: dict[str, Any] = {}
    for reads in tables:
        missing = []
        for key_bytes, key in reads.keys:
            cached = MISSING if reads.consistent else service.item_cache.get(
                (session.namespace, reads.table, key_bytes), now)
            if cached is MISSING:
                missing.append(key)
            else:
                reads.cached[key_bytes] = cached.item
        if missing:
            request_items[reads.table] = {"Keys": missing, **({"ConsistentRead": True} if reads.consistent else {})}
    result: dict[str, Any] = {"Responses": {}, "UnprocessedKeys": {}}
    if request_items:
        request: dict[str, Any] = {"RequestItems": request_items}
        common_parameters(request, given)
        result = result_of(database, "BatchGetItem", request)
    return batch_get_answer(service, session, tables, result)


def batch_get_answer(service: DaxService, session: Session, tables: list[TableReads],
                     result: dict[str, Any]) -> bytes:
    out = bytearray(SUCCESS)
    put_array_head(out, 2)
    put_map_head(out, len(tables))
    unprocessed: dict[str, list[bytes]] = {}
    for reads in tables:
        found = {encode_key(item, reads.schema): item for item in result.get("Responses", {}).get(reads.table, [])}
        left = {encode_key(key, reads.schema)
                for key in result.get("UnprocessedKeys", {}).get(reads.table, {}).get("Keys", [])}
        items = []
        for key_bytes, key in reads.keys:
            if key_bytes in reads.cached:
                item = reads.cached[key_bytes]
            elif encode_key(key, reads.schema) in left:
                unprocessed.setdefault(reads.table, []).append(key_bytes)
                continue
            else:
                item = found.get(encode_key(key, reads.schema))
                if not reads.consistent:
                    service.cache_item((session.namespace, reads.table, key_bytes), item, reads.schema)
            if item is not None:
                items.append(item)
        put_text(out, reads.table)
        if reads.paths is not None:
            put_array_head(out, len(items))
            for item in items:
                put_projection(out, item, reads.paths)
        else:
            put_array_head(out, 2 * len(items))
            for item in items:
                put_bytes(out, encode_key(item, reads.schema))
                put_bytes(out, stream_item(item, reads.schema, service.lists))
    put_map_head(out, len(unprocessed))
    for table, keys in unprocessed.items():
        put_text(out, table)
        put_array_head(out, len(keys))
        for key_bytes in keys:
            put_bytes(out, key_bytes)
    put_capacity_list(out, result.get("ConsumedCapacity") or [])
    return bytes(out)


def batch_write_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    requested = arguments[0]
    if not isinstance(requested, dict):
        raise MalformedFrame("BatchWriteItem's tables must be a map")
    request_items: dict[str, list[dict[str, Any]]] = {}
    writes: list[tuple[str, KeySchema, bytes, dict[str, Any] | None]] = []
    schemas: dict[str, KeySchema] = {}
    for name, flat in requested.items():
        table = text_argument(name, "TableName")
        schema = schemas[table] = key_schema(session.database, table)
        if not isinstance(flat, list | tuple) or len(flat) % 2:
            raise MalformedFrame("a BatchWriteItem table entry must be key/value pairs")
        entries = request_items.setdefault(table, [])
        for index in range(0, len(flat), 2):
            key = decode_key(flat[index], schema)
            if flat[index + 1] is None:
                entries.append({"DeleteRequest": {"Key": key}})
                writes.append((table, schema, bytes(flat[index]), None))
            else:
                item = item_from_parts(key, flat[index + 1], service.lists)
                entries.append({"PutRequest": {"Item": item}})
                writes.append((table, schema, bytes(flat[index]), item))
    request: dict[str, Any] = {"RequestItems": request_items}
    common_parameters(request, parameters(arguments[1]))
    result = result_of(session.database, "BatchWriteItem", request)
    unprocessed = result.get("UnprocessedItems") or {}
    left = {(table, encode_key(entry.get("PutRequest", {}).get("Item") or entry["DeleteRequest"]["Key"],
                               schemas[table]))
            for table, entries in unprocessed.items() for entry in entries}
    for table, schema, key_bytes, written in writes:
        if (table, encode_key(decode_key(key_bytes, schema), schema)) not in left:
            service.cache_item((session.namespace, table, key_bytes),
                               None if written is None else validate_item(written), schema)
    out = bytearray(SUCCESS)
    put_map_head(out, len(unprocessed))
    for table, entries in unprocessed.items():
        put_text(out, table)
        put_array_head(out, 2 * len(entries))
        for entry in entries:
            if "PutRequest" in entry:
                put_bytes(out, encode_key(entry["PutRequest"]["Item"], schemas[table]))
                put_bytes(out, stream_item(entry["PutRequest"]["Item"], schemas[table], service.lists))
            else:
                put_bytes(out, encode_key(entry["DeleteRequest"]["Key"], schemas[table]))
                put_null(out)
    put_capacity_list(out, result.get("ConsumedCapacity") or [])
    put_collection_metrics_by_table(out, result.get("ItemCollectionMetrics") or {})
    return bytes(out)
