"""UpdateItem: change some attributes of one item, creating it if absent.

Without an UpdateExpression (or AttributeUpdates) the item is created with
just its key, or left as it is. Key attributes can never be updated. The
read-modify-write goes through the write path (dynastore/write_path.py):
its commit is conditional on the item read, so concurrent updates of one
item, even from several servers, never lose a change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.capacity import write_units
from dynastore.engine.item_ops import (
    Condition,
    ConditionFailed,
    Item,
    Mutation,
    Update,
    UpdatePlan,
    apply,
    check_key,
    creates_nothing,
    refuse_key_updates,
    update_size_overhead,
)
from dynastore.engine.rows import item_of, row_for
from dynastore.expressions import cache as parse_cache
from dynastore.ops.put_item import (
    add_collection_metrics,
    add_write_capacity,
    condition_failed,
    enveloped_write_expressions,
    size_of,
    validate_enveloped,
)
from dynastore.write_path import item_target, write_one

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    key = validate_enveloped(request.get("Key"))
    condition, update = _expressions(request)
    return_values = request.get("ReturnValues") or "NONE"
    schema = database.table(request.get("TableName"))  # type: ignore[arg-type]
    check_key(schema, key)
    if update is not None:
        refuse_key_updates(schema, update.top_level_names)
    pk, sk = schema.encode_key(key)
    plan = UpdatePlan(key, update, condition, _size_overhead(update))
    now = database.now()
    outcomes: list[Mutation] = []

    def decide(row: Row | None) -> Row | None:
        old_item = item_of(row) if row is not None else None
        outcome = apply(plan, old_item, now, None if row is None else row.size)
        if isinstance(outcome, ConditionFailed):
            raise condition_failed(request, outcome, write_units(size_of(row)))
        assert outcome.new_item is not None
        if row is None and creates_nothing(plan):
            outcomes[:] = [Mutation(None, None, outcome.new_size)]
            return None
        outcomes[:] = [outcome]
        new_row = row_for(schema, outcome.new_item, outcome.new_size)
        if schema.local_indexes:
            database.check_item_collection(schema, row, new_row)
        return new_row

    written = write_one(database, item_target(schema, pk, sk), decide)
    outcome = outcomes[0]
    response: dict[str, Any] = {}
    attributes = returned_attributes(return_values, plan, outcome)
    if attributes:
        response["Attributes"] = attributes
    add_write_capacity(response, request, schema.name, size_of(written.old_row), outcome.new_size,
                       written.index_units)
    add_collection_metrics(database, response, request, schema, key)
    return response


def _expressions(request: dict[str, Any]) -> tuple[Condition | None, Update | None]:
    return enveloped_write_expressions("UpdateItem", request, with_update=True)


def _size_overhead(update: Update | None) -> int:
    """The update's actions, from the parse cache (parsed once per text)."""
    if update is None:
        return 0
    actions = parse_cache.update(update.text).actions
    return update_size_overhead(action.keyword for action in actions)


def returned_attributes(return_values: str, plan: UpdatePlan, outcome: Mutation) -> Item | None:
    """ReturnValues: the whole item or just the updated paths, before or after."""
    if return_values == "ALL_OLD":
        return outcome.old_item
    if return_values == "ALL_NEW":
        return outcome.new_item
    if plan.update is None:
        return None
    if return_values == "UPDATED_OLD" and outcome.old_item is not None:
        return plan.update.updated_attributes(outcome.old_item)
    if return_values == "UPDATED_NEW" and outcome.new_item is not None:
        return plan.update.updated_attributes(outcome.new_item)
    return None
