"""TransactWriteItems: up to 100 Put, Update, Delete and ConditionCheck
actions across tables, all applied or none.

Order, as DynamoDB: the request's shape (1..100 actions, token length:
ops/shapes.py); each action's kind, values, expressions and item size; the
tables; each key; no item twice; the 4 MB aggregate. Then a retried
ClientRequestToken answers without applying again. Every action then runs
against the items as they are before any of them is written (one state),
and either every write, with the token's record, commits in one commit of
the write path (so indexes and streams see all of it or nothing, and the
commit is conditional on every item read, ConditionCheck items included) or
the request fails with TransactionCanceledException and one
CancellationReason per action. On a store several servers share, losing an
item to another transaction meanwhile cancels it with TransactionConflict
(dynastore/write_path.py).

Capacity: each action costs twice its plain write units, summed per table. A
cancelled transaction consumed them too; the error body has no place for
them, so they ride on the exception (``write_units_consumed``) for the
server's own accounting. A retry answered from the token book costs
transactional read units instead, as DynamoDB reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import transactions
from dynastore.engine.capacity import consumed_capacity
from dynastore.engine.indexes import IndexUnits, merge_units
from dynastore.engine.item_ops import (
    DeletePlan,
    Item,
    Mutation,
    PutPlan,
    UpdatePlan,
    creates_nothing,
)
from dynastore.engine.rows import item_of, row_for
from dynastore.engine.transactions import WriteAction
from dynastore.errors import ValidationException
from dynastore.faults import transaction_touches
from dynastore.storage.base import Row
from dynastore.types.keys import partition_hash
from dynastore.write_path import (
    DELETE,
    TRANSACTION,
    Decision,
    InvalidChange,
    Target,
    Written,
    item_target,
    write,
)

if TYPE_CHECKING:
    from dynastore.database import Database

OPERATION = "TransactWriteItems"


class _Replay(Exception):
    """The request's ClientRequestToken names a completed request: answer it again."""


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    elements = request.get("TransactItems") or []
    actions = [transactions.parse_write_action(i, element) for i, element in enumerate(elements)]
    problems = [transactions.bind(action, database.table(action.table_name)) for action in actions]
    if database.replication is not None:  # global tables: none of a STRONG one (dynastore/replication/strong.py)
        from dynastore.replication.strong import check_transaction

        check_transaction([database.table(action.table_name) for action in actions])
    transactions.cancel_on_key_problems(problems)
    transactions.check_request(actions)
    token = request.get("ClientRequestToken")
    fingerprint = transactions.request_fingerprint(request) if token else b""
    now = database.now()
    targets = [_target(action) for action in actions]
    token_key = token.encode() if token else b""
    if token:  # the token's record commits with the writes, or not at all
        targets.append(Target(database.tokens_id, token_key, b""))
    faulted: set[int] = set()
    if database.faults.armed:
        faulted = database.faults.conflicting_actions(OPERATION, transaction_touches(elements))

    def decide(rows: list[Row | None], conflicted: frozenset[int]) -> list[Decision]:
        if token and transactions.replays(None if rows[-1] is None else rows[-1].item, fingerprint, now):
            raise _Replay()
        item_rows = rows[: len(actions)]
        old_items = [_old_item(action, row) for action, row in zip(actions, item_rows, strict=True)]
        evaluation = transactions.evaluate(actions, old_items, faulted | conflicted, now)
        if evaluation.cancelled:
            error = transactions.cancelled(evaluation.reasons)
            units = transactions.write_units_by_table(actions, _cancelled_sizes(actions, item_rows))
            error.write_units_consumed = sum(units.values())  # type: ignore[attr-defined]
            raise error
        decisions = [_decision(action, mutation) for action, mutation in zip(actions, evaluation.mutations, strict=True)]
        if token:
            record = transactions.token_record(fingerprint, now)
            decisions.append(Row(partition_hash(token_key), token_key, b"", record, len(record)))
        return decisions

    try:
        written = write(database, targets, decide, conflicts=TRANSACTION)
    except _Replay:
        return _replay_response(database, request, actions)
    except InvalidChange as refused:
        # e.g. an index key of the wrong type: this action's reason.
        raise _cancelled_by(len(actions), refused.position, refused.error) from None
    response: dict[str, Any] = {}
    mode = request.get("ReturnConsumedCapacity")
    if mode in ("TOTAL", "INDEXES"):
        sizes, index_units = _sizes(actions, written[: len(actions)])
        units = transactions.write_units_by_table(actions, sizes)
        response["ConsumedCapacity"] = [
            _capacity(mode, name, table_units, index_units.get(name))
            for name, table_units in units.items()
        ]
    return response


