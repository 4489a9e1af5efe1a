"""How a conditional commit (storage.base.Commit) becomes SQL on PostgreSQL.

One commit is one database transaction, sent as one pipeline (one round
trip; two when it has a ``Sequenced`` part, whose rows are computed in
Python under the head row's lock):

1. ``dynastore_check_table(table, generation)`` for every DynamoDB table the
   changes were computed for: a shared advisory lock, then the catalogue
   generation (DSC02 when another server changed the table meanwhile);
2. every change and check that expects something of its row, in one
   global key order (so two commits never wait for each other in a cycle),
   each wrapped so that it aborts the transaction with DSC01 unless it
   touched exactly one row:
   - a row read: ``UPDATE``/``DELETE ... AND xmin = <version read>``;
   - a row that must not exist: ``INSERT ... ON CONFLICT DO NOTHING``
     (PostgreSQL's own conflict detection: a concurrent insert of the same
     key, committed or not, makes it insert nothing);
   - a check of a row read: ``SELECT ... AND xmin = ... FOR SHARE``; of a
     row that must stay absent: a placeholder row inserted like an insert
     above (it holds the key against concurrent inserts) and removed
     before the commit ends;
3. the unconditional changes (index entries, queue rows, blind writes);
4. ``Sequenced`` heads: ``SELECT ... FOR UPDATE``, then the rows built from
   them.

Under READ COMMITTED a statement that waits for a row another transaction
holds re-checks its condition against the row that transaction left, so a
lost race always ends in DSC01, never in a lost update.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dynastore.storage.base import ABSENT, UNCONDITIONAL, Commit, Row, RowChange, RowCheck
from dynastore.types.keys import partition_hash

CONFLICT_SQLSTATE = "DSC01"
CATALOGUE_CHANGED_SQLSTATE = "DSC02"

_KEY = "table_id = %s AND pk_hash = %s AND pk = %s AND sk = %s"

CHECK_TABLE = "SELECT dynastore_check_table(%s, %s)"
UPDATE_IF = (
    "WITH changed AS (UPDATE dynastore_items SET item = %s, size = %s, by_transaction = %s"
    f" WHERE {_KEY} AND xmin::text = %s RETURNING 1)"
    " SELECT dynastore_expect(count(*), %s) FROM changed"
)
DELETE_IF = (
    f"WITH changed AS (DELETE FROM dynastore_items WHERE {_KEY} AND xmin::text = %s RETURNING 1)"
    " SELECT dynastore_expect(count(*), %s) FROM changed"
)
INSERT_IF_ABSENT = (
    "WITH changed AS (INSERT INTO dynastore_items"
    " (table_id, pk_hash, pk, sk, item, size, by_transaction) VALUES (%s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (table_id, pk_hash, pk, sk) DO NOTHING RETURNING 1)"
    " SELECT dynastore_expect(count(*), %s) FROM changed"
)
CHECK_UNCHANGED = (
    "SELECT dynastore_expect(count(*), %s) FROM"
    f" (SELECT 1 FROM dynastore_items WHERE {_KEY} AND xmin::text = %s FOR SHARE) AS still"
)
UPSERT = (
    "INSERT INTO dynastore_items (table_id, pk_hash, pk, sk, item, size, by_transaction)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (table_id, pk_hash, pk, sk) DO UPDATE"
    " SET item = excluded.item, size = excluded.size, by_transaction = excluded.by_transaction"
)
DELETE = f"DELETE FROM dynastore_items WHERE {_KEY}"
CLAIM_HEAD = (
    "INSERT INTO dynastore_items (table_id, pk_hash, pk, sk, item, size) VALUES (%s, %s, %s, %s, '', 0)"
    " ON CONFLICT (table_id, pk_hash, pk, sk) DO NOTHING"
)
"""A head row that does not exist yet is created empty first, so that its
row lock serialises the very first appends too (FOR UPDATE locks nothing
that is not there); an empty head reads as absent."""
LOCK_HEAD = f"SELECT pk_hash, pk, sk, item, size FROM dynastore_items WHERE {_KEY} FOR UPDATE"
PLACEHOLDER = b""
"""The item of a placeholder row (never committed: removed in its own transaction)."""


class Statement(NamedTuple):
    sql: str
    parameters: tuple[Any, ...]
    order: Any = None
    """Its place when several commits share one transaction (pipeline.py):
    table checks first by table, then rows by key; None runs after those."""


def _key(table_id: int, pk: bytes, sk: bytes) -> tuple[Any, ...]:
    return (table_id, partition_hash(pk), pk, sk)


def _order(entry: tuple[int, RowChange | RowCheck]) -> tuple[int, int, bytes, bytes]:
    _, change = entry
    return (change.table_id, partition_hash(change.pk), change.pk, change.sk)


def statements(commit: Commit) -> tuple[list[Statement], list[Statement]]:
    """The commit's statements before its ``Sequenced`` part, and the
    placeholder removals that must come last."""
    out = [Statement(CHECK_TABLE, (table_id, generation), (0, table_id))
           for table_id, generation in sorted(commit.generations.items())]
    by_transaction = commit.by_transaction
    conditional: list[tuple[int, RowChange | RowCheck]] = []
    unconditional: list[RowChange] = []
    for position, change in enumerate(commit.changes):
        if change.expected == UNCONDITIONAL:
            unconditional.append(change)
        else:
            conditional.append((position, change))
    offset = len(commit.changes)
    conditional += [(offset + index, check) for index, check in enumerate(commit.checks)]
    conditional.sort(key=_order)
    cleanup: list[Statement] = []
    for position, entry in conditional:
        key = _key(entry.table_id, entry.pk, entry.sk)
        order = (1, *key)
        if isinstance(entry, RowCheck):
            if entry.expected is ABSENT:
                out.append(Statement(INSERT_IF_ABSENT, (*key, PLACEHOLDER, 0, False, position), order))
                cleanup.append(Statement(DELETE, key))
            else:
                out.append(Statement(CHECK_UNCHANGED, (position, *key, str(entry.expected)), order))
            continue
        out.append(_conditional_change(entry, key, position, by_transaction)._replace(order=order))
    out += [unconditional_change(change, by_transaction) for change in unconditional]
    return out, cleanup


def _conditional_change(
    change: RowChange, key: tuple[Any, ...], position: int, by_transaction: bool
) -> Statement:
    row = change.row
    if change.expected is ABSENT:
        assert row is not None  # deleting a row that must not exist changes nothing
        return Statement(INSERT_IF_ABSENT, (*key, row.item, row.size, by_transaction, position))
    version = str(change.expected)
    if row is None:
        return Statement(DELETE_IF, (*key, version, position))
    return Statement(UPDATE_IF, (row.item, row.size, by_transaction, *key, version, position))


def claims(statements: list[Statement]) -> dict[Any, int]:
    """The rows a commit's statements expect something of (their order key)
    and the change or check each is (its position, the last parameter of
    every conditional statement but CHECK_UNCHANGED, whose first it is)."""
    found: dict[Any, int] = {}
    for statement in statements:
        order = statement.order
        if order is None or order[0] != 1:
            continue
        position = statement.parameters[0] if statement.sql is CHECK_UNCHANGED else statement.parameters[-1]
        found[order] = int(position)
    return found


def unconditional_change(change: RowChange, by_transaction: bool = False) -> Statement:
    row = change.row
    if row is None:
        return Statement(DELETE, _key(change.table_id, change.pk, change.sk))
    return Statement(UPSERT, (change.table_id, row.pk_hash, row.pk, row.sk, row.item, row.size, by_transaction))


def head_row(found: tuple[Any, ...] | None) -> Row | None:
    if found is None or found[3] == PLACEHOLDER:
        return None
    return Row._make(found)


def built_changes(head: Any, changes: list[RowChange], by_transaction: bool) -> list[Statement]:
    """The statements of what a Sequenced part built; an empty head it did
    not write is removed again."""
    out = [unconditional_change(change, by_transaction) for change in changes]
    if not any((change.table_id, change.pk, change.sk) == tuple(head) for change in changes):
        out.append(Statement(DELETE + " AND item = ''", _key(head.table_id, head.pk, head.sk)))
    return out


def head_statements(head: Any) -> list[Statement]:
    key = _key(head.table_id, head.pk, head.sk)
    return [Statement(CLAIM_HEAD, key), Statement(LOCK_HEAD, key)]
