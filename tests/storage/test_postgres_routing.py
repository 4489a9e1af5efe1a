"""Citus-ready routing, proven on plain PostgreSQL.

docs/postgres.md promises one distribution key family: every row of
``dynastore_items`` is keyed by (table_id, pk_hash, pk, sk) and distributed
by ``pk_hash``, the 32-bit hash of the row's own partition key: an item by
its partition key, a GSI entry by the index's, a stream record by its shard
id. Every statement of a single-item operation and of a Query names its
row's pk_hash, so on Citus each one is routed to one shard; a Scan segment
reads a pk_hash range.

Here dynastore creates its schema, then ``dynastore_items`` is declared
again ``PARTITION BY HASH (pk_hash)`` in PARTITIONS partitions, declarative
partitioning standing in for Citus's shards. The statements checked are the
ones dynastore sends (recorded off the driver, ``recorded``), or the
statements of ``commit.statements(...)`` of a commit, which the test also
sees ``PostgresStorage.commit`` send. Their parameters are bound client-side,
so EXPLAIN plans them with their values, as Citus's router planner would. The
relations of the plan's scan nodes and ModifyTable targets must then include
exactly one partition, the one PostgreSQL's hash bound assigns that pk_hash
to (``partition_of``). An INSERT's partition is not chosen in its plan but
when the row is routed at execution: its plan must read no partition and
insert a single VALUES row, and the row must then be found in its partition.

Custom plans are what is checked. dynastore prepares its statements
(``prepare=True``), and PostgreSQL may switch a prepared statement to a
generic plan; there the scan is pruned when the executor starts ("Subplans
Removed: 7"), but on plain PostgreSQL 15 an UPDATE or DELETE still lists
(and locks) every partition as a ModifyTable target. That is a property of
local partitioning, not of the statements: Citus prunes shards for each
execution of a prepared statement, from its parameter values.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import psycopg
import pytest

import dynastore
from dynastore.database import OUTBOX_PK
from dynastore.storage.base import (
    ABSENT,
    HASH_SPACE,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    Sequenced,
    SortKeyRange,
)
from dynastore.storage.postgres import PostgresStorage
from dynastore.storage.postgres import commit as commit_sql
from dynastore.storage.postgres import storage as storage_sql
from dynastore.types.keys import partition_hash

PARTITIONS = 8
ITEMS = "dynastore_items"
PRIMARY_KEY = "PRIMARY KEY (table_id, pk_hash, pk, sk)"

Connection = psycopg.Connection[Any]


# --- the schema, hash-partitioned ----------------------------------------------------
def _columns(connection: Connection) -> list[tuple[Any, ...]]:
    return connection.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attnotnull, pg_get_expr(adbin, adrelid)"
        " FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum"
        " WHERE attrelid = 'dynastore_items'::regclass AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum"
    ).fetchall()


def _primary_key(connection: Connection) -> tuple[str, str]:
    found = connection.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'dynastore_items'::regclass AND contype = 'p'"
    ).fetchone()
    assert found is not None, "dynastore_items has no primary key"
    return str(found[0]), str(found[1])


def partition_items_by_hash(connection: Connection) -> None:
    """Declare the (empty) dynastore_items again, PARTITION BY HASH (pk_hash):
    the same columns, defaults, constraints and indexes (LIKE ... INCLUDING
    ALL), in PARTITIONS partitions. Nothing is moved."""
    with connection.transaction():
        name, definition = _primary_key(connection)
        assert definition == PRIMARY_KEY
        assert connection.execute("SELECT count(*) FROM dynastore_items").fetchone() == (0,)
        connection.execute("ALTER TABLE dynastore_items RENAME TO dynastore_items_plain")
        connection.execute(
            f"ALTER TABLE dynastore_items_plain RENAME CONSTRAINT {name} TO dynastore_items_plain_pkey"
        )
        connection.execute(
            "CREATE TABLE dynastore_items (LIKE dynastore_items_plain INCLUDING ALL)"
            " PARTITION BY HASH (pk_hash)"
        )
        for remainder in range(PARTITIONS):
            connection.execute(
                f"CREATE TABLE dynastore_items_p{remainder} PARTITION OF dynastore_items"
                f" FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"
            )
        connection.execute("DROP TABLE dynastore_items_plain")


def partitioned_database(postgres_server: Any) -> str:
    """A new database whose dynastore schema has a hash-partitioned dynastore_items."""
    url: str = postgres_server.new_database()
    PostgresStorage(url).close()  # dynastore creates its schema (the migrations)
    with psycopg.connect(url, autocommit=True) as connection:
        before = (_columns(connection), _primary_key(connection))
        partition_items_by_hash(connection)
        assert (_columns(connection), _primary_key(connection)) == before
        kind = connection.execute("SELECT relkind FROM pg_class WHERE oid = 'dynastore_items'::regclass")
        assert kind.fetchone() == ("p",)
        children = connection.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'dynastore_items'::regclass"
        ).fetchone()
        assert children == (PARTITIONS,)
    return url


@pytest.fixture(scope="module")
def database(postgres_server: Any) -> str:
    """The storage-level tests' database (their tables are bare storage ids)."""
    return partitioned_database(postgres_server)