def _target(action: WriteAction) -> Target:
    assert action.schema is not None
    return item_target(action.schema, *action.storage_key)


def _decision(action: WriteAction, mutation: Mutation | None) -> Decision:
    """The row an action writes (DELETE for a delete; None for a ConditionCheck)."""
    if mutation is None:
        return None
    if mutation.old_item is None and isinstance(action.plan, UpdatePlan) and creates_nothing(action.plan):
        return None  # as UpdateItem: only REMOVE/DELETE on a missing item creates nothing
    if mutation.new_item is None:
        return DELETE
    assert action.schema is not None
    return row_for(action.schema, mutation.new_item, mutation.new_size)


def _sizes(actions: list[WriteAction], written: list[Written]) -> tuple[list[int], dict[str, IndexUnits]]:
    """Each action's capacity size (the larger of the item before and after)
    and the index write units per table."""
    sizes = []
    index_units: dict[str, IndexUnits] = {}
    for action, outcome in zip(actions, written, strict=True):
        old_size = 0 if outcome.old_row is None else outcome.old_row.size
        new_size = 0 if outcome.new_row is None else outcome.new_row.size
        sizes.append(max(old_size, new_size))
        assert action.schema is not None
        merge_units(index_units.setdefault(action.schema.name, {}), outcome.index_units)
    return sizes, index_units


def _capacity(mode: str, table_name: str, units: float, index_units: IndexUnits | None) -> Any:
    """A table's units and its indexes' (twice the plain index writes),
    listed in INDEXES mode and counted in the total of both modes."""
    doubled = {
        kind: {name: value * transactions.CAPACITY_FACTOR for name, value in per_index.items()}
        for kind, per_index in (index_units or {}).items()
    }
    capacity = consumed_capacity(mode, table_name, write=units, indexes=doubled, split=True)
    if mode == "TOTAL" and capacity is not None and doubled:
        capacity["CapacityUnits"] += sum(sum(per.values()) for per in doubled.values())
    return capacity


def _read(database: Database, action: WriteAction) -> Row | None:
    assert action.schema is not None
    return database.storage.get(action.schema.table_id, *action.storage_key)


def _old_item(action: WriteAction, row: Row | None) -> Item | None:
    """The stored item, decoded only when the action's plan looks at it
    (a condition, an update); an unconditional Put or Delete does not."""
    if row is None:
        return None
    plan = action.plan
    if type(plan) in (PutPlan, DeletePlan) and plan.condition is None:  # type: ignore[union-attr]
        return None
    return item_of(row)


def _cancelled_by(count: int, failed: int, error: ValidationException) -> Exception:
    reasons = [
        transactions.cancellation_reason("ValidationError", error.message)
        if index == failed
        else transactions.cancellation_reason("None")
        for index in range(count)
    ]
    return transactions.cancelled(reasons)


def _cancelled_sizes(actions: list[WriteAction], rows: list[Row | None]) -> list[int]:
    """What each action of a cancelled transaction is charged on: the stored
    item, or the item a Put would have written when larger."""
    sizes = []
    for action, row in zip(actions, rows, strict=True):
        size_bytes = 0 if row is None else row.size
        if isinstance(action.plan, PutPlan):
            size_bytes = max(size_bytes, action.plan.size_bytes)
        sizes.append(size_bytes)
    return sizes


def _replay_response(
    database: Database, request: dict[str, Any], actions: list[WriteAction]
) -> dict[str, Any]:
    """A retry of a completed request: nothing applied again; DynamoDB
    reports the transactional read units of reading the items."""
    mode = request.get("ReturnConsumedCapacity")
    if mode not in ("TOTAL", "INDEXES"):
        return {}
    tables, sizes = [], []
    for action in actions:
        assert action.schema is not None
        row = _read(database, action)
        tables.append(action.schema.name)
        sizes.append(0 if row is None else row.size)
    units = transactions.read_units_by_table(tables, sizes)
    return {
        "ConsumedCapacity": [
            consumed_capacity(mode, name, read=table_units, split=True) for name, table_units in units.items()
        ]
    }
