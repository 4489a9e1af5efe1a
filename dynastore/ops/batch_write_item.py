"""BatchWriteItem: up to 25 puts and deletes across tables, no conditions.

Every request is validated before anything is written (values, item size,
table, key schema, no key twice in a table); then all writes go through the
write path in one commit, so a failure leaves every table untouched. Nothing is
ever left unprocessed (UnprocessedItems is empty): the server has no
throughput limit to run into -- unless an Unprocessed fault rule holds items
back (docs/faults.md). Each write costs its own rounded write units
(the larger of the old and new item), summed per table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.engine.capacity import consumed_capacity, write_units
from dynastore.engine.indexes import merge_units
from dynastore.engine.item_ops import Item, check_batch_item_key, check_item_size, check_key
from dynastore.engine.rows import row_for
from dynastore.engine.schema import TableSchema
from dynastore.errors import ValidationException
from dynastore.faults import hold_batch_writes
from dynastore.types.attribute_value import MESSAGE_MULTIPLE_TYPES, validate_item
from dynastore.write_path import DELETE, RETRY_ALL, InvalidChange, Target, item_target
from dynastore.write_path import write as write_items

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row

MESSAGE_TOO_MANY_REQUESTS = "Too many items requested for the BatchWriteItem call"
MESSAGE_DUPLICATE_KEYS = "Provided list of item keys contains duplicates"


@dataclass
class Write:
    item: Item | None  # PutRequest
    key: Item | None  # DeleteRequest
    size_bytes: int = 0


@dataclass
class TableWrites:
    name: str
    writes: list[Write]
    schema: TableSchema | None = None
    units: float = 0.0
    keys: list[tuple[bytes, bytes]] = field(default_factory=list)
    index_units: dict[str, dict[str, float]] = field(default_factory=dict)


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    request_items = request.get("RequestItems") or {}
    if sum(len(requests or []) for requests in request_items.values()) > limits.BATCH_WRITE_MAX_REQUESTS:
        raise ValidationException(MESSAGE_TOO_MANY_REQUESTS)
    tables = [
        TableWrites(name, [_parse_write(write) for write in requests or []])
        for name, requests in request_items.items()
    ]
    for table in tables:
        table.schema = database.table(table.name)
    for table in tables:
        _check_keys(table)
    unprocessed = hold_batch_writes(database.faults, tables) if database.faults.armed else {}
    wants_capacity = request.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES")
    _write_all(database, tables, wants_capacity)
    response: dict[str, Any] = {"UnprocessedItems": unprocessed}
    if wants_capacity:
        mode = request["ReturnConsumedCapacity"]
        response["ConsumedCapacity"] = [_capacity(mode, table) for table in tables]
    if request.get("ReturnItemCollectionMetrics") == "SIZE":
        metrics = _collection_metrics(database, tables)
        if metrics:
            response["ItemCollectionMetrics"] = metrics
    return response


def _collection_metrics(database: Database, tables: list[TableWrites]) -> dict[str, list[Any]]:
    """One ItemCollectionMetrics per item collection written, for tables with an LSI."""
    metrics: dict[str, list[Any]] = {}
    for table in tables:
        schema = table.schema
        assert schema is not None
        if not schema.local_indexes:
            continue
        seen: set[bytes] = set()
        for write, (pk, _) in zip(table.writes, table.keys, strict=True):
            if pk in seen:
                continue
            seen.add(pk)
            key = write.item if write.item is not None else write.key
            assert key is not None
            metrics.setdefault(table.name, []).append(database.item_collection_metrics(schema, key))
    return metrics


def _capacity(mode: str, table: TableWrites) -> dict[str, Any] | None:
    """A table's units; index writes are listed in INDEXES mode and counted in both."""
    capacity = consumed_capacity(mode, table.name, write=table.units, indexes=table.index_units)
    if mode == "TOTAL" and capacity is not None and table.index_units:
        capacity["CapacityUnits"] += sum(sum(units.values()) for units in table.index_units.values())
    return capacity


def _parse_write(write: Any) -> Write:
    """One WriteRequest: exactly one of PutRequest and DeleteRequest."""
    put = write.get("PutRequest") if isinstance(write, dict) else None
    delete = write.get("DeleteRequest") if isinstance(write, dict) else None
    if (put is None) == (delete is None):
        raise ValidationException(MESSAGE_MULTIPLE_TYPES)
    if put is not None:
        item = validate_item(put.get("Item") or {})
        return Write(item, None, check_item_size(item))
    assert delete is not None
    return Write(None, validate_item(delete.get("Key") or {}))


def _check_keys(table: TableWrites) -> None:
    """Key schema of every request, then no key twice (put or delete alike)."""
    schema = table.schema
    assert schema is not None
    for write in table.writes:
        if write.item is not None:
            check_batch_item_key(schema, write.item)
            table.keys.append(schema.encode_key(write.item))
        else:
            assert write.key is not None
            check_key(schema, write.key)
            table.keys.append(schema.encode_key(write.key))
    if len(set(table.keys)) != len(table.keys):
        raise ValidationException(MESSAGE_DUPLICATE_KEYS)


def _write_all(database: Database, tables: list[TableWrites], wants_capacity: bool) -> None:
    """Every write of the batch in one commit (the write path). A delete
    needs the row it removes; a put reads the row it replaces only for the
    capacity report or when indexes or a stream must see it."""
    targets: list[Target] = []
    rows: list[Row | None] = []
    for table in tables:
        schema = table.schema
        assert schema is not None
        read_for_puts = wants_capacity or database.needs_old_rows(schema)
        for request, (pk, sk) in zip(table.writes, table.keys, strict=True):
            targets.append(item_target(schema, pk, sk, request.item is None or read_for_puts))
            rows.append(row_for(schema, request.item, request.size_bytes) if request.item is not None else None)
    try:
        written = write_items(database, targets, lambda _old, _conflicted: [
            DELETE if row is None else row for row in rows
        ], conflicts=RETRY_ALL)
    except InvalidChange as refused:
        raise refused.error from None
    outcomes = iter(written)
    for table in tables:
        for item_write in table.writes:
            outcome = next(outcomes)
            if wants_capacity:
                old_size = 0 if outcome.old_row is None else outcome.old_row.size
                table.units += write_units(max(old_size, item_write.size_bytes))
            merge_units(table.index_units, outcome.index_units)
