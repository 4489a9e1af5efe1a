"""The write path's storage contract: ``read_for_write`` and ``commit``.

Every backend applies a commit all or nothing. A store other servers share
(PostgreSQL) also checks each expectation: two stores opened on one
database stand for two servers, and a commit computed from a row the other
one changed since it was read must change nothing and raise WriteConflict
(naming the change), CatalogueChanged for a table definition changed
meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynastore.storage import MemoryStorage, SQLiteStorage, Storage
from dynastore.storage.base import (
    ABSENT,
    CatalogueChanged,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    Sequenced,
    WriteConflict,
)
from dynastore.types.keys import partition_hash


def row(pk: bytes, item: bytes, sk: bytes = b"") -> Row:
    return Row(partition_hash(pk), pk, sk, item, len(item))


def put(table_id: int, new: Row, expected: int | None | Any = -1) -> RowChange:
    return RowChange(table_id, new.pk, new.sk, new, expected)


@pytest.fixture(params=("memory", "sqlite", "postgres"))
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "memory":
        store: Storage = MemoryStorage()
    elif request.param == "sqlite":
        store = SQLiteStorage(tmp_path / "data")
    else:
        from dynastore.storage.postgres import PostgresStorage

        store = PostgresStorage(request.getfixturevalue("postgres_server").new_schema())
    yield store
    store.close()


@pytest.fixture
def two_servers(postgres_server: Any) -> Iterator[tuple[Storage, Storage]]:
    """Two PostgreSQL stores on one (empty) database schema."""
    from dynastore.storage.postgres import PostgresStorage

    url = postgres_server.new_schema()
    first, second = PostgresStorage(url), PostgresStorage(url)
    yield first, second
    first.close()
    second.close()


def test_a_commit_applies_every_change(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    storage.put(table_id, row(b"gone", b"old"))
    (stored,) = storage.read_for_write([RowKey(table_id, b"gone", b"")])
    storage.commit(Commit(changes=[
        put(table_id, row(b"a", b"1"), ABSENT),
        put(table_id, row(b"b", b"2")),
        RowChange(table_id, b"gone", b"", None, stored.version),
    ]))
    assert storage.get(table_id, b"a", b"") == row(b"a", b"1")
    assert storage.get(table_id, b"b", b"") == row(b"b", b"2")
    assert storage.get(table_id, b"gone", b"") is None


def test_read_for_write_returns_rows_in_key_order_given(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    storage.put(table_id, row(b"x", b"1"))
    storage.put(table_id, row(b"y", b"2", sk=b"s"))
    found = storage.read_for_write([
        RowKey(table_id, b"y", b"s"), RowKey(table_id, b"missing", b""), RowKey(table_id, b"x", b""),
    ])
    assert [entry.row for entry in found] == [row(b"y", b"2", sk=b"s"), None, row(b"x", b"1")]


def test_a_sequenced_part_is_built_from_its_head_and_commits_with_the_rest(storage: Storage) -> None:
    table_id = storage.create_table("t", b"{}")
    head = RowKey(table_id, b"head", b"")

    def build(current: Row | None) -> list[RowChange]:
        number = 0 if current is None else int(current.item)
        return [put(table_id, row(b"head", str(number + 1).encode())),
                put(table_id, row(b"record", b"r", sk=str(number).encode()))]

    for _ in range(3):
        storage.commit(Commit(changes=[put(table_id, row(b"item", b"i"))], sequenced=[Sequenced(head, build)]))
    assert storage.get(table_id, b"head", b"") == row(b"head", b"3")
    assert storage.get(table_id, b"record", b"2") is not None


# --- shared stores: PostgreSQL as two servers ------------------------------------------


def test_a_stale_version_conflicts_and_changes_nothing(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    first.put(table_id, row(b"k", b"v1"))
    (seen_by_first,) = first.read_for_write([RowKey(table_id, b"k", b"")])
    (seen_by_second,) = second.read_for_write([RowKey(table_id, b"k", b"")])
    second.commit(Commit(changes=[put(table_id, row(b"k", b"v2"), seen_by_second.version)]))
    with pytest.raises(WriteConflict) as conflict:
        first.commit(Commit(changes=[
            put(table_id, row(b"other", b"x")),
            put(table_id, row(b"k", b"v3"), seen_by_first.version),
        ]))
    assert conflict.value.position == 1 and not conflict.value.by_transaction
    assert first.get(table_id, b"k", b"") == row(b"k", b"v2")
    assert first.get(table_id, b"other", b"") is None  # all or nothing


def test_two_inserts_of_one_missing_key_have_one_winner(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    first.commit(Commit(changes=[put(table_id, row(b"k", b"first"), ABSENT)]))
    with pytest.raises(WriteConflict):
        second.commit(Commit(changes=[put(table_id, row(b"k", b"second"), ABSENT)]))
    assert second.get(table_id, b"k", b"") == row(b"k", b"first")


def test_a_check_fails_when_its_row_changed_or_appeared(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    first.put(table_id, row(b"k", b"v1"))
    (seen,) = first.read_for_write([RowKey(table_id, b"k", b"")])
    second.put(table_id, row(b"k", b"v2"))
    with pytest.raises(WriteConflict) as conflict:
        first.commit(Commit(changes=[put(table_id, row(b"w", b"x"))],
                            checks=[RowCheck(table_id, b"k", b"", seen.version)]))
    assert conflict.value.position == 1  # checks follow the changes
    second.put(table_id, row(b"late", b"x"))
    with pytest.raises(WriteConflict):
        first.commit(Commit(changes=[put(table_id, row(b"w", b"x"))],
                            checks=[RowCheck(table_id, b"late", b"", ABSENT)]))
    assert first.get(table_id, b"w", b"") is None
    # A check of a row still absent passes, and leaves no placeholder behind.
    first.commit(Commit(changes=[put(table_id, row(b"w", b"x"))],
                        checks=[RowCheck(table_id, b"never", b"", ABSENT)]))
    assert first.get(table_id, b"never", b"") is None and first.get(table_id, b"w", b"") is not None


def test_the_conflict_says_when_a_transaction_wrote_the_row(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    first.put(table_id, row(b"k", b"v1"))
    (seen,) = first.read_for_write([RowKey(table_id, b"k", b"")])
    (other,) = second.read_for_write([RowKey(table_id, b"k", b"")])
    second.commit(Commit(changes=[put(table_id, row(b"k", b"v2"), other.version)], by_transaction=True))
    (after,) = first.read_for_write([RowKey(table_id, b"k", b"")])
    assert after.by_transaction
    with pytest.raises(WriteConflict) as conflict:
        first.commit(Commit(changes=[put(table_id, row(b"k", b"v3"), seen.version)]))
    assert conflict.value.by_transaction


def test_a_table_changed_by_another_server_refuses_the_commit(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    (record,) = first.load_tables()
    second.update_table_metadata(table_id, b'{"changed": true}')
    with pytest.raises(CatalogueChanged):
        first.commit(Commit(changes=[put(table_id, row(b"k", b"v"))], generations={table_id: record.generation}))
    assert first.get(table_id, b"k", b"") is None
    (fresh,) = first.load_tables()
    first.commit(Commit(changes=[put(table_id, row(b"k", b"v"))], generations={table_id: fresh.generation}))


def test_a_definition_changed_by_another_server_refuses_a_compare_and_set(
        two_servers: tuple[Storage, Storage]) -> None:
    """update_table_metadata with expected_generation writes only over the
    generation it was computed from (dynastore/backups/pitr.py's settings)."""
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    (record,) = first.load_tables()
    changed = second.update_table_metadata(table_id, b'{"by": "second"}', expected_generation=record.generation)
    assert changed == record.generation + 1
    with pytest.raises(CatalogueChanged):
        first.update_table_metadata(table_id, b'{"by": "first"}', expected_generation=record.generation)
    (now,) = first.load_tables()
    assert (now.metadata, now.generation) == (b'{"by": "second"}', changed)
    with first.transaction():  # the lock, then the compare-and-set, in one transaction
        first.lock_table(table_id)
        assert first.update_table_metadata(table_id, b'{"by": "first"}', expected_generation=changed) == changed + 1
    with pytest.raises(KeyError):
        first.update_table_metadata(10_000, b"{}", expected_generation=1)


def test_sequenced_heads_number_concurrent_commits_without_gaps(two_servers: tuple[Storage, Storage]) -> None:
    first, second = two_servers
    table_id = first.create_table("t", b"{}")
    head = RowKey(table_id, b"head", b"")

    def build(current: Row | None) -> list[RowChange]:
        number = 0 if current is None else int(current.item)
        return [put(table_id, row(b"head", str(number + 1).encode())),
                put(table_id, row(b"record", b"r", sk=b"%06d" % number))]

    def append(store: Storage) -> None:
        for _ in range(50):
            store.commit(Commit(sequenced=[Sequenced(head, build)]))

    threads = [threading.Thread(target=append, args=(store,)) for store in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert first.get(table_id, b"head", b"") == row(b"head", b"100")
    assert [entry.row is not None for entry in first.read_for_write(
        [RowKey(table_id, b"record", b"%06d" % number) for number in range(100)]
    )] == [True] * 100


def test_compare_and_set_changes_of_one_definition_from_two_servers_lose_nothing(
        two_servers: tuple[Storage, Storage]) -> None:
    """Two servers (two threads each) count in one table's metadata by
    read, change, compare-and-set, and read again when refused: the count
    is exact, and every refusal wrote nothing."""
    first, second = two_servers
    table_id = first.create_table("t", b"0")
    per_thread = 15

    def count(store: Storage) -> None:
        for _ in range(per_thread):
            while True:
                (record,) = [r for r in store.load_tables() if r.table_id == table_id]
                try:
                    store.update_table_metadata(table_id, str(int(record.metadata) + 1).encode(),
                                                expected_generation=record.generation)
                    break
                except CatalogueChanged:
                    continue  # another thread came first: read it again

    threads = [threading.Thread(target=count, args=(store,)) for store in (first, second, first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (record,) = second.load_tables()
    assert int(record.metadata) == 4 * per_thread
    assert record.generation == first.first_generation + 4 * per_thread
