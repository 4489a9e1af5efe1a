"""The PostgreSQL backend: every storage table of dynastore in one database.

    dynastore_tables(table_id, name, metadata, generation)
    dynastore_items(table_id, pk_hash, pk, sk, item, size)  PRIMARY KEY (table_id, pk_hash, pk, sk)

The layout is the SQLite backend's (ADR 0001), in a server that many
dynastore processes share (docs/postgres.md, ADR 0004). Keys are bytea,
which PostgreSQL compares as unsigned bytes: the order the key encoding
needs. Every statement of a point operation and of a Query names
``(table_id, pk_hash, pk)``, so on a hash-distributed PostgreSQL (Citus)
each touches one shard.

One connection in autocommit mode serves one process's requests (a
process runs one operation at a time); ``transaction()`` blocks map to
BEGIN/COMMIT and nested ones to savepoints. The connection comes from a
psycopg pool, which checks it and replaces a broken one: when PostgreSQL
restarts or the connection drops, the request in progress fails with
``StorageUnavailable`` (the server answers InternalServerError, which SDKs
retry) and the next one gets a fresh connection.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from types import SimpleNamespace, TracebackType
from typing import Any

import psycopg
from greenlet import getcurrent, greenlet  # type: ignore[import-untyped]
from psycopg_pool import ConnectionPool, PoolTimeout

from dynastore.storage.base import (
    HASH_SPACE,
    CatalogueChanged,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    SortKeyRange,
    Storage,
    Stored,
    TableRecord,
    WriteConflict,
    run_undo,
)
from dynastore.storage.errors import StorageError, StorageUnavailable
from dynastore.storage.postgres import commit as commit_sql
from dynastore.storage.postgres.heads import HeadGroups
from dynastore.storage.postgres.pipeline import (
    ALONE,
    CONNECT_TIMEOUT_SECONDS,
    GROUPED,
    READ,
    Call,
    Hub,
    PipelineConnection,
    StatementError,
)
from dynastore.storage.postgres.schema import ensure_schema
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

POOL_MAX_CONNECTIONS = 4
"""Connections one process may hold by default (a server passes its thread
count): the ones serving requests, and spares while a broken one is being
replaced."""

_ROW_COLUMNS = "pk_hash, pk, sk, item, size"
_GET = (
    f"SELECT {_ROW_COLUMNS} FROM dynastore_items"
    " WHERE table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"
)
_PUT = (
    "INSERT INTO dynastore_items (table_id, pk_hash, pk, sk, item, size)"
    " VALUES (%s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (table_id, pk_hash, pk, sk) DO UPDATE"
    " SET item = excluded.item, size = excluded.size, by_transaction = false"
)
_DELETE = "DELETE FROM dynastore_items WHERE table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"
_STORED_COLUMNS = "pk_hash, pk, sk, item, size, xmin::text, by_transaction"
_READ_ONE_FOR_WRITE = (
    f"SELECT {_STORED_COLUMNS} FROM dynastore_items"
    " WHERE table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"
)
_WRITER_OF = (
    "SELECT by_transaction FROM dynastore_items"
    " WHERE table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"
)


def _read_many_sql(count: int) -> str:
    """One statement (one snapshot) reading ``count`` keys: a UNION ALL of
    point lookups, which PostgreSQL plans as index lookups even as a generic
    prepared plan (a row-value IN list with parameters was planned as a
    scan of the table: 1 ms a read on a table of a few thousand rows)."""
    one = (
        f"SELECT table_id, {_STORED_COLUMNS} FROM dynastore_items"
        " WHERE table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"
    )
    return " UNION ALL ".join([one] * count)


_READ_MANY_SQL: dict[int, str] = {}
RETRYABLE_SQLSTATES = frozenset(("40001", "40P01", "55P03", "23505"))
"""Serialization failure, deadlock, lock timeout, unique violation: another
transaction won a race; the write reads again (storage.base.WriteConflict)."""
CATALOGUE_CHANNEL = "dynastore_catalogue"
"""The NOTIFY channel of catalogue changes."""
TABLE_LOCK_CLASS = 1685679713
"""The first key of a table's advisory lock ("dyna"); the second is the
table id modulo TABLE_LOCK_MODULUS (as dynastore_check_table computes it)."""
TABLE_LOCK_MODULUS = 2147483647
JOB_LOCK_CLASS = 1685679714
"""The first key of the job locks (hold_lock); the second is a hash of the job's name."""
LOCK_TIMEOUT_MS = 2000
"""The longest a statement waits for a row another transaction holds; then
the write is retried like any conflict (nothing waits forever)."""
_STATISTICS = "SELECT count(*), coalesce(sum(size), 0) FROM dynastore_items WHERE table_id = %s"
_SCAN_FIRST = (
    f"SELECT {_ROW_COLUMNS} FROM dynastore_items"
    " WHERE table_id = %s AND pk_hash >= %s AND pk_hash < %s"
    " ORDER BY pk_hash, pk, sk LIMIT %s"
)
_SCAN_AFTER = (
    f"SELECT {_ROW_COLUMNS} FROM dynastore_items"
    " WHERE table_id = %s AND (pk_hash, pk, sk) > (%s, %s, %s) AND pk_hash < %s"
    " ORDER BY pk_hash, pk, sk LIMIT %s"
)


