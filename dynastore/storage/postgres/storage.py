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
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

import psycopg
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
)
from dynastore.storage.errors import StorageError, StorageUnavailable
from dynastore.storage.postgres import commit as commit_sql
from dynastore.storage.postgres.schema import ensure_schema
from dynastore.storage.ranges import (
    MAX_CHUNK_ROWS,
    Bound,
    first_chunk_rows,
    is_empty_range,
    sort_key_bounds,
)
from dynastore.types.keys import partition_hash

logger = logging.getLogger("dynastore.storage")

CONNECT_TIMEOUT_SECONDS = 10
"""How long opening a connection may take before the server is called unreachable."""
POOL_MAX_CONNECTIONS = 4
"""Connections one process may hold: the one serving requests, and spares
while a broken one is being replaced."""

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
    keys = ", ".join(["(%s, %s, %s, %s)"] * count)
    return (
        f"SELECT table_id, {_STORED_COLUMNS} FROM dynastore_items"
        f" WHERE (table_id, pk_hash, pk, sk) IN ({keys})"
    )


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

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = describe_location(url)
        self._writes = 0
        self._depth = 0
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
            max_size=POOL_MAX_CONNECTIONS,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS},
            configure=_configure,
            open=False,
            check=ConnectionPool.check_connection,
            name="dynastore",
        )
        self._pool.open()
        self._connection: psycopg.Connection[Any] | None = None
        self._listener: psycopg.Connection[Any] | None = None
        """The connection that LISTENs for catalogue changes of other servers
        (opened before the catalogue is first loaded, so no change is missed)."""
        try:
            self._listener = self._listen()
        except psycopg.Error:
            self._listener = None  # polled later: a missing listener reads as a change

    # --- connections -------------------------------------------------------------
    def _take(self) -> psycopg.Connection[Any]:
        """The connection serving this process (taken from the pool when needed)."""
        connection = self._connection
        if connection is None or connection.closed:
            if connection is not None:
                self._pool.putconn(connection)
            try:
                connection = self._pool.getconn(timeout=CONNECT_TIMEOUT_SECONDS)
            except PoolTimeout as error:
                raise StorageUnavailable(f"cannot connect to {self.location}") from error
            self._connection = connection
        return connection

    def _broken(self, error: psycopg.Error) -> StorageUnavailable:
        """The connection failed: hand it back (the pool replaces it) and
        report the request as unavailable."""
        connection, self._connection = self._connection, None
        self._depth = 0
        if connection is not None:
            try:
                self._pool.putconn(connection)
            except Exception:  # the pool is closing
                pass
        logger.warning("lost the connection to %s: %s", self.location, error)
        return StorageUnavailable(f"{self.location}: {error}")

    def _execute(self, query: str, parameters: Any = None) -> psycopg.Cursor[Any]:
        connection = self._take()
        try:
            return connection.cursor(binary=True).execute(query, parameters, prepare=True)
        except psycopg.OperationalError as error:
            if connection.closed or connection.broken:
                raise self._broken(error) from error
            raise

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
        )

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

    def update_table_metadata(self, table_id: int, metadata: bytes) -> int:
        self._writes += 1
        with self.transaction():
            self._lock_table(table_id)
            found = self._execute(
                "UPDATE dynastore_tables SET metadata = %s, generation = generation + 1"
                " WHERE table_id = %s RETURNING generation",
                (metadata, table_id),
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

    def catalogue_changed_elsewhere(self) -> bool:
        """Polls the listening connection (a non-blocking read: well under a
        microsecond when nothing came). A listener that broke is replaced,
        and since it may have missed a notification, that counts as a change."""
        listener = self._listener
        try:
            if listener is None or listener.closed:
                self._listener = self._listen()
                return True
            pgconn = listener.pgconn
            pgconn.consume_input()
            changed = False
            while pgconn.notifies() is not None:
                changed = True
            return changed
        except psycopg.Error:
            self._close_listener()
            return True

    def _listen(self) -> psycopg.Connection[Any]:
        listener = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        listener.execute(f"LISTEN {CATALOGUE_CHANNEL}")
        return listener

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
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
    def read_for_write(self, keys: Sequence[RowKey]) -> list[Stored]:
        """The rows at ``keys`` with their versions (xmin), in one statement:
        one snapshot, one round trip."""
        if not keys:
            return []
        if len(keys) == 1:
            table_id, pk, sk = keys[0]
            found = self._execute(_READ_ONE_FOR_WRITE, (table_id, partition_hash(pk), pk, sk)).fetchone()
            return [_stored(found)]
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

    def commit(self, commit: Commit) -> None:
        """One database transaction (storage/postgres/commit.py): one round
        trip, two with a Sequenced part; inside an open ``transaction()``
        block the statements run in it."""
        statements, cleanup = commit_sql.statements(commit)
        self._writes += 1
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

    def _commit_failed(self, connection: psycopg.Connection[Any], commit: Commit, error: psycopg.Error) -> Exception:
        """The exception a failed commit is: a conflict, a changed catalogue,
        or the store being unavailable."""
        if connection.closed or connection.broken:
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

    def close(self) -> None:
        self._close_listener()
        connection, self._connection = self._connection, None
        if connection is not None:
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


class _TransactionBlock:
    """BEGIN/COMMIT for the outermost block, a savepoint for a nested one."""

    __slots__ = ("_storage", "_depth")

    def __init__(self, storage: PostgresStorage) -> None:
        self._storage = storage
        self._depth = 0

    def __enter__(self) -> None:
        storage = self._storage
        depth = storage._depth
        storage._execute("BEGIN" if depth == 0 else f"SAVEPOINT nested_{depth}")
        self._depth = depth
        storage._depth = depth + 1

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self._storage
        depth = self._depth
        if storage._depth == 0:
            return  # the connection broke inside the block: nothing left to end
        storage._depth = depth
        if exception_type is None:
            storage._execute("COMMIT" if depth == 0 else f"RELEASE nested_{depth}")
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
