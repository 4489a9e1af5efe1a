"""The TTL sweeper: deletes expired items, a bounded pass at a time.

``sweep(database, max_items)`` is one pass: for every table with TTL
enabled it walks the table from where the previous pass stopped, collects
items whose TTL attribute is a Number of epoch seconds in the past (and not
more than five years in the past, see dynastore.engine.ttl), and deletes them
through the write path (dynastore/write_path.py) -- so indexes and streams
follow, and the stream's REMOVE record carries DynamoDB's service identity. Sweeper deletes
consume no write capacity. The same pass also trims stream records older
than 24 hours.

Deletion is asynchronous, as in DynamoDB: until a pass reaches it, an
expired item is still returned by every read. On the server a pass is
scheduled on the event loop (``SweeperSchedule``) every
``SWEEP_INTERVAL_SECONDS`` (sooner while a backlog remains), between requests,
so a large expiry never stalls the server for more than one bounded pass.
``POST /_dynastore/ttl/sweep`` (dynastore.admin_time) runs passes on demand.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from itertools import islice
from typing import TYPE_CHECKING

import orjson

from dynastore import limits
from dynastore.engine import ttl
from dynastore.storage.base import HASH_SPACE, Commit, Row, RowChange, RowKey, WriteConflict
from dynastore.storage.errors import StorageUnavailable
from dynastore.write_path import DELETE, RETRY_ALL, Decision, InvalidChange, item_target, write

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

logger = logging.getLogger("dynastore.ttl")

# Candidates for dynastore/limits.py.
SWEEP_INTERVAL_SECONDS = limits.TTL_SWEEP_INTERVAL_SECONDS
"""Seconds between passes when the previous pass found no backlog."""
SWEEP_MAX_ITEMS = limits.TTL_SWEEP_MAX_ITEMS
"""Deletions per pass."""
SWEEP_ROWS_PER_ITEM = limits.TTL_SWEEP_ROWS_PER_ITEM
"""Rows examined per pass: ``max_items * SWEEP_ROWS_PER_ITEM`` at most."""
STREAM_TRIM_ROWS_PER_ITEM = limits.TTL_SWEEP_STREAM_TRIM_ROWS_PER_ITEM
"""Stream records trimmed per pass: ``max_items * STREAM_TRIM_ROWS_PER_ITEM``."""

SWEEPER_LOCK = "ttl-sweeper"
"""The lock (Storage.hold_lock) of the one server that runs the passes."""
CURSOR_JOB_PREFIX = "ttl/"
"""Job names of the cursors kept in storage on a shared store (``ttl/<table id>``)."""

Position = tuple[int, bytes, bytes]
_cursors: weakref.WeakKeyDictionary[Database, dict[int, Position]] = weakref.WeakKeyDictionary()
"""Where the next pass resumes, per database and table storage id."""


def load_cursors(database: Database) -> None:
    """On a shared store, this server's cursors from the ones stored (the
    previous sweeping server's progress)."""
    if database.storage.exclusive:
        return
    cursors = _cursors.setdefault(database, {})
    for schema in list(database.tables.values()):
        if ttl.enabled_attribute(schema.extensions) is not None:
            position = database.job_position(f"{CURSOR_JOB_PREFIX}{schema.table_id}")
            if position is not None:
                cursors[schema.table_id] = position


def save_cursor(database: Database, table_id: int, position: Position | None) -> None:
    """On a shared store, where a table's walk stopped, for whoever sweeps next."""
    if database.storage.exclusive:
        return
    database.storage.commit(Commit(changes=[
        database.job_position_change(f"{CURSOR_JOB_PREFIX}{table_id}", position)
    ]))