def _query_sql(forward: bool, lower: str | None, upper: str | None) -> str:
    conditions = "table_id = %s AND pk_hash = %s AND pk = %s"
    if lower is not None:
        conditions += f" AND sk {lower} %s"
    if upper is not None:
        conditions += f" AND sk {upper} %s"
    order = "ASC" if forward else "DESC"
    return (
        f"SELECT {_ROW_COLUMNS} FROM dynastore_items WHERE {conditions} ORDER BY sk {order} LIMIT %s"
    )


_QUERY_SQL = {
    (forward, lower, upper): _query_sql(forward, lower, upper)
    for forward in (True, False)
    for lower in (None, ">", ">=")
    for upper in (None, "<", "<=")
}

SNAPSHOT_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
FIRST_SCAN_CHUNK_ROWS = 256
"""A Scan's first read: larger than SQLite's (each read is a round trip here)."""


def _lower_op(bound: Bound | None) -> str | None:
    return None if bound is None else (">=" if bound[1] else ">")


def _upper_op(bound: Bound | None) -> str | None:
    return None if bound is None else ("<=" if bound[1] else "<")


def describe_location(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the PostgreSQL database"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    database = info.get("dbname") or info.get("user") or ""
    return f"postgresql://{host}:{port}/{database}"


class PostgresStorage(Storage):
    """The store in the PostgreSQL database at ``url`` (as libpq takes it)."""

    exclusive = False
    first_generation = 1

    def __init__(self, url: str, max_connections: int = POOL_MAX_CONNECTIONS) -> None:
        """``max_connections``: how many threads may use the store at once
        (each uses a connection of its own while it does), plus spares."""
        self.url = url
        self.location = describe_location(url)
        self._writes = 0
        self._contexts: weakref.WeakKeyDictionary[greenlet, _Context] = weakref.WeakKeyDictionary()
        """Each thread's (or request greenlet's) connection and transaction depth."""
        self.hub: Hub | None = None
        self._head_groups: HeadGroups | None = None
        """Set by a server (``start_pipelining``): request greenlets' statements
        then go out in pipelined batches (pipeline.py) instead of blocking."""
        self._taken: set[psycopg.Connection[Any]] = set()
        self._taken_lock = threading.Lock()
        # One direct connection first: an unreachable server, a refused login
        # or a database of another schema version fails here, at once and in
        # the driver's own words, instead of in the pool's retries.
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS) as first:
                ensure_schema(first, self.location)
        except psycopg.Error as error:
            reason = " ".join(str(error).split())
            raise StorageError(f"cannot use {self.location}: {reason}") from error
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(2, max_connections),
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS},
            configure=_configure,
            open=False,
            check=ConnectionPool.check_connection,
            name="dynastore",
        )
        self._pool.open()
        self._locks_connection: psycopg.Connection[Any] | None = None
        """A connection of its own for the job locks (hold_lock), held while it lives."""
        self._held_locks: set[str] = set()
        self._locks_lock = threading.Lock()
        self._loop: Any = None
        self._listener_socket = -1
        self._notifications = 0
        """Catalogue announcements seen so far (counted as they arrive when a
        server's loop watches the listener, else when polled): a count, not
        a flag, so every namespace's catalogue (dynastore/namespaces.py)
        notices each one."""
        self._listener: psycopg.Connection[Any] | None = None
        self._listener_opening = False
        """A new listener is being opened on a thread (catalogue_changes)."""
        """The connection that LISTENs for catalogue changes of other servers
        (opened before the catalogue is first loaded, so no change is missed)."""
        try:
            self._listener = self._listen()
        except psycopg.Error:
            self._listener = None  # polled later: a missing listener reads as a change

    # --- connections -------------------------------------------------------------
    # Two ways to the database. A server's request greenlets go through the
    # hub (pipeline.py): their statements are batched, and a transaction
    # over several calls reserves a pipelined connection. Anything else (the
    # embedded API, a thread, the event loop itself) blocks on a connection
    # of its own from the pool, which it keeps: no pool round trip per call.
    def start_pipelining(self, loop: Any) -> Hub:
        """Batch the statements of request greenlets on ``loop`` (a server),
        and read catalogue notifications as they come instead of polling."""
        hub = self.hub = Hub(self.url, loop, _configure)
        self._loop = loop
        self._head_groups = HeadGroups(
            run=self._run_pipelined, reserve=self._reserve_for_greenlet,
            release=lambda: self._release_reserved(self._context()),
            park=hub.main.switch, wake=lambda waiter: loop.call_soon(waiter.switch), refused=ResultError,
        )
        self._watch_listener()
        return hub

    def _reserve_for_greenlet(self) -> None:
        assert self.hub is not None
        self._context().reserved = self.hub.reserve()

    def _watch_listener(self) -> None:
        listener = self._listener
        if self._loop is not None and listener is not None and not listener.closed:
            # A duplicate descriptor, ours to close (see PipelineConnection).
            self._listener_socket = os.dup(listener.pgconn.socket)
            self._loop.add_reader(self._listener_socket, self._listener_readable)

    def _listener_readable(self) -> None:
        """The listening connection has data: note any notification (a
        request's check is then a flag, not a system call)."""
        listener = self._listener
        try:
            if listener is None:
                raise psycopg.OperationalError("no listener")
            pgconn = listener.pgconn
            pgconn.consume_input()
            while pgconn.notifies() is not None:
                self._notifications += 1
        except psycopg.Error:
            self._notifications += 1
            self._close_listener()

    def _context(self) -> _Context:
        current = getcurrent()
        context = self._contexts.get(current)
        if context is None:
            context = self._contexts[current] = _Context()
        return context

    @property
    def _connection(self) -> psycopg.Connection[Any] | None:
        return self._context().connection

    @property
    def _depth(self) -> int:
        return self._context().depth

    @_depth.setter
    def _depth(self, depth: int) -> None:
        self._context().depth = depth

    def _pipelined(self) -> bool:
        hub = self.hub
        return hub is not None and hub.in_request()

    def _take(self) -> psycopg.Connection[Any]:
        """This thread's blocking connection (taken from the pool when needed)."""
        context = self._context()
        connection = context.connection
        if connection is None or connection.closed:
            if connection is not None:
                self._give_back(connection)
            try:
                connection = self._pool.getconn(timeout=CONNECT_TIMEOUT_SECONDS)
            except PoolTimeout as error:
                raise StorageUnavailable(f"cannot connect to {self.location}") from error
            context.connection = connection
            with self._taken_lock:
                self._taken.add(connection)
        return connection

    def _give_back(self, connection: psycopg.Connection[Any]) -> None:
        with self._taken_lock:
            self._taken.discard(connection)
        try:
            self._pool.putconn(connection)
        except Exception:  # the pool is closing
            pass

    def _broken(self, error: psycopg.Error) -> StorageUnavailable:
        """The connection failed: hand it back (the pool replaces it) and
        report the request as unavailable."""
        context = self._context()
        connection, context.connection = context.connection, None
        context.depth = 0
        if connection is not None:
            self._give_back(connection)
        logger.warning("lost the connection to %s: %s", self.location, error)
        return StorageUnavailable(f"{self.location}: {error}")

    def _execute(self, query: str, parameters: Any = None) -> Any:
        """One statement: its cursor (or, pipelined, its Outcome: the same
        fetchone/fetchall/rowcount)."""
        if self._pipelined():
            return self._run_pipelined([(query, parameters or ())])[0]
        connection = self._take()
        try:
            return connection.cursor(binary=True).execute(query, parameters, prepare=True)
        except psycopg.OperationalError as error:
            if connection.closed or connection.broken:
                raise self._broken(error) from error
            raise

    @contextmanager
    def snapshot(self, expected_rows: int | None = None) -> Iterator[None]:
        """A page's reads in one REPEATABLE READ, READ ONLY transaction (one
        snapshot), unless its Limit fits in the first chunk (one statement is
        one snapshot already). A request greenlet reserves a connection: its
        BEGIN goes out with the first read, its COMMIT with the connection's
        next call (no round trip of their own)."""
        context = self._context()
        if (expected_rows is not None and expected_rows <= FIRST_CHUNK_ROWS) or context.depth > 0:
            yield
            return
        pipelined = self._pipelined()
        if pipelined:
            assert self.hub is not None
            context.reserved = self.hub.reserve()
            context.begin = SNAPSHOT_BEGIN
        else:
            self._execute(SNAPSHOT_BEGIN)
        context.depth = 1
        try:
            yield
        finally:
            context.depth = 0
            if pipelined:
                reserved, context.reserved = context.reserved, None
                began, context.begin = context.begin is None, None
                if reserved is not None and self.hub is not None:
                    self.hub.release(reserved, trailing=[("COMMIT", ())] if began else None)
            else:
                try:
                    self._execute("COMMIT")
                except (StorageUnavailable, psycopg.Error):
                    pass

    def _run_pipelined(
        self,
        statements: list[tuple[str, Any]],
        order: list[Any] | None = None,
        claims: dict[Any, int] | None = None,
    ) -> list[Any]:
        """Statements of a request greenlet through the hub: a read on its own,
        inside the greenlet's transaction on its reserved connection, or (with
        ``order``) grouped with other requests' commits. A refused statement
        raises ``ResultError`` (sqlstate and detail, like psycopg's errors)."""
        hub = self.hub
        assert hub is not None
        # Most request greenlets never reserve a connection: look their
        # context up without making one (a weak entry a request costs).
        context = self._contexts.get(getcurrent())
        reserved = None if context is None else context.reserved
        if reserved is not None:
            assert context is not None
            begin = context.begin
            if begin is not None:  # a snapshot's BEGIN, sent with its first read
                context.begin = None
                try:
                    return hub.execute(Call([(begin, ()), *statements], ALONE), reserved)[1:]
                except StatementError as error:
                    raise ResultError(error) from None
            call = Call(statements, ALONE)
        elif order is not None:
            call = Call(statements, GROUPED, order, claims)
        else:
            call = Call(statements, READ)
        try:
            return hub.execute(call, reserved)
        except StatementError as error:
            raise ResultError(error) from None

    def _rows(self, query: str, parameters: Any) -> list[Row]:
        return [Row._make(found) for found in self._execute(query, parameters).fetchall()]

    # --- catalogue ---------------------------------------------------------------
    def load_tables(self) -> list[TableRecord]:
        rows = self._execute(
            "SELECT table_id, name, metadata, generation FROM dynastore_tables ORDER BY table_id"
        ).fetchall()
        return [
            TableRecord(int(table_id), name, bytes(metadata), int(generation))
            for table_id, name, metadata, generation in rows
        ]

    # Every change of the catalogue raises its version and announces itself
    # (NOTIFY is sent when the transaction commits). A change of an existing
    # table first takes the table's advisory lock exclusively: it waits for
    # the commits in flight that checked the old generation, and the commits
    # after it see the new one (dynastore_check_table, commit.py).
    def _announce_catalogue_change(self) -> None:
        self._execute("UPDATE dynastore_catalogue SET version = version + 1")
        self._execute(f"NOTIFY {CATALOGUE_CHANNEL}")

    def _lock_table(self, table_id: int) -> None:
        self._execute(
            "SELECT pg_advisory_xact_lock(%s::integer, %s::integer)",
            (TABLE_LOCK_CLASS, table_id % TABLE_LOCK_MODULUS),
        ).fetchone()

    def lock_table(self, table_id: int) -> None:
        """The advisory lock every change of the table's definition takes
        first (and every commit to it takes shared): held until the
        enclosing transaction ends."""
        if self._context().depth == 0:
            raise RuntimeError("lock_table outside a transaction")
        self._lock_table(table_id)

    def create_table(self, name: str, metadata: bytes) -> int:
        self._writes += 1
        with self.transaction():
            found = self._execute(
                "INSERT INTO dynastore_tables (name, metadata) VALUES (%s, %s) RETURNING table_id",
                (name, metadata),
            ).fetchone()
            self._announce_catalogue_change()
        assert found is not None
        return int(found[0])

    def update_table_metadata(self, table_id: int, metadata: bytes, expected_generation: int | None = None) -> int:
        self._writes += 1
        with self.transaction():
            self._lock_table(table_id)  # the table's lock first, then its catalogue row
            if expected_generation is None:
                found = self._execute(
                    "UPDATE dynastore_tables SET metadata = %s, generation = generation + 1"
                    " WHERE table_id = %s RETURNING generation",
                    (metadata, table_id),
                ).fetchone()
            else:
                found = self._execute(
                    "UPDATE dynastore_tables SET metadata = %s, generation = generation + 1"
                    " WHERE table_id = %s AND generation = %s RETURNING generation",
                    (metadata, table_id, expected_generation),
                ).fetchone()
                if found is None and self._execute(
                        "SELECT 1 FROM dynastore_tables WHERE table_id = %s", (table_id,)).fetchone() is not None:
                    raise CatalogueChanged(f"table {table_id} is no longer at generation {expected_generation}")
            if found is None:
                raise KeyError(f"no table with id {table_id}")
            self._announce_catalogue_change()
        return int(found[0])

    def table_generation(self, table_id: int) -> int | None:
        found = self._execute("SELECT generation FROM dynastore_tables WHERE table_id = %s", (table_id,)).fetchone()
        return None if found is None else int(found[0])

    def rename_table(self, table_id: int, name: str) -> int:
        self._writes += 1
        with self.transaction():
            self._lock_table(table_id)
            found = self._execute(
                "UPDATE dynastore_tables SET name = %s, generation = generation + 1"
                " WHERE table_id = %s RETURNING generation",
                (name, table_id),
            ).fetchone()
            if found is None:
                raise KeyError(f"no table with id {table_id}")
            self._announce_catalogue_change()
        return int(found[0])

    def drop_table(self, table_id: int) -> None:
        self._writes += 1
        with self.transaction():
            self._lock_table(table_id)
            cursor = self._execute("DELETE FROM dynastore_tables WHERE table_id = %s", (table_id,))
            if cursor.rowcount == 0:
                raise KeyError(f"no table with id {table_id}")
            self._execute("DELETE FROM dynastore_items WHERE table_id = %s", (table_id,))
            self._announce_catalogue_change()

    def catalogue_version(self) -> int:
        found = self._execute("SELECT version FROM dynastore_catalogue").fetchone()
        return int(found[0]) if found else 0

    def catalogue_changes(self) -> int:
        """Polls the listening connection (a non-blocking read: well under a
        microsecond when nothing came). A listener that broke is replaced,
        and since it may have missed a notification, that counts as a change."""
        listener = self._listener
        if self._loop is not None and listener is not None and not listener.closed:
            return self._notifications  # counted by _listener_readable
        hub = self.hub
        if hub is not None and (listener is None or listener.closed):
            # A server: the new listener connects on a thread (a PostgreSQL
            # that does not answer would hold the loop for the connect
            # timeout, at every request's check); meanwhile every check
            # reads as a change.
            if not self._listener_opening:
                self._listener_opening = True
                self._close_listener()
                hub._in_thread(self._listen, self._listened)
            self._notifications += 1
            return self._notifications
        try:
            if listener is None or listener.closed:
                self._listener = self._listen()
                self._watch_listener()
                self._notifications += 1
                return self._notifications
            pgconn = listener.pgconn
            pgconn.consume_input()
            while pgconn.notifies() is not None:
                self._notifications += 1
        except psycopg.Error:
            self._close_listener()
            self._notifications += 1
        return self._notifications

    def pause(self, seconds: float) -> None:
        if self._pipelined():
            assert self.hub is not None
            self.hub.sleep(seconds)
        else:
            time.sleep(seconds)

    def hold_lock(self, name: str) -> bool:
        """A session-level advisory lock on the serving connection: PostgreSQL
        drops it when the connection ends (the process died, or the
        connection broke and was replaced, after which it is taken again).

        The lock connection blocks (its connect, its queries): from a request
        greenlet that happens on a thread while the loop runs on, or a
        PostgreSQL that does not answer would stop the whole server (every
        request, the health check) for as long."""
        connection = self._locks_connection
        if (connection is not None and not connection.closed and not connection.broken
                and name in self._held_locks):
            return True  # held (what _hold_lock answers first): no thread for the usual case
        if self._pipelined():
            assert self.hub is not None
            return bool(self.hub.blocking(lambda: self._hold_lock(name)))
        return self._hold_lock(name)

    def _hold_lock(self, name: str) -> bool:
        with self._locks_lock:
            connection = self._locks_connection
            try:
                if connection is None or connection.closed or connection.broken:
                    connection = self._locks_connection = psycopg.connect(
                        self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
                    )
                    self._held_locks = set()
                if name in self._held_locks:
                    return True
                found = connection.execute(
                    "SELECT pg_try_advisory_lock(%s::integer, %s::integer)",
                    (JOB_LOCK_CLASS, zlib.crc32(name.encode()) & 0x7FFFFFFF),
                ).fetchone()
            except psycopg.Error as error:
                raise StorageUnavailable(f"{self.location}: {error}") from error
            if found and found[0]:
                self._held_locks.add(name)
                return True
            return False

    def release_lock(self, name: str) -> None:
        """Unlock ``name`` on the lock connection (a broken connection has
        lost it already); the next ``hold_lock`` asks PostgreSQL again. It
        is forgotten at once; the unlock goes out off the loop (as
        ``hold_lock``), in turn with any ``hold_lock`` after it (a session's
        advisory locks count: lock, unlock in either order, holds it once)."""
        if name not in self._held_locks:
            return
        self._held_locks.discard(name)
        if self._pipelined():
            assert self.hub is not None
            self.hub.blocking(lambda: self._unlock(name))
        else:
            self._unlock(name)

    def _unlock(self, name: str) -> None:
        with self._locks_lock:
            connection = self._locks_connection
            if connection is None or connection.closed or connection.broken:
                return
            try:
                connection.execute(
                    "SELECT pg_advisory_unlock(%s::integer, %s::integer)",
                    (JOB_LOCK_CLASS, zlib.crc32(name.encode()) & 0x7FFFFFFF),
                )
            except psycopg.Error:
                pass  # the connection broke: PostgreSQL dropped its locks

    def _listen(self) -> psycopg.Connection[Any]:
        listener = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        listener.execute(f"LISTEN {CATALOGUE_CHANNEL}")
        return listener

    def _listened(self, listener: psycopg.Connection[Any] | None, error: BaseException | None) -> None:
        """The new listener (opened by ``catalogue_changes``) is ready, or not
        (the next check tries again)."""
        self._listener_opening = False
        if listener is None:
            return
        if self.hub is None:  # closed meanwhile
            listener.close()
            return
        self._close_listener()
        self._listener = listener
        self._watch_listener()
        self._notifications += 1

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if self._listener_socket >= 0:
            if self._loop is not None:
                try:
                    self._loop.remove_reader(self._listener_socket)
                except (ValueError, OSError):
                    pass
            os.close(self._listener_socket)
            self._listener_socket = -1
        if listener is not None:
            try:
                listener.close()
            except psycopg.Error:
                pass

    # --- items -------------------------------------------------------------------
    def get(self, table_id: int, pk: bytes, sk: bytes) -> Row | None:
        found = self._execute(_GET, (table_id, partition_hash(pk), pk, sk)).fetchone()
        return None if found is None else Row._make(found)

    def put(self, table_id: int, row: Row) -> None:
        self._writes += 1
        self._execute(_PUT, (table_id, row.pk_hash, row.pk, row.sk, row.item, row.size))

    def delete(self, table_id: int, pk: bytes, sk: bytes) -> None:
        self._writes += 1
        self._execute(_DELETE, (table_id, partition_hash(pk), pk, sk))

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
            table_id, pk, partition_hash(pk), lower, upper, forward, first_chunk_rows(expected_rows)
        )

    def _query_chunks(
        self,
        table_id: int,
        pk: bytes,
        pk_hash: int,
        lower: Bound | None,
        upper: Bound | None,
        forward: bool,
        chunk_rows: int,
    ) -> Iterator[Row]:
        while True:
            statement = _QUERY_SQL[(forward, _lower_op(lower), _upper_op(upper))]
            parameters: list[object] = [table_id, pk_hash, pk]
            if lower is not None:
                parameters.append(lower[0])
            if upper is not None:
                parameters.append(upper[0])
            parameters.append(chunk_rows)
            rows = self._rows(statement, parameters)
            yield from rows
            if len(rows) < chunk_rows:
                return
            last_sk = rows[-1].sk
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
        return self._scan_chunks(table_id, hash_low, hash_high, exclusive_start)

    def _scan_chunks(
        self,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: tuple[int, bytes, bytes] | None,
    ) -> Iterator[Row]:
        chunk_rows = FIRST_SCAN_CHUNK_ROWS
        start = exclusive_start
        if start is not None and start[0] < hash_low:
            start = None
        while True:
            if start is None:
                rows = self._rows(_SCAN_FIRST, (table_id, hash_low, hash_high, chunk_rows))
            else:
                rows = self._rows(_SCAN_AFTER, (table_id, *start, hash_high, chunk_rows))
            yield from rows
            if len(rows) < chunk_rows:
                return
            last = rows[-1]
            start = (last.pk_hash, last.pk, last.sk)
            chunk_rows = min(chunk_rows * 2, MAX_CHUNK_ROWS)

    def table_statistics(self, table_id: int) -> tuple[int, int]:
        found = self._execute(_STATISTICS, (table_id,)).fetchone()
        assert found is not None
        return int(found[0]), int(found[1])

    # --- the write path ------------------------------------------------------------
    def read_for_write(self, keys: Sequence[RowKey], lock: bool = False) -> list[Stored]:
        """The rows at ``keys`` with their versions (xmin), in one statement:
        one snapshot, one round trip (``lock``: FOR UPDATE, in key order)."""
        if not keys:
            return []
        if len(keys) == 1:
            table_id, pk, sk = keys[0]
            one = _READ_ONE_FOR_WRITE + (" FOR UPDATE" if lock else "")
            found = self._execute(one, (table_id, partition_hash(pk), pk, sk)).fetchone()
            return [_stored(found)]
        if lock:
            return self._read_locked(keys)
        sql = _READ_MANY_SQL.get(len(keys))
        if sql is None:
            sql = _READ_MANY_SQL.setdefault(len(keys), _read_many_sql(len(keys)))
        parameters: list[Any] = []
        for table_id, pk, sk in keys:
            parameters += (table_id, partition_hash(pk), pk, sk)
        by_key = {
            (found[0], found[2], found[3]): found[1:]
            for found in self._execute(sql, parameters).fetchall()
        }
        return [_stored(by_key.get((key.table_id, key.pk, key.sk))) for key in keys]

    def _read_locked(self, keys: Sequence[RowKey]) -> list[Stored]:
        """Several rows read FOR UPDATE (inside a transaction): one statement a
        row, in one key order (two lockers never wait for each other in a
        cycle), sent together on the transaction's connection."""
        ordered = sorted(set(keys), key=lambda key: (key.table_id, partition_hash(key.pk), key.pk, key.sk))
        statements = [(_READ_ONE_FOR_WRITE + " FOR UPDATE", (key.table_id, partition_hash(key.pk), key.pk, key.sk))
                      for key in ordered]
        if self._pipelined():
            outcomes = self._run_pipelined(statements)
        else:
            outcomes = [self._execute(sql, parameters) for sql, parameters in statements]
        found = {key: _stored(outcome.fetchone()) for key, outcome in zip(ordered, outcomes, strict=True)}
        return [found[key] for key in keys]

    def commit(self, commit: Commit) -> None:
        """One database transaction (storage/postgres/commit.py): one round
        trip, two with a Sequenced part; inside an open ``transaction()``
        block the statements run in it."""
        statements, cleanup = commit_sql.statements(commit)
        if not statements and not commit.sequenced:
            return  # nothing to write, nothing to check
        self._writes += 1
        if self._pipelined():
            try:
                self._commit_through_hub(commit, statements, cleanup)
            except ResultError as error:
                raise self._commit_failed(None, commit, error) from None
            return
        connection = self._take()
        try:
            if self._depth > 0:
                self._commit_inside(connection, commit, statements, cleanup)
            elif not commit.sequenced:
                self._commit_pipelined(connection, statements + cleanup)
            else:
                self._commit_sequenced(connection, commit, statements, cleanup)
        except psycopg.Error as error:
            raise self._commit_failed(connection, commit, error) from error

    def _commit_through_hub(
        self, commit: Commit, statements: list[commit_sql.Statement], cleanup: list[commit_sql.Statement]
    ) -> None:
        """A request greenlet's commit: grouped with the other requests' in
        the next batch (one round trip, one WAL flush for all); inside the
        greenlet's transaction when it has one; with a Sequenced part, on a
        reserved connection over two round trips."""
        found = self._contexts.get(getcurrent())
        if (found is None or found.reserved is None) and not commit.sequenced:
            everything = statements + cleanup
            self._run_pipelined([statement[:2] for statement in everything],
                                order=[statement.order for statement in everything],
                                claims=commit_sql.claims(statements))
            return
        context = self._context()
        if context.reserved is None and len(commit.sequenced) == 1 and self._head_groups is not None:
            self._head_groups.commit(commit, statements, cleanup)  # with the others to its stream (heads.py)
            return
        reserving = context.reserved is None
        if reserving:
            assert self.hub is not None
            context.reserved = self.hub.reserve()
        try:
            begin = [("BEGIN", ())] if reserving else []
            heads = sorted(commit.sequenced, key=lambda sequenced: (sequenced.head.table_id, sequenced.head.pk))
            locks = [statement[:2] for sequenced in heads for statement in commit_sql.head_statements(sequenced.head)]
            outcomes = self._run_pipelined(begin + [statement[:2] for statement in statements] + locks)
            built: list[tuple[str, Any]] = []
            for position, sequenced in enumerate(heads):
                found = outcomes[len(outcomes) - len(locks) + 2 * position + 1].fetchone()
                changes = sequenced.build(commit_sql.head_row(found))
                built += [statement[:2] for statement in commit_sql.built_changes(sequenced.head, changes, commit.by_transaction)]
            end = [("COMMIT", ())] if reserving else []
            self._run_pipelined(built + [statement[:2] for statement in cleanup] + end)
        except BaseException:
            if reserving and context.reserved is not None and not context.reserved.broken:
                try:
                    self._run_pipelined([("ROLLBACK", ())])
                except (ResultError, StorageUnavailable):
                    pass
            raise
        finally:
            if reserving:
                self._release_reserved(context)

    def _commit_pipelined(self, connection: psycopg.Connection[Any], statements: list[Any]) -> None:
        """Statements between two Syncs run as one implicit transaction: one round trip."""
        if len(statements) == 1:
            connection.execute(statements[0].sql, statements[0].parameters, prepare=True)
            return
        with connection.pipeline():
            cursor = connection.cursor(binary=True)
            for statement in statements:
                cursor.execute(statement.sql, statement.parameters, prepare=True)

    def _commit_sequenced(
        self, connection: psycopg.Connection[Any], commit: Commit, statements: list[Any], cleanup: list[Any]
    ) -> None:
        """BEGIN, the statements and the head locks in one round trip; the
        rows built under the locks, the cleanup and COMMIT in a second."""
        heads = sorted(commit.sequenced, key=lambda sequenced: (sequenced.head.table_id, sequenced.head.pk))
        try:
            with connection.pipeline() as pipeline:
                cursor = connection.cursor(binary=True)
                cursor.execute("BEGIN")
                for statement in statements:
                    cursor.execute(statement.sql, statement.parameters, prepare=True)
                head_cursors = []
                for sequenced in heads:
                    claim, lock = commit_sql.head_statements(sequenced.head)
                    cursor.execute(claim.sql, claim.parameters, prepare=True)
                    head_cursor = connection.cursor(binary=True)
                    head_cursor.execute(lock.sql, lock.parameters, prepare=True)
                    head_cursors.append(head_cursor)
                pipeline.sync()
                for sequenced, head_cursor in zip(heads, head_cursors, strict=True):
                    built = sequenced.build(commit_sql.head_row(head_cursor.fetchone()))
                    for statement in commit_sql.built_changes(sequenced.head, built, commit.by_transaction):
                        cursor.execute(statement.sql, statement.parameters, prepare=True)
                for statement in cleanup:
                    cursor.execute(statement.sql, statement.parameters, prepare=True)
                cursor.execute("COMMIT")
        except BaseException:
            if not connection.closed and connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                connection.execute("ROLLBACK")
            raise

    def _commit_inside(
        self, connection: psycopg.Connection[Any], commit: Commit, statements: list[Any], cleanup: list[Any]
    ) -> None:
        cursor = connection.cursor(binary=True)
        for statement in statements:
            cursor.execute(statement.sql, statement.parameters, prepare=True)
        for sequenced in sorted(commit.sequenced, key=lambda sequenced: (sequenced.head.table_id, sequenced.head.pk)):
            claim, lock = commit_sql.head_statements(sequenced.head)
            cursor.execute(claim.sql, claim.parameters, prepare=True)
            found = cursor.execute(lock.sql, lock.parameters, prepare=True).fetchone()
            built = sequenced.build(commit_sql.head_row(found))
            for statement in commit_sql.built_changes(sequenced.head, built, commit.by_transaction):
                cursor.execute(statement.sql, statement.parameters, prepare=True)
        for statement in cleanup:
            cursor.execute(statement.sql, statement.parameters, prepare=True)

    def _commit_failed(
        self, connection: psycopg.Connection[Any] | None, commit: Commit, error: psycopg.Error | ResultError
    ) -> Exception:
        """The exception a failed commit is: a conflict, a changed catalogue,
        or the store being unavailable."""
        if connection is not None and (connection.closed or connection.broken):
            assert isinstance(error, psycopg.Error)
            return self._broken(error)
        state = error.sqlstate
        if state == commit_sql.CATALOGUE_CHANGED_SQLSTATE:
            return CatalogueChanged(str(error))
        if state == commit_sql.CONFLICT_SQLSTATE:
            position = int(error.diag.message_detail or 0)
            return WriteConflict(position, self._written_by_transaction(commit, position))
        if state in RETRYABLE_SQLSTATES:
            return WriteConflict(0)
        return error

    def _written_by_transaction(self, commit: Commit, position: int) -> bool:
        entries: list[RowChange | RowCheck] = [*commit.changes, *commit.checks]
        if not 0 <= position < len(entries) or self._depth > 0:
            return False
        entry = entries[position]
        found = self._execute(_WRITER_OF, (entry.table_id, partition_hash(entry.pk), entry.pk, entry.sk)).fetchone()
        return bool(found is not None and found[0])

    # --- atomicity and lifecycle -------------------------------------------------
    def write_count(self) -> int:
        return self._writes

    def transaction(self) -> AbstractContextManager[None]:
        return _TransactionBlock(self)

    def after_rollback(self, undo: Callable[[], object]) -> None:
        context = self._context()
        if context.depth > 0:
            context.undo.append(undo)

    def _release_reserved(self, context: _Context) -> None:
        reserved, context.reserved = context.reserved, None
        if reserved is not None and self.hub is not None:
            self.hub.release(reserved)

    def close(self) -> None:
        if self.hub is not None:
            self.hub.close()
            self.hub = None
        self._close_listener()
        # (not forever: a thread may hold it, waiting for a PostgreSQL that
        # does not answer; the process ends its connection then)
        if self._locks_lock.acquire(timeout=CONNECT_TIMEOUT_SECONDS):
            try:
                if self._locks_connection is not None:
                    self._locks_connection.close()
                    self._locks_connection = None
            finally:
                self._locks_lock.release()
        with self._taken_lock:
            taken, self._taken = list(self._taken), set()
        for connection in taken:
            try:
                self._pool.putconn(connection)
            except Exception:
                pass
        self._pool.close()


