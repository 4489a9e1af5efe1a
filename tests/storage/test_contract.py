"""The storage contract: one suite, run against every backend.

A backend is accepted when this suite passes (docs/architecture.md). The
SQLite backend runs twice, in memory and file-backed; the file-backed run
adds reopen, locking and "an abandoned iterator blocks nothing" checks. A
hypothesis test applies random operation sequences to MemoryStorage and
SQLiteStorage side by side and requires identical answers.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dynastore.storage import (
    HASH_SPACE,
    DataDirectoryLocked,
    MemoryStorage,
    Row,
    SortKeyRange,
    SQLiteStorage,
    Storage,
    UnsupportedSchemaVersion,
)
from dynastore.storage.base import CatalogueChanged
from dynastore.storage.ranges import prefix_successor
from dynastore.storage.sqlite import DATABASE_FILE_NAME
from dynastore.types.keys import partition_hash

BACKENDS = ("memory", "sqlite-memory", "sqlite-file", "postgres")

#: Sort keys chosen to trip byte-order mistakes: empty, 0x00 and 0xFF runs,
#: prefixes of each other, the signed/unsigned boundary 0x7F/0x80.
TRICKY_KEYS = sorted(
    {
        b"",
        b"\x00",
        b"\x00\x00",
        b"\x00\x01",
        b"\x01",
        b"\x7f",
        b"\x80",
        b"a",
        b"a\x00",
        b"a\xff",
        b"a\xff\xff",
        b"ab",
        b"b",
        b"\xfe\xff",
        b"\xff",
        b"\xff\x00",
        b"\xff\xff",
        b"\xff\xff\xff",
    }
)


def open_backend(kind: str, directory: Path, request: pytest.FixtureRequest | None = None) -> Storage:
    if kind == "memory":
        return MemoryStorage()
    if kind == "postgres":
        assert request is not None
        from dynastore.storage.postgres import PostgresStorage

        # A schema of its own per test: an empty store without a new database.
        return PostgresStorage(request.getfixturevalue("postgres_server").new_schema())
    if kind == "sqlite-memory":
        return SQLiteStorage(None)
    return SQLiteStorage(directory / "data")


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    store = open_backend(request.param, tmp_path, request)
    yield store
    store.close()


@pytest.fixture
def file_directory(tmp_path: Path) -> Path:
    return tmp_path / "data"


def make_row(pk: bytes, sk: bytes = b"", item: bytes | None = None) -> Row:
    body = (
        item
        if item is not None
        else b'{"v":{"S":"' + pk.hex().encode() + sk.hex().encode() + b'"}}'
    )
    return Row(partition_hash(pk), pk, sk, body, len(body) + 3)


def sort_keys_of(rows: Iterator[Row]) -> list[bytes]:
    return [row.sk for row in rows]


def fill_partition(storage: Storage, table_id: int, pk: bytes = b"p") -> None:
    for sk in TRICKY_KEYS:
        storage.put(table_id, make_row(pk, sk))


# --- catalogue -----------------------------------------------------------------------


def test_create_table_returns_increasing_ids_in_creation_order(storage: Storage) -> None:
    first = storage.create_table("alpha", b'{"a":1}')
    second = storage.create_table("beta", b'{"b":2}')
    assert second > first
    records = storage.load_tables()
    assert [(r.table_id, r.name, r.metadata) for r in records] == [
        (first, "alpha", b'{"a":1}'),
        (second, "beta", b'{"b":2}'),
    ]


def test_table_ids_are_never_reused_after_drop(storage: Storage) -> None:
    first = storage.create_table("a", b"{}")
    second = storage.create_table("b", b"{}")
    storage.drop_table(second)
    third = storage.create_table("c", b"{}")
    assert third > second > first


def test_update_table_metadata(storage: Storage) -> None:
    table_id = storage.create_table("t", b"old")
    storage.update_table_metadata(table_id, b"new")
    assert storage.load_tables()[0].metadata == b"new"


def test_update_table_metadata_is_a_compare_and_set_on_the_generation(storage: Storage) -> None:
    """Every store keeps catalogue generations (issue 15): a change computed
    from an older definition than the stored one is refused and writes
    nothing, whoever made the newer one; a change without an expectation
    always writes. A rename is a change too."""
    table_id = storage.create_table("t", b"v0")
    (created,) = storage.load_tables()
    assert created.generation == storage.first_generation
    first = storage.update_table_metadata(table_id, b"v1", expected_generation=created.generation)
    assert first > created.generation
    assert [(r.metadata, r.generation) for r in storage.load_tables()] == [(b"v1", first)]
    with pytest.raises(CatalogueChanged):  # computed from v0: v1 came between
        storage.update_table_metadata(table_id, b"stale", expected_generation=created.generation)
    assert [(r.metadata, r.generation) for r in storage.load_tables()] == [(b"v1", first)]
    unchecked = storage.update_table_metadata(table_id, b"v2")
    assert unchecked > first
    renamed = storage.rename_table(table_id, "u")
    assert renamed > unchecked
    with pytest.raises(CatalogueChanged):
        storage.update_table_metadata(table_id, b"stale", expected_generation=unchecked)
    assert storage.update_table_metadata(table_id, b"v3", expected_generation=renamed) > renamed
    with pytest.raises(KeyError):
        storage.update_table_metadata(999, b"{}", expected_generation=0)


def test_a_rolled_back_change_keeps_the_generation_it_had(storage: Storage) -> None:
    table_id = storage.create_table("t", b"v0")
    (created,) = storage.load_tables()
    with pytest.raises(RuntimeError), storage.transaction():
        storage.update_table_metadata(table_id, b"v1", expected_generation=created.generation)
        raise RuntimeError("abort")
    assert [(r.metadata, r.generation) for r in storage.load_tables()] == [(b"v0", created.generation)]
    assert storage.update_table_metadata(table_id, b"v1", expected_generation=created.generation) > created.generation


def test_unknown_table_ids_raise_key_error(storage: Storage) -> None:
    with pytest.raises(KeyError):
        storage.update_table_metadata(999, b"{}")
    with pytest.raises(KeyError):
        storage.drop_table(999)


def test_drop_table_removes_record_and_items_only_of_that_table(storage: Storage) -> None:
    kept = storage.create_table("kept", b"{}")
    dropped = storage.create_table("dropped", b"{}")
    for table_id in (kept, dropped):
        fill_partition(storage, table_id)
    storage.drop_table(dropped)
    assert [record.table_id for record in storage.load_tables()] == [kept]
    assert storage.table_statistics(kept)[0] == len(TRICKY_KEYS)
    assert sort_keys_of(storage.query(kept, b"p", SortKeyRange())) == TRICKY_KEYS


def test_dropped_table_items_do_not_leak_into_a_new_table(storage: Storage) -> None:
    old = storage.create_table("t", b"{}")
    fill_partition(storage, old)
    storage.drop_table(old)
    new = storage.create_table("t", b"{}")
    assert storage.table_statistics(new) == (0, 0)
    assert list(storage.scan(new, 0, HASH_SPACE)) == []


# --- point operations ------------------------------------------------------------------


def test_put_get_delete(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    row = make_row(b"pk", b"sk", item=b'{"x":{"B":"AAE="}}\x00\xff')
    assert storage.get(table_id, b"pk", b"sk") is None
    storage.put(table_id, row)
    assert storage.get(table_id, b"pk", b"sk") == row
    storage.delete(table_id, b"pk", b"sk")
    assert storage.get(table_id, b"pk", b"sk") is None
    storage.delete(table_id, b"pk", b"sk")  # deleting a missing item is a no-op


def test_put_replaces_the_item_at_the_same_key(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    storage.put(table_id, make_row(b"pk", b"", item=b"first"))
    replacement = make_row(b"pk", b"", item=b"second, longer")
    storage.put(table_id, replacement)
    assert storage.get(table_id, b"pk", b"") == replacement
    assert storage.table_statistics(table_id) == (1, replacement.size)


def test_a_partition_grows_from_one_row_and_shrinks_back(storage: Storage) -> None:
    """The in-memory store keeps a one-row partition in a smaller shape than a
    partition of several: every step between the two reads the same."""
    table_id = storage.create_table("t", b"{}")
    first = make_row(b"pk", b"b", item=b"first")
    storage.put(table_id, first)
    second = make_row(b"pk", b"a", item=b"second")
    storage.put(table_id, second)  # sorts before the first row
    assert list(storage.query(table_id, b"pk", SortKeyRange())) == [second, first]
    assert list(storage.query(table_id, b"pk", SortKeyRange(), forward=False)) == [first, second]
    storage.delete(table_id, b"pk", b"b")
    assert list(storage.query(table_id, b"pk", SortKeyRange())) == [second]
    assert storage.get(table_id, b"pk", b"b") is None
    replaced = make_row(b"pk", b"a", item=b"replaced")
    storage.put(table_id, replaced)
    assert [row for row in storage.scan(table_id, 0, HASH_SPACE)] == [replaced]
    assert storage.table_statistics(table_id) == (1, replaced.size)
    storage.delete(table_id, b"pk", b"a")
    assert list(storage.query(table_id, b"pk", SortKeyRange())) == []
    assert storage.table_statistics(table_id) == (0, 0)


def test_keys_differing_only_in_trailing_zero_bytes_are_distinct(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    for pk in (b"k", b"k\x00", b"k\x00\x00"):
        for sk in (b"", b"\x00"):
            storage.put(table_id, make_row(pk, sk))
    assert storage.table_statistics(table_id)[0] == 6
    for pk in (b"k", b"k\x00", b"k\x00\x00"):
        for sk in (b"", b"\x00"):
            assert storage.get(table_id, pk, sk) == make_row(pk, sk)


def test_maximum_size_keys_order_and_round_trip(storage: Storage) -> None:
    """2048-byte partition keys and 1024-byte sort keys (DynamoDB's maxima)
    spill out of SQLite's index pages; order must not care."""
    table_id = storage.create_table("t", b"{}")
    pk = b"\xff" * 2047 + b"\x00"
    sort_keys = sorted(b"\x80" * 1023 + bytes([last]) for last in (0x00, 0x7F, 0x80, 0xFF))
    sort_keys.insert(0, b"\x80" * 1022)
    for sk in reversed(sort_keys):
        storage.put(table_id, make_row(pk, sk))
    assert sort_keys_of(storage.query(table_id, pk, SortKeyRange())) == sort_keys
    prefixed = storage.query(table_id, pk, SortKeyRange(prefix=b"\x80" * 1023), forward=False)
    assert sort_keys_of(prefixed) == sort_keys[1:][::-1]
    assert storage.get(table_id, pk, sort_keys[2]) == make_row(pk, sort_keys[2])
    assert storage.get(table_id, pk[:-1], sort_keys[2]) is None


def test_tables_are_isolated(storage: Storage) -> None:
    first = storage.create_table("a", b"{}")
    second = storage.create_table("b", b"{}")
    storage.put(first, make_row(b"pk", b"sk", item=b"in a"))
    assert storage.get(second, b"pk", b"sk") is None
    assert list(storage.query(second, b"pk", SortKeyRange())) == []
    assert list(storage.scan(second, 0, HASH_SPACE)) == []
    storage.delete(second, b"pk", b"sk")
    assert storage.get(first, b"pk", b"sk") is not None


# --- query -----------------------------------------------------------------------------


def test_query_orders_binary_sort_keys_as_unsigned_bytes(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    for sk in reversed(TRICKY_KEYS):
        storage.put(table_id, make_row(b"p", sk))
    storage.put(table_id, make_row(b"other", b"a"))
    assert sort_keys_of(storage.query(table_id, b"p", SortKeyRange())) == TRICKY_KEYS
    backward = storage.query(table_id, b"p", SortKeyRange(), forward=False)
    assert sort_keys_of(backward) == TRICKY_KEYS[::-1]
    assert sort_keys_of(storage.query(table_id, b"missing", SortKeyRange())) == []


def test_query_returns_whole_rows(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    assert list(storage.query(table_id, b"p", SortKeyRange())) == [
        make_row(b"p", sk) for sk in TRICKY_KEYS
    ]


def in_range(sk: bytes, sort_range: SortKeyRange) -> bool:
    """The specification of SortKeyRange, written plainly."""
    if sort_range.low is not None:
        if sk < sort_range.low or (sk == sort_range.low and not sort_range.low_inclusive):
            return False
    if sort_range.high is not None:
        if sk > sort_range.high or (sk == sort_range.high and not sort_range.high_inclusive):
            return False
    return sort_range.prefix is None or sk.startswith(sort_range.prefix)


BOUNDS = [None, b"", b"\x00", b"a", b"a\x00", b"a\xff", b"ab", b"\x80", b"\xff", b"\xff\xff", b"zz"]


@pytest.mark.parametrize("low_inclusive", [True, False])
@pytest.mark.parametrize("high_inclusive", [True, False])
def test_query_ranges_with_every_inclusive_combination(
    storage: Storage, low_inclusive: bool, high_inclusive: bool
) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    for low, high in itertools.product(BOUNDS, BOUNDS):
        sort_range = SortKeyRange(low, low_inclusive, high, high_inclusive)
        expected = [sk for sk in TRICKY_KEYS if in_range(sk, sort_range)]
        assert sort_keys_of(storage.query(table_id, b"p", sort_range)) == expected, sort_range
        backward = storage.query(table_id, b"p", sort_range, forward=False)
        assert sort_keys_of(backward) == expected[::-1], sort_range


PREFIXES = [b"\x00", b"a", b"a\xff", b"\x7f", b"\xfe", b"\xff", b"\xff\xff", b"\xff\xff\xff\xff"]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_query_prefix_including_0xff_bytes(storage: Storage, prefix: bytes) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    sort_range = SortKeyRange(prefix=prefix)
    expected = [sk for sk in TRICKY_KEYS if sk.startswith(prefix)]
    assert sort_keys_of(storage.query(table_id, b"p", sort_range)) == expected
    backward = storage.query(table_id, b"p", sort_range, forward=False)
    assert sort_keys_of(backward) == expected[::-1]


def test_prefix_combined_with_range_bounds(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    for prefix, low, high in itertools.product(PREFIXES, BOUNDS, BOUNDS):
        sort_range = SortKeyRange(low=low, low_inclusive=False, high=high, prefix=prefix)
        expected = [sk for sk in TRICKY_KEYS if in_range(sk, sort_range)]
        assert sort_keys_of(storage.query(table_id, b"p", sort_range)) == expected


def test_prefix_successor() -> None:
    assert prefix_successor(b"a") == b"b"
    assert prefix_successor(b"a\xff") == b"b"
    assert prefix_successor(b"a\xfe\xff\xff") == b"a\xff"
    assert prefix_successor(b"\xff\xff") is None
    assert prefix_successor(b"") is None


@pytest.mark.parametrize("forward", [True, False])
def test_query_exclusive_start_sk(storage: Storage, forward: bool) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    order = TRICKY_KEYS if forward else TRICKY_KEYS[::-1]
    starts = [*TRICKY_KEYS, b"a\x00\x00", b"\xff\xff\xff\xff"]  # present and absent keys
    for start in starts:
        expected = [sk for sk in order if (sk > start if forward else sk < start)]
        rows = storage.query(table_id, b"p", SortKeyRange(), forward, exclusive_start_sk=start)
        assert sort_keys_of(rows) == expected, start


@pytest.mark.parametrize("forward", [True, False])
def test_query_exclusive_start_with_range_and_prefix(storage: Storage, forward: bool) -> None:
    table_id = storage.create_table("t", b"{}")
    fill_partition(storage, table_id)
    sort_range = SortKeyRange(low=b"\x00\x01", high=b"\xff\x00", high_inclusive=False)
    for start in TRICKY_KEYS:
        expected = [
            sk
            for sk in TRICKY_KEYS
            if in_range(sk, sort_range) and (sk > start if forward else sk < start)
        ]
        rows = storage.query(table_id, b"p", sort_range, forward, exclusive_start_sk=start)
        assert sort_keys_of(rows) == (expected if forward else expected[::-1])
    prefixed = SortKeyRange(prefix=b"a")
    rows = storage.query(table_id, b"p", prefixed, forward, exclusive_start_sk=b"a\x00")
    assert sort_keys_of(rows) == ([b"ab", b"a\xff", b"a\xff\xff"] if forward else [b"a"])


def test_query_paginates_through_large_partitions(storage: Storage) -> None:
    """More rows than any internal chunk, both ways, resumed mid-way."""
    table_id = storage.create_table("t", b"{}")
    sort_keys = [i.to_bytes(2, "big") for i in range(1500)]
    with storage.transaction():
        for sk in sort_keys:
            storage.put(table_id, make_row(b"p", sk))
    assert sort_keys_of(storage.query(table_id, b"p", SortKeyRange())) == sort_keys
    backward = storage.query(table_id, b"p", SortKeyRange(), forward=False)
    assert sort_keys_of(backward) == sort_keys[::-1]
    resumed = storage.query(table_id, b"p", SortKeyRange(), exclusive_start_sk=sort_keys[700])
    assert sort_keys_of(resumed) == sort_keys[701:]


def test_writes_while_iterating_do_not_break_the_iterator(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    sort_keys = [i.to_bytes(2, "big") for i in range(300)]
    for sk in sort_keys:
        storage.put(table_id, make_row(b"p", sk))
    seen = []
    for row in storage.query(table_id, b"p", SortKeyRange()):
        seen.append(row.sk)
        storage.delete(table_id, b"p", row.sk)  # delete what was just read
    assert seen == sort_keys
    assert storage.table_statistics(table_id) == (0, 0)


# --- scan ------------------------------------------------------------------------------


def populate_for_scan(storage: Storage, table_id: int, partitions: int = 120) -> list[Row]:
    rows = [
        make_row(b"pk-%d" % number, sk)
        for number in range(partitions)
        for sk in (b"", b"\x00", b"\xff")
    ]
    with storage.transaction():
        for row in rows:
            storage.put(table_id, row)
    return sorted(rows, key=lambda row: (row.pk_hash, row.pk, row.sk))


def test_scan_walks_pk_hash_pk_sk_order(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    expected = populate_for_scan(storage, table_id)
    assert list(storage.scan(table_id, 0, HASH_SPACE)) == expected


def test_scan_chunks_end_inside_partitions_and_survive_writes(storage: Storage) -> None:
    """Partitions larger than a chunk (chunk boundaries fall inside them),
    every row deleted as soon as it is read: the scan still returns each row
    once, in order."""
    table_id = storage.create_table("t", b"{}")
    rows = [
        make_row(b"pk-%d" % number, i.to_bytes(2, "big"))
        for number in range(6)
        for i in range(150 if number % 2 else 7)
    ]
    with storage.transaction():
        for row in rows:
            storage.put(table_id, row)
    expected = sorted(rows, key=lambda row: (row.pk_hash, row.pk, row.sk))
    seen = []
    for row in storage.scan(table_id, 0, HASH_SPACE):
        seen.append(row)
        storage.delete(table_id, row.pk, row.sk)
    assert seen == expected
    assert storage.table_statistics(table_id) == (0, 0)
    assert list(storage.scan(table_id, 0, HASH_SPACE)) == []


def test_scan_breaks_hash_ties_by_pk_then_sk(storage: Storage) -> None:
    """Distinct partition keys can share a 32-bit hash. Rows with forged
    hashes (only ever scanned here) pin the tie-break order."""
    table_id = storage.create_table("t", b"{}")
    forged = [
        Row(pk_hash, stem + bytes([tag]), sk, b"x", 1)  # a pk has one hash: tag per hash
        for tag, pk_hash in enumerate((0, 7, HASH_SPACE - 1))
        for stem in (b"\xff", b"", b"\x00", b"a")
        for sk in (b"\xff", b"", b"\x00")
    ]
    for row in reversed(forged):
        storage.put(table_id, row)
    expected = sorted(forged, key=lambda row: (row.pk_hash, row.pk, row.sk))
    assert list(storage.scan(table_id, 0, HASH_SPACE)) == expected
    assert list(storage.scan(table_id, 7, 8)) == [row for row in expected if row.pk_hash == 7]
    assert list(storage.scan(table_id, HASH_SPACE - 1, HASH_SPACE))[-1].pk_hash == HASH_SPACE - 1
    start = (7, b"\x00\x01", b"\x00")
    after = [row for row in expected if (row.pk_hash, row.pk, row.sk) > start]
    assert list(storage.scan(table_id, 0, HASH_SPACE, exclusive_start=start)) == after


@pytest.mark.parametrize("total_segments", [1, 2, 3, 7, 64])
def test_scan_segments_partition_the_table_exactly(storage: Storage, total_segments: int) -> None:
    table_id = storage.create_table("t", b"{}")
    expected = populate_for_scan(storage, table_id)
    boundaries = [segment * HASH_SPACE // total_segments for segment in range(total_segments + 1)]
    pieces = [
        list(storage.scan(table_id, low, high)) for low, high in itertools.pairwise(boundaries)
    ]
    for (low, high), piece in zip(itertools.pairwise(boundaries), pieces, strict=True):
        assert all(low <= row.pk_hash < high for row in piece)
    assert [row for piece in pieces for row in piece] == expected


@pytest.mark.parametrize("page_size", [1, 5, 100])
def test_scan_resumes_after_exclusive_start(storage: Storage, page_size: int) -> None:
    table_id = storage.create_table("t", b"{}")
    expected = populate_for_scan(storage, table_id)
    collected: list[Row] = []
    start: tuple[int, bytes, bytes] | None = None
    while True:
        page = list(itertools.islice(storage.scan(table_id, 0, HASH_SPACE, start), page_size))
        collected.extend(page)
        if len(page) < page_size:
            break
        start = (page[-1].pk_hash, page[-1].pk, page[-1].sk)
    assert collected == expected


def test_scan_exclusive_start_outside_the_segment(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    expected = populate_for_scan(storage, table_id)
    middle = HASH_SPACE // 2
    upper_half = [row for row in expected if row.pk_hash >= middle]
    before_segment = (middle - 1, b"\xff", b"\xff")
    assert list(storage.scan(table_id, middle, HASH_SPACE, before_segment)) == upper_half
    at_end = (expected[-1].pk_hash, expected[-1].pk, expected[-1].sk)
    assert list(storage.scan(table_id, middle, HASH_SPACE, at_end)) == []
    assert list(storage.scan(table_id, middle, middle)) == []


# --- statistics ------------------------------------------------------------------------


def test_table_statistics_count_and_total_size(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    other = storage.create_table("other", b"{}")
    assert storage.table_statistics(table_id) == (0, 0)
    rows = [make_row(b"p%d" % i, b"s") for i in range(10)]
    for row in rows:
        storage.put(table_id, row)
    storage.put(other, make_row(b"x"))
    assert storage.table_statistics(table_id) == (10, sum(row.size for row in rows))
    storage.put(table_id, Row(rows[0].pk_hash, rows[0].pk, rows[0].sk, b"big", 5000))
    storage.delete(table_id, rows[1].pk, rows[1].sk)
    expected_size = sum(row.size for row in rows[2:]) + 5000
    assert storage.table_statistics(table_id) == (9, expected_size)
    assert storage.table_statistics(other) == (1, make_row(b"x").size)


# --- transactions ----------------------------------------------------------------------


class Boom(Exception):
    pass


def test_transaction_commits_all_writes(storage: Storage) -> None:
    first = storage.create_table("a", b"{}")
    second = storage.create_table("b", b"{}")
    with storage.transaction():
        storage.put(first, make_row(b"x"))
        storage.put(second, make_row(b"y"))
        assert storage.get(first, b"x", b"") == make_row(b"x")  # reads see own writes
    assert storage.get(first, b"x", b"") == make_row(b"x")
    assert storage.get(second, b"y", b"") == make_row(b"y")


def test_exception_rolls_back_every_kind_of_write(storage: Storage) -> None:
    kept = storage.create_table("kept", b"v1")
    storage.put(kept, make_row(b"old"))
    storage.put(kept, make_row(b"replaced", item=b"original"))
    doomed = storage.create_table("doomed", b"{}")
    storage.put(doomed, make_row(b"d"))
    before_tables = storage.load_tables()
    with pytest.raises(Boom), storage.transaction():
        storage.put(kept, make_row(b"new"))
        storage.put(kept, make_row(b"replaced", item=b"changed"))
        storage.delete(kept, b"old", b"")
        storage.update_table_metadata(kept, b"v2")
        storage.drop_table(doomed)
        created = storage.create_table("created", b"{}")
        storage.put(created, make_row(b"c"))
        raise Boom
    assert storage.load_tables() == before_tables
    assert storage.get(kept, b"new", b"") is None
    assert storage.get(kept, b"old", b"") == make_row(b"old")
    assert storage.get(kept, b"replaced", b"") == make_row(b"replaced", item=b"original")
    assert storage.get(doomed, b"d", b"") == make_row(b"d")
    assert storage.table_statistics(kept)[0] == 2


def test_nested_block_failure_caught_inside_undoes_only_the_inner_writes(
    storage: Storage,
) -> None:
    table_id = storage.create_table("t", b"{}")
    with storage.transaction():
        storage.put(table_id, make_row(b"outer-before"))
        with pytest.raises(Boom), storage.transaction():
            storage.put(table_id, make_row(b"inner"))
            storage.delete(table_id, b"outer-before", b"")
            raise Boom
        storage.put(table_id, make_row(b"outer-after"))
    assert storage.get(table_id, b"inner", b"") is None
    assert storage.get(table_id, b"outer-before", b"") == make_row(b"outer-before")
    assert storage.get(table_id, b"outer-after", b"") == make_row(b"outer-after")


def test_nested_failure_propagating_out_rolls_back_everything(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    with pytest.raises(Boom), storage.transaction():
        storage.put(table_id, make_row(b"outer"))
        with storage.transaction():
            storage.put(table_id, make_row(b"inner"))
        with storage.transaction():
            raise Boom
    assert storage.table_statistics(table_id) == (0, 0)


def test_storage_is_usable_after_a_rollback(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    with pytest.raises(Boom), storage.transaction():
        raise Boom
    storage.put(table_id, make_row(b"x"))
    with storage.transaction(), storage.transaction():
        storage.put(table_id, make_row(b"y"))
    assert storage.table_statistics(table_id)[0] == 2


def test_reads_inside_a_transaction_see_its_writes(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    storage.put(table_id, make_row(b"p", b"old"))
    with storage.transaction():
        storage.put(table_id, make_row(b"p", b"new"))
        storage.delete(table_id, b"p", b"old")
        assert sort_keys_of(storage.query(table_id, b"p", SortKeyRange())) == [b"new"]
        assert [row.sk for row in storage.scan(table_id, 0, HASH_SPACE)] == [b"new"]
        assert storage.table_statistics(table_id) == (1, make_row(b"p", b"new").size)
    assert storage.table_statistics(table_id) == (1, make_row(b"p", b"new").size)


def test_statistics_read_inside_a_rolled_back_transaction_are_not_kept(
    storage: Storage,
) -> None:
    table_id = storage.create_table("t", b"{}")
    with pytest.raises(Boom), storage.transaction():
        storage.put(table_id, make_row(b"x"))
        assert storage.table_statistics(table_id)[0] == 1
        raise Boom
    assert storage.table_statistics(table_id) == (0, 0)


def test_after_rollback_runs_only_for_what_a_rollback_undid(storage: Storage) -> None:
    """Undo actions (the Database's copy of the catalogue keeps in step
    through them) run, newest first, for exactly the blocks rolled back: a
    nested block caught inside, every block when the failure leaves the
    outermost; never after a commit, never outside a block."""
    table_id = storage.create_table("t", b"{}")
    ran: list[str] = []
    storage.after_rollback(lambda: ran.append("outside"))  # no block: committed already
    with storage.transaction():
        storage.after_rollback(lambda: ran.append("committed"))
    assert ran == []

    with storage.transaction():
        storage.put(table_id, make_row(b"kept"))
        storage.after_rollback(lambda: ran.append("outer"))
        with pytest.raises(Boom), storage.transaction():
            storage.after_rollback(lambda: ran.append("inner 1"))
            storage.after_rollback(lambda: ran.append("inner 2"))
            raise Boom
        assert ran == ["inner 2", "inner 1"]
    assert ran == ["inner 2", "inner 1"]  # the outermost committed: "outer" never runs

    ran.clear()
    with pytest.raises(Boom), storage.transaction():
        storage.after_rollback(lambda: ran.append("outer"))
        with storage.transaction():
            storage.after_rollback(lambda: ran.append("inner, released"))
        raise Boom
    assert ran == ["inner, released", "outer"]

    ran.clear()
    with storage.transaction():
        pass
    assert ran == []  # nothing left over from the blocks before
    assert storage.get(table_id, b"kept", b"") == make_row(b"kept")


def test_usable_from_another_thread_when_calls_are_serialised(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(storage.put, table_id, make_row(b"x")).result()
        assert executor.submit(storage.get, table_id, b"x", b"").result() == make_row(b"x")


# --- SQLite file: reopen, locking, versions, concurrency -------------------------------


def test_reopen_keeps_tables_items_and_id_sequence(file_directory: Path) -> None:
    store = SQLiteStorage(file_directory)
    kept = store.create_table("kept", b'{"schema":1}')
    dropped = store.create_table("dropped", b"{}")
    fill_partition(store, kept)
    store.drop_table(dropped)
    store.close()

    reopened = SQLiteStorage(file_directory)
    try:
        assert [(r.table_id, r.name, r.metadata) for r in reopened.load_tables()] == [
            (kept, "kept", b'{"schema":1}')
        ]
        rows = list(reopened.query(kept, b"p", SortKeyRange()))
        assert rows == [make_row(b"p", sk) for sk in TRICKY_KEYS]
        assert reopened.create_table("next", b"{}") > dropped
    finally:
        reopened.close()


def test_reopen_keeps_each_tables_generation(file_directory: Path) -> None:
    """A file written before generations were kept (no table_generations)
    opens with every table at 0, and generations survive a reopen."""
    store = SQLiteStorage(file_directory)
    table_id = store.create_table("t", b"v0")
    store.close()
    plain = sqlite3.connect(file_directory / DATABASE_FILE_NAME)
    plain.execute("DROP TABLE table_generations")  # as the previous version wrote it
    plain.commit()
    plain.close()
    store = SQLiteStorage(file_directory)
    try:
        assert [(r.metadata, r.generation) for r in store.load_tables()] == [(b"v0", 0)]
        changed = store.update_table_metadata(table_id, b"v1", expected_generation=0)
    finally:
        store.close()
    reopened = SQLiteStorage(file_directory)
    try:
        assert [(r.metadata, r.generation) for r in reopened.load_tables()] == [(b"v1", changed)]
        with pytest.raises(CatalogueChanged):
            reopened.update_table_metadata(table_id, b"stale", expected_generation=0)
    finally:
        reopened.close()


def test_second_open_of_a_data_directory_is_refused(file_directory: Path) -> None:
    store = SQLiteStorage(file_directory)
    try:
        with pytest.raises(DataDirectoryLocked, match="already in use"):
            SQLiteStorage(file_directory)
    finally:
        store.close()
    SQLiteStorage(file_directory).close()  # the lock goes with close()


def test_newer_schema_version_is_refused(file_directory: Path) -> None:
    SQLiteStorage(file_directory).close()
    raw = sqlite3.connect(file_directory / DATABASE_FILE_NAME)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(UnsupportedSchemaVersion, match="newer dynastore"):
        SQLiteStorage(file_directory)
    with pytest.raises(UnsupportedSchemaVersion):  # not DataDirectoryLocked: lock released
        SQLiteStorage(file_directory)


def test_file_uses_wal_and_normal_sync(file_directory: Path) -> None:
    store = SQLiteStorage(file_directory)
    try:
        connection = store._connection
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        store.close()


def count_items_from_outside(directory: Path) -> int:
    """What another process sees in the file: the committed rows."""
    raw = sqlite3.connect(directory / DATABASE_FILE_NAME)
    try:
        return int(raw.execute("SELECT count(*) FROM items").fetchone()[0])
    finally:
        raw.close()


def test_only_the_outermost_block_commits(file_directory: Path) -> None:
    """Another connection sees nothing of a nested block that ended, and
    everything once the outermost block commits."""
    store = SQLiteStorage(file_directory)
    try:
        table_id = store.create_table("t", b"{}")
        with store.transaction():
            with store.transaction():
                store.put(table_id, make_row(b"x"))
            assert count_items_from_outside(file_directory) == 0
        assert count_items_from_outside(file_directory) == 1
    finally:
        store.close()
    assert count_items_from_outside(file_directory) == 1


def test_other_processes_can_read_committed_rows_while_the_store_is_open(
    file_directory: Path,
) -> None:
    """SQLite's default locking (ADR 0001): an operator's sqlite3 shell or a
    backup reads the file while the server runs, seeing only what committed."""
    store = SQLiteStorage(file_directory)
    try:
        table_id = store.create_table("t", b"{}")
        store.put(table_id, make_row(b"committed"))
        with store.transaction():
            store.put(table_id, make_row(b"pending"))
            assert count_items_from_outside(file_directory) == 1
        assert count_items_from_outside(file_directory) == 2
    finally:
        store.close()


def database_file_bytes(directory: Path) -> int:
    return (directory / DATABASE_FILE_NAME).stat().st_size


def write_rows_and_wait_for_the_database_file(
    store: SQLiteStorage, directory: Path, seconds: float
) -> tuple[int, int]:
    """Commit ~100 pages (far below any automatic checkpoint), then wait up to
    ``seconds`` for them to reach the database file; (bytes before, after)."""
    table_id = store.create_table("t", b"{}")
    before = database_file_bytes(directory)
    with store.transaction():
        for i in range(300):
            store.put(table_id, make_row(b"p", i.to_bytes(2, "big"), b"v" * 1000))
    deadline = time.monotonic() + seconds
    while database_file_bytes(directory) <= before + 200_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    return before, database_file_bytes(directory)


def test_a_background_thread_checkpoints_after_a_commit(file_directory: Path) -> None:
    """The serving connection never copies the WAL into the database file
    below FALLBACK_AUTOCHECKPOINT_PAGES; the checkpointer thread does, soon
    after the commit, while the store sits idle."""
    threads_before = set(threading.enumerate())
    store = SQLiteStorage(file_directory)
    (thread,) = set(threading.enumerate()) - threads_before  # the store's checkpointer
    try:
        before, after = write_rows_and_wait_for_the_database_file(store, file_directory, 10)
        assert after > before + 200_000
        assert thread.name == "dynastore-checkpointer" and thread.is_alive()
    finally:
        store.close()
    assert not thread.is_alive()


def test_without_the_checkpointer_the_pages_stay_in_the_wal(file_directory: Path) -> None:
    """The control for the test above: the same writes, no background thread."""
    store = SQLiteStorage(file_directory, checkpoint_delay_seconds=None)
    try:
        before, after = write_rows_and_wait_for_the_database_file(store, file_directory, 0.5)
        assert after == before
        assert wal_bytes(file_directory) > 200_000
    finally:
        store.close()


def wal_bytes(directory: Path) -> int:
    wal = directory / (DATABASE_FILE_NAME + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_failed_commit_rolls_back_and_leaves_the_store_usable(file_directory: Path) -> None:
    """COMMIT itself can fail (disk full, I/O error); SQLite then keeps the
    transaction open. A deferred foreign key makes COMMIT fail on demand."""
    store = SQLiteStorage(file_directory)
    try:
        table_id = store.create_table("t", b"{}")
        connection = store._connection
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)")
        connection.execute(
            "CREATE TEMP TABLE child (parent_id INTEGER"
            " REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
        with pytest.raises(sqlite3.IntegrityError), store.transaction():
            store.put(table_id, make_row(b"lost"))
            connection.execute("INSERT INTO child VALUES (42)")  # violated at COMMIT
        assert not connection.in_transaction
        assert store.get(table_id, b"lost", b"") is None
        store.put(table_id, make_row(b"kept"))
    finally:
        store.close()
    assert count_items_from_outside(file_directory) == 1


def test_abandoned_iterators_block_neither_writers_nor_checkpoints(file_directory: Path) -> None:
    store = SQLiteStorage(file_directory, checkpoint_delay_seconds=None)  # this test checkpoints
    try:
        table_id = store.create_table("t", b"{}")
        with store.transaction():
            for i in range(2000):
                store.put(table_id, make_row(b"p", i.to_bytes(2, "big")))
        query = store.query(table_id, b"p", SortKeyRange())
        scan = store.scan(table_id, 0, HASH_SPACE)
        next(query), next(scan)  # started, then left alive
        store.put(table_id, make_row(b"another"))
        checkpoint = "PRAGMA wal_checkpoint(TRUNCATE)"
        busy, _, _ = store._connection.execute(checkpoint).fetchone()
        assert busy == 0
        assert wal_bytes(file_directory) == 0
        assert len(list(query)) == 1999
    finally:
        store.close()


def test_scan_and_query_use_the_key_index() -> None:
    from dynastore.storage import sqlite as backend

    store = SQLiteStorage(None)
    try:
        statements = [backend._SCAN_FIRST, backend._SCAN_AFTER, *backend._QUERY_SQL.values()]
        for sql in statements:
            parameters = (None,) * sql.count("?")
            plan = store._connection.execute("EXPLAIN QUERY PLAN " + sql, parameters).fetchall()
            details = " ".join(step[3] for step in plan)
            assert "USING INDEX items_key" in details, (sql, details)
            assert "TEMP B-TREE" not in details, (sql, details)
    finally:
        store.close()


# --- differential: random operation sequences, both backends ---------------------------

#: Few distinct keys, so random operations keep meeting the same items.
key_byte = st.sampled_from([0x00, 0x61, 0x80, 0xFF])
key_bytes = st.lists(key_byte, max_size=2).map(bytes)
prefixes = st.lists(key_byte, min_size=1, max_size=2).map(bytes)
partition_keys = st.sampled_from([b"a", b"a", b"a", b"\xff"])  # mostly one partition
bound = st.one_of(st.none(), key_bytes)


@st.composite
def sort_ranges(draw: st.DrawFn) -> SortKeyRange:
    """Each shape of key condition equally often (independent optional bounds
    would almost always produce a range too narrow to meet any data)."""
    shape = draw(st.sampled_from(["all", "low", "high", "between", "prefix", "prefix+bounds"]))
    low = draw(key_bytes) if shape in ("low", "between", "prefix+bounds") else None
    high = draw(key_bytes) if shape in ("high", "between", "prefix+bounds") else None
    prefix = draw(prefixes) if shape.startswith("prefix") else None
    return SortKeyRange(low, draw(st.booleans()), high, draw(st.booleans()), prefix)


table_index = st.sampled_from([0, 0, 0, 1])  # mostly the first table
put_op = st.tuples(st.just("put"), table_index, partition_keys, key_bytes, st.binary(max_size=4))
delete_op = st.tuples(st.just("delete"), table_index, partition_keys, key_bytes)
get_op = st.tuples(st.just("get"), table_index, partition_keys, key_bytes)
query_op = st.tuples(
    st.just("query"),
    table_index,
    partition_keys,
    sort_ranges(),
    st.booleans(),
    bound,
    st.integers(1, 8),
)
hash_points = st.sampled_from([0, 1 << 30, 1 << 31, 3 << 30, HASH_SPACE])
scan_op = st.tuples(st.just("scan"), table_index, hash_points, hash_points, st.integers(1, 8))
stats_op = st.tuples(st.just("stats"), table_index)
recreate_op = st.tuples(st.just("recreate"), table_index, st.binary(max_size=3))


#: Each kind of operation, weighted towards puts and reads so reads meet data.
SIMPLE_OPERATIONS = {
    "put": (8, put_op),
    "delete": (2, delete_op),
    "get": (2, get_op),
    "query": (6, query_op),
    "scan": (2, scan_op),
    "stats": (1, stats_op),
    "recreate": (1, recreate_op),
}
SIMPLE_KINDS = [kind for kind, (weight, _) in SIMPLE_OPERATIONS.items() for _ in range(weight)]


@st.composite
def simple_op(draw: st.DrawFn) -> tuple:
    kind = draw(st.sampled_from(SIMPLE_KINDS))
    return draw(SIMPLE_OPERATIONS[kind][1])


@st.composite
def any_op(draw: st.DrawFn) -> tuple:
    if draw(st.integers(0, 5)) == 0:
        return ("transaction", draw(st.lists(simple_op(), max_size=6)), draw(st.booleans()))
    return draw(simple_op())


operations = st.lists(any_op(), min_size=20, max_size=60)


def apply_operation(store: Storage, tables: list[int], operation: tuple) -> object:
    kind = operation[0]
    if kind == "transaction":
        _, inner, fail = operation
        results: list[object] = []
        tables_before = list(tables)
        try:
            with store.transaction():
                results.extend(apply_operation(store, tables, op) for op in inner)
                if fail:
                    raise Boom
        except Boom:
            tables[:] = tables_before
            results.append("rolled back")
        return results
    table_id = tables[operation[1]]
    if kind == "recreate":
        store.drop_table(table_id)
        tables[operation[1]] = store.create_table("t", operation[2])
        return store.load_tables()
    if kind == "put":
        _, _, pk, sk, item = operation
        store.put(table_id, Row(partition_hash(pk), pk, sk, item, len(item)))
        return None
    if kind == "delete":
        return store.delete(table_id, operation[2], operation[3])
    if kind == "get":
        return store.get(table_id, operation[2], operation[3])
    if kind == "query":
        _, _, pk, sort_range, forward, start, limit = operation
        rows = store.query(table_id, pk, sort_range, forward, start)
        return list(itertools.islice(rows, limit))  # stopping early must be harmless
    if kind == "scan":
        _, _, low, high, limit = operation
        everything = list(store.scan(table_id, low, high))
        if not everything:
            return everything
        middle = everything[len(everything) // 2]
        resumed = list(itertools.islice(store.scan(table_id, low, high, middle[:3]), limit))
        return everything, resumed
    return store.table_statistics(table_id)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
@example(
    [
        ("put", 0, b"a", b"\xff", b"x"),
        ("put", 0, b"a", b"\xff\x00", b"y"),
        ("query", 0, b"a", SortKeyRange(prefix=b"\xff"), False, None, 5),
    ]
)
def test_backends_agree_on_random_operation_sequences(sequence: list[tuple]) -> None:
    reference = MemoryStorage()
    candidate = SQLiteStorage(None)
    try:
        reference_tables = [reference.create_table(name, b"{}") for name in ("a", "b")]
        candidate_tables = [candidate.create_table(name, b"{}") for name in ("a", "b")]
        for operation in sequence:
            expected = apply_operation(reference, reference_tables, operation)
            actual = apply_operation(candidate, candidate_tables, operation)
            assert actual == expected, operation
        assert candidate.load_tables() == reference.load_tables()
        for reference_id, candidate_id in zip(reference_tables, candidate_tables, strict=True):
            assert list(candidate.scan(candidate_id, 0, HASH_SPACE)) == list(
                reference.scan(reference_id, 0, HASH_SPACE)
            )
    finally:
        reference.close()
        candidate.close()


def mapped_files() -> set[str]:
    with open("/proc/self/maps") as maps:
        return {line.split(maxsplit=5)[5].strip() for line in maps if len(line.split()) >= 6}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc (Linux)")
def test_a_data_directory_is_read_through_a_memory_mapping(file_directory: Path) -> None:
    """Reads of the database file are memory accesses, not a pread per page
    (ADR 0001, "Memory-mapped reads"); the WAL is never mapped."""
    store = SQLiteStorage(file_directory)
    try:
        table_id = store.create_table("t", b"{}")
        for i in range(200):
            store.put(table_id, make_row(b"p", i.to_bytes(2, "big"), b"v" * 1000))
        store._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert store.get(table_id, b"p", (7).to_bytes(2, "big")) is not None
        mapped = mapped_files()
        assert str((file_directory / DATABASE_FILE_NAME).resolve()) in mapped
        assert str((file_directory / (DATABASE_FILE_NAME + "-wal")).resolve()) not in mapped
    finally:
        store.close()
    assert str((file_directory / DATABASE_FILE_NAME).resolve()) not in mapped_files()


def test_the_in_memory_store_keeps_one_key_object_per_partition() -> None:
    """Rows of a partition share its key and hash objects instead of holding
    a copy each (memory: ~75 bytes an item), whatever objects the caller passed."""
    store = MemoryStorage()
    table_id = store.create_table("t", b"{}")
    for number in range(3):
        store.put(table_id, make_row(bytes(bytearray(b"partition")), b"s%d" % number))
    rows = list(store.query(table_id, b"partition", SortKeyRange()))
    assert len(rows) == 3
    assert rows[0].pk is rows[1].pk is rows[2].pk
    assert rows[0].pk_hash is rows[1].pk_hash is rows[2].pk_hash


@pytest.mark.parametrize("expected_rows", [1, 5, 25, 32, 40, 1000])
@pytest.mark.parametrize("forward", [True, False])
def test_a_query_reads_on_past_its_expected_rows(
    storage: Storage, expected_rows: int, forward: bool
) -> None:
    """``expected_rows`` only sizes the first read: a caller that reads on
    gets every row, in order, whatever the hint."""
    table_id = storage.create_table("t", b"{}")
    for number in range(150):
        storage.put(table_id, make_row(b"p", number.to_bytes(2, "big")))
    rows = list(storage.query(table_id, b"p", SortKeyRange(), forward=forward, expected_rows=expected_rows))
    expected = [number.to_bytes(2, "big") for number in range(150)]
    assert [row.sk for row in rows] == (expected if forward else expected[::-1])
