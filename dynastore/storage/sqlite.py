"""The SQLite backend: every table of a data directory in ONE database file.

Why one file: a future TransactWriteItems must commit across tables
atomically, and SQLite does not make a commit atomic across ATTACHed files in
WAL mode. The layout and the measurements behind it are in
docs/adr/0001-storage-layout.md.

    tables(table_id INTEGER PRIMARY KEY AUTOINCREMENT, name, metadata)
    items(table_id, pk_hash, pk, sk, item, size) -- rowid table
    UNIQUE INDEX items_key ON items(table_id, pk_hash, pk, sk)

A rowid table with a unique index was measured ~3x faster for point lookups
of 1 KB rows than a WITHOUT ROWID table (whose B-tree pages hold the whole
row, so fewer keys fit per page). ``pk`` and ``sk`` are BLOBs, which SQLite
compares with memcmp: unsigned byte order, exactly what the key encoding needs.

Reads never keep a statement open between calls: an iterator fetches a bounded
chunk with LIMIT, and the next chunk re-queries after the last key it returned.
So a caller that abandons an iterator (Limit, 1 MB pages) holds no read
transaction that would block a checkpoint.

Checkpoints (copying the WAL back into the database file, with two fsyncs) run
on a thread of their own with a connection of their own (``_Checkpointer``),
so a request never waits for one; ADR 0001 has the measurements.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

from dynastore import limits
from dynastore.storage.base import (
    HASH_SPACE,
    CatalogueChanged,
    Row,
    SortKeyRange,
    Storage,
    TableRecord,
    run_undo,
)
from dynastore.storage.errors import DataDirectoryLocked, StorageError, UnsupportedSchemaVersion
from dynastore.storage.ranges import (
    FIRST_CHUNK_ROWS,
    MAX_CHUNK_ROWS,
    Bound,
    first_chunk_rows,
    is_empty_range,
    sort_key_bounds,
)
from dynastore.types.keys import partition_hash

logger = logging.getLogger("dynastore.storage")

DATABASE_FILE_NAME = "dynastore.db"
LOCK_FILE_NAME = "LOCK"
SCHEMA_VERSION = 1
"""PRAGMA user_version of the layout this code writes; bump with a migration."""

BUSY_TIMEOUT_MS = 5000
"""How long a statement waits for a lock held by another connection (an
operator's sqlite3 shell, a backup) before failing with "database is locked"."""
WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024
"""After a checkpoint the WAL file is truncated back to at most this size."""
CHECKPOINT_DELAY_SECONDS = 0.02
"""The background checkpointer runs this long after a commit wakes it (so one
checkpoint covers the commits of that window)."""
FALLBACK_AUTOCHECKPOINT_PAGES = 10_000
"""The serving connection checkpoints by itself (on the request path) only if
the WAL reaches this many pages (~40 MiB): the background checkpointer fell
behind, or the WAL never found a moment to restart."""
PAGE_CACHE_KIB = 16 * 1024
"""SQLite's own page cache. The database file is memory-mapped (MMAP_SIZE_BYTES),
so this holds only what the mapping cannot serve: pages read from the WAL and
pages being written (ADR 0001: 8-64 MiB measured alike; 16 MiB leaves room for
a large write transaction)."""
MMAP_SIZE_BYTES = 1 << 30
"""The first GiB of the database file is read through a memory mapping: a page
read is a memory access instead of a pread into the page cache (PutItem +10%,
Query +18% at 32 connections, measured 2026-12-01). Mapped pages count in the
process's RSS but are the OS page cache itself: the kernel shares and
reclaims them. Beyond this size pages are read with pread as before."""
STATEMENT_CACHE_SIZE = 256
"""sqlite3 keeps this many prepared statements; our SQL strings are constant."""

_ROW_COLUMNS = "pk_hash, pk, sk, item, size"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tables (
        table_id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        metadata BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS items (
        table_id INTEGER NOT NULL,
        pk_hash INTEGER NOT NULL,
        pk BLOB NOT NULL,
        sk BLOB NOT NULL,
        item BLOB NOT NULL,
        size INTEGER NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS items_key ON items (table_id, pk_hash, pk, sk)",
)

_GENERATIONS = (
    "CREATE TABLE IF NOT EXISTS table_generations (table_id INTEGER PRIMARY KEY, generation INTEGER NOT NULL)"
)
"""Each table's catalogue generation (TableRecord.generation; none yet: 0).
A table of its own, created when missing on every open: files written by
an earlier version (schema version 1 without it) need no migration and stay
readable by it."""

_SELECT_TABLES = (
    "SELECT tables.table_id, name, metadata, coalesce(generation, 0) FROM tables"
    " LEFT JOIN table_generations ON table_generations.table_id = tables.table_id ORDER BY tables.table_id"
)
_SELECT_GENERATION = (
    "SELECT coalesce(generation, 0) FROM tables"
    " LEFT JOIN table_generations ON table_generations.table_id = tables.table_id WHERE tables.table_id = ?"
)
_NEXT_GENERATION = (
    "INSERT INTO table_generations (table_id, generation) VALUES (?, 1)"
    " ON CONFLICT (table_id) DO UPDATE SET generation = generation + 1 RETURNING generation"
)
_DELETE_GENERATION = "DELETE FROM table_generations WHERE table_id = ?"
_INSERT_TABLE = "INSERT INTO tables (name, metadata) VALUES (?, ?)"
_UPDATE_TABLE = "UPDATE tables SET metadata = ? WHERE table_id = ?"
_RENAME_TABLE = "UPDATE tables SET name = ? WHERE table_id = ?"
_DELETE_TABLE = "DELETE FROM tables WHERE table_id = ?"
_DELETE_TABLE_ITEMS = "DELETE FROM items WHERE table_id = ?"

_GET = f"SELECT {_ROW_COLUMNS} FROM items WHERE table_id = ? AND pk_hash = ? AND pk = ? AND sk = ?"
_PUT = (
    "INSERT INTO items (table_id, pk_hash, pk, sk, item, size) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (table_id, pk_hash, pk, sk) DO UPDATE"
    " SET item = excluded.item, size = excluded.size"
)
_DELETE = "DELETE FROM items WHERE table_id = ? AND pk_hash = ? AND pk = ? AND sk = ?"
_STATISTICS = "SELECT count(*), coalesce(sum(size), 0) FROM items WHERE table_id = ?"

_SCAN_FIRST = (
    f"SELECT {_ROW_COLUMNS} FROM items"
    " WHERE table_id = ? AND pk_hash >= ? AND pk_hash < ?"
    " ORDER BY pk_hash, pk, sk LIMIT ?"
)
_SCAN_AFTER = (
    f"SELECT {_ROW_COLUMNS} FROM items"
    " WHERE table_id = ? AND (pk_hash, pk, sk) > (?, ?, ?) AND pk_hash < ?"
    " ORDER BY pk_hash, pk, sk LIMIT ?"
)

def _query_sql(forward: bool, lower: str | None, upper: str | None) -> str:
    """One of the 18 constant Query statements: direction x lower op x upper op."""
    conditions = "table_id = ? AND pk_hash = ? AND pk = ?"
    if lower is not None:
        conditions += f" AND sk {lower} ?"
    if upper is not None:
        conditions += f" AND sk {upper} ?"
    order = "ASC" if forward else "DESC"
    return f"SELECT {_ROW_COLUMNS} FROM items WHERE {conditions} ORDER BY sk {order} LIMIT ?"


_QUERY_SQL = {
    (forward, lower, upper): _query_sql(forward, lower, upper)
    for forward in (True, False)
    for lower in (None, ">", ">=")
    for upper in (None, "<", "<=")
}


def _lower_op(bound: Bound | None) -> str | None:
    return None if bound is None else (">=" if bound[1] else ">")


def _upper_op(bound: Bound | None) -> str | None:
    return None if bound is None else ("<=" if bound[1] else "<")


class SQLiteStorage(Storage):
    """``directory=None``: a private in-memory database; otherwise the file
    ``directory/dynastore.db``, guarded by an exclusive lock on ``directory/LOCK``."""

    def __init__(
        self,
        directory: Path | None,
        checkpoint_delay_seconds: float | None = CHECKPOINT_DELAY_SECONDS,
    ) -> None:
        """``checkpoint_delay_seconds=None`` leaves checkpoints to SQLite's
        automatic ones on this connection (tests that watch the WAL use it)."""
        self.directory = directory
        self._lock_fd: int | None = None
        self._checkpointer: _Checkpointer | None = None
        self._depth = 0
        self._rollback_undo: list[Callable[[], object]] = []
        """after_rollback's actions of the open transaction blocks, oldest first."""
        self._changes_at_begin = 0
        """total_changes when the outermost transaction began (did it write?)."""
        self._bulk_connection: sqlite3.Connection | None = None
        """The background jobs' own connection (``bulk_reads``), opened on first use."""
        self._bulk_depth = 0
        self._statistics_cache: dict[int, tuple[int, int]] = {}
        """(count, size) per table, valid until the table's next write: computing
        them reads every item, and DescribeTable asks often."""
        if directory is None:
            target = ":memory:"
        else:
            directory.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _acquire_lock(directory / LOCK_FILE_NAME)
            target = str(directory / DATABASE_FILE_NAME)
        try:
            # Any thread may call in (e.g. an executor), but never two at a
            # time: the server serialises operations (see base.py).
            self._connection = sqlite3.connect(
                target,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=STATEMENT_CACHE_SIZE,
            )
        except BaseException:
            self._release_lock()
            raise
        self._range_reads = self._connection
        """Where ``query`` and ``scan`` read: the serving connection, or inside
        ``bulk_reads`` the background jobs' own."""
        try:
            self._configure(file_backed=directory is not None)
            if directory is not None and checkpoint_delay_seconds is not None:
                self._connection.execute(
                    f"PRAGMA wal_autocheckpoint = {FALLBACK_AUTOCHECKPOINT_PAGES}"
                )
                self._checkpointer = _Checkpointer(
                    directory / DATABASE_FILE_NAME, checkpoint_delay_seconds
                )
        except BaseException:
            self.close()
            raise

    # --- setup -----------------------------------------------------------------
    def _configure(self, file_backed: bool) -> None:
        execute = self._connection.execute
        execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
        if file_backed:
            # SQLite's default (NORMAL) locking: the background checkpointer
            # needs a second connection, which EXCLUSIVE locking would shut
            # out (ADR 0001 weighs the fcntl calls this costs per transaction).
            journal_mode = execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if journal_mode != "wal":
                raise StorageError(
                    f"{self.directory}: SQLite could not use write-ahead logging here "
                    f"(journal mode stays {journal_mode!r}); use a local file system."
                )
            # NORMAL in WAL mode: a commit is written to the WAL (the OS page
            # cache) before it returns, so it survives kill -9; only power loss
            # can lose the last commits. The file is never corrupted.
            execute("PRAGMA synchronous = NORMAL")
            execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
            execute(f"PRAGMA mmap_size = {MMAP_SIZE_BYTES}")
        version = execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaVersion(
                f"{self.directory}: data written by a newer dynastore "
                f"(storage schema version {version}; this version reads up to "
                f"{SCHEMA_VERSION}). Upgrade dynastore to open it."
            )
        if version < SCHEMA_VERSION:
            with self.transaction():
                for statement in _SCHEMA:
                    execute(statement)
                execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        execute(_GENERATIONS)

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    # --- catalogue ---------------------------------------------------------------
    def load_tables(self) -> list[TableRecord]:
        rows = self._connection.execute(_SELECT_TABLES).fetchall()
        return [
            TableRecord(table_id, name, metadata, generation) for table_id, name, metadata, generation in rows
        ]

    def create_table(self, name: str, metadata: bytes) -> int:
        cursor = self._connection.execute(_INSERT_TABLE, (name, metadata))
        table_id = cursor.lastrowid
        assert table_id is not None
        return table_id

    def update_table_metadata(self, table_id: int, metadata: bytes, expected_generation: int | None = None) -> int:
        with self.transaction():
            if expected_generation is not None:
                found = self._connection.execute(_SELECT_GENERATION, (table_id,)).fetchone()
                if found is None:
                    raise KeyError(f"no table with id {table_id}")
                if found[0] != expected_generation:
                    raise CatalogueChanged(f"table {table_id} is no longer at generation {expected_generation}")
            cursor = self._connection.execute(_UPDATE_TABLE, (metadata, table_id))
            if cursor.rowcount == 0:
                raise KeyError(f"no table with id {table_id}")
            return self._next_generation(table_id)

    def rename_table(self, table_id: int, name: str) -> int:
        with self.transaction():
            cursor = self._connection.execute(_RENAME_TABLE, (name, table_id))
            if cursor.rowcount == 0:
                raise KeyError(f"no table with id {table_id}")
            return self._next_generation(table_id)

    def table_generation(self, table_id: int) -> int | None:
        found = self._connection.execute(_SELECT_GENERATION, (table_id,)).fetchone()
        return None if found is None else int(found[0])

    def _next_generation(self, table_id: int) -> int:
        found = self._connection.execute(_NEXT_GENERATION, (table_id,)).fetchone()
        return int(found[0])

    def drop_table(self, table_id: int) -> None:
        with self.transaction():
            cursor = self._connection.execute(_DELETE_TABLE, (table_id,))
            if cursor.rowcount == 0:
                raise KeyError(f"no table with id {table_id}")
            self._connection.execute(_DELETE_TABLE_ITEMS, (table_id,))
            self._connection.execute(_DELETE_GENERATION, (table_id,))
            self._statistics_cache.pop(table_id, None)

    # --- items -------------------------------------------------------------------
    def get(self, table_id: int, pk: bytes, sk: bytes) -> Row | None:
        found = self._connection.execute(_GET, (table_id, partition_hash(pk), pk, sk)).fetchone()
        return None if found is None else Row._make(found)

    def put(self, table_id: int, row: Row) -> None:
        if self._statistics_cache:
            self._statistics_cache.pop(table_id, None)
        self._connection.execute(_PUT, (table_id, row.pk_hash, row.pk, row.sk, row.item, row.size))

    def delete(self, table_id: int, pk: bytes, sk: bytes) -> None:
        if self._statistics_cache:
            self._statistics_cache.pop(table_id, None)
        self._connection.execute(_DELETE, (table_id, partition_hash(pk), pk, sk))

    def query(
        self,
        table_id: int,
        pk: bytes,
        sort_range: SortKeyRange,
        forward: bool = True,
        exclusive_start_sk: bytes | None = None,
        expected_rows: int | None = None,
    ) -> Iterator[Row]:
        lower, upper = sort_key_bounds(sort_range, forward, exclusive_start_sk)
        if is_empty_range(lower, upper):
            return iter(())
        return self._query_chunks(
            self._range_reads, table_id, pk, partition_hash(pk), lower, upper, forward,
            first_chunk_rows(expected_rows),
        )

    @staticmethod
    def _query_chunks(
        connection: sqlite3.Connection,
        table_id: int,
        pk: bytes,
        pk_hash: int,
        lower: Bound | None,
        upper: Bound | None,
        forward: bool,
        chunk_rows: int,
    ) -> Iterator[Row]:
        while True:
            sql = _QUERY_SQL[(forward, _lower_op(lower), _upper_op(upper))]
            parameters: list[object] = [table_id, pk_hash, pk]
            if lower is not None:
                parameters.append(lower[0])
            if upper is not None:
                parameters.append(upper[0])
            parameters.append(chunk_rows)
            rows = connection.execute(sql, parameters).fetchall()
            for found in rows:
                yield Row._make(found)
            if len(rows) < chunk_rows:
                return
            # Continue strictly after the last key returned.
            last_sk: bytes = rows[-1][2]
            if forward:
                lower = (last_sk, False)
            else:
                upper = (last_sk, False)
            chunk_rows = min(chunk_rows * 2, MAX_CHUNK_ROWS)

    def scan(
        self,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: tuple[int, bytes, bytes] | None = None,
    ) -> Iterator[Row]:
        hash_high = min(hash_high, HASH_SPACE)
        if hash_low >= hash_high:
            return iter(())
        return self._scan_chunks(self._range_reads, table_id, hash_low, hash_high, exclusive_start)

    @staticmethod
    def _scan_chunks(
        connection: sqlite3.Connection,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: tuple[int, bytes, bytes] | None,
    ) -> Iterator[Row]:
        chunk_rows = FIRST_CHUNK_ROWS
        start = exclusive_start
        if start is not None and start[0] < hash_low:
            start = None
        while True:
            if start is None:
                parameters: tuple[object, ...] = (table_id, hash_low, hash_high, chunk_rows)
                rows = connection.execute(_SCAN_FIRST, parameters).fetchall()
            else:
                parameters = (table_id, *start, hash_high, chunk_rows)
                rows = connection.execute(_SCAN_AFTER, parameters).fetchall()
            for found in rows:
                yield Row._make(found)
            if len(rows) < chunk_rows:
                return
            last = rows[-1]
            start = (last[0], last[1], last[2])
            chunk_rows = min(chunk_rows * 2, MAX_CHUNK_ROWS)

    def table_statistics(self, table_id: int) -> tuple[int, int]:
        """Reads every item of the table (about 10 us per item, as the size
        column lives in the rows, not the index); cached until the next write.
        Outside a transaction it reads the committed state through the
        background jobs' connection (``bulk_reads``)."""
        cached = self._statistics_cache.get(table_id)
        if cached is not None:
            return cached
        connection = self._connection
        if self.directory is not None and not connection.in_transaction:
            # Every item read once: the background jobs' connection, so the
            # serving one's mapping (and the process's RSS) does not take the table in.
            connection = self._bulk()
        count, total_size = connection.execute(_STATISTICS, (table_id,)).fetchone()
        statistics = (int(count), int(total_size))
        self._statistics_cache[table_id] = statistics
        return statistics

    def bulk_reads(self) -> AbstractContextManager[None]:
        """Inside, Query and Scan read through a connection of the background
        jobs' own (opened on first use), in one read transaction: it maps no
        part of the file (limits.SQLITE_BULK_MMAP_BYTES) and keeps a small
        page cache (limits.SQLITE_BULK_CACHE_KIB), so a job that reads a whole
        table (a backup, an export, a restore) neither fills the process's
        RSS with the file's pages nor evicts the serving connection's. It sees
        the committed state: not the writes of a transaction open on the
        serving connection (a request group, ADR 0002). A private in-memory
        store has no second connection: its reads stay where they are."""
        return _BulkReads(self)

    def _bulk(self) -> sqlite3.Connection:
        """The background jobs' connection, opened on first use (a data directory only)."""
        if self._bulk_connection is None:
            self._bulk_connection = self._open_bulk_connection()
        return self._bulk_connection

    def _open_bulk_connection(self) -> sqlite3.Connection:
        assert self.directory is not None
        connection = sqlite3.connect(
            self.directory / DATABASE_FILE_NAME, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute(f"PRAGMA cache_size = -{limits.SQLITE_BULK_CACHE_KIB}")
            connection.execute(f"PRAGMA mmap_size = {bulk_mmap_bytes()}")
            connection.execute("PRAGMA query_only = 1")
        except BaseException:
            connection.close()
            raise
        return connection

    # --- atomicity and lifecycle -------------------------------------------------
    def write_count(self) -> int:
        return self._connection.total_changes  # rows inserted, updated or deleted

    def _committed(self) -> None:
        """A transaction that wrote committed: the WAL grew."""
        if self._checkpointer is not None:
            self._checkpointer.wake()

    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together; see ``_TransactionBlock``."""
        return _TransactionBlock(self)

    def after_rollback(self, undo: Callable[[], object]) -> None:
        if self._depth > 0:
            self._rollback_undo.append(undo)

    def _rolled_back(self, depth: int, mark: int) -> None:
        """Undo the block at ``depth`` (0: the whole transaction), whose
        after_rollback actions are those from ``mark`` on. If SQLite
        already rolled back by itself (disk full, I/O error) there is nothing
        left to undo, and trying would mask the original error."""
        self._statistics_cache.clear()
        try:
            connection = self._connection
            if not connection.in_transaction:
                return
            if depth == 0:
                connection.execute("ROLLBACK")
            else:
                connection.execute(f"ROLLBACK TO nested_{depth}")
                connection.execute(f"RELEASE nested_{depth}")
        finally:
            run_undo(self._rollback_undo, mark)

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        if self._bulk_connection is not None:
            self._bulk_connection.close()
            self._bulk_connection = None
        connection = getattr(self, "_connection", None)
        if connection is not None:
            connection.close()
        self._release_lock()


def bulk_mmap_bytes() -> int:
    """limits.SQLITE_BULK_MMAP_BYTES, or ``$DYNASTORE_BULK_MMAP_BYTES``."""
    return limits.overridden(limits.SQLITE_BULK_MMAP_VARIABLE, limits.SQLITE_BULK_MMAP_BYTES)


class _BulkReads:
    """One ``with storage.bulk_reads():`` block (nested ones join the outermost)."""

    __slots__ = ("_storage",)

    def __init__(self, storage: SQLiteStorage) -> None:
        self._storage = storage

    def __enter__(self) -> None:
        storage = self._storage
        storage._bulk_depth += 1
        if storage._bulk_depth > 1 or storage.directory is None:
            return
        try:
            connection = storage._bulk()
            connection.execute("BEGIN")
        except BaseException:
            storage._bulk_depth -= 1
            raise
        storage._range_reads = connection

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self._storage
        storage._bulk_depth -= 1
        if storage._bulk_depth > 0 or storage._range_reads is storage._connection:
            return
        storage._range_reads = storage._connection
        connection = storage._bulk_connection
        if connection is not None and connection.in_transaction:
            connection.execute("COMMIT")  # a read transaction: nothing to write


class _TransactionBlock:
    """One ``with storage.transaction():`` block.

    The outermost block runs BEGIN IMMEDIATE (taking the write lock up front,
    so a read-then-write inside cannot fail to upgrade) and COMMIT. A nested
    block is a SAVEPOINT: an exception that leaves it undoes exactly its
    writes, so a caller that catches it inside an enclosing block keeps the
    enclosing block's writes; an exception that leaves the outermost block
    rolls back everything.
    """

    __slots__ = ("_storage", "_depth", "_mark")

    def __init__(self, storage: SQLiteStorage) -> None:
        self._storage = storage
        self._depth = 0
        self._mark = 0

    def __enter__(self) -> None:
        storage = self._storage
        depth = storage._depth
        if depth == 0:
            storage._connection.execute("BEGIN IMMEDIATE")
            storage._changes_at_begin = storage._connection.total_changes
        else:
            storage._connection.execute(f"SAVEPOINT nested_{depth}")
        self._depth = depth
        self._mark = len(storage._rollback_undo)
        storage._depth = depth + 1

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self._storage
        depth = self._depth
        storage._depth = depth
        connection = storage._connection
        if exception_type is None:
            if depth > 0:
                connection.execute(f"RELEASE nested_{depth}")
                return
            try:
                connection.execute("COMMIT")
            except BaseException:
                storage._rolled_back(depth, self._mark)
                raise
            storage._rollback_undo.clear()  # committed: nothing left to undo
            if connection.total_changes != storage._changes_at_begin:
                storage._committed()
            return
        storage._rolled_back(depth, self._mark)


class _Checkpointer:
    """Checkpoints the WAL from a thread with its own connection.

    A checkpoint copies committed pages from the WAL into the database file and
    fsyncs both; run by the serving connection (SQLite's automatic checkpoint,
    every 1,000 pages) it stalls every request queued behind it for tens of
    milliseconds. Here it runs PASSIVE — it never blocks the writer, and the
    writer never waits for it — while sqlite3 releases the GIL, so the copying
    and the fsyncs use the other core. Durability is unchanged: a commit is
    safe once it is in the WAL, checkpointed or not.

    The serving connection wakes the thread after each commit; the thread
    waits ``delay_seconds`` so that one checkpoint covers that window's
    commits. An idle store leaves it asleep. The WAL restarts from its
    beginning once a checkpoint has caught up with it; under a write load that
    never pauses the serving connection's own automatic checkpoint, kept as a
    fallback at FALLBACK_AUTOCHECKPOINT_PAGES, does it.
    """

    def __init__(self, database_path: Path, delay_seconds: float) -> None:
        self._database_path = database_path
        self._delay_seconds = delay_seconds
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, name="dynastore-checkpointer", daemon=True
        )
        self._thread.start()

    def wake(self) -> None:
        if not self._wake.is_set():
            self._wake.set()

    def stop(self) -> None:
        """Finish the checkpoint in progress (if any) and end the thread."""
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        connection = sqlite3.connect(self._database_path, isolation_level=None)
        try:
            connection.execute("PRAGMA synchronous = NORMAL")
            while True:
                self._wake.wait()
                if self._stopping:
                    return
                time.sleep(self._delay_seconds)
                self._wake.clear()
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as error:  # the serving connection's fallback covers it
                    logger.warning("background checkpoint failed: %s", error)
                if self._stopping:  # stop() during the sleep: its wake was cleared
                    return
        finally:
            connection.close()


def _acquire_lock(path: Path) -> int:
    """Hold an exclusive flock on ``path`` for the life of the store, so two
    servers never open one data directory. The OS drops it when we die."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise DataDirectoryLocked(
            f"{path.parent} is already in use by another dynastore process "
            f"(lock file {path} is held). Stop that process or use another data directory."
        ) from None
    return descriptor
