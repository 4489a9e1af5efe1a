"""The storage interface: what every backend (memory, sqlite, later postgres)
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

Atomicity
    Every single write call commits on its own. Inside ``with
    storage.transaction():`` all writes (across any tables) commit together or
    not at all; an exception rolls every one of them back. Callers serialise
    access (the server runs operations one at a time), so a read followed by a
    write is atomic as long as both happen inside one operation.

Durability
    A write that returned has reached the operating system: it survives a
    kill -9 of the process.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
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


@dataclass(frozen=True)
class TableRecord:
    table_id: int
    name: str
    metadata: bytes  # JSON owned by dynastore.engine.schema


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

    @abstractmethod
    def update_table_metadata(self, table_id: int, metadata: bytes) -> None: ...

    @abstractmethod
    def drop_table(self, table_id: int) -> None:
        """Remove the table and all of its items."""

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
    def close(self) -> None: ...


HASH_SPACE = 1 << 32
"""pk_hash values lie in ``range(HASH_SPACE)``."""
