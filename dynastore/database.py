"""The Database: one open store, its table catalogue, its clock.

This is the object every operation receives. It owns the storage backend and
an in-memory copy of the table catalogue (``TableSchema`` by name), and it is
the only place that reads the clock, so tests can inject a manual one.
On an exclusive store (memory, SQLite) operations run one at a time
against a Database (the server serialises them); on a store several servers
share (PostgreSQL) the write path's conditional commits make each
read-modify-write atomic (dynastore/write_path.py), and ``tables`` is this
process's copy of a catalogue other servers may change (docs/postgres.md).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from dynastore import limits
from dynastore.engine import indexes as index_engine
from dynastore.engine.namespaces import (
    DEFAULT_ACCOUNT_ID,
    DEFAULT_REGION,
    Namespace,
    namespace_of_storage_name,
    storage_prefix,
)
from dynastore.engine.schema import (
    INDEX_STORAGE_MARKER,
    IndexDefinition,
    TableSchema,
    index_storage_name,
)
from dynastore.engine.streams import STREAM_EXTENSION, STREAM_STORAGE_MARKER
from dynastore.engine.table_arns import table_name_in_namespace
from dynastore.errors import ItemCollectionSizeLimitExceededException, table_not_found
from dynastore.faults import FaultRules
from dynastore.storage.base import (
    CatalogueChanged,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    SortKeyRange,
    Storage,
    TableRecord,
    WriteConflict,
)
from dynastore.streams_api.store import StreamStore
from dynastore.types.keys import partition_hash

GIGABYTE = 1 << 30
ITEM_COLLECTION_CAP_VARIABLE = "DYNASTORE_ITEM_COLLECTION_MAX_BYTES"


GSI_LAG_VARIABLE = "DYNASTORE_GSI_LAG_MS"
PENDING_INDEX_WRITES_MAX = limits.PENDING_INDEX_WRITES_MAX
"""Bound on GSI changes waiting out --gsi-lag-ms; past it the oldest applies at once."""


GSI_OUTBOX_NAME = "_dynastore/gsi-outbox"
"""Storage name of the durable queue of GSI writes waiting out --gsi-lag-ms
(never a DynamoDB table name: those cannot contain '/')."""
TRANSACTION_TOKENS_NAME = "_dynastore/transaction-tokens"
"""Storage name of the ClientRequestTokens of completed transactions."""
JOBS_NAME = "_dynastore/jobs"
"""Storage name of the background jobs' progress (a backfill's position, the
TTL sweeper's cursors), so the server that takes a job over resumes it."""
REPLICATION_QUEUE_NAME = "_dynastore/replication-queue"
"""Storage name of the durable queue of a namespace's writes to global
tables waiting to reach the other regions' replicas (dynastore/replication/)."""
REPLICATION_VERSIONS_NAME = "_dynastore/replication-versions"
"""Storage name of the write timestamp of each item of a global table, for
last-writer-wins (dynastore/replication/)."""
REPLICATION = "replication"
"""dynastore/replication/replicas.py's REPLICATION_EXTENSION (not imported: lazy)."""
CLOCK_NAME = "_dynastore/clock"
"""Catalogue name of the database clock's offset on a shared store (its
metadata), so every server's clock moves together."""
REDIS_STORAGE_PREFIX = "_dynastore/redis"
"""Storage names of the Redis protocol's keys (dynastore/redis/keyspace.py), not tables."""
OUTBOX_PK = b"outbox"
"""Every outbox row is in this one partition, sorted by when it is due."""
OUTBOX_BATCH_ROWS = limits.GSI_OUTBOX_BATCH_ROWS
"""Outbox rows applied per call of ``propagate_index_changes``."""


class PendingIndexWrite(NamedTuple):
    """A GSI write waiting out the lag: which item, and its entry before the write."""

    due: float
    table_name: str
    index_storage_id: int
    pk: bytes
    sk: bytes
    old_entry: tuple[bytes, bytes] | None