def _configure(connection: psycopg.Connection[Any]) -> None:
    """Every pooled connection: bounded lock waits (the URL's own options,
    such as a search_path, stay as they are)."""
    connection.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")


def _stored(found: tuple[Any, ...] | None) -> Stored:
    if found is None:
        return Stored(None)
    return Stored(Row._make(found[:5]), int(found[5]), bool(found[6]))


class _Context:
    """A thread's or request greenlet's place in the store."""

    __slots__ = ("connection", "reserved", "depth", "begin", "undo")

    def __init__(self) -> None:
        self.connection: psycopg.Connection[Any] | None = None
        self.reserved: PipelineConnection | None = None
        """A request greenlet's connection while it is inside a transaction."""
        self.depth = 0
        self.undo: list[Callable[[], object]] = []
        """after_rollback's actions of the open transaction blocks, oldest first."""
        self.begin: str | None = None
        """A snapshot's BEGIN not sent yet (it goes with the first read)."""


class ResultError(Exception):
    """A statement refused on the pipelined path, shaped as psycopg's errors
    (``sqlstate``, ``diag.message_detail``) so both paths map it alike."""

    def __init__(self, error: StatementError) -> None:
        super().__init__(str(error))
        self.sqlstate = error.sqlstate
        self.diag = SimpleNamespace(message_detail=error.detail)
        self.statement = error.statement


