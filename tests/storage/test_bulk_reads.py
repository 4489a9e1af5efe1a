"""``Storage.bulk_reads``: the background jobs' reads of whole tables.

On every backend, Query and Scan inside read the committed rows exactly as
outside do. On a SQLite data directory they go through a connection of
their own that maps none of the file, so a job reading a whole table adds
no mapped pages to the process's RSS (issue 19, section 5), while the
serving connection keeps its mapping.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynastore.storage import HASH_SPACE, Row, SortKeyRange, SQLiteStorage, Storage
from tests.storage.test_contract import BACKENDS, make_row, open_backend

PAD = b"x" * 1000


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    store = open_backend(request.param, tmp_path, request)
    yield store
    store.close()


def _fill(storage: Storage, table_id: int, count: int, item: bytes = b'{"v":{"S":"1"}}') -> list[Row]:
    rows = [make_row(b"p%05d" % n, b"s", item) for n in range(count)]
    with storage.transaction():
        for row in rows:
            storage.put(table_id, row)
    return sorted(rows, key=lambda row: (row.pk_hash, row.pk, row.sk))


def test_scan_and_query_inside_read_what_they_read_outside(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    rows = _fill(storage, table_id, 300)
    outside = list(storage.scan(table_id, 0, HASH_SPACE))
    with storage.bulk_reads():
        inside = list(storage.scan(table_id, 0, HASH_SPACE))
        after = list(storage.scan(table_id, 0, HASH_SPACE, exclusive_start=(rows[9].pk_hash, rows[9].pk, b"s")))
        with storage.bulk_reads():  # nested: joins the outer block
            one = list(storage.query(table_id, rows[5].pk, SortKeyRange()))
        still = list(storage.query(table_id, rows[6].pk, SortKeyRange()))
    assert inside == outside == rows
    assert after == rows[10:]
    assert one == [rows[5]] and still == [rows[6]]
    assert storage.get(table_id, rows[0].pk, b"s") == rows[0]
    storage.put(table_id, make_row(b"later", b"s"))  # writes go on as before the block
    assert len(list(storage.scan(table_id, 0, HASH_SPACE))) == 301


def test_an_error_inside_ends_the_block(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    _fill(storage, table_id, 3)
    with pytest.raises(RuntimeError), storage.bulk_reads():
        next(storage.scan(table_id, 0, HASH_SPACE))
        raise RuntimeError("the job failed")
    with storage.transaction():
        storage.put(table_id, make_row(b"after", b"s"))
    with storage.bulk_reads():
        assert len(list(storage.scan(table_id, 0, HASH_SPACE))) == 4


def test_sqlite_bulk_reads_see_the_committed_state_only(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "data")
    try:
        table_id = storage.create_table("t", b"{}")
        _fill(storage, table_id, 5)
        with storage.transaction():  # a request group still open (ADR 0002)
            storage.put(table_id, make_row(b"uncommitted", b"s"))
            with storage.bulk_reads():
                assert len(list(storage.scan(table_id, 0, HASH_SPACE))) == 5
            assert len(list(storage.scan(table_id, 0, HASH_SPACE))) == 6
        with storage.bulk_reads():
            assert len(list(storage.scan(table_id, 0, HASH_SPACE))) == 6
    finally:
        storage.close()


def _rss_file_kib() -> int:
    found = re.search(r"^RssFile:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    assert found is not None
    return int(found.group(1))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssFile from /proc")
def test_sqlite_bulk_reads_add_no_mapped_pages_to_rss(tmp_path: Path) -> None:
    """A scan of a 40 MB table on the serving connection maps its pages
    (RssFile grows by about the table); the same scan inside bulk_reads
    reads them with pread into a small cache (RssFile stays)."""
    directory = tmp_path / "data"
    storage = SQLiteStorage(directory)
    table_id = storage.create_table("t", b"{}")
    _fill(storage, table_id, 40_000, b'{"v":{"S":"' + PAD + b'"}}')
    storage.close()
    storage = SQLiteStorage(directory)  # a fresh mapping: nothing of the file touched yet
    try:
        before = _rss_file_kib()
        with storage.bulk_reads():
            assert sum(1 for _ in storage.scan(table_id, 0, HASH_SPACE)) == 40_000
        bulk_growth = _rss_file_kib() - before
        before = _rss_file_kib()
        assert sum(1 for _ in storage.scan(table_id, 0, HASH_SPACE)) == 40_000
        serving_growth = _rss_file_kib() - before
    finally:
        storage.close()
    assert serving_growth > 30_000, serving_growth  # the test can tell: the mapping does fill RSS
    assert bulk_growth < 4_000, bulk_growth
