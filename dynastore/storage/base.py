"""The storage interface: what every backend (memory, sqlite, postgres)
provides. Storage speaks tables ids, encoded keys and opaque item bytes; it
knows nothing of DynamoDB's types or expressions.

Keys
    ``pk`` and ``sk`` are order-preserving encodings (dynastore.types.keys):
    comparing them as unsigned bytes gives DynamoDB's sort order. A table
    without a sort key stores ``sk = b""``. ``pk_hash`` is a 32-bit unsigned
    hash of ``pk`` (dynastore.types.keys.partition_hash); Scan walks items in
    ``(pk_hash, pk, sk)`` order, so parallel-scan segments are hash ranges.

Items
    ``item`` is the item serialised as DynamoDB JSON (the wire format), so a
    read can hand the bytes to the client without decoding them. ``size`` is
    the item's DynamoDB size in bytes, kept so reads can count capacity and the
    1 MB page limit without decoding.

Conditional commits (the write path, dynastore/write_path.py)
    Item writes read the rows they replace with ``read_for_write`` and
    change them with one ``commit``: its changes apply together or not at
    all, and each change may name what it expects of the stored row (the
    version read, or that none exists). On a store that other servers share
    (``exclusive`` False: PostgreSQL) a commit whose expectation no longer
    holds changes nothing and raises ``WriteConflict``; the caller reads
    again and applies its pure plan again. An exclusive store runs one
    operation at a time, so nothing can change a row between its read and
    its commit, and expectations are not checked there.

Atomicity
    Every single write call commits on its own. Inside ``with
    storage.transaction():`` all writes (across any tables) commit together or
    not at all; an exception rolls every one of them back. On an exclusive
    store callers serialise access (the server runs operations one at a
    time), so a read followed by a write is atomic as long as both happen
    inside one operation; on a shared store, writes that depend on what they
    read use ``commit``.

Durability
    A write that returned has reached the operating system: it survives a
    kill -9 of the process.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import NamedTuple


class Row(NamedTuple):
    pk_hash: int
    pk: bytes
    sk: bytes
    item: bytes
    size: int


@dataclass(frozen=True)
class SortKeyRange:
    """Bounds on the encoded sort key of a Query; ``None`` means unbounded."""

    low: bytes | None = None
    low_inclusive: bool = True
    high: bytes | None = None
    high_inclusive: bool = True
    prefix: bytes | None = None  # begins_with: sk starts with these bytes


class RowKey(NamedTuple):
    table_id: int
    pk: bytes
    sk: bytes


class Stored(NamedTuple):
    """A row as ``read_for_write`` found it: ``row`` is None when there is
    none. ``version`` is opaque to callers (PostgreSQL: the row version's
    transaction id; 0 on exclusive stores); ``by_transaction`` tells that a
    TransactWriteItems wrote the row last (DynamoDB's conflict rules differ
    for those)."""

    row: Row | None
    version: int = 0
    by_transaction: bool = False


UNCONDITIONAL = -1
"""``RowChange.expected``: write whatever the stored row is (index entries,
queue rows, blind puts)."""
ABSENT: None = None
"""``RowChange.expected``: there must be no stored row."""


class RowChange(NamedTuple):
    """One row written by a commit: ``row`` replaces the stored one, or None
    deletes it. ``expected`` is the ``Stored.version`` read, ``ABSENT`` or
    ``UNCONDITIONAL``."""

    table_id: int
    pk: bytes
    sk: bytes
    row: Row | None
    expected: int | None = UNCONDITIONAL


class RowCheck(NamedTuple):
    """A row a commit reads but does not write (a ConditionCheck, an item a
    backfill indexed): it must still be the version read (``None``: still absent)."""

    table_id: int
    pk: bytes
    sk: bytes
    expected: int | None


class Sequenced(NamedTuple):
    """Rows that can only be computed under a lock on one head row (a stream's
    sequence counter): the store reads ``head`` inside the commit, locked
    until it ends, and writes what ``build(head_row)`` returns."""

    head: RowKey
    build: Callable[[Row | None], list[RowChange]]


@dataclass(slots=True)
class Commit:
    """Everything one write request changes, applied all or nothing.

    ``generations`` maps each DynamoDB table the changes were computed for to
    the catalogue generation its schema had (``TableRecord.generation``): on
    a shared store a table changed meanwhile (an index added by another
    server) makes the commit raise ``CatalogueChanged`` instead."""

    changes: list[RowChange] = field(default_factory=list)
    checks: list[RowCheck] = field(default_factory=list)
    sequenced: list[Sequenced] = field(default_factory=list)
    by_transaction: bool = False
    generations: dict[int, int] = field(default_factory=dict)


class WriteConflict(Exception):
    """A commit's expectation did not hold: another server changed the row
    since it was read. Nothing was written. ``position`` indexes
    ``Commit.changes`` followed by ``Commit.checks``."""

    def __init__(self, position: int, by_transaction: bool = False) -> None:
        super().__init__(f"write conflict at change {position}")
        self.position = position
        self.by_transaction = by_transaction
        """The row was last written by a TransactWriteItems (when known)."""


class CatalogueChanged(Exception):
    """A commit was computed for a table whose definition another server
    changed meanwhile: nothing was written; reload the catalogue and run the
    request again."""


@dataclass(frozen=True)
class TableRecord:
    table_id: int
    name: str
    metadata: bytes  # JSON owned by dynastore.engine.schema
    generation: int = 0
    """Grows with every change of the record (``Storage.update_table_metadata``)."""


class Storage(ABC):
    exclusive: bool = True
    """True when this process alone uses the store and runs its operations one
    at a time (memory, SQLite): the requests of a loop turn may then share one
    transaction (group commit, ADR 0002). False for a store that several
    servers share (PostgreSQL): each request commits on its own."""

    # --- catalogue ---------------------------------------------------------
    @abstractmethod
    def load_tables(self) -> list[TableRecord]:
        """Every table, in creation order."""

    @abstractmethod
    def create_table(self, name: str, metadata: bytes) -> int:
        """Register a table and return its new, never-reused table id."""

    first_generation: int = 0
    """``TableRecord.generation`` of a table just created (shared stores count from 1, exclusive ones from 0)."""

    @abstractmethod
    def update_table_metadata(self, table_id: int, metadata: bytes, expected_generation: int | None = None) -> int:
        """Replace a table's metadata; returns its new generation. With
        ``expected_generation``, a compare-and-set: only while the table's
        generation is still that one, else ``CatalogueChanged`` and nothing
        is written (another server, or a stale copy in this one, changed the
        table since it was read: read it again and redo the change). Every
        store keeps generations, exclusive ones too (memory, SQLite: from
        ``first_generation``, one more per change or rename), so the
        contract is one: a change computed from an older definition than the
        stored one is refused, whoever made the newer one. A missing table
        is KeyError."""

    @abstractmethod
    def table_generation(self, table_id: int) -> int | None:
        """The table's generation as stored now (None: no such table, it was
        dropped): for a background job that read a page of a table outside
        its lock and must know, under the lock, whether the table is still
        there (an empty read of a dropped table looks like its end)."""

    def lock_table(self, table_id: int) -> None:
        """Inside ``transaction()``: hold the table's lock until the
        transaction ends. On a shared store, other servers' commits to the
        table and changes of its definition wait for it meanwhile (take it
        before anything else the transaction locks: the table's lock first,
        then catalogue rows, as every catalogue change does). Nothing to do
        on an exclusive store: it runs one operation at a time."""
        return None

    @abstractmethod
    def drop_table(self, table_id: int) -> None:
        """Remove the table and all of its items."""

    @abstractmethod
    def rename_table(self, table_id: int, name: str) -> int:
        """Give a table another name (its id, metadata and items stay); returns
        its new generation. Inside ``transaction()`` several renames appear
        together: a restore builds a table under a name of dynastore's own,
        then gives it and its indexes their real names at once
        (dynastore/backups/restore.py)."""

    # --- items -------------------------------------------------------------
    @abstractmethod
    def get(self, table_id: int, pk: bytes, sk: bytes) -> Row | None: ...

    @abstractmethod
    def put(self, table_id: int, row: Row) -> None:
        """Insert or replace the item at ``(row.pk, row.sk)``."""

    @abstractmethod
    def delete(self, table_id: int, pk: bytes, sk: bytes) -> None: ...

    @abstractmethod
    def query(
        self,
        table_id: int,
        pk: bytes,
        sort_range: SortKeyRange,
        forward: bool = True,
        exclusive_start_sk: bytes | None = None,
        expected_rows: int | None = None,
    ) -> Iterator[Row]:
        """Items of one partition in sort-key order (reversed if not forward),
        starting after ``exclusive_start_sk``. The iterator may be abandoned
        at any point; it must not hold locks that block writes once dropped.
        ``expected_rows`` is a hint (a Query's Limit): the backend reads that
        many first (at most FIRST_CHUNK_ROWS) instead of a whole first chunk;
        the iterator still yields every row if the caller reads on."""

    @abstractmethod
    def scan(
        self,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: tuple[int, bytes, bytes] | None = None,
    ) -> Iterator[Row]:
        """Items with ``hash_low <= pk_hash < hash_high`` in ``(pk_hash, pk, sk)``
        order, starting after ``exclusive_start = (pk_hash, pk, sk)``."""

    @abstractmethod
    def table_statistics(self, table_id: int) -> tuple[int, int]:
        """(item count, total item size in bytes)."""

    # --- atomicity and lifecycle -----------------------------------------
    @abstractmethod
    def write_count(self) -> int:
        """How many writes this store has made since it opened: it only grows
        (a write a rollback undid still counted). The server compares two
        readings to tell whether a group of requests wrote anything (ADR 0002)."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all. May be nested; only
        the outermost block commits."""

    @abstractmethod
    def after_rollback(self, undo: Callable[[], object]) -> None:
        """Call ``undo`` if the innermost transaction block open here is rolled
        back (or, after it ended well, an enclosing one is); outside any block,
        never: what was written is committed already. For state kept beside
        the store that must stay in step with what the store kept: the
        Database's copy of the catalogue (a definition it took for a change
        that was rolled back must not outlive the change). Undo actions run
        newest first."""

    # --- a catalogue other servers change (shared stores) ------------------------
    def catalogue_version(self) -> int:
        """A number that changes whenever any server changes the catalogue
        (0, always, on an exclusive store: only this process changes it)."""
        return 0

    def catalogue_changes(self) -> int:
        """How many catalogue changes other servers have announced so far
        (without waiting: a shared store polls its notifications); a reader
        compares it with the count it last saw."""
        return 0

    def snapshot(self, expected_rows: int | None = None) -> AbstractContextManager[None]:
        """Reads inside see one snapshot of the store: a Query or Scan page
        is one consistent view, even read in several chunks. An exclusive
        store runs one operation at a time: every read is one view already.
        ``expected_rows``: how many rows the reads expect (a Limit): a page
        of one chunk needs no snapshot of its own."""
        return nullcontext()

    def bulk_reads(self) -> AbstractContextManager[None]:
        """Query and Scan inside are a background job's reads of a whole
        table, a page at a time (a backup, an export, a restore): a store may
        serve them apart from the requests' reads (SQLite: a connection that
        maps none of the file, so they do not fill the process's RSS). They
        may not see the writes of a transaction still open on this store;
        the jobs read committed views only. Everything else is unchanged."""
        return nullcontext()

    def pause(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry (a shared store lets the server's
        other requests run meanwhile)."""
        time.sleep(seconds)

    def hold_lock(self, name: str) -> bool:
        """Take, or keep holding, the lock ``name`` that one server at a time
        may hold: background work that must run once across servers (the TTL
        sweeper, stream triggers, a backfill) runs only where it is held. It
        goes when this process ends or loses its connection, so another
        server takes the work over. Always True on an exclusive store."""
        return True

    def release_lock(self, name: str) -> None:
        """Give up the lock ``name`` (``hold_lock``): the next ``hold_lock``
        asks the store again instead of answering from memory. Nothing on an
        exclusive store."""
        return None

    # --- the write path ---------------------------------------------------------
    def read_for_write(self, keys: Sequence[RowKey], lock: bool = False) -> list[Stored]:
        """The rows at ``keys`` (in one read where the store can), with what
        a later ``commit`` needs to tell whether they changed. With ``lock``
        (inside ``transaction()``, on a shared store) the rows are also
        locked until the transaction ends, so a commit inside it cannot lose
        them to another writer."""
        return [Stored(self.get(*key)) for key in keys]

    def commit(self, commit: Commit) -> None:
        """Apply ``commit`` all or nothing (see the module docstring). An
        exclusive store checks no expectation: nothing else writes to it."""
        with self.transaction():
            self._apply(commit.changes)
            for sequenced in commit.sequenced:
                head = sequenced.head
                self._apply(sequenced.build(self.get(head.table_id, head.pk, head.sk)))

    def _apply(self, changes: Sequence[RowChange]) -> None:
        for change in changes:
            if change.row is not None:
                self.put(change.table_id, change.row)
            else:
                self.delete(change.table_id, change.pk, change.sk)

    @abstractmethod
    def close(self) -> None: ...


HASH_SPACE = 1 << 32
"""pk_hash values lie in ``range(HASH_SPACE)``."""


def run_undo(actions: list[Callable[[], object]], mark: int) -> None:
    """Run (newest first) and forget the after_rollback actions from ``mark`` on."""
    while len(actions) > mark:
        actions.pop()()