class _TransactionBlock:
    """BEGIN/COMMIT for the outermost block, a savepoint for a nested one (a
    request greenlet holds a reserved connection for the whole block)."""

    __slots__ = ("_storage", "_depth", "_mark")

    def __init__(self, storage: PostgresStorage) -> None:
        self._storage = storage
        self._depth = 0
        self._mark = 0

    def __enter__(self) -> None:
        storage = self._storage
        context = storage._context()
        depth = context.depth
        if depth == 0 and storage._pipelined():
            assert storage.hub is not None
            context.reserved = storage.hub.reserve()
        try:
            storage._execute("BEGIN" if depth == 0 else f"SAVEPOINT nested_{depth}")
        except BaseException:
            storage._release_reserved(context)
            raise
        self._depth = depth
        self._mark = len(context.undo)
        context.depth = depth + 1

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self._storage
        context = storage._context()
        depth = self._depth
        if context.depth == 0:
            run_undo(context.undo, 0)  # the connection broke inside the block: all of it is gone
            return  # and nothing is left to end
        context.depth = depth
        ended_well = False
        try:
            if exception_type is None:
                storage._execute("COMMIT" if depth == 0 else f"RELEASE nested_{depth}")
                ended_well = True
                return
            if isinstance(exception, StorageUnavailable):
                return
            try:
                if depth == 0:
                    storage._execute("ROLLBACK")
                else:
                    storage._execute(f"ROLLBACK TO nested_{depth}")
                    storage._execute(f"RELEASE nested_{depth}")
            except StorageUnavailable:
                pass
        finally:
            if not ended_well:
                run_undo(context.undo, self._mark)
            elif depth == 0:
                context.undo.clear()  # committed: nothing left to undo
            if depth == 0:
                storage._release_reserved(context)
