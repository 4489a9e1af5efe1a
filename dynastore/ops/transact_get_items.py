"""TransactGetItems: up to 100 Gets across tables, read as one snapshot.

The server runs one operation at a time (docs/adr/0000-execution-model.md),
so every Get of a request sees the same state: never half of a
TransactWriteItems. Each Get may carry a ProjectionExpression. The answer has
one entry per Get in order: ``{"Item": ...}``, or ``{}`` when the item does
not exist. Each item costs twice its strongly consistent read units (a
missing one the minimum, 2), summed per table. A TransactionConflict fault
rule covering a Get cancels the request, as a conflicting write would on
DynamoDB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.engine import transactions
from dynastore.engine.capacity import consumed_capacity
from dynastore.engine.item_ops import Item
from dynastore.engine.rows import item_of
from dynastore.engine.schema import TableSchema
from dynastore.errors import ValidationException
from dynastore.expressions import Projection
from dynastore.faults import transaction_touches
from dynastore.ops.get_item import read_projection
from dynastore.storage.base import RowKey
from dynastore.types.attribute_value import validate_item

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row

OPERATION = "TransactGetItems"
MESSAGE_ONE_GET = "TransactItems can only contain Get"
"""(dynastore's wording: the service model already requires Get; this
covers an element with nothing else in it.)"""


@dataclass(slots=True)
class GetAction:
    table_name: str
    key: Item
    projection: Projection | None
    schema: TableSchema | None = None


def handle(database: Database, request: dict[str, Any]) -> bytes:
    elements = request.get("TransactItems") or []
    gets = [_parse_get(element) for element in elements]
    problems = []
    for get in gets:
        get.schema = database.table(get.table_name)
        problems.append(transactions.key_problem(get.schema, get.key))
    transactions.cancel_on_key_problems(problems)
    if database.replication is not None:  # global tables: none of a STRONG one (dynastore/replication/strong.py)
        from dynastore.replication.strong import check_transaction

        check_transaction([get.schema for get in gets if get.schema is not None])
    _refuse_duplicates(gets)
    if database.faults.armed:
        conflicting = database.faults.conflicting_actions(OPERATION, transaction_touches(elements))
        if conflicting:
            raise _conflict(len(gets), conflicting)
    # One read of every item: one snapshot, so a transaction that committed
    # meanwhile (on this server or another) is seen whole or not at all.
    keys = []
    for get in gets:
        assert get.schema is not None
        keys.append(RowKey(get.schema.table_id, *get.schema.encode_key(get.key)))
    rows = [stored.row for stored in database.storage.read_for_write(keys)]
    body: dict[str, Any] = {"Responses": [_response(get, row) for get, row in zip(gets, rows, strict=True)]}
    mode = request.get("ReturnConsumedCapacity")
    if mode in ("TOTAL", "INDEXES"):
        units = transactions.read_units_by_table(
            [get.table_name if get.schema is None else get.schema.name for get in gets],
            [0 if row is None else row.size for row in rows],
        )
        body["ConsumedCapacity"] = [
            consumed_capacity(mode, name, read=table_units, split=True) for name, table_units in units.items()
        ]
    return orjson.dumps(body)


def _parse_get(element: Any) -> GetAction:
    get = element.get("Get") if isinstance(element, dict) else None
    if not isinstance(get, dict):
        raise ValidationException(MESSAGE_ONE_GET)
    # Names without a ProjectionExpression are accepted (and ignored) here.
    projection = read_projection("GetItem", get) if "ProjectionExpression" in get else None
    key = validate_item(get.get("Key") or {})
    return GetAction(get.get("TableName"), key, projection)  # type: ignore[arg-type]


def _refuse_duplicates(gets: list[GetAction]) -> None:
    seen: set[tuple[str, bytes, bytes]] = set()
    for get in gets:
        assert get.schema is not None
        identity = (get.schema.name, *get.schema.encode_key(get.key))
        if identity in seen:
            raise ValidationException(transactions.MESSAGE_SAME_ITEM)
        seen.add(identity)


def _response(get: GetAction, row: Row | None) -> dict[str, Any]:
    if row is None:
        return {}
    if get.projection is None:
        return {"Item": orjson.Fragment(row.item)}
    projected = get.projection.apply(item_of(row))
    # DynamoDB leaves Item out when the projection matched nothing (dynoxide).
    return {"Item": projected} if projected else {}


def _conflict(count: int, conflicting: set[int]) -> Exception:
    reasons = [
        transactions.cancellation_reason("TransactionConflict", transactions.MESSAGE_CONFLICT)
        if index in conflicting
        else transactions.cancellation_reason("None")
        for index in range(count)
    ]
    return transactions.cancelled(reasons)
