"""The Database: one open store, its table catalogue, its clock.

This is the object every operation receives. It owns the storage backend and
an in-memory copy of the table catalogue (``TableSchema`` by name), and it is
the only place that reads the clock, so tests can inject a manual one.
Operations run one at a time against a Database (the server serialises them),
which is what makes each operation's read-modify-write atomic.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from dynastore import limits
from dynastore.engine import indexes as index_engine
from dynastore.engine.schema import (
    INDEX_STORAGE_MARKER,
    IndexDefinition,
    TableSchema,
    index_storage_name,
)
from dynastore.engine.streams import STREAM_EXTENSION, STREAM_STORAGE_MARKER
from dynastore.engine.table_arns import table_name_from_identifier
from dynastore.errors import ItemCollectionSizeLimitExceededException, table_not_found
from dynastore.faults import FaultRules
from dynastore.storage.base import HASH_SPACE, Row, SortKeyRange, Storage, TableRecord
from dynastore.streams_api.store import StreamStore

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "000000000000"
GIGABYTE = 1 << 30
ITEM_COLLECTION_CAP_VARIABLE = "DYNASTORE_ITEM_COLLECTION_MAX_BYTES"


GSI_LAG_VARIABLE = "DYNASTORE_GSI_LAG_MS"
PENDING_INDEX_WRITES_MAX = limits.PENDING_INDEX_WRITES_MAX
"""Bound on GSI changes waiting out --gsi-lag-ms; past it the oldest applies at once."""


class PendingIndexWrite(NamedTuple):
    """A GSI write waiting out the lag: which item, and its entry before the write."""

    due: float
    table_name: str
    index_storage_id: int
    pk: bytes
    sk: bytes
    old_entry: tuple[bytes, bytes] | None
    sequence: int = 0
    """Its row in the GSI outbox, so a pending write survives a crash."""


GSI_OUTBOX_NAME = "_dynastore/gsi-outbox"
"""Storage name of the durable queue of GSI writes waiting out --gsi-lag-ms
(never a DynamoDB table name: those cannot contain '/')."""


def _outbox_key(sequence: int) -> bytes:
    return sequence.to_bytes(8, "big")


def _outbox_record(write: PendingIndexWrite) -> bytes:
    old = None if write.old_entry is None else [part.hex() for part in write.old_entry]
    return orjson.dumps([write.due, write.table_name, write.index_storage_id,
                         write.pk.hex(), write.sk.hex(), old])


def _pending_from_outbox(row: Row) -> PendingIndexWrite:
    due, table_name, index_storage_id, pk, sk, old = orjson.loads(row.item)
    old_entry = None if old is None else (bytes.fromhex(old[0]), bytes.fromhex(old[1]))
    return PendingIndexWrite(due, table_name, index_storage_id, bytes.fromhex(pk),
                             bytes.fromhex(sk), old_entry, int.from_bytes(row.pk, "big"))


POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    """True for a libpq connection URL (``postgresql://user@host:port/database``)."""
    return isinstance(location, str) and location.startswith(POSTGRES_URL_SCHEMES)


def gsi_lag_from_environment() -> float:
    """Seconds a GSI change waits before it is visible (``--gsi-lag-ms``)."""
    value = os.environ.get(GSI_LAG_VARIABLE)
    return int(value) / 1000 if value else 0.0


def item_collection_cap_from_environment() -> int | None:
    """A smaller item-collection cap, so tests can reach it with little data."""
    value = os.environ.get(ITEM_COLLECTION_CAP_VARIABLE)
    return int(value) if value else None


class Database:
    def __init__(
        self,
        storage: Storage,
        clock: Callable[[], float] = time.time,
        region: str = DEFAULT_REGION,
        account_id: str = DEFAULT_ACCOUNT_ID,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.region = region
        self.account_id = account_id
        self.gsi_lag_seconds = gsi_lag_from_environment()
        """GSI propagation delay (DynamoDB's eventual consistency made visible);
        0 applies GSI changes with the write, as tests expect by default."""
        self._pending_index_changes: deque[PendingIndexWrite] = deque()
        self._outbox_id = 0
        """Storage id of the GSI outbox (created on first open)."""
        self._outbox_sequence = 0
        self.item_collection_max_bytes = item_collection_cap_from_environment()
        """The cap on one partition-key value's size across the table and its
        LSIs; None (the default, 10 GB) leaves it unchecked, since measuring
        costs a read of the whole collection on every write."""
        self.tables: dict[str, TableSchema] = {}
        # Transactions (issue 4): armed fault rules, ClientRequestTokens seen.
        self.faults = FaultRules()
        self.throughput: Any = None
        """The throughput model (issue 7, dynastore/throughput/); None while off."""
        self._transaction_tokens: Any = None
        index_ids: dict[str, int] = {}
        stream_records: list[TableRecord] = []
        for record in storage.load_tables():
            if STREAM_STORAGE_MARKER in record.name:  # a stream's records (issue 5)
                stream_records.append(record)
                continue
            if INDEX_STORAGE_MARKER in record.name:  # an index's entries, not a table
                index_ids[record.name] = record.table_id
                continue
            if record.name == GSI_OUTBOX_NAME:  # GSI writes still waiting out their lag
                self._outbox_id = record.table_id
                continue
            # The storage id is authoritative: metadata is written before it is known.
            schema = replace(TableSchema.from_metadata(record.metadata), table_id=record.table_id)
            self.tables[record.name] = schema
        for name, schema in self.tables.items():
            if schema.indexes:
                self.tables[name] = replace(schema, indexes=tuple(
                    replace(index, storage_id=index_ids.get(index_storage_name(name, index.name), 0))
                    for index in schema.indexes
                ))
        self.streams = StreamStore(self, stream_records)
        """Every stream (issue 5): records, shards, the sequence counter."""
        self._reload_pending_index_writes()

    def _reload_pending_index_writes(self) -> None:
        """GSI writes a previous run left waiting (lag mode): due when they were.
        The outbox is created here, outside any write's transaction, so a
        rolled-back write can never take its creation back with it."""
        if not self._outbox_id:
            self._outbox_id = self.storage.create_table(GSI_OUTBOX_NAME, b"{}")
            return
        for row in self.storage.scan(self._outbox_id, 0, HASH_SPACE):
            write = _pending_from_outbox(row)
            self._pending_index_changes.append(write)
            self._outbox_sequence = max(self._outbox_sequence, write.sequence)

    @classmethod
    def open(cls, path: str | Path | None = None, **options: object) -> Database:
        """An embedded database: in memory when ``path`` is None, the
        PostgreSQL database when it is a ``postgresql://`` URL (as libpq
        takes it), else the SQLite store in directory ``path`` (created if
        missing)."""
        storage: Storage
        if path is None:
            from dynastore.storage.memory import MemoryStorage

            storage = MemoryStorage()
        elif is_postgres_url(path):
            from dynastore.storage.postgres import PostgresStorage

            storage = PostgresStorage(str(path))
        else:
            from dynastore.storage.sqlite import SQLiteStorage

            storage = SQLiteStorage(Path(path))
        return cls(storage, **options)  # type: ignore[arg-type]

    @property
    def transaction_tokens(self) -> Any:
        """TransactWriteItems' ClientRequestToken book (engine/transactions.py),
        created on first use so that start-up does not import the transaction
        engine (and the expression parser behind it)."""
        if self._transaction_tokens is None:
            from dynastore.engine.transactions import TokenBook

            self._transaction_tokens = TokenBook()
        return self._transaction_tokens

    def now(self) -> float:
        return self.clock()

    def table(self, name: str) -> TableSchema:
        """The named table, or DynamoDB's ResourceNotFoundException."""
        schema = self.tables.get(name)
        if schema is None:
            # Every operation also accepts the table's ARN as TableName; resolving
            # it only after a miss keeps the common lookup a single dict access.
            if isinstance(name, str) and name.startswith("arn:"):
                name = table_name_from_identifier(name)
                schema = self.tables.get(name)
            if schema is None:
                raise table_not_found(name)
        return schema

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{name}"

    # --- catalogue: the only writers of ``tables``, kept in step with storage ----
    def create_table(self, schema: TableSchema) -> TableSchema:
        """Register a new table; returns its schema with the storage id filled in."""
        with self.storage.transaction():
            table_id = self.storage.create_table(schema.name, schema.to_metadata())
            created = replace(schema, table_id=table_id)
            if schema.indexes:
                created = replace(created, indexes=tuple(
                    self.create_index_storage(created, index) for index in schema.indexes
                ))
                self.storage.update_table_metadata(table_id, created.to_metadata())
        self.tables[created.name] = created
        return created

    def create_index_storage(self, schema: TableSchema, index: IndexDefinition) -> IndexDefinition:
        """Register the storage table of an index; returns it with its id."""
        name = index_storage_name(schema.name, index.name)
        return replace(index, storage_id=self.storage.create_table(name, b"{}"))

    def index_statistics(self, schema: TableSchema) -> dict[str, tuple[int, int]]:
        """(item count, size in bytes) of each index, by index name."""
        return {
            index.name: self.storage.table_statistics(index.storage_id)
            for index in schema.indexes
        }

    def update_table(self, schema: TableSchema) -> TableSchema:
        """Persist a changed definition of an existing table (same name and id)."""
        self.storage.update_table_metadata(schema.table_id, schema.to_metadata())
        self.tables[schema.name] = schema
        return schema

    def drop_table(self, name: str) -> TableSchema:
        """Remove a table and all of its items; returns the schema it had."""
        schema = self.table(name)
        with self.storage.transaction():
            for index in schema.indexes:
                self.storage.drop_table(index.storage_id)
            self.storage.drop_table(schema.table_id)
            self.streams.table_dropped(schema, self.now())  # readable 24 more hours
        del self.tables[name]
        return schema

    def table_statistics(self, schema: TableSchema) -> tuple[int, int]:
        """(item count, size in bytes) of a table, as DescribeTable reports them."""
        return self.storage.table_statistics(schema.table_id)

    # --- the one path every item write takes -------------------------------------
    # PutItem, UpdateItem, DeleteItem, BatchWriteItem (and later transactions and
    # the TTL sweeper) change items only through these two methods, so that
    # what must follow a write -- index entries (issue 3), stream records
    # (issue 5) -- is added in one place and no write path can miss it.

    def needs_old_rows(self, schema: TableSchema) -> bool:
        """True when a write must pass the row it replaces (for index
        maintenance or stream images); otherwise writers may skip reading it."""
        return bool(schema.indexes) or STREAM_EXTENSION in schema.extensions

    def write_row(
        self, schema: TableSchema, new_row: Row, old_row: Row | None = None
    ) -> index_engine.IndexUnits | None:
        """Insert or replace an item (see ``_write_item_row``); on a table with
        a stream, its record is appended in the same storage transaction."""
        if STREAM_EXTENSION not in schema.extensions:
            return self._write_item_row(schema, new_row, old_row)
        with self.storage.transaction():
            units = self._write_item_row(schema, new_row, old_row)
            self.streams.record_change(schema, old_row, new_row)
        return units

    def _write_item_row(
        self, schema: TableSchema, new_row: Row, old_row: Row | None = None
    ) -> index_engine.IndexUnits | None:
        """Insert or replace an item. ``old_row`` is the stored row it replaces
        (required when ``needs_old_rows(schema)``). Returns the write capacity
        its index entries cost (None on a table without indexes). Raises
        DynamoDB's ValidationException, writing nothing, when an index key
        attribute has the wrong type or is empty."""
        if not schema.indexes:
            self.storage.put(schema.table_id, new_row)
            return None
        old_item = orjson.loads(old_row.item) if old_row is not None else None
        new_item = orjson.loads(new_row.item)
        changes = index_engine.index_changes(schema, old_item, new_item, old_row, new_row)
        with self.storage.transaction():
            self.storage.put(schema.table_id, new_row)
            self._apply_index_changes(schema, new_row, changes)
            cap = self.item_collection_max_bytes
            if cap is not None and schema.local_indexes:
                if self.item_collection_size(schema, new_row.pk) > cap:
                    raise ItemCollectionSizeLimitExceededException()
        return index_engine.units_of(changes)

    def item_collection_size(self, schema: TableSchema, pk: bytes) -> int:
        """Bytes of one partition-key value across the table and its LSIs."""
        total = sum(row.size for row in self.storage.query(schema.table_id, pk, SortKeyRange()))
        local_pk = index_engine.escape(pk) + index_engine.TERMINATOR
        for index in schema.local_indexes:
            rows = self.storage.query(index.storage_id, local_pk, SortKeyRange())
            total += sum(row.size for row in rows)
        return total

    def item_collection_metrics(self, schema: TableSchema, key: dict[str, Any]) -> dict[str, Any] | None:
        """ReturnItemCollectionMetrics=SIZE: only tables with an LSI have item collections."""
        if not schema.local_indexes:
            return None
        pk_name = schema.partition_key.name
        pk = schema.encode_key(key)[0]
        size_gb = self.item_collection_size(schema, pk) / GIGABYTE
        return {
            "ItemCollectionKey": {pk_name: key[pk_name]},
            "SizeEstimateRangeGB": [float(int(size_gb)), float(int(size_gb) + 1)],
        }

    def delete_row(
        self, schema: TableSchema, old_row: Row, *, by_service: bool = False
    ) -> index_engine.IndexUnits | None:
        """Delete a stored item (see ``_delete_item_row``); on a table with a
        stream, its REMOVE record is appended in the same storage transaction
        (``by_service``: a TTL deletion, recorded with DynamoDB's service identity)."""
        if STREAM_EXTENSION not in schema.extensions:
            return self._delete_item_row(schema, old_row)
        with self.storage.transaction():
            units = self._delete_item_row(schema, old_row)
            self.streams.record_change(schema, old_row, None, by_service=by_service)
        return units

    def _delete_item_row(self, schema: TableSchema, old_row: Row) -> index_engine.IndexUnits | None:
        """Delete a stored item (callers skip deleting what is not there);
        returns the write capacity its index entries cost."""
        if not schema.indexes:
            self.storage.delete(schema.table_id, old_row.pk, old_row.sk)
            return None
        changes = index_engine.index_changes(schema, orjson.loads(old_row.item), None, old_row)
        with self.storage.transaction():
            self.storage.delete(schema.table_id, old_row.pk, old_row.sk)
            self._apply_index_changes(schema, old_row, changes)
        return index_engine.units_of(changes)

    def _apply_index_changes(
        self, schema: TableSchema, row: Row, changes: list[index_engine.IndexChange]
    ) -> None:
        """Write index entries; with --gsi-lag-ms, GSI entries only later."""
        if self.gsi_lag_seconds > 0 and any(change.index.is_global for change in changes):
            due = self.now() + self.gsi_lag_seconds
            for change in changes:
                if change.index.is_global:
                    self._queue_index_write(
                        PendingIndexWrite(due, schema.name, change.index.storage_id, row.pk, row.sk, change.delete)
                    )
            changes = [change for change in changes if not change.index.is_global]
            while len(self._pending_index_changes) > PENDING_INDEX_WRITES_MAX:
                self._propagate(self._pending_index_changes.popleft())
        for change in changes:
            if change.delete is not None:
                self.storage.delete(change.index.storage_id, *change.delete)
            if change.put is not None:
                self.storage.put(change.index.storage_id, change.put)

    def _queue_index_write(self, write: PendingIndexWrite) -> None:
        """Queue a lagging GSI write, and record it in the outbox within the
        caller's storage transaction, so it is applied even after a crash."""
        self._outbox_sequence += 1
        write = write._replace(sequence=self._outbox_sequence)
        self.storage.put(self._outbox_id, Row(0, _outbox_key(write.sequence), b"", _outbox_record(write), 0))
        self._pending_index_changes.append(write)

    def propagate_index_changes(self, everything: bool = False) -> None:
        """Apply the GSI writes whose lag has passed (all of them with
        ``everything``). Reads of a GSI call this first; without --gsi-lag-ms
        nothing is ever pending."""
        pending = self._pending_index_changes
        if not pending:
            return
        now = self.now()
        with self.storage.transaction():
            while pending and (everything or pending[0].due <= now):
                self._propagate(pending.popleft())

    def _propagate(self, write: PendingIndexWrite) -> None:
        """Bring one item's entry in one GSI up to the item as it is *now*:
        a write that was rolled back, or superseded, leaves no stale entry."""
        if write.sequence:
            self.storage.delete(self._outbox_id, _outbox_key(write.sequence), b"")
        schema = self.tables.get(write.table_name)
        index = next(
            (index for index in schema.indexes if index.storage_id == write.index_storage_id), None
        ) if schema is not None else None
        if schema is None or index is None:
            return  # the table or the index is gone
        row = self.storage.get(schema.table_id, write.pk, write.sk)
        entry = index_engine.entry_row(schema, index, orjson.loads(row.item)) if row else None
        if write.old_entry is not None and (entry is None or (entry.pk, entry.sk) != write.old_entry):
            self.storage.delete(index.storage_id, *write.old_entry)
        if entry is not None:
            self.storage.put(index.storage_id, entry)

    def close(self) -> None:
        self.storage.close()
