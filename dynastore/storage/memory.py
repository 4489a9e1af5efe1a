"""A pure-Python reference backend: dicts for rows, sorted lists for order.

It exists to be obviously correct, not fast: the contract tests run every
case against it and against SQLite, and a hypothesis test checks that random
operation sequences give both the same answers. Transactions keep an undo log;
a nested block marks its position in the log so an exception undoes exactly
that block (the same savepoint semantics as the SQLite backend).

Iterators re-locate their position with bisect at every step, so writes made
while an iterator is alive never break it (they may or may not be seen, as
with SQLite's chunked reads).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dynastore.storage.base import HASH_SPACE, Row, SortKeyRange, Storage, TableRecord

ScanKey = tuple[int, bytes, bytes]


def _range_predicate(sort_range: SortKeyRange) -> Callable[[bytes], bool]:
    """SortKeyRange's meaning, written plainly (the SQLite backend derives SQL
    bounds instead; the contract tests check that both agree)."""
    low, high, prefix = sort_range.low, sort_range.high, sort_range.prefix

    def matches(sk: bytes) -> bool:
        if low is not None and (sk < low or (sk == low and not sort_range.low_inclusive)):
            return False
        if high is not None and (sk > high or (sk == high and not sort_range.high_inclusive)):
            return False
        return prefix is None or sk.startswith(prefix)

    return matches


@dataclass
class _Table:
    name: str
    metadata: bytes
    rows: dict[tuple[bytes, bytes], Row] = field(default_factory=dict)
    partitions: dict[bytes, list[bytes]] = field(default_factory=dict)
    """pk -> sorted sort keys of that partition."""
    scan_order: list[ScanKey] = field(default_factory=list)
    """Every (pk_hash, pk, sk), sorted: Scan's order."""