def sweep(database: Database, max_items: int = SWEEP_MAX_ITEMS) -> int:
    """One bounded pass; returns the number of expired items deleted."""
    now = database.now()
    swept_tables = [
        (schema, attribute)
        for schema in list(database.tables.values())
        if (attribute := ttl.enabled_attribute(schema.extensions)) is not None
    ]
    deleted = 0
    if swept_tables:
        rows_per_table = max(64, max_items * SWEEP_ROWS_PER_ITEM // len(swept_tables))
        cursors = _cursors.setdefault(database, {})
        for schema, attribute in swept_tables:
            if deleted >= max_items:
                break
            expired = _expired_rows(database, schema, attribute, now, cursors,
                                    rows_per_table, max_items - deleted)
            _delete(database, schema, expired, attribute, now)
            deleted += len(expired)
    database.streams.trim(now, max(1, max_items * STREAM_TRIM_ROWS_PER_ITEM))
    _forget_tokens(database, now, max(64, max_items * SWEEP_ROWS_PER_ITEM))
    database.propagate_index_changes()  # lagged GSI writes other servers queued
    return deleted


def _forget_tokens(database: Database, now: float, max_rows: int) -> None:
    """Delete the ClientRequestTokens past their 10 minutes, walking at most
    ``max_rows`` of them per pass (from where the previous pass stopped)."""
    cursors = _cursors.setdefault(database, {})
    start = cursors.get(database.tokens_id)
    rows = list(islice(database.storage.scan(database.tokens_id, 0, HASH_SPACE, start), max_rows))
    if len(rows) < max_rows:
        cursors.pop(database.tokens_id, None)
    else:
        cursors[database.tokens_id] = (rows[-1].pk_hash, rows[-1].pk, rows[-1].sk)
    if not rows:
        return
    # Imported here: the transaction engine (and the expression parser behind
    # it) stays out of a server's start-up.
    from dynastore.engine.transactions import token_expired

    stale = [row for row in rows if token_expired(row.item, now)]
    if not stale:
        return
    stored = database.storage.read_for_write([RowKey(database.tokens_id, row.pk, row.sk) for row in stale])
    changes = [
        RowChange(database.tokens_id, row.pk, row.sk, None, entry.version)
        for row, entry in zip(stale, stored, strict=True)
        if entry.row is not None and token_expired(entry.row.item, now)
    ]
    try:
        database.storage.commit(Commit(changes=changes))
    except WriteConflict:
        pass  # a token reused meanwhile: the next pass looks again


def sweep_all(database: Database, max_items: int = SWEEP_MAX_ITEMS, max_passes: int = 10_000) -> int:
    """Bounded passes from the start of every table until each has been walked
    to its end: every item expired at the time of the call is gone afterwards.
    For tests and the admin call; returns the number of items deleted."""
    _cursors.pop(database, None)
    total = 0
    for _ in range(max_passes):
        total += sweep(database, max_items)
        if not _cursors.get(database):
            break
    return total


def _expired_rows(
    database: Database,
    schema: TableSchema,
    attribute: str,
    now: float,
    cursors: dict[int, Position],
    max_rows: int,
    max_items: int,
) -> list[Row]:
    """Expired rows among the next ``max_rows`` of the table (wrapping to the
    start once the end is reached); advances the table's cursor."""
    marker = ttl.attribute_marker(attribute)
    start = cursors.get(schema.table_id)
    rows = list(islice(database.storage.scan(schema.table_id, 0, HASH_SPACE, start), max_rows))
    if len(rows) < max_rows:
        cursors.pop(schema.table_id, None)  # reached the end: the next pass starts over
    else:
        last = rows[-1]
        cursors[schema.table_id] = (last.pk_hash, last.pk, last.sk)
    expired: list[Row] = []
    for row in rows:
        if marker in row.item and ttl.is_expired(orjson.loads(row.item), attribute, now):
            expired.append(row)
            if len(expired) >= max_items:
                cursors[schema.table_id] = (row.pk_hash, row.pk, row.sk)
                break
    save_cursor(database, schema.table_id, cursors.get(schema.table_id))
    return expired


def _delete(database: Database, schema: TableSchema, rows: list[Row], attribute: str, now: float) -> None:
    """Delete the expired rows in one commit of the write path, each only if
    it is still expired when read for the delete (another server, or a
    client, may have changed it since the scan)."""
    if not rows:
        return
    targets = [item_target(schema, row.pk, row.sk, by_service=True) for row in rows]

    def decide(current: list[Row | None], _: frozenset[int]) -> list[Decision]:
        return [
            DELETE if row is not None and ttl.is_expired(orjson.loads(row.item), attribute, now) else None
            for row in current
        ]

    try:
        write(database, targets, decide, conflicts=RETRY_ALL)
    except InvalidChange:  # an item an index refuses cannot be in one: nothing to undo
        logger.warning("TTL sweep of %s skipped a batch it could not delete", schema.name)


class SweeperSchedule:
    """Runs ``sweep`` on an event loop every ``interval`` seconds (at once
    again while a pass deleted its full quota). Each pass runs on the loop
    thread between requests, as every operation does (ADR 0000)."""

    def __init__(
        self,
        database: Database,
        loop: asyncio.AbstractEventLoop,
        interval: float = SWEEP_INTERVAL_SECONDS,
        max_items: int = SWEEP_MAX_ITEMS,
    ) -> None:
        self.database = database
        self.loop = loop
        self.interval = interval
        self.max_items = max_items
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._holding = False

    def start(self) -> SweeperSchedule:
        self._handle = self.loop.call_later(self.interval, self._tick)
        return self

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self.database.run_in_background(self._pass)

    def _pass(self) -> None:
        deleted = 0
        try:
            # One server sweeps (and trims streams, forgets tokens) at a time:
            # the one holding the sweeper's lock; another takes over if it goes.
            if self.database.storage.hold_lock(self.database.storage_name(SWEEPER_LOCK)):
                if not self._holding:
                    load_cursors(self.database)  # continue where the previous holder stopped
                    self._holding = True
                deleted = sweep(self.database, self.max_items)
            else:
                self._holding = False
        except StorageUnavailable as error:  # PostgreSQL restarting: the next pass tries again
            logger.warning("TTL sweep pass skipped: %s", error)
            self._holding = False
        except Exception:
            logger.exception("TTL sweep pass failed")
        if self._handle is None:
            return  # stopped while the pass ran
        if deleted >= self.max_items:
            self._handle = self.loop.call_soon(self._tick)
        else:
            self._handle = self.loop.call_later(self.interval, self._tick)
