"""The in-memory backend: what ``--in-memory`` and ``dynastore.open()`` use.

Layout, per table::

    partitions       pk -> _Partition(pk, pk_hash, sort_keys, items, sizes)
                     sort_keys: the partition's sort keys, sorted
                     items:     the stored item of sort_keys[i], at i
                     sizes:     its size (an array of 32-bit unsigned ints)
                     or, for a partition of one row (every partition of a
                     table without a sort key), _Single(pk, pk_hash, sk,
                     item, size)
    partition_order  SortedList of (pk_hash, pk): Scan's order

Rows are not kept as ``Row`` objects: three parallel arrays hold what a row
is beyond its partition, and a ``Row`` is made when one is read. Measured on
100,000 items of 1 KB: a ``Row`` (80 bytes), its size as an int (28), a
dict entry from sort key to row (~47, and the dict's growth leaves holes in
the heap) came to ~14 MiB; the arrays hold the same for ~2 MiB. A GetItem
finds its key by bisection instead of a dict lookup: in a partition of 100,
seven comparisons, each a cache miss on a large table (``get`` of a random
key among 100,000: 0.48 -> 1.4 µs; ADR 0001).

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

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from types import TracebackType

from sortedcontainers import SortedList  # type: ignore[import-untyped, unused-ignore]

from dynastore.storage.base import (
    HASH_SPACE,
    CatalogueChanged,
    Row,
    SortKeyRange,
    Storage,
    TableRecord,
)
from dynastore.storage.ranges import (
    FIRST_CHUNK_ROWS,
    MAX_CHUNK_ROWS,
    Bound,
    first_chunk_rows,
    is_empty_range,
    sort_key_bounds,
)

ScanKey = tuple[int, bytes, bytes]


_new_row = tuple.__new__
"""``Row``'s constructor without the NamedTuple's Python-level ``__new__``
(a row is made on every read: about half the cost)."""

SIZE_TYPECODE = "I"
"""Sizes are unsigned 32-bit: a row is bounded by the 16 MB request limit."""


class _Partition:
    __slots__ = ("pk", "pk_hash", "sort_keys", "items", "sizes")

    def __init__(self, pk: bytes, pk_hash: int) -> None:
        self.pk = pk
        """The partition key, one object shared by every row of the partition."""
        self.pk_hash = pk_hash
        self.sort_keys: list[bytes] = []
        self.items: list[bytes] = []
        self.sizes = array(SIZE_TYPECODE)

    def find(self, sk: bytes) -> int:
        """The index of ``sk`` in ``sort_keys``, or -1."""
        sort_keys = self.sort_keys
        index = bisect_left(sort_keys, sk)
        if index < len(sort_keys) and sort_keys[index] == sk:
            return index
        return -1

    def row(self, index: int) -> Row:
        row: Row = _new_row(
            Row, (self.pk_hash, self.pk, self.sort_keys[index], self.items[index], self.sizes[index])
        )
        return row

    def rows(self, start: int, end: int) -> list[Row]:
        """The rows at ``start:end``, in key order."""
        pk_hash, pk = self.pk_hash, self.pk
        return [
            _new_row(Row, (pk_hash, pk, sk, item, size))
            for sk, item, size in zip(
                self.sort_keys[start:end], self.items[start:end], self.sizes[start:end],
                strict=True,
            )
        ]


class _Single:
    """A partition of one row: a table with no sort key has only these. Same
    reading interface as ``_Partition``, without its three arrays (~290 bytes
    a partition less: 100,000 items of a hash-key table, 629 -> 340 bytes
    each beyond the item's own)."""

    __slots__ = ("pk", "pk_hash", "sk", "item", "size")

    def __init__(self, pk: bytes, pk_hash: int, sk: bytes, item: bytes, size: int) -> None:
        self.pk = pk
        self.pk_hash = pk_hash
        self.sk = sk
        self.item = item
        self.size = size

    @property
    def sort_keys(self) -> list[bytes]:
        return [self.sk]

    def find(self, sk: bytes) -> int:
        return 0 if sk == self.sk else -1

    def row(self, index: int) -> Row:
        row: Row = _new_row(Row, (self.pk_hash, self.pk, self.sk, self.item, self.size))
        return row

    def rows(self, start: int, end: int) -> list[Row]:
        return [self.row(0)] if start <= 0 < end else []


class _Table:
    __slots__ = ("name", "metadata", "generation", "partitions", "partition_order", "item_count", "total_size")

    def __init__(self, name: str, metadata: bytes) -> None:
        self.name = name
        self.metadata = metadata
        self.generation = 0
        """Grows with every change of the record (Storage.update_table_metadata)."""
        self.partitions: dict[bytes, _Partition | _Single] = {}
        self.partition_order: SortedList = SortedList()
        """(pk_hash, pk) of every partition, sorted."""
        self.item_count = 0
        self.total_size = 0


def _compact(item: bytes) -> bytes:
    """A copy exactly as long as ``item``. orjson returns bytes objects whose
    allocation is several times their length (measured: ~8-16 KiB behind a
    1.2 KB item); kept for the life of the item, that multiplies memory.
    The engine's items arrive exact already (engine.rows.encode_item, which
    copies early to keep the heap from fragmenting); the store's other rows
    (streams, the index outbox) may not, and a stored row must be exact."""
    return bytes(memoryview(item))


def _set_record(table: _Table, metadata: bytes, generation: int) -> None:
    table.metadata, table.generation = metadata, generation


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
            TableRecord(table_id, table.name, table.metadata, table.generation)
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

    def update_table_metadata(self, table_id: int, metadata: bytes, expected_generation: int | None = None) -> int:
        table = self._table(table_id)
        if expected_generation is not None and table.generation != expected_generation:
            raise CatalogueChanged(f"table {table_id} is no longer at generation {expected_generation}")
        old = table.metadata, table.generation
        table.metadata = bytes(metadata)
        table.generation += 1
        self._remember(lambda: _set_record(table, *old))
        return table.generation

    def drop_table(self, table_id: int) -> None:
        table = self._table(table_id)
        del self._tables[table_id]
        self._remember(lambda: self._tables.__setitem__(table_id, table))

    def rename_table(self, table_id: int, name: str) -> int:
        table = self._table(table_id)
        old_name, old_generation = table.name, table.generation
        table.name = name
        table.generation += 1

        def undo() -> None:
            table.name, table.generation = old_name, old_generation

        self._remember(undo)
        return table.generation

    def _table(self, table_id: int) -> _Table:
        table = self._tables.get(table_id)
        if table is None:
            raise KeyError(f"no table with id {table_id}")
        return table

    # --- items -------------------------------------------------------------------
    def get(self, table_id: int, pk: bytes, sk: bytes) -> Row | None:
        partition = self._table(table_id).partitions.get(pk)
        if partition is None:
            return None
        index = partition.find(sk)
        return None if index < 0 else partition.row(index)

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

    def table_generation(self, table_id: int) -> int | None:
        table = self._tables.get(table_id)
        return None if table is None else table.generation

    def after_rollback(self, undo: Callable[[], object]) -> None:
        if self._undo_log is not None:  # the storage's own undo log runs it
            self._undo_log.append(undo)

    def close(self) -> None:
        self._tables.clear()


def _store(table: _Table, row: Row) -> Row | None:
    """Insert or replace ``row``; returns the row it replaced."""
    partition = table.partitions.get(row.pk)
    old = None
    if partition is None:
        table.partitions[row.pk] = _Single(row.pk, row.pk_hash, row.sk, row.item, row.size)
        table.partition_order.add((row.pk_hash, row.pk))
        table.item_count += 1
    elif type(partition) is _Single:
        if partition.sk == row.sk:
            old = partition.row(0)
            partition.item, partition.size = row.item, row.size
            table.total_size -= old.size
        else:  # a second sort key: the partition grows its arrays
            grown = _Partition(partition.pk, partition.pk_hash)
            grown.sort_keys.append(partition.sk)
            grown.items.append(partition.item)
            grown.sizes.append(partition.size)
            table.partitions[row.pk] = grown
            _insert(grown, row)
            table.item_count += 1
    else:
        assert type(partition) is _Partition
        index = partition.find(row.sk)
        if index >= 0:
            old = partition.row(index)
            partition.items[index] = row.item
            partition.sizes[index] = row.size
            table.total_size -= old.size
        else:
            _insert(partition, row)
            table.item_count += 1
    table.total_size += row.size
    return old


def _insert(partition: _Partition, row: Row) -> None:
    """Add a row whose sort key the partition does not have."""
    index = bisect_left(partition.sort_keys, row.sk)
    partition.sort_keys.insert(index, row.sk)
    partition.items.insert(index, row.item)
    partition.sizes.insert(index, row.size)


def _remove(table: _Table, pk: bytes, sk: bytes) -> Row | None:
    """Delete the row at (pk, sk) if there is one; returns it."""
    partition = table.partitions.get(pk)
    if partition is None:
        return None
    index = partition.find(sk)
    if index < 0:
        return None
    old = partition.row(index)
    if type(partition) is _Single:
        del table.partitions[pk]
        table.partition_order.remove((partition.pk_hash, pk))
    else:
        assert type(partition) is _Partition
        del partition.sort_keys[index]
        del partition.items[index]
        del partition.sizes[index]
        if len(partition.sort_keys) == 1:  # back to one row: drop the arrays
            table.partitions[pk] = _Single(
                partition.pk, partition.pk_hash, partition.sort_keys[0], partition.items[0],
                partition.sizes[0],
            )
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
            selected = partition.rows(start, min(end, start + chunk_rows))
        else:
            selected = partition.rows(max(start, end - chunk_rows), end)[::-1]
        yield from selected
        if len(selected) < chunk_rows:
            return
        # Continue strictly after the last key returned.
        if forward:
            lower = (selected[-1].sk, False)
        else:
            upper = (selected[-1].sk, False)
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
            chunk.extend(partition.rows(start, start + chunk_rows - len(chunk)))
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