@pytest.fixture(scope="module")
def api_database(postgres_server: Any) -> str:
    """The API test's database (every table in it a DynamoDB table)."""
    return partitioned_database(postgres_server)


@pytest.fixture(scope="module")
def store(database: str) -> Iterator[PostgresStorage]:
    opened = PostgresStorage(database)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def connection(database: str) -> Iterator[Connection]:
    """A connection of the test's own: EXPLAIN, and where rows are."""
    with psycopg.connect(database, autocommit=True) as opened:
        yield opened


# --- what dynastore sends -------------------------------------------------------------
class Sent(NamedTuple):
    sql: str
    parameters: tuple[Any, ...]


@contextmanager
def recorded() -> Iterator[list[Sent]]:
    """Every statement this thread hands psycopg meanwhile (every cursor,
    pipelined or not), with its parameters, as dynastore wrote them."""
    sent: list[Sent] = []
    original = psycopg.Cursor.execute
    thread = threading.get_ident()

    def execute(self: Any, query: Any, params: Any = None, **options: Any) -> Any:
        if threading.get_ident() == thread:
            assert isinstance(query, str), query
            sent.append(Sent(query, tuple(params or ())))
        return original(self, query, params, **options)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        psycopg.Cursor.execute = original  # type: ignore[method-assign]


