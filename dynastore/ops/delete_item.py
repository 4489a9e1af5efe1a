"""DeleteItem: remove one item by its key, optionally under a condition.

Deleting an item that does not exist succeeds (and still costs 1 WCU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.capacity import write_units
from dynastore.engine.item_ops import ConditionFailed, DeletePlan, Item, apply, check_key
from dynastore.engine.rows import item_of
from dynastore.ops.put_item import (
    add_collection_metrics,
    add_write_capacity,
    check_return_values_old_only,
    condition_failed,
    size_of,
    write_expressions,
)
from dynastore.types.attribute_value import validate_item
from dynastore.write_path import DELETE, item_target, write_one

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    key = validate_item(request.get("Key") or {})
    condition, _ = write_expressions("DeleteItem", request)
    return_values = check_return_values_old_only(request.get("ReturnValues"))
    schema = database.table(request.get("TableName"))  # type: ignore[arg-type]
    check_key(schema, key)
    pk, sk = schema.encode_key(key)
    wants_old = condition is not None or return_values == "ALL_OLD"
    plan = DeletePlan(key, condition)
    now = database.now()
    old_items: list[Item | None] = [None]

    def decide(row: Row | None) -> Any:
        old_item = old_items[0] = item_of(row) if row is not None and wants_old else None
        outcome = apply(plan, old_item, now)
        if isinstance(outcome, ConditionFailed):
            raise condition_failed(request, outcome, write_units(size_of(row)))
        return DELETE

    written = write_one(database, item_target(schema, pk, sk), decide)
    response: dict[str, Any] = {}
    if return_values == "ALL_OLD" and old_items[0] is not None:
        response["Attributes"] = old_items[0]
    add_write_capacity(response, request, schema.name, size_of(written.old_row), 0, written.index_units)
    add_collection_metrics(database, response, request, schema, key)
    return response