def _outbox_sort_key(due: float) -> bytes:
    """When an outbox row is due (microseconds, big-endian) and 8 random
    bytes, so rows queued by several servers never collide and sort by due time."""
    return int(due * 1_000_000).to_bytes(8, "big") + os.urandom(8)


def _outbox_record(write: PendingIndexWrite) -> bytes:
    old = None if write.old_entry is None else [part.hex() for part in write.old_entry]
    return orjson.dumps([write.due, write.table_name, write.index_storage_id,
                         write.pk.hex(), write.sk.hex(), old])


def _pending_from_outbox(row: Row) -> PendingIndexWrite:
    due, table_name, index_storage_id, pk, sk, old = orjson.loads(row.item)
    old_entry = None if old is None else (bytes.fromhex(old[0]), bytes.fromhex(old[1]))
    return PendingIndexWrite(due, table_name, index_storage_id, bytes.fromhex(pk),
                             bytes.fromhex(sk), old_entry)


CATALOGUE_WAIT_STEP_SECONDS = 0.0005
CATALOGUE_WAIT_STEPS = 20_000
"""A request waits at most 10 s for another one's catalogue reload."""
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
        faults: FaultRules | None = None,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.region = region
        self.account_id = account_id
        self.namespace = Namespace(account_id, region)
        """The (account, region) whose tables this Database holds; the other
        namespaces of the same store are Databases of their own over the same
        storage (dynastore/namespaces.py)."""
        self.storage_prefix = storage_prefix(self.namespace)
        """Prefix of this namespace's storage names (dynastore/engine/namespaces.py)."""
        self.namespaces: Any = None
        """The store's registry of namespaces (dynastore/namespaces.py), kept
        on the default namespace's Database once made."""
        self.gsi_lag_seconds = gsi_lag_from_environment()
        """GSI propagation delay (DynamoDB's eventual consistency made visible);
        0 applies GSI changes with the write, as tests expect by default."""
        self.item_collection_max_bytes = item_collection_cap_from_environment()
        """The cap on one partition-key value's size across the table and its
        LSIs; None (the default, 10 GB) leaves it unchecked, since measuring
        costs a read of the whole collection on every write."""
        self.tables: dict[str, TableSchema] = {}
        # Transactions (issue 4): armed fault rules, shared by a store's namespaces.
        self.faults = faults if faults is not None else FaultRules()
        self.throughput: Any = None
        """The throughput model (issue 7, dynastore/throughput/); None while off."""
        self.outbox_id = 0
        """Storage id of the GSI outbox (created on first open)."""
        self.tokens_id = 0
        """Storage id of the ClientRequestTokens of completed transactions."""
        self.jobs_id = 0
        """Storage id of the background jobs' progress."""
        self.replication_queue_id = 0
        """Storage id of the replication queue (dynastore/replication/queue.py)."""
        self.replication_versions_id = 0
        """Storage id of the global tables' item write timestamps."""
        self.replication: Any = None
        """The store's replicator (dynastore/replication/replicator.py) once
        a table of this store is global; None until then."""
        self._clock_id = 0
        self._outbox_queued = 0
        """Outbox rows this process queued and has not seen applied (a bound,
        and on an exclusive store a way to skip reading an empty outbox)."""
        self.streams = StreamStore(self, [])
        """Every stream (issue 5): their descriptions; records and shards are in storage."""
        self._catalogue_version = 0
        self._catalogue_changes_seen = 0
        self._catalogue_suspect = False
        """A change this copy took was rolled back: the copy it had before
        may be older than the store's, so the next refresh reloads."""
        self._catalogue_lock = threading.Lock()
        self.background_loop: Any = None
        """The event loop a server runs background work on (a backfill started
        by a request thread is scheduled there); None without a server."""
        self.background_spawn: Any = None
        """How a server runs a background step where its storage calls do not
        block the loop (a greenlet, on a shared store); None: on the loop."""
        self._load_catalogue()
        # Dynastore's own storage tables are created here, outside any write's
        # transaction, so a rolled-back write can never take one back with it.
        if not self.outbox_id:
            self.outbox_id = self.storage.create_table(self.storage_name(GSI_OUTBOX_NAME), b"{}")
        if not self.tokens_id:
            self.tokens_id = self.storage.create_table(self.storage_name(TRANSACTION_TOKENS_NAME), b"{}")
        if not self.jobs_id:
            self.jobs_id = self.storage.create_table(self.storage_name(JOBS_NAME), b"{}")
        if not self.replication_queue_id:
            self.replication_queue_id = self.storage.create_table(self.storage_name(REPLICATION_QUEUE_NAME), b"{}")
        if not self.replication_versions_id:
            self.replication_versions_id = self.storage.create_table(
                self.storage_name(REPLICATION_VERSIONS_NAME), b"{}")
        self._outbox_queued = 1  # whatever a previous run left is looked at once

    def _load_catalogue(self) -> None:
        """(Re)build the in-memory catalogue from storage: tables with their
        index storage ids, streams, dynastore's own storage tables (of this
        namespace only; names as they are within it)."""
        self._catalogue_changes_seen = self.storage.catalogue_changes()
        self._catalogue_version = self.storage.catalogue_version()  # before the tables: never newer
        tables: dict[str, TableSchema] = {}
        index_ids: dict[str, int] = {}
        stream_records: list[TableRecord] = []
        for record in self.storage.load_tables():
            namespace, name = namespace_of_storage_name(record.name)
            if namespace != self.namespace and record.name != CLOCK_NAME:  # one clock a store
                continue
            if record.name.startswith(REDIS_STORAGE_PREFIX):  # Redis's keys (dynastore/redis/)
                continue
            if name != record.name:
                record = replace(record, name=name)
            if STREAM_STORAGE_MARKER in record.name:  # a stream's records (issue 5)
                stream_records.append(record)
            elif INDEX_STORAGE_MARKER in record.name:  # an index's entries, not a table
                index_ids[record.name] = record.table_id
            elif record.name == GSI_OUTBOX_NAME:  # GSI writes still waiting out their lag
                self.outbox_id = record.table_id
            elif record.name == TRANSACTION_TOKENS_NAME:
                self.tokens_id = record.table_id
            elif record.name == JOBS_NAME:
                self.jobs_id = record.table_id
            elif record.name == REPLICATION_QUEUE_NAME:
                self.replication_queue_id = record.table_id
            elif record.name == REPLICATION_VERSIONS_NAME:
                self.replication_versions_id = record.table_id
            elif record.name == CLOCK_NAME:
                self._clock_id = record.table_id
                self._set_clock_offset(float(orjson.loads(record.metadata).get("offset", 0.0)))
            else:
                # The storage id is authoritative: metadata is written before it is known.
                tables[record.name] = replace(
                    TableSchema.from_metadata(record.metadata),
                    table_id=record.table_id, generation=record.generation,
                )
        for name, schema in tables.items():
            if schema.indexes:
                schema = tables[name] = replace(schema, indexes=tuple(
                    replace(index, storage_id=index_ids.get(index_storage_name(name, index.name), 0))
                    for index in schema.indexes
                ))
            # Never put an older copy of a table back. Another request of
            # this process may have changed the table while these rows were
            # read (its storage calls and this load's interleave); a copy
            # this process holds is one the store has or is committing (one
            # rolled back is taken back at once: update_table), so a higher
            # generation than the rows' is the newer one.
            held = self.tables.get(name)
            if held is not None and held.table_id == schema.table_id and held.generation > schema.generation:
                tables[name] = held
        self.tables = tables
        self.streams = StreamStore(self, stream_records)
        if self.replication is None and any(REPLICATION in schema.extensions for schema in tables.values()):
            # A global table: its replication queue is applied.
            from dynastore.replication.replicator import attach

            attach(self)

    # --- the clock ------------------------------------------------------------------
    def _set_clock_offset(self, offset: float) -> None:
        from dynastore.clock import movable_clock

        clock = movable_clock(self)
        clock.offset = max(clock.offset, offset)  # the clock only moves forward

    def share_clock_offset(self, offset: float) -> None:
        """On a shared store, record the clock's new offset where every server
        reads it (a catalogue change: the others reload it at once)."""
        if self.storage.exclusive:
            return
        metadata = orjson.dumps({"offset": offset})
        if not self._clock_id:
            self._clock_id = self.storage.create_table(CLOCK_NAME, metadata)
        else:
            self.storage.update_table_metadata(self._clock_id, metadata)

    # --- background jobs' progress ----------------------------------------------------
    def job_position(self, name: str) -> tuple[int, bytes, bytes] | None:
        """Where the job ``name`` stopped (a scan position), None: at the start."""
        row = self.storage.get(self.jobs_id, name.encode(), b"")
        if row is None:
            return None
        pk_hash, pk, sk = orjson.loads(row.item)
        return int(pk_hash), bytes.fromhex(pk), bytes.fromhex(sk)

    def job_position_change(self, name: str, position: tuple[int, bytes, bytes] | None) -> RowChange:
        """The change that records (or, with None, forgets) the job's position."""
        key = name.encode()
        if position is None:
            return RowChange(self.jobs_id, key, b"", None)
        data = orjson.dumps([position[0], position[1].hex(), position[2].hex()])
        return RowChange(self.jobs_id, key, b"", Row(partition_hash(key), key, b"", data, len(data)))

    def run_in_background(self, step: Callable[[], Any]) -> None:
        """Run a background step (called from the event loop): in a greenlet
        of its own on a shared store, where its storage calls park instead
        of blocking the loop (``background_spawn``), else right here."""
        spawn = self.background_spawn
        if spawn is not None:
            spawn(step)
        else:
            step()

    def refresh_catalogue(self, check: bool = False) -> bool:
        """On a store other servers share, bring this process's copy of the
        catalogue up to date: at once when another server announced a change
        (a notification, polled without waiting), and with ``check`` also when
        the catalogue's version differs from the one loaded (one query: the
        control plane and every lookup that found nothing ask for it).
        Returns whether the catalogue was reloaded."""
        storage = self.storage
        if storage.exclusive:
            return False
        # Requests in flight share the catalogue: one refreshes at a time, and
        # the others wait for it. Never block on the lock: the one holding it
        # may be a greenlet parked on this very thread (storage.pause parks).
        # The load waited for may have read its rows before the change this
        # caller is to see, so the check is made again after it.
        waited = False
        while not self._catalogue_lock.acquire(blocking=False):
            if not self._wait_for_refresh():
                return False
            waited = True
        try:
            if not self._catalogue_suspect and storage.catalogue_changes() == self._catalogue_changes_seen and (
                not check or storage.catalogue_version() == self._catalogue_version
            ):
                return waited
            self._catalogue_suspect = False
            self._load_catalogue()
        finally:
            self._catalogue_lock.release()
        return True

    def reload_catalogue(self) -> None:
        """Read this process's copy of the catalogue again whatever the
        notifications and versions say: for a caller that knows its copy is
        stale (a compare-and-set refused) or is about to act on a table's
        absence for good (a backup job giving up its view). A load already
        running in another greenlet may have read the rows before the latest
        change, so this one does not wait for it but loads after it."""
        if self.storage.exclusive:
            return
        for _ in range(CATALOGUE_WAIT_STEPS):
            if self._catalogue_lock.acquire(blocking=False):
                try:
                    self._catalogue_suspect = False
                    self._load_catalogue()
                finally:
                    self._catalogue_lock.release()
                return
            self.storage.pause(CATALOGUE_WAIT_STEP_SECONDS)
        self._load_catalogue()  # the other load is stuck: load beside it

    def _wait_for_refresh(self) -> bool:
        """Another request is reloading the catalogue: wait until it is done;
        False if it takes implausibly long."""
        for _ in range(CATALOGUE_WAIT_STEPS):
            self.storage.pause(CATALOGUE_WAIT_STEP_SECONDS)
            if not self._catalogue_lock.locked():
                return True
        return False

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

    def now(self) -> float:
        return self.clock()

    def table(self, name: str) -> TableSchema:
        """The named table, or DynamoDB's ResourceNotFoundException."""
        schema = self.tables.get(name)
        if schema is None:
            # Every operation also accepts the table's ARN as TableName; resolving
            # it only after a miss keeps the common lookup a single dict access.
            if isinstance(name, str) and name.startswith("arn:"):
                local = table_name_in_namespace(name, self.region, self.account_id)
                if local is not None:
                    name = local
                    schema = self.tables.get(name)
            if schema is None:
                raise table_not_found(name)
        return schema

    def storage_name(self, name: str) -> str:
        """The store-wide name of this namespace's storage table ``name``."""
        return self.storage_prefix + name

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{name}"

    # --- catalogue: the only writers of ``tables``, kept in step with storage ----
    def create_table(self, schema: TableSchema) -> TableSchema:
        """Register a new table; returns its schema with the storage id filled in."""
        with self.storage.transaction():
            table_id = self.storage.create_table(self.storage_name(schema.name), schema.to_metadata())
            created = replace(schema, table_id=table_id, generation=self.storage.first_generation)
            if schema.indexes:
                created = replace(created, indexes=tuple(
                    self.create_index_storage(created, index) for index in schema.indexes
                ))
                generation = self.storage.update_table_metadata(table_id, created.to_metadata())
                created = replace(created, generation=generation)
        self._hold(created.name, created)
        return created

    def create_index_storage(self, schema: TableSchema, index: IndexDefinition) -> IndexDefinition:
        """Register the storage table of an index; returns it with its id."""
        name = self.storage_name(index_storage_name(schema.name, index.name))
        return replace(index, storage_id=self.storage.create_table(name, b"{}"))

    def index_statistics(self, schema: TableSchema) -> dict[str, tuple[int, int]]:
        """(item count, size in bytes) of each index, by index name."""
        return {
            index.name: self.storage.table_statistics(index.storage_id)
            for index in schema.indexes
        }

    def update_table(self, schema: TableSchema, compare: bool = True) -> TableSchema:
        """Persist a changed definition of an existing table (same name and
        id): a compare-and-set on the table's generation. It is written only
        while the stored definition is still the one ``schema`` was made
        from; else storage.base.CatalogueChanged and nothing is written (on a
        shared store another server changed the table meanwhile: reload the
        catalogue and derive the change again from the table as it is now;
        ops/__init__.py's _on_the_current_catalogue does it for every
        operation). ``compare=False`` writes whatever is stored: only for a
        caller that took the table's lock (Storage.lock_table) in the same
        transaction and re-read the definition under it, so nothing can have
        come between (say why at the call)."""
        expected = schema.generation if compare else None
        generation = self.storage.update_table_metadata(schema.table_id, schema.to_metadata(), expected)
        schema = replace(schema, generation=generation)
        self._hold(schema.name, schema)
        return schema

    def adopt_table(self, schema: TableSchema) -> None:
        """Hold ``schema`` (just written to the store by the caller, with its
        generation) as this process's copy of the table."""
        self._hold(schema.name, schema)

    def _hold(self, name: str, schema: TableSchema | None) -> None:
        """Make ``schema`` this process's copy of table ``name`` (None: the
        table is gone), taken back if the transaction that wrote it is
        rolled back (Storage.after_rollback): a copy the store did not keep
        would otherwise outlive the change, and a reload would keep it as
        the newer one (_load_catalogue never puts an older generation back)."""
        previous = self.tables.get(name)
        if schema is None:
            self.tables.pop(name, None)
        else:
            self.tables[name] = schema
        self.storage.after_rollback(partial(self._take_back, name, schema, previous))

    def _take_back(self, name: str, held: TableSchema | None, previous: TableSchema | None) -> None:
        if self.tables.get(name) is held:  # nothing newer came in since
            if previous is None:
                self.tables.pop(name, None)
            else:
                self.tables[name] = previous
        # The copy from before may be older than the store's by now.
        self._catalogue_suspect = True

    def change_table(
        self, name: str, change: Callable[[TableSchema], TableSchema | None]
    ) -> TableSchema | None:
        """A read-modify-write of one table's definition for code that runs
        outside an operation's retries (background workers, the other
        replicas of a global table): ``change(schema)`` gives the new
        definition (None, or the same: nothing to change) from the table as
        this copy holds it, written with update_table's compare-and-set;
        when that is refused, the catalogue is reloaded and ``change`` runs
        again on the definition as it is now. Returns the table's definition
        after (None: the table is gone). CatalogueChanged only when the table
        kept changing for limits.CATALOGUE_CHANGE_ATTEMPTS tries."""
        attempts = limits.CATALOGUE_CHANGE_ATTEMPTS
        verified = self.storage.exclusive  # this copy is the store's
        for attempt in range(1, attempts + 1):
            schema = self.tables.get(name)
            changed = None if schema is None else change(schema)
            if changed is None or changed == schema:
                # Nothing to do, or no such table, on this copy: a stale copy
                # may say so wrongly (a replica set already without the member
                # it has just lost, on the copy from before it joined), and
                # nothing would be written. Ask the store once before believing it.
                if verified or attempt == attempts:
                    return schema
                verified = True
                self.reload_catalogue()
                continue
            try:
                return self.update_table(changed)
            except CatalogueChanged:
                if attempt == attempts:
                    raise
                self.storage.pause(random.uniform(0, limits.CATALOGUE_CHANGE_BACKOFF_SECONDS * attempt))
                self.refresh_catalogue(check=True)
        raise AssertionError("unreachable")

    def drop_table(self, name: str, keep_items_as: str | None = None) -> TableSchema:
        """Remove a table and all of its items; returns the schema it had.
        With ``keep_items_as``, the table's items are not dropped but kept
        under that storage name (a SYSTEM backup's, dynastore/backups/service.py)."""
        schema = self.table(name)
        with self.storage.transaction():
            # The table's lock first, then catalogue rows (the order of every
            # catalogue change: storage.base.Storage.lock_table).
            self.storage.lock_table(schema.table_id)
            for index in schema.indexes:
                self.storage.drop_table(index.storage_id)
            if keep_items_as is None:
                self.storage.drop_table(schema.table_id)
            else:
                self.storage.rename_table(schema.table_id, keep_items_as)
            self.streams.table_dropped(schema, self.now())  # readable 24 more hours
        self._hold(name, None)
        return schema

    def table_statistics(self, schema: TableSchema) -> tuple[int, int]:
        """(item count, size in bytes) of a table, as DescribeTable reports them."""
        return self.storage.table_statistics(schema.table_id)

    # --- what the write path asks of the database (dynastore/write_path.py) ------
    def needs_old_rows(self, schema: TableSchema) -> bool:
        """True when a write must know the row it replaces (for index
        maintenance or stream images); otherwise writers may skip reading it."""
        return bool(schema.indexes) or STREAM_EXTENSION in schema.extensions

    def item_collection_size(self, schema: TableSchema, pk: bytes) -> int:
        """Bytes of one partition-key value across the table and its LSIs."""
        total = sum(row.size for row in self.storage.query(schema.table_id, pk, SortKeyRange()))
        for index in schema.local_indexes:
            local_pk = pk if index.item_partition else index_engine.escape(pk) + index_engine.TERMINATOR
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

    def check_item_collection(self, schema: TableSchema, old_row: Row | None, new_row: Row) -> None:
        """Refuse a write that would take its item collection past the cap
        (only when $DYNASTORE_ITEM_COLLECTION_MAX_BYTES sets one)."""
        cap = self.item_collection_max_bytes
        if cap is None or not schema.local_indexes:
            return
        old_item = orjson.loads(old_row.item) if old_row is not None else None
        new_item = orjson.loads(new_row.item)
        growth = new_row.size - (old_row.size if old_row is not None else 0)
        for index in schema.local_indexes:
            new_entry = index_engine.entry_row(schema, index, new_item, new_row)
            old_entry = index_engine.entry_row(schema, index, old_item, old_row) if old_item else None
            growth += (new_entry.size if new_entry else 0) - (old_entry.size if old_entry else 0)
        if growth > 0 and self.item_collection_size(schema, new_row.pk) + growth > cap:
            raise ItemCollectionSizeLimitExceededException()

    def outbox_row(
        self,
        schema: TableSchema,
        index: IndexDefinition,
        pk: bytes,
        sk: bytes,
        old_entry: tuple[bytes, bytes] | None,
    ) -> RowChange:
        """The outbox row of a GSI write waiting out --gsi-lag-ms: applied
        once due (``propagate_index_changes``), even after a crash."""
        due = self.now() + self.gsi_lag_seconds
        data = _outbox_record(PendingIndexWrite(due, schema.name, index.storage_id, pk, sk, old_entry))
        sort_key = _outbox_sort_key(due)
        self._outbox_queued += 1
        row = Row(partition_hash(OUTBOX_PK), OUTBOX_PK, sort_key, data, len(data))
        return RowChange(self.outbox_id, OUTBOX_PK, sort_key, row)

    def propagate_index_changes(self, everything: bool = False) -> None:
        """Apply the GSI writes whose lag has passed (all of them with
        ``everything``). Reads of a GSI call this first; without --gsi-lag-ms
        nothing is queued (on a shared store the background pass applies
        what other servers queued)."""
        if not self._outbox_queued and (self.storage.exclusive or self.gsi_lag_seconds <= 0):
            return
        if self._outbox_queued > PENDING_INDEX_WRITES_MAX:
            everything = True  # the bound: the oldest apply at once
        high = None if everything else int(self.now() * 1_000_000 + 1).to_bytes(8, "big")
        rows = list(islice(self.storage.query(
            self.outbox_id, OUTBOX_PK, SortKeyRange(high=high, high_inclusive=False)
        ), OUTBOX_BATCH_ROWS))
        for row in rows:
            self._propagate(row)
        if len(rows) < OUTBOX_BATCH_ROWS and (everything or not any(
            True for _ in self.storage.query(self.outbox_id, OUTBOX_PK, SortKeyRange(), expected_rows=1)
        )):
            self._outbox_queued = 0
        else:
            self._outbox_queued = max(1, self._outbox_queued - len(rows))

    def _propagate(self, outbox: Row) -> None:
        """Bring one item's entry in one GSI up to the item as it is *now*
        (a write that was rolled back, or superseded, leaves no stale entry),
        and remove the outbox row, in one commit conditional on both rows
        being as read: another server applying it too, or a write of the
        item meanwhile, makes this one read again (or find it done)."""
        write = _pending_from_outbox(outbox)
        schema = self.tables.get(write.table_name)
        index = next(
            (index for index in schema.indexes if index.storage_id == write.index_storage_id), None
        ) if schema is not None else None
        keys = [RowKey(self.outbox_id, outbox.pk, outbox.sk)]
        if schema is not None and index is not None:
            keys.append(RowKey(schema.table_id, write.pk, write.sk))
        for _ in range(limits.WRITE_CONFLICT_ATTEMPTS):
            stored = self.storage.read_for_write(keys)
            if stored[0].row is None:
                return  # applied meanwhile (by another server)
            commit = Commit(changes=[RowChange(self.outbox_id, outbox.pk, outbox.sk, None, stored[0].version)])
            if schema is not None and index is not None:
                item = stored[1]
                entry = index_engine.entry_row(schema, index, orjson.loads(item.row.item)) if item.row else None
                if write.old_entry is not None and (entry is None or (entry.pk, entry.sk) != write.old_entry):
                    commit.changes.append(RowChange(index.storage_id, *write.old_entry, None))
                if entry is not None:
                    commit.changes.append(RowChange(index.storage_id, entry.pk, entry.sk, entry))
                commit.checks.append(RowCheck(schema.table_id, write.pk, write.sk,
                                              item.version if item.row is not None else None))
                commit.generations[schema.table_id] = schema.generation
            try:
                self.storage.commit(commit)
                return
            except WriteConflict:
                continue

    def close(self) -> None:
        self.storage.close()
