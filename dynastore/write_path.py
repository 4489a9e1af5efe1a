"""The one write path: every API that changes items goes through ``write``.

    request -> validated plans (ops/)
            -> one read of the rows the plans replace   (Storage.read_for_write)
            -> pure apply: the new rows                 (the caller's ``decide``)
            -> what follows a change: index entries, the stream record, GSI
               outbox rows                             (engine/indexes, streams_api/store)
            -> one storage commit holding all of it, conditional on the rows
               read still being the ones read           (Storage.commit)

PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems, the TTL
sweeper, GSI backfill, the lagged-GSI outbox and restores all write this
way, so no writer can forget an index entry, a stream record or a
point-in-time-recovery log row (dynastore/backups/pitr.py: a table with a
change log always has the row it replaces read, so the log holds its old
image), and every backend runs the same pipeline (ADR 0004).

On a store other servers share (PostgreSQL) a commit fails with
``WriteConflict`` when another server changed one of its rows after it was
read. The plan is pure, so the write is simply read and decided again; the
rules DynamoDB applies on top (docs/postgres.md, "Conflicts"):

- a single-item write that lost its row to a TransactWriteItems gets
  TransactionConflictException ("Transaction is ongoing for the item");
  one that lost it to another single-item write is retried, so concurrent
  conditional writes have exactly one winner and no ``ADD`` is lost;
- a transaction that lost an item to another transaction is cancelled with
  TransactionConflict for that item; to a single-item write, it is retried.

An exclusive store (memory, SQLite) runs one operation at a time, so its
commits never conflict and ``decide`` runs once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.backups.pitr import CHANGE_LOG_EXTENSION, log_change
from dynastore.engine import indexes as index_engine
from dynastore.engine.streams import STREAM_EXTENSION
from dynastore.errors import TransactionConflictException, ValidationException
from dynastore.replication.queue import replication_changes
from dynastore.replication.replicas import REPLICATION_EXTENSION
from dynastore.storage.base import (
    ABSENT,
    UNCONDITIONAL,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    Stored,
    WriteConflict,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema


class _Delete:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DELETE"


DELETE: Any = _Delete()
"""A decision: delete the target's row."""

Decision = Row | _Delete | None
"""What ``decide`` answers per target: the new row, DELETE, or None (write
nothing: a ConditionCheck, a failed condition already raised, a delete of
nothing)."""


@dataclass(slots=True)
class Target:
    """One row a write request may change.

    ``schema`` is the DynamoDB table the row is an item of (its indexes and
    stream follow the change); None for a plain storage row of dynastore's
    own (a transaction's ClientRequestToken), written as it is. ``reads_old``
    False makes a blind write: the old row is neither read nor expected
    (PutItem without condition or return values on a table without indexes
    or stream)."""

    table_id: int
    pk: bytes
    sk: bytes
    schema: TableSchema | None = None
    reads_old: bool = True
    by_service: bool = False
    """A deletion by DynamoDB itself (TTL): its stream record says so."""
    replicated_from: str | None = None
    """A global table's write arriving from the replica in this region
    (dynastore/replication/): it is not replicated again."""


@dataclass(slots=True)
class Written:
    """The outcome for one target: the row before and after (None: absent),
    and the write capacity its index entries cost (None: no index)."""

    old_row: Row | None
    new_row: Row | None
    index_units: index_engine.IndexUnits | None = None


class InvalidChange(Exception):
    """A decided row cannot be written (an index key of the wrong type):
    ``position`` is the target, ``error`` DynamoDB's ValidationException."""

    def __init__(self, position: int, error: ValidationException) -> None:
        super().__init__(error.message)
        self.position = position
        self.error = error


Decide = Callable[[list[Row | None], frozenset[int]], Sequence[Decision]]
"""``decide(old_rows, conflicted) -> decisions``: the pure step, run again
after a conflict. ``conflicted`` holds the targets a transaction lost to
another transaction (decide cancels the transaction for them). It may raise
a DynamoDBError: nothing is written."""