class MemoryStorage(Storage):
    def __init__(self) -> None:
        self._tables: dict[int, _Table] = {}
        self._last_table_id = 0
        self._undo_log: list[Callable[[], None]] | None = None
        self._writes = 0

    def _remember(self, undo: Callable[[], None]) -> None:
        """Every write comes through here: count it, and log its undo inside a transaction."""
        self._writes += 1
        if self._undo_log is not None:
            self._undo_log.append(undo)

    # --- catalogue ---------------------------------------------------------------
    def load_tables(self) -> list[TableRecord]:
        return [
            TableRecord(table_id, table.name, table.metadata)
            for table_id, table in sorted(self._tables.items())
        ]

    def create_table(self, name: str, metadata: bytes) -> int:
        previous_last_id = self._last_table_id
        self._last_table_id += 1
        table_id = self._last_table_id
        self._tables[table_id] = _Table(name, bytes(metadata))

        def undo() -> None:
            del self._tables[table_id]
            self._last_table_id = previous_last_id

        self._remember(undo)
        return table_id

    def update_table_metadata(self, table_id: int, metadata: bytes) -> None:
        table = self._table(table_id)
        old = table.metadata
        table.metadata = bytes(metadata)
        self._remember(lambda: setattr(table, "metadata", old))

    def drop_table(self, table_id: int) -> None:
        table = self._table(table_id)
        del self._tables[table_id]
        self._remember(lambda: self._tables.__setitem__(table_id, table))

    def _table(self, table_id: int) -> _Table:
        table = self._tables.get(table_id)
        if table is None:
            raise KeyError(f"no table with id {table_id}")
        return table

    # --- items -------------------------------------------------------------------
    def get(self, table_id: int, pk: bytes, sk: bytes) -> Row | None:
        return self._table(table_id).rows.get((pk, sk))

    def put(self, table_id: int, row: Row) -> None:
        table = self._table(table_id)
        old = table.rows.get((row.pk, row.sk))
        self._store(
            table, Row(row.pk_hash, bytes(row.pk), bytes(row.sk), bytes(row.item), row.size)
        )
        self._remember(lambda: self._restore(table, row.pk, row.sk, old))

    def delete(self, table_id: int, pk: bytes, sk: bytes) -> None:
        table = self._table(table_id)
        old = table.rows.get((pk, sk))
        if old is None:
            return
        self._remove(table, old)
        self._remember(lambda: self._store(table, old))

    def _store(self, table: _Table, row: Row) -> None:
        key = (row.pk, row.sk)
        if key not in table.rows:
            sort_keys = table.partitions.setdefault(row.pk, [])
            bisect.insort(sort_keys, row.sk)
            bisect.insort(table.scan_order, (row.pk_hash, row.pk, row.sk))
        table.rows[key] = row

    def _remove(self, table: _Table, row: Row) -> None:
        del table.rows[(row.pk, row.sk)]
        sort_keys = table.partitions[row.pk]
        del sort_keys[bisect.bisect_left(sort_keys, row.sk)]
        if not sort_keys:
            del table.partitions[row.pk]
        scan_key = (row.pk_hash, row.pk, row.sk)
        del table.scan_order[bisect.bisect_left(table.scan_order, scan_key)]

    def _restore(self, table: _Table, pk: bytes, sk: bytes, old: Row | None) -> None:
        current = table.rows.get((pk, sk))
        if current is not None:
            self._remove(table, current)
        if old is not None:
            self._store(table, old)

    def query(
        self,
        table_id: int,
        pk: bytes,
        sort_range: SortKeyRange,
        forward: bool = True,
        exclusive_start_sk: bytes | None = None,
    ) -> Iterator[Row]:
        table = self._table(table_id)
        return self._query(table, pk, _range_predicate(sort_range), forward, exclusive_start_sk)

    def _query(
        self,
        table: _Table,
        pk: bytes,
        matches: Callable[[bytes], bool],
        forward: bool,
        last: bytes | None,
    ) -> Iterator[Row]:
        """Walk the partition's sorted keys from just past ``last``, yielding
        the ones ``matches`` accepts. Keys in a range are contiguous, so the
        walk skips non-matching keys only before the first and after the last
        match: linear overall."""
        while True:
            sort_keys = table.partitions.get(pk, [])
            if forward:
                first = 0 if last is None else bisect.bisect_right(sort_keys, last)
                indexes = range(first, len(sort_keys))
            else:
                first = len(sort_keys) if last is None else bisect.bisect_left(sort_keys, last)
                indexes = range(first - 1, -1, -1)
            found = next((sort_keys[i] for i in indexes if matches(sort_keys[i])), None)
            if found is None:
                return
            yield table.rows[(pk, found)]
            last = found

    def scan(
        self,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: tuple[int, bytes, bytes] | None = None,
    ) -> Iterator[Row]:
        table = self._table(table_id)
        return self._scan(table, hash_low, min(hash_high, HASH_SPACE), exclusive_start)

    def _scan(
        self,
        table: _Table,
        hash_low: int,
        hash_high: int,
        exclusive_start: ScanKey | None,
    ) -> Iterator[Row]:
        start_key: ScanKey = (hash_low, b"", b"")
        index = bisect.bisect_left(table.scan_order, start_key)
        if exclusive_start is not None and exclusive_start >= start_key:
            index = bisect.bisect_right(table.scan_order, exclusive_start)
        while index < len(table.scan_order):
            scan_key = table.scan_order[index]
            if scan_key[0] >= hash_high:
                return
            yield table.rows[(scan_key[1], scan_key[2])]
            index = bisect.bisect_right(table.scan_order, scan_key)

    def table_statistics(self, table_id: int) -> tuple[int, int]:
        rows = self._table(table_id).rows
        return len(rows), sum(row.size for row in rows.values())

    # --- atomicity and lifecycle -------------------------------------------------
    def write_count(self) -> int:
        return self._writes

    @contextmanager
    def transaction(self) -> Iterator[None]:
        outermost = self._undo_log is None
        if outermost:
            self._undo_log = []
        assert self._undo_log is not None
        log = self._undo_log
        mark = len(log)
        try:
            yield
        except BaseException:
            while len(log) > mark:
                log.pop()()
            if outermost:
                self._undo_log = None
            raise
        if outermost:
            self._undo_log = None

    def close(self) -> None:
        self._tables.clear()
