"""TransactWriteItems: up to 100 Put, Update, Delete and ConditionCheck
actions across tables, all applied or none.

Order, as DynamoDB: the request's shape (1..100 actions, token length:
ops/shapes.py); each action's kind, values, expressions and item size; the
tables; each key; no item twice; the 4 MB aggregate. Then a retried
ClientRequestToken answers without applying again. Every action then runs
against the items as they are before any of them is written (one state; the
server runs one operation at a time, so nothing interleaves), and either
every write commits in one storage transaction through the Database's write
path (so indexes and streams see all of it or nothing) or the request fails
with TransactionCanceledException and one CancellationReason per action.

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
from dynastore.engine.item_ops import DeletePlan, Item, Mutation, PutPlan
from dynastore.engine.rows import item_of, row_for
from dynastore.engine.transactions import WriteAction
from dynastore.errors import ValidationException
from dynastore.faults import transaction_touches

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.storage.base import Row

OPERATION = "TransactWriteItems"


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    elements = request.get("TransactItems") or []
    actions = [transactions.parse_write_action(i, element) for i, element in enumerate(elements)]
    problems = [transactions.bind(action, database.table(action.table_name)) for action in actions]
    transactions.cancel_on_key_problems(problems)
    transactions.check_request(actions)
    token = request.get("ClientRequestToken")
    fingerprint = transactions.request_fingerprint(request) if token else b""
    if token and database.transaction_tokens.seen(token, fingerprint, database.now()):
        return _replay_response(database, request, actions)
    rows = [_read(database, action) for action in actions]
    conflicting: set[int] = set()
    if database.faults.armed:
        conflicting = database.faults.conflicting_actions(OPERATION, transaction_touches(elements))
    old_items = [_old_item(action, row) for action, row in zip(actions, rows, strict=True)]
    evaluation = transactions.evaluate(actions, old_items, conflicting, database.now())
    if evaluation.cancelled:
        error = transactions.cancelled(evaluation.reasons)
        units = transactions.write_units_by_table(actions, _cancelled_sizes(actions, rows))
        error.write_units_consumed = sum(units.values())  # type: ignore[attr-defined]
        raise error
    sizes, index_units = _write_all(database, actions, rows, evaluation.mutations)
    if token:
        database.transaction_tokens.remember(token, fingerprint, database.now())
    response: dict[str, Any] = {}
    mode = request.get("ReturnConsumedCapacity")
    if mode in ("TOTAL", "INDEXES"):
        units = transactions.write_units_by_table(actions, sizes)
        response["ConsumedCapacity"] = [
            _capacity(mode, name, table_units, index_units.get(name))
            for name, table_units in units.items()
        ]
    return response


def _capacity(mode: str, table_name: str, units: float, index_units: IndexUnits | None) -> Any:
    """A table's units and its indexes' (twice the plain index writes),
    listed in INDEXES mode and counted in the total of both modes."""
    doubled = {
        kind: {name: value * transactions.CAPACITY_FACTOR for name, value in per_index.items()}
        for kind, per_index in (index_units or {}).items()
    }
    capacity = consumed_capacity(mode, table_name, write=units, indexes=doubled)
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


def _write_all(
    database: Database,
    actions: list[WriteAction],
    rows: list[Row | None],
    mutations: list[Any],
) -> tuple[list[int], dict[str, IndexUnits]]:
    """Apply every mutation in one storage transaction; returns each action's
    capacity size (the larger of the item before and after) and the index
    write units per table."""
    sizes = []
    index_units: dict[str, IndexUnits] = {}
    with database.storage.transaction():
        for action, row, mutation in zip(actions, rows, mutations, strict=True):
            old_size = 0 if row is None else row.size
            if mutation is None:  # ConditionCheck
                sizes.append(old_size)
                continue
            schema = action.schema
            assert schema is not None
            try:
                written = _write(database, schema, row, mutation)
            except ValidationException as error:
                # e.g. an index key of the wrong type: this action's reason;
                # leaving the block rolls back every write made so far.
                raise _cancelled_by(len(actions), action.index, error) from None
            merge_units(index_units.setdefault(schema.name, {}), written)
            sizes.append(max(old_size, mutation.new_size))
    return sizes, index_units


def _write(database: Database, schema: TableSchema, row: Row | None, mutation: Mutation) -> IndexUnits | None:
    if mutation.new_item is not None:
        new_row = row_for(schema, mutation.new_item, mutation.new_size)
        return database.write_row(schema, new_row, row)
    if row is not None:
        return database.delete_row(schema, row)
    return None


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
            consumed_capacity(mode, name, read=table_units) for name, table_units in units.items()
        ]
    }
