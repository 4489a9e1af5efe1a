"""The in-memory backend: what ``--in-memory`` and ``dynastore.open()`` use.

Layout, per table::

    partitions       pk -> _Partition(pk, pk_hash, sort_keys, rows)
                     sort_keys: the partition's sort keys, sorted (Query)
                     rows:      sk -> Row (GetItem is two dict lookups)
    partition_order  SortedList of (pk_hash, pk): Scan's order

A Scan walks ``partition_order`` and each partition's sort keys, so it sees
``(pk_hash, pk, sk)`` order without a sorted entry per item; a new partition
costs one O(log n) insertion, a new item an insertion into its partition's
list. ``item_count`` and ``total_size`` are kept as rows come and go, so
DescribeTable never walks a table.

Why not SQLite's ``:memory:``: a point read through sqlite3 costs 10-20 µs of
a GetItem's ~100 µs here; two dict lookups cost well under one (ADR 0001,
"The in-memory store"). SQLite remains the store of a data directory.

Reads follow the SQLite backend's chunk rules (storage/ranges.py): a chunk of
rows is taken at once, the next one starts strictly after the last key
returned, so an iterator kept across writes never breaks and an abandoned one
holds nothing.

Transactions keep an undo log; a nested block marks its position in the log,
so an exception undoes exactly that block (the SQLite backend's SAVEPOINT
semantics). The contract tests run every case against both backends, and a
hypothesis test checks that random operation sequences give both the same
answers.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterator
from types import TracebackType

from sortedcontainers import SortedList  # type: ignore[import-untyped, unused-ignore]

from dynastore.storage.base import HASH_SPACE, Row, SortKeyRange, Storage, TableRecord
from dynastore.storage.ranges import (
    FIRST_CHUNK_ROWS,
    MAX_CHUNK_ROWS,
    Bound,
    first_chunk_rows,
    is_empty_range,
    sort_key_bounds,
)

ScanKey = tuple[int, bytes, bytes]


class _Partition:
    __slots__ = ("pk", "pk_hash", "sort_keys", "rows")

    def __init__(self, pk: bytes, pk_hash: int) -> None:
        self.pk = pk
        """The partition key, one object shared by every row of the partition."""
        self.pk_hash = pk_hash
        self.sort_keys: list[bytes] = []
        self.rows: dict[bytes, Row] = {}


class _Table:
    __slots__ = ("name", "metadata", "partitions", "partition_order", "item_count", "total_size")

    def __init__(self, name: str, metadata: bytes) -> None:
        self.name = name
        self.metadata = metadata
        self.partitions: dict[bytes, _Partition] = {}
        self.partition_order: SortedList = SortedList()
        """(pk_hash, pk) of every partition, sorted."""
        self.item_count = 0
        self.total_size = 0


def _compact(item: bytes) -> bytes:
    """A copy exactly as long as ``item``. orjson returns bytes objects whose
    allocation is several times their length (measured: ~8-16 KiB behind a
    1.2 KB item); kept for the life of the item, that multiplies memory."""
    return bytes(memoryview(item))


class MemoryStorage(Storage):
    def __init__(self) -> None:
        self._tables: dict[int, _Table] = {}
        self._last_table_id = 0
        self._undo_log: list[Callable[[], object]] | None = None
        self._writes = 0

    def _remember(self, undo: Callable[[], object]) -> None:
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
        partition = self._table(table_id).partitions.get(pk)
        return None if partition is None else partition.rows.get(sk)

    def put(self, table_id: int, row: Row) -> None:
        table = self._table(table_id)
        partition = table.partitions.get(row.pk)
        # The rows of a partition share its key and hash objects (~75 bytes an
        # item less than a copy of each per row).
        if partition is None:
            pk, pk_hash = bytes(row.pk), row.pk_hash
        else:
            pk, pk_hash = partition.pk, partition.pk_hash
        sk = bytes(row.sk)
        old = _store(table, Row(pk_hash, pk, sk, _compact(row.item), row.size))
        if old is None:
            self._remember(lambda: _remove(table, pk, sk))
        else:
            self._remember(lambda: _store(table, old))

    def delete(self, table_id: int, pk: bytes, sk: bytes) -> None:
        table = self._table(table_id)
        old = _remove(table, pk, sk)
        if old is not None:
            self._remember(lambda: _store(table, old))

    def query(
        self,
        table_id: int,
        pk: bytes,
        sort_range: SortKeyRange,
        forward: bool = True,
        exclusive_start_sk: bytes | None = None,
        expected_rows: int | None = None,
    ) -> Iterator[Row]:
        table = self._table(table_id)
        lower, upper = sort_key_bounds(sort_range, forward, exclusive_start_sk)
        if is_empty_range(lower, upper):
            return iter(())
        return _query_chunks(table, pk, lower, upper, forward, first_chunk_rows(expected_rows))

    def scan(
        self,
        table_id: int,
        hash_low: int,
        hash_high: int,
        exclusive_start: ScanKey | None = None,
    ) -> Iterator[Row]:
        table = self._table(table_id)
        hash_high = min(hash_high, HASH_SPACE)
        if hash_low >= hash_high:
            return iter(())
        if exclusive_start is not None and exclusive_start < (hash_low, b"", b""):
            exclusive_start = None
        return _scan_chunks(table, hash_low, hash_high, exclusive_start)

    def table_statistics(self, table_id: int) -> tuple[int, int]:
        table = self._table(table_id)
        return table.item_count, table.total_size

    # --- atomicity and lifecycle -------------------------------------------------
    def write_count(self) -> int:
        return self._writes

    def transaction(self) -> _TransactionBlock:
        return _TransactionBlock(self)

    def close(self) -> None:
        self._tables.clear()


def _store(table: _Table, row: Row) -> Row | None:
    """Insert or replace ``row``; returns the row it replaced."""
    partition = table.partitions.get(row.pk)
    if partition is None:
        partition = table.partitions[row.pk] = _Partition(row.pk, row.pk_hash)
        table.partition_order.add((row.pk_hash, row.pk))
    old = partition.rows.get(row.sk)
    if old is None:
        insort(partition.sort_keys, row.sk)
        table.item_count += 1
    else:
        table.total_size -= old.size
    partition.rows[row.sk] = row
    table.total_size += row.size
    return old


def _remove(table: _Table, pk: bytes, sk: bytes) -> Row | None:
    """Delete the row at (pk, sk) if there is one; returns it."""
    partition = table.partitions.get(pk)
    if partition is None:
        return None
    old = partition.rows.pop(sk, None)
    if old is None:
        return None
    sort_keys = partition.sort_keys
    del sort_keys[bisect_left(sort_keys, sk)]
    if not sort_keys:
        del table.partitions[pk]
        table.partition_order.remove((partition.pk_hash, pk))
    table.item_count -= 1
    table.total_size -= old.size
    return old


def _query_chunks(
    table: _Table,
    pk: bytes,
    lower: Bound | None,
    upper: Bound | None,
    forward: bool,
    chunk_rows: int,
) -> Iterator[Row]:
    while True:
        partition = table.partitions.get(pk)
        if partition is None:
            return
        sort_keys = partition.sort_keys
        start = 0
        if lower is not None:
            start = (bisect_left if lower[1] else bisect_right)(sort_keys, lower[0])
        end = len(sort_keys)
        if upper is not None:
            end = (bisect_right if upper[1] else bisect_left)(sort_keys, upper[0])
        if forward:
            selected = sort_keys[start:min(end, start + chunk_rows)]
        else:
            selected = sort_keys[max(start, end - chunk_rows):end][::-1]
        rows = partition.rows
        yield from [rows[sk] for sk in selected]
        if len(selected) < chunk_rows:
            return
        # Continue strictly after the last key returned.
        if forward:
            lower = (selected[-1], False)
        else:
            upper = (selected[-1], False)
        chunk_rows = min(chunk_rows * 2, MAX_CHUNK_ROWS)


def _scan_chunks(
    table: _Table, hash_low: int, hash_high: int, after: ScanKey | None
) -> Iterator[Row]:
    chunk_rows = FIRST_CHUNK_ROWS
    while True:
        order = table.partition_order
        if after is None:
            index = order.bisect_left((hash_low, b""))
        else:  # the partition of ``after`` if it is still there, else the next one
            index = order.bisect_left((after[0], after[1]))
        chunk: list[Row] = []
        while len(chunk) < chunk_rows and index < len(order):
            pk_hash, pk = order[index]
            if pk_hash >= hash_high:
                break
            partition = table.partitions[pk]
            sort_keys = partition.sort_keys
            start = 0
            if after is not None and pk_hash == after[0] and pk == after[1]:
                start = bisect_right(sort_keys, after[2])
            rows = partition.rows
            chunk.extend(rows[sk] for sk in sort_keys[start:start + chunk_rows - len(chunk)])
            index += 1
        yield from chunk
        if len(chunk) < chunk_rows:
            return
        last = chunk[-1]
        after = (last.pk_hash, last.pk, last.sk)
        chunk_rows = min(chunk_rows * 2, MAX_CHUNK_ROWS)


class _TransactionBlock:
    """One ``with storage.transaction():`` block over the undo log."""

    __slots__ = ("_storage", "_mark", "_outermost")

    def __init__(self, storage: MemoryStorage) -> None:
        self._storage = storage
        self._mark = 0
        self._outermost = False

    def __enter__(self) -> None:
        storage = self._storage
        if storage._undo_log is None:
            storage._undo_log = []
            self._outermost = True
        self._mark = len(storage._undo_log)

    def __exit__(
        self,
        exception_type: type[BaseException] | None,
        exception: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self._storage
        log = storage._undo_log
        assert log is not None
        if exception_type is not None:
            while len(log) > self._mark:
                log.pop()()
        if self._outermost:
            storage._undo_log = None