SINGLE_ITEM = "single-item"
"""Conflict rules of PutItem, UpdateItem, DeleteItem (module docstring)."""
TRANSACTION = "transaction"
"""Conflict rules of TransactWriteItems: ``decide`` cancels for ``conflicted``."""
RETRY_ALL = "retry"
"""Retry every conflict (BatchWriteItem, the TTL sweeper, backfill)."""


def write(
    database: Database,
    targets: Sequence[Target],
    decide: Decide,
    *,
    conflicts: str = SINGLE_ITEM,
    index_lag: bool = True,
    checks: Sequence[RowCheck] = (),
) -> list[Written]:
    """Read, decide, commit; again after a conflict (module docstring).
    ``index_lag`` False writes GSI entries with the items even under
    --gsi-lag-ms (a restore, into a table not yet in the catalogue).
    ``checks``: rows the commit expects at versions read before (the Redis
    keyspace's lease row, redis/lease.py): another writer's change to one
    of them makes the commit conflict."""
    storage = database.storage
    conflicted: frozenset[int] = frozenset()
    attempts = limits.WRITE_CONFLICT_ATTEMPTS
    transaction = conflicts == TRANSACTION
    for attempt in range(1, attempts + 1):
        if not transaction and attempt > limits.WRITE_OPTIMISTIC_ATTEMPTS and not storage.exclusive:
            try:
                return _write_locked(database, targets, decide, index_lag, checks)
            except WriteConflict as conflict:
                if conflict.by_transaction and conflicts == SINGLE_ITEM:
                    raise TransactionConflictException() from None
                _back_off(storage, attempt)
                continue
        stored = _read(storage, targets)
        decisions = decide([None if entry is None else entry.row for entry in stored], conflicted)
        commit, written = _build(database, targets, stored, decisions, transaction, index_lag)
        commit.checks.extend(checks)
        try:
            storage.commit(commit)
        except WriteConflict as conflict:
            if transaction:
                # The transaction lost an item to another transaction (or kept
                # losing): the next decide cancels it with TransactionConflict.
                if conflict.by_transaction or attempt >= attempts - 1:
                    conflicted = frozenset((min(conflict.position, len(targets) - 1),))
            elif conflicts == SINGLE_ITEM and (conflict.by_transaction or attempt == attempts):
                raise TransactionConflictException() from None
            _back_off(storage, attempt)
            continue
        return written
    raise TransactionConflictException()


def _write_locked(
    database: Database, targets: Sequence[Target], decide: Decide, index_lag: bool = True,
    checks: Sequence[RowCheck] = (),
) -> list[Written]:
    """A write that kept losing its rows to others (a hot key): read them
    locked, inside one transaction, and commit inside it, so it cannot lose
    them again (it waits its turn; a lock wait is bounded by the store)."""
    storage = database.storage
    with storage.transaction():
        stored = _read(storage, targets, lock=True)
        decisions = decide([None if entry is None else entry.row for entry in stored], frozenset())
        commit, written = _build(database, targets, stored, decisions, False, index_lag)
        commit.checks.extend(checks)
        storage.commit(commit)
    return written


def _back_off(storage: Any, attempt: int) -> None:
    """A short random pause before a retry, longer after each conflict, so
    servers that keep colliding on one hot key spread out."""
    if attempt > 1:
        storage.pause(random.uniform(0, limits.WRITE_CONFLICT_BACKOFF_SECONDS * attempt))


def _read(storage: Any, targets: Sequence[Target], lock: bool = False) -> list[Stored | None]:
    reads = [t.reads_old or _logged(t) for t in targets]
    keys = [RowKey(t.table_id, t.pk, t.sk) for t, read in zip(targets, reads, strict=True) if read]
    found = iter(storage.read_for_write(keys, lock) if keys else ())
    return [next(found) if read else None for read in reads]


def _logged(target: Target) -> bool:
    """The target's table keeps a change log (PITR, a backup in progress)."""
    return target.schema is not None and CHANGE_LOG_EXTENSION in target.schema.extensions


@dataclass(slots=True)
class _StreamAppends:
    """The stream records one commit appends to one stream."""

    schema: TableSchema
    changes: list[tuple[Row | None, Row | None, bool]] = field(default_factory=list)