def planned(sent: Sequence[Sent]) -> list[Sent]:
    """The statements EXPLAIN can plan (not BEGIN, COMMIT, SET, LISTEN ...)."""
    return [entry for entry in sent if entry.sql.split(None, 1)[0].upper() in
            ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")]


# --- plans ----------------------------------------------------------------------------
class Plan(NamedTuple):
    read: list[str]
    """Relations of the scan nodes (Seq Scan, Index Scan, Bitmap Heap Scan, ...)."""
    written: list[str]
    """Partitions the ModifyTable nodes change (their Target Tables)."""
    inserts: list[dict[str, Any]]
    """The Insert nodes."""
    document: Any

    def partitions(self) -> list[str]:
        return sorted({name for name in self.read + self.written if name.startswith(ITEMS)})


def explain(connection: Connection, sql: str, parameters: Sequence[Any]) -> Plan:
    """EXPLAIN the statement with its parameters bound as literals (a custom
    plan, CTEs included). Nothing runs."""
    bound = psycopg.ClientCursor(connection).mogrify(sql, parameters)
    found = connection.execute("EXPLAIN (FORMAT JSON) " + bound).fetchone()
    assert found is not None
    plan = Plan([], [], [], found[0])

    def walk(node: dict[str, Any]) -> None:
        if node["Node Type"] == "ModifyTable":
            plan.written.extend(target["Relation Name"] for target in node.get("Target Tables", ()))
            if node["Operation"] == "Insert":
                plan.inserts.append(node)
        elif "Relation Name" in node:
            plan.read.append(node["Relation Name"])
        for child in node.get("Plans", ()):
            walk(child)

    for statement in plan.document:
        walk(statement["Plan"])
    return plan


_PARTITION_OF: dict[int, str] = {}


def partition_of(connection: Connection, pk_hash: int) -> str:
    """The partition PostgreSQL routes a row of this pk_hash to (its hash bound)."""
    if pk_hash not in _PARTITION_OF:
        rows = connection.execute(
            "SELECT remainder FROM generate_series(0, %s - 1) AS remainder"
            " WHERE satisfies_hash_partition('dynastore_items'::regclass, %s, remainder, %s::bigint)",
            (PARTITIONS, PARTITIONS, pk_hash),
        ).fetchall()
        assert len(rows) == 1
        _PARTITION_OF[pk_hash] = f"{ITEMS}_p{rows[0][0]}"
    return _PARTITION_OF[pk_hash]


def where_is(connection: Connection, table_id: int, pk: bytes, sk: bytes) -> tuple[int, str] | None:
    """(pk_hash, partition) of a stored row, looked up without its pk_hash
    (every partition is searched), so it is found wherever it went."""
    found = connection.execute(
        "SELECT pk_hash, tableoid::regclass::text FROM dynastore_items"
        " WHERE table_id = %s AND pk = %s AND sk = %s",
        (table_id, pk, sk),
    ).fetchall()
    assert len(found) <= 1
    return (int(found[0][0]), str(found[0][1])) if found else None


class Checked(NamedTuple):
    sql: str
    table_id: int
    pk: bytes
    sk: bytes
    partition: str
    insert: bool


def routing_key(parameters: Sequence[Any]) -> tuple[int, int, bytes, Any]:
    """(table_id, pk_hash, pk, the parameter after pk) a statement names:
    its pk_hash is the parameter right before the pk it is the hash of."""
    found = [
        tuple(parameters[index - 1:index + 3])
        for index in range(1, len(parameters) - 1)
        if type(parameters[index]) is int and isinstance(parameters[index + 1], bytes)
        and partition_hash(parameters[index + 1]) == parameters[index]
    ]
    assert len(found) == 1, f"no single (pk_hash, pk) among the parameters {parameters!r}"
    table_id, pk_hash, pk, after = found[0]
    return int(table_id), int(pk_hash), bytes(pk), after


def assert_one_partition(connection: Connection, sql: str, parameters: Sequence[Any], pk_hash: int) -> Plan:
    """The statement, planned with its values, touches exactly the partition
    of ``pk_hash``: its only partition read or changed; an INSERT reads none
    and inserts one VALUES row (routed by its pk_hash when it runs)."""
    plan = explain(connection, sql, parameters)
    expected = partition_of(connection, pk_hash)
    if plan.inserts:
        assert plan.partitions() == [], (
            f"an INSERT that reads partitions {plan.partitions()} (expected none: {expected}):\n{sql}")
        for node in plan.inserts:
            assert node["Relation Name"] == ITEMS
            sources = node["Plans"]
            assert [source["Node Type"] for source in sources] == ["Result"] and "Plans" not in sources[0], (
                f"an INSERT of anything but one VALUES row: {sources}\n{sql}")
        return plan
    assert plan.partitions() == [expected], (
        f"touches partitions {plan.partitions()}, expected only {expected} (pk_hash {pk_hash}):\n{sql}")
    return plan


def check(connection: Connection, sql: str, parameters: Sequence[Any]) -> Checked | None:
    """A statement dynastore sends: one of dynastore_items routes to the
    partition of the pk_hash it names; any other (the catalogue, the table
    check) touches no partition of it. None for the latter."""
    if ITEMS not in sql:
        assert explain(connection, sql, parameters).partitions() == [], sql
        return None
    table_id, pk_hash, pk, after = routing_key(parameters)
    plan = assert_one_partition(connection, sql, parameters, pk_hash)
    sk = after if isinstance(after, bytes) else b""
    return Checked(sql, table_id, pk, sk, partition_of(connection, pk_hash), bool(plan.inserts))


def assert_inserted_where_routed(connection: Connection, checked: Sequence[Checked], sent: Sequence[Sent]) -> None:
    """Every row an INSERT wrote is in the partition of its own pk_hash, or
    (a placeholder, an empty stream head) a later DELETE of the same sequence
    removed it again."""
    for position, entry in enumerate(checked):
        if not entry.insert:
            continue
        found = where_is(connection, entry.table_id, entry.pk, entry.sk)
        if found is None:
            assert any(later.sql.startswith(commit_sql.DELETE) and later.parameters[:1] == (entry.table_id,)
                       and later.parameters[2:4] == (entry.pk, entry.sk)
                       for later in sent[position:]), f"the row of {entry} is nowhere"
            continue
        assert found == (partition_hash(entry.pk), entry.partition), (entry, found)


def run_commit(store: PostgresStorage, connection: Connection, commit: Commit,
               sequenced_runs: Sequence[commit_sql.Statement] = ()) -> list[Checked | None]:
    """Check every statement of ``commit`` (planned against the rows as they
    stand before it, as dynastore's would be), then commit it, seeing that
    what PostgresStorage sends is exactly those statements; then where the
    inserted rows went. ``sequenced_runs``: the statements of its Sequenced
    part (they come after the others, before the cleanup)."""
    statements, cleanup = commit_sql.statements(commit)
    expected = [Sent(statement.sql, tuple(statement.parameters))
                for statement in [*statements, *sequenced_runs, *cleanup]]
    checked = [check(connection, entry.sql, entry.parameters) for entry in expected]
    with recorded() as sent:
        store.commit(commit)
    assert planned(sent) == expected
    assert_inserted_where_routed(connection, [entry for entry in checked if entry is not None],
                                 [entry for entry, done in zip(expected, checked, strict=True) if done is not None])
    return checked


def sqls(checked: Sequence[Checked | None]) -> list[str]:
    return [commit_sql.CHECK_TABLE if entry is None else entry.sql for entry in checked]


# --- test data ------------------------------------------------------------------------
def row(pk: bytes, item: bytes, sk: bytes = b"") -> Row:
    return Row(partition_hash(pk), pk, sk, item, len(item))


def keys_apart(connection: Connection, prefix: str, count: int) -> list[bytes]:
    """``count`` partition keys whose rows live in ``count`` different
    partitions, so a row sent to another row's partition is seen."""
    found: dict[str, bytes] = {}
    number = 0
    while len(found) < count:
        pk = f"{prefix}-{number}".encode()
        found.setdefault(partition_of(connection, partition_hash(pk)), pk)
        number += 1
    return list(found.values())


class Tables(NamedTuple):
    item: int
    gsi: int
    stream: int
    generations: dict[int, int]


@pytest.fixture
def tables(store: PostgresStorage) -> Tables:
    """A table's storage table, one of its GSI entries and one of its stream
    records (each its own table_id, as dynastore gives them)."""
    suffix = time.monotonic_ns()
    item = store.create_table(f"things{suffix}", b"{}")
    index = store.create_table(f"things{suffix}.index", b"{}")
    stream = store.create_table(f"things{suffix}.stream", b"{}")
    generations = {record.table_id: record.generation for record in store.load_tables()}
    return Tables(item, index, stream, {item: generations[item]})


# --- the tests ----------------------------------------------------------------------------
def test_dynastore_works_on_hash_partitioned_items(store: PostgresStorage, connection: Connection,
                                                    tables: Tables) -> None:
    pks = keys_apart(connection, "works", PARTITIONS)
    for pk in pks:
        store.put(tables.item, row(pk, b"v-" + pk, b"a"))
        store.put(tables.item, row(pk, b"w-" + pk, b"b"))
    store.commit(Commit(changes=[RowChange(tables.item, b"new", b"", row(b"new", b"n"), ABSENT)],
                        generations=tables.generations))
    assert store.get(tables.item, pks[0], b"a") == row(pks[0], b"v-" + pks[0], b"a")
    assert store.get(tables.item, b"new", b"") == row(b"new", b"n")
    assert [found.sk for found in store.query(tables.item, pks[1], SortKeyRange())] == [b"a", b"b"]
    scanned = list(store.scan(tables.item, 0, HASH_SPACE))
    assert len(scanned) == 2 * PARTITIONS + 1
    assert [(found.pk_hash, found.pk, found.sk) for found in scanned] == sorted(
        (found.pk_hash, found.pk, found.sk) for found in scanned)
    # Every row is in the partition partition_of names (the helper the other
    # tests trust), and the rows spread over all of them: real partitions.
    for pk, sk in [*((pk, b"a") for pk in pks), (b"new", b"")]:
        place = where_is(connection, tables.item, pk, sk)
        assert place == (partition_hash(pk), partition_of(connection, partition_hash(pk)))
    tableoids = connection.execute(
        "SELECT DISTINCT tableoid::regclass::text FROM dynastore_items WHERE table_id = %s", (tables.item,)
    ).fetchall()
    assert len(tableoids) == PARTITIONS
    store.delete(tables.item, pks[0], b"a")
    assert store.get(tables.item, pks[0], b"a") is None


def test_get_item_and_the_read_of_a_write_touch_one_partition(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    pk, sk = b"reader", b"sort"
    store.put(tables.item, row(pk, b"{}", sk))
    key = (tables.item, partition_hash(pk), pk, sk)
    with recorded() as sent:
        store.get(tables.item, pk, sk)  # GetItem
        store.read_for_write([RowKey(tables.item, pk, sk)])  # the read of PutItem, UpdateItem, DeleteItem
        with store.transaction():  # the locked read of a write that kept losing its row
            store.read_for_write([RowKey(tables.item, pk, sk)], lock=True)
    assert planned(sent) == [
        Sent(storage_sql._GET, key),
        Sent(storage_sql._READ_ONE_FOR_WRITE, key),
        Sent(storage_sql._READ_ONE_FOR_WRITE + " FOR UPDATE", key),
    ]
    for entry in planned(sent):
        assert_one_partition(connection, entry.sql, entry.parameters, partition_hash(pk))


@pytest.mark.parametrize("shape", ["between, limit", "begins_with, backward, limit", "after a start key"])
def test_a_query_touches_one_partition(
    store: PostgresStorage, connection: Connection, tables: Tables, shape: str
) -> None:
    pk = b"partition"
    for number in range(6):
        store.put(tables.item, row(pk, b"{}", b"s%d" % number))
    store.put(tables.item, row(b"other", b"{}", b"s1"))
    with recorded() as sent:
        if shape == "between, limit":
            found = list(store.query(tables.item, pk, SortKeyRange(b"s1", True, b"s4", True), expected_rows=2))
            assert [entry.sk for entry in found] == [b"s1", b"s2", b"s3", b"s4"]
        elif shape == "begins_with, backward, limit":
            found = list(store.query(tables.item, pk, SortKeyRange(prefix=b"s"), forward=False, expected_rows=1))
            assert len(found) == 6
        else:
            found = list(store.query(tables.item, pk, SortKeyRange(), exclusive_start_sk=b"s3"))
            assert [entry.sk for entry in found] == [b"s4", b"s5"]
    statements = planned(sent)
    assert statements, "the query sent nothing"
    for entry in statements:
        assert entry.sql in storage_sql._QUERY_SQL.values() and " LIMIT %s" in entry.sql
        assert entry.parameters[:3] == (tables.item, partition_hash(pk), pk)
        assert_one_partition(connection, entry.sql, entry.parameters, partition_hash(pk))
    if shape != "after a start key":
        assert len(statements) > 1  # the LIMIT was met, and the next page was read after it


def test_update_item_touches_one_partition_per_row(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """UpdateItem on a table with a GSI whose key changed: the item updated
    if still the version read, the old GSI entry deleted, the new one
    written, each row in the partition of its own partition key."""
    pk, old_index_pk, new_index_pk = keys_apart(connection, "update", 3)
    store.put(tables.item, row(pk, b"old", b"s"))
    store.put(tables.gsi, row(old_index_pk, b"old", pk))
    (stored,) = store.read_for_write([RowKey(tables.item, pk, b"s")])
    assert stored.row is not None
    checked = run_commit(store, connection, Commit(changes=[
        RowChange(tables.item, pk, b"s", row(pk, b"new", b"s"), stored.version),
        RowChange(tables.gsi, old_index_pk, pk, None),
        RowChange(tables.gsi, new_index_pk, pk, row(new_index_pk, b"new", pk)),
    ], generations=tables.generations))
    assert sqls(checked) == [commit_sql.CHECK_TABLE, commit_sql.UPDATE_IF, commit_sql.DELETE, commit_sql.UPSERT]
    assert [(entry.table_id, entry.pk) for entry in checked if entry is not None] == [
        (tables.item, pk), (tables.gsi, old_index_pk), (tables.gsi, new_index_pk)]
    assert store.get(tables.item, pk, b"s") == row(pk, b"new", b"s")
    assert store.get(tables.gsi, old_index_pk, pk) is None


def test_put_item_of_a_missing_item_touches_one_partition_per_row(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """PutItem that read no item (expected absent) and writes its GSI entry
    (an unconditional row of the index's table_id, under the index's key)."""
    pk, index_pk = keys_apart(connection, "insert", 2)
    (stored,) = store.read_for_write([RowKey(tables.item, pk, b"")])
    assert stored.row is None
    checked = run_commit(store, connection, Commit(changes=[
        RowChange(tables.item, pk, b"", row(pk, b"put"), ABSENT),
        RowChange(tables.gsi, index_pk, pk, row(index_pk, b"put", pk)),
    ], generations=tables.generations))
    assert sqls(checked) == [commit_sql.CHECK_TABLE, commit_sql.INSERT_IF_ABSENT, commit_sql.UPSERT]
    assert store.get(tables.gsi, index_pk, pk) == row(index_pk, b"put", pk)


def test_a_blind_put_item_touches_one_partition(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """PutItem without condition on a table without index or stream: one upsert."""
    (pk,) = keys_apart(connection, "blind", 1)
    for item in (b"first", b"second"):  # an insert, then a replacement (ON CONFLICT DO UPDATE)
        checked = run_commit(store, connection, Commit(changes=[RowChange(tables.item, pk, b"", row(pk, item))]))
        assert sqls(checked) == [commit_sql.UPSERT]
    assert store.get(tables.item, pk, b"") == row(pk, b"second")


def test_delete_item_touches_one_partition_per_row(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    pk, index_pk = keys_apart(connection, "delete", 2)
    store.put(tables.item, row(pk, b"doomed", b"s"))
    store.put(tables.gsi, row(index_pk, b"doomed", pk))
    (stored,) = store.read_for_write([RowKey(tables.item, pk, b"s")])
    checked = run_commit(store, connection, Commit(changes=[
        RowChange(tables.item, pk, b"s", None, stored.version),
        RowChange(tables.gsi, index_pk, pk, None),
    ], generations=tables.generations))
    assert sqls(checked) == [commit_sql.CHECK_TABLE, commit_sql.DELETE_IF, commit_sql.DELETE]
    assert store.get(tables.item, pk, b"s") is None and store.get(tables.gsi, index_pk, pk) is None


def test_condition_checks_touch_one_partition_each(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """TransactWriteItems' ConditionCheck: a row that must still be the
    version read (FOR SHARE), one that must stay absent (a placeholder
    inserted, then removed)."""
    present, missing, written = keys_apart(connection, "check", 3)
    store.put(tables.item, row(present, b"here"))
    (stored,) = store.read_for_write([RowKey(tables.item, present, b"")])
    checked = run_commit(store, connection, Commit(
        changes=[RowChange(tables.item, written, b"", row(written, b"w"), ABSENT)],
        checks=[RowCheck(tables.item, present, b"", stored.version), RowCheck(tables.item, missing, b"", ABSENT)],
        by_transaction=True, generations=tables.generations,
    ))
    by_pk = {entry.pk: entry.sql for entry in checked if entry is not None and entry.sql != commit_sql.DELETE}
    assert by_pk == {present: commit_sql.CHECK_UNCHANGED, missing: commit_sql.INSERT_IF_ABSENT,
                     written: commit_sql.INSERT_IF_ABSENT}
    assert sqls(checked)[-1] == commit_sql.DELETE  # the placeholder's removal
    assert where_is(connection, tables.item, missing, b"") is None


def test_a_stream_record_touches_the_partition_of_its_shard(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """A change of a table with a stream: its records are rows of the
    stream's table_id keyed by shard id, appended under the stream's head row."""
    pk, shard = keys_apart(connection, "stream", 2)
    head = RowKey(tables.stream, b"\x00head", b"")

    def build(found: Row | None) -> list[RowChange]:
        assert found is None
        return [RowChange(tables.stream, shard, b"000001", row(shard, b"record", b"000001")),
                RowChange(tables.stream, head.pk, head.sk, row(head.pk, b"next=2"))]

    sequenced = [*commit_sql.head_statements(head), *commit_sql.built_changes(head, build(None), False)]
    checked = run_commit(store, connection, Commit(
        changes=[RowChange(tables.item, pk, b"", row(pk, b"new"), ABSENT)],
        sequenced=[Sequenced(head, build)], generations=tables.generations,
    ), sequenced)
    assert sqls(checked) == [commit_sql.CHECK_TABLE, commit_sql.INSERT_IF_ABSENT, commit_sql.CLAIM_HEAD,
                             commit_sql.LOCK_HEAD, commit_sql.UPSERT, commit_sql.UPSERT]
    assert [(entry.table_id, entry.pk) for entry in checked[2:] if entry is not None] == [
        (tables.stream, head.pk), (tables.stream, head.pk), (tables.stream, shard), (tables.stream, head.pk)]
    assert store.get(tables.stream, shard, b"000001") == row(shard, b"record", b"000001")


@pytest.fixture(scope="module")
def api_connection(api_database: str) -> Iterator[Connection]:
    with psycopg.connect(api_database, autocommit=True) as opened:
        yield opened


def test_the_api_operations_touch_one_partition_per_statement(
    api_database: str, api_connection: Connection
) -> None:
    """What PutItem, UpdateItem, DeleteItem, GetItem and Query really send,
    through a boto3 client: on a plain table every statement of an operation
    touches the one partition of its item; on a table with a GSI and a
    stream each statement touches the partition of its own row (the item's,
    the GSI entry's, the stream shard's or the stream head's)."""
    suffix = time.monotonic_ns()
    plain, indexed = f"plain{suffix}", f"indexed{suffix}"
    key_schema = [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}]
    attributes = [{"AttributeName": name, "AttributeType": "S"} for name in "psg"]
    connection = api_connection
    with dynastore.open(api_database) as db:
        client = db.client()
        client.create_table(TableName=plain, KeySchema=key_schema, AttributeDefinitions=attributes[:2],
                            BillingMode="PAY_PER_REQUEST")
        client.create_table(
            TableName=indexed, KeySchema=key_schema, AttributeDefinitions=attributes, BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "ALL"},
                                     "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )

        def key(sort: str) -> dict[str, Any]:
            return {"p": {"S": "a"}, "s": {"S": sort}}

        def operations(table: str) -> list[tuple[str, Any]]:
            values = {":p": {"S": "a"}, ":low": {"S": "0"}, ":high": {"S": "5"}}
            return [
                ("PutItem", lambda: client.put_item(TableName=table, Item={**key("1"), "g": {"S": "x"}})),
                ("PutItem if absent", lambda: client.put_item(
                    TableName=table, Item={**key("2"), "g": {"S": "x"}},
                    ConditionExpression="attribute_not_exists(p)")),
                ("UpdateItem", lambda: client.update_item(
                    TableName=table, Key=key("1"), UpdateExpression="SET g = :g",
                    ExpressionAttributeValues={":g": {"S": "y"}}, ReturnValues="ALL_NEW")),
                ("GetItem", lambda: client.get_item(TableName=table, Key=key("1"))),
                ("Query", lambda: client.query(
                    TableName=table, KeyConditionExpression="p = :p AND s BETWEEN :low AND :high",
                    ExpressionAttributeValues=values, Limit=1)),
                ("DeleteItem", lambda: client.delete_item(TableName=table, Key=key("1"), ReturnValues="ALL_OLD")),
            ]

        seen: set[str] = set()
        for table in (plain, indexed):
            for operation, call in operations(table):
                with recorded() as sent:
                    call()
                statements = planned(sent)
                results = [check(connection, entry.sql, entry.parameters) for entry in statements]
                checked = [entry for entry in results if entry is not None]
                assert checked, f"{operation} on {table} sent no statement on {ITEMS}"
                assert_inserted_where_routed(connection, checked, [
                    entry for entry, result in zip(statements, results, strict=True) if result is not None])
                seen.update(entry.sql for entry in checked)
                if table == plain:
                    assert len({(entry.table_id, entry.pk) for entry in checked}) == 1, (operation, checked)
                    assert len({entry.partition for entry in checked}) == 1, (operation, checked)
                elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
                    # The item, its GSI entry, a stream record, the stream's head.
                    assert len({entry.table_id for entry in checked}) == 3, (operation, checked)
            if table == indexed:
                with recorded() as sent:
                    client.query(TableName=indexed, IndexName="by_g", KeyConditionExpression="g = :g",
                                 ExpressionAttributeValues={":g": {"S": "x"}})
                checked = [entry for entry in (check(connection, *entry) for entry in planned(sent)) if entry]
                # The index's partition, and (on a shared store, before a
                # GSI read) a look at the lagged-GSI outbox's one partition.
                assert checked[-1].sql in storage_sql._QUERY_SQL.values() and checked[-1].pk != OUTBOX_PK
                assert {entry.pk for entry in checked[:-1]} <= {OUTBOX_PK}, checked
                seen.update(entry.sql for entry in checked)
    assert {storage_sql._GET, storage_sql._READ_ONE_FOR_WRITE, commit_sql.UPDATE_IF, commit_sql.INSERT_IF_ABSENT,
            commit_sql.DELETE_IF, commit_sql.UPSERT, commit_sql.DELETE, commit_sql.CLAIM_HEAD,
            commit_sql.LOCK_HEAD} <= seen
    assert seen & set(storage_sql._QUERY_SQL.values())


def test_a_read_of_several_keys_touches_only_their_partitions(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """The one read of a BatchWriteItem or TransactWriteItems (not a
    single-item operation): the partitions of its keys, no other."""
    pks = keys_apart(connection, "many", 3)
    for pk in pks:
        store.put(tables.item, row(pk, b"{}"))
    with recorded() as sent:
        store.read_for_write([RowKey(tables.item, pk, b"") for pk in pks])
    (entry,) = planned(sent)
    assert entry.sql == storage_sql._read_many_sql(3)
    touched = explain(connection, entry.sql, entry.parameters).partitions()
    assert touched == sorted(partition_of(connection, partition_hash(pk)) for pk in pks)
    # Locked (a transaction that kept losing its rows): one statement a key,
    # in the global key order, each on its key's partition.
    with recorded() as sent, store.transaction():
        found = store.read_for_write([RowKey(tables.item, pk, b"") for pk in pks], lock=True)
    assert [stored.row.pk for stored in found if stored.row] == pks
    locked = planned(sent)
    assert [entry.sql for entry in locked] == [storage_sql._READ_ONE_FOR_WRITE + " FOR UPDATE"] * 3
    assert [entry.parameters[1] for entry in locked] == sorted(partition_hash(pk) for pk in pks)
    for entry in locked:
        assert_one_partition(connection, entry.sql, entry.parameters, entry.parameters[1])


def test_a_scan_segment_reads_a_hash_range(store: PostgresStorage, connection: Connection, tables: Tables) -> None:
    """A Scan segment reads the rows of a pk_hash range: hash partitions (and
    Citus's hash-distributed shards) cannot be pruned by a range of the
    hash, so this statement may touch several partitions, and does: EXPLAIN
    shows it reading every one of the PARTITIONS partitions (an Append of
    one index scan per partition under the ORDER BY ... LIMIT). Asserted:
    only that it runs and reads its range."""
    pks = keys_apart(connection, "scan", PARTITIONS)
    for pk in pks:
        store.put(tables.item, row(pk, b"{}"))
    low, high = 0, HASH_SPACE // 2
    with recorded() as sent:
        found = list(store.scan(tables.item, low, high))
    assert sorted(entry.pk for entry in found) == sorted(pk for pk in pks if low <= partition_hash(pk) < high)
    (entry,) = planned(sent)
    assert entry.sql == storage_sql._SCAN_FIRST
    explain(connection, entry.sql, entry.parameters)


def test_a_statement_without_its_pk_hash_is_caught(
    store: PostgresStorage, connection: Connection, tables: Tables
) -> None:
    """The checks above fail for a statement that lost its pk_hash filter
    (it reads every partition), or an INSERT that is not one VALUES row."""
    pk = b"lost"
    store.put(tables.item, row(pk, b"{}"))
    assert " AND pk_hash = %s" in storage_sql._GET and " AND pk_hash = %s" in commit_sql.UPDATE_IF
    with pytest.raises(AssertionError, match="touches partitions"):
        assert_one_partition(connection, storage_sql._GET.replace(" AND pk_hash = %s", ""),
                             (tables.item, pk, b""), partition_hash(pk))
    with pytest.raises(AssertionError, match="touches partitions"):
        assert_one_partition(connection, commit_sql.UPDATE_IF.replace(" AND pk_hash = %s", ""),
                             (b"x", 1, False, tables.item, pk, b"", "1", 0), partition_hash(pk))
    with pytest.raises(AssertionError, match="INSERT that reads partitions"):
        assert_one_partition(connection, "INSERT INTO dynastore_items SELECT table_id, pk_hash + 1, pk, sk,"
                             " item, size FROM dynastore_items WHERE table_id = %s AND pk = %s",
                             (tables.item, pk), partition_hash(pk))
    # And the partition must be the row's own: the right statement, another row's hash.
    other = next(other for other in keys_apart(connection, "other", 2)
                 if partition_of(connection, partition_hash(other)) != partition_of(connection, partition_hash(pk)))
    with pytest.raises(AssertionError, match="touches partitions"):
        assert_one_partition(connection, storage_sql._GET, (tables.item, partition_hash(pk), pk, b""),
                             partition_hash(other))