def _build(
    database: Database,
    targets: Sequence[Target],
    stored: list[Stored | None],
    decisions: Sequence[Decision],
    transaction: bool,
    index_lag: bool = True,
) -> tuple[Commit, list[Written]]:
    commit = Commit(by_transaction=transaction)
    written: list[Written] = []
    derived: list[RowChange] = []
    streams: dict[int, _StreamAppends] = {}
    for position, (target, entry, decision) in enumerate(zip(targets, stored, decisions, strict=True)):
        old_row = None if entry is None else entry.row
        expected = UNCONDITIONAL if entry is None else (ABSENT if old_row is None else entry.version)
        new_row = decision if isinstance(decision, Row) else None
        if decision is None or (decision is DELETE and entry is not None and old_row is None):
            written.append(Written(old_row, old_row))
            if transaction and entry is not None:
                commit.checks.append(RowCheck(target.table_id, target.pk, target.sk, expected))
            continue
        commit.changes.append(RowChange(target.table_id, target.pk, target.sk, new_row, expected))
        schema = target.schema
        units = None
        if schema is not None:
            commit.generations[schema.table_id] = schema.generation
            if schema.indexes:
                units = _index_changes(database, schema, old_row, new_row, position, derived, index_lag)
            if STREAM_EXTENSION in schema.extensions:
                appends = streams.setdefault(schema.table_id, _StreamAppends(schema))
                appends.changes.append((old_row, new_row, target.by_service))
            log = schema.extensions.get(CHANGE_LOG_EXTENSION)
            if log is not None:
                derived.append(log_change(database, log, old_row, target.pk, target.sk))
            if REPLICATION_EXTENSION in schema.extensions and target.replicated_from is None:
                # A global table: the item's version and its way to the other replicas
                # (a transaction's items one after the other: they arrive item by item).
                derived.extend(replication_changes(database, schema, target.pk, target.sk, new_row, target.by_service,
                                                   position if transaction else 0))
        written.append(Written(old_row, new_row, units))
    commit.changes.extend(derived)
    for appends in streams.values():
        sequenced = database.streams.appends(appends.schema, appends.changes)
        if sequenced is not None:
            commit.sequenced.append(sequenced)
    return commit, written


def _index_changes(
    database: Database,
    schema: TableSchema,
    old_row: Row | None,
    new_row: Row | None,
    position: int,
    out: list[RowChange],
    index_lag: bool = True,
) -> index_engine.IndexUnits:
    """The index entry rows that follow one item change (GSI entries as
    outbox rows instead under --gsi-lag-ms); returns their write capacity."""
    old_item = orjson.loads(old_row.item) if old_row is not None else None
    new_item = orjson.loads(new_row.item) if new_row is not None else None
    try:
        changes = index_engine.index_changes(schema, old_item, new_item, old_row, new_row)
    except ValidationException as error:
        raise InvalidChange(position, error) from None
    lagging = index_lag and database.gsi_lag_seconds > 0
    row = new_row if new_row is not None else old_row
    assert row is not None
    for change in changes:
        if lagging and change.index.is_global:
            out.append(database.outbox_row(schema, change.index, row.pk, row.sk, change.delete))
            continue
        storage_id = change.index.storage_id
        if change.delete is not None and (change.put is None or change.delete != (change.put.pk, change.put.sk)):
            out.append(RowChange(storage_id, *change.delete, None))
        if change.put is not None:
            out.append(RowChange(storage_id, change.put.pk, change.put.sk, change.put))
    return index_engine.units_of(changes)


def write_one(database: Database, target: Target, decide_one: Callable[[Row | None], Decision]) -> Written:
    """``write`` for a single-item request (PutItem, UpdateItem, DeleteItem):
    an index key the item cannot have is the request's ValidationException."""
    try:
        return write(database, (target,), lambda rows, _: (decide_one(rows[0]),))[0]
    except InvalidChange as refused:
        raise refused.error from None


def item_target(schema: TableSchema, pk: bytes, sk: bytes, reads_old: bool = True, by_service: bool = False) -> Target:
    return Target(schema.table_id, pk, sk, schema, reads_old, by_service)
