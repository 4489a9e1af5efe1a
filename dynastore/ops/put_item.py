"""PutItem: write a whole item, optionally under a condition.

Also home of the request handling shared by the single-item writes
(PutItem, DeleteItem, UpdateItem, and BatchWriteItem's requests): compiling
ConditionExpression/UpdateExpression or their legacy forms, ReturnValues,
ConditionalCheckFailedException, ConsumedCapacity.

Order of checks, as DynamoDB: the item's values; expression parameters and
their syntax; ReturnValues; the 400 KB item size — all before the table is
looked up — then the table, then the key attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import legacy
from dynastore.engine.capacity import consumed_capacity, write_units
from dynastore.engine.item_ops import (
    Condition,
    ConditionFailed,
    Item,
    PutPlan,
    Update,
    apply,
    check_item_key,
    check_item_size,
)
from dynastore.engine.rows import item_of, row_for
from dynastore.errors import ConditionalCheckFailedException, ValidationException
from dynastore.expressions import ExpressionContext, compile_condition, compile_update
from dynastore.expressions import cache as expression_cache
from dynastore.types.attribute_value import SetValidationError, validate_item
from dynastore.write_path import item_target, write_one

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.storage.base import Row

EXPRESSION_PARAMETERS = frozenset(
    (
        "ConditionExpression",
        "UpdateExpression",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
        "Expected",
        "ConditionalOperator",
        "AttributeUpdates",
    )
)
"""A write request without any of these has no condition and no update."""
MESSAGE_RETURN_VALUES_OLD_ONLY = "ReturnValues can only be ALL_OLD or NONE"
ENVELOPE = "1 validation error detected: "
"""PutItem and UpdateItem report some request-validation errors inside the
request-model envelope (captured from the live service by dynoxide)."""


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    item = validate_enveloped(request.get("Item"))
    condition, _ = enveloped_write_expressions("PutItem", request)
    return_values = check_return_values_old_only(request.get("ReturnValues"), enveloped=True)
    size_bytes = check_item_size(item)
    schema = database.table(request.get("TableName"))  # type: ignore[arg-type]
    check_item_key(schema, item)
    new_row = row_for(schema, item, size_bytes)
    # The item being replaced matters only to a condition, ALL_OLD, the
    # capacity report, indexes and streams; a plain put neither reads nor
    # decodes it (a blind write: one storage call).
    wants_old = condition is not None or return_values == "ALL_OLD"
    reads_old = wants_old or wants_capacity(request) or database.needs_old_rows(schema)
    plan = PutPlan(item, size_bytes, condition)
    now = database.now()
    old_items: list[Item | None] = [None]

    def decide(old_row: Row | None) -> Row:
        old_item = old_items[0] = item_of(old_row) if old_row is not None and wants_old else None
        outcome = apply(plan, old_item, now)
        if isinstance(outcome, ConditionFailed):
            raise condition_failed(request, outcome, write_units(max(size_of(old_row), size_bytes)))
        if schema.local_indexes:
            database.check_item_collection(schema, old_row, new_row)
        return new_row

    written = write_one(database, item_target(schema, new_row.pk, new_row.sk, reads_old), decide)
    response: dict[str, Any] = {}
    if return_values == "ALL_OLD" and old_items[0] is not None:
        response["Attributes"] = old_items[0]
    add_write_capacity(response, request, schema.name, size_of(written.old_row), size_bytes,
                       written.index_units)
    add_collection_metrics(database, response, request, schema, item)
    return response


def add_collection_metrics(
    database: Database,
    response: dict[str, Any],
    request: dict[str, Any],
    schema: TableSchema,
    key: dict[str, Any],
) -> None:
    """ItemCollectionMetrics, for ReturnItemCollectionMetrics=SIZE on a table with an LSI."""
    if request.get("ReturnItemCollectionMetrics") != "SIZE":
        return
    metrics = database.item_collection_metrics(schema, key)
    if metrics is not None:
        response["ItemCollectionMetrics"] = metrics


def wants_capacity(request: dict[str, Any]) -> bool:
    return request.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES")


def validate_enveloped(item: Any) -> dict[str, Any]:
    """An item's (or key's) values validated; set-shape errors come inside the
    request-model envelope, as PutItem and UpdateItem report them."""
    try:
        return validate_item(item if item is not None else {})
    except SetValidationError as error:
        raise ValidationException(ENVELOPE + str(error.message)) from None


def enveloped_write_expressions(
    operation: str, request: dict[str, Any], with_update: bool = False
) -> tuple[Condition | None, Update | None]:
    """``write_expressions`` for PutItem and UpdateItem, whose request-validation
    errors -- expression syntax and size, placeholders, unused or invalid
    ExpressionAttributeValues, legacy/expression mixing -- come inside the
    envelope; errors that depend on the table or the item stay bare (the family
    matrix dynoxide captured from the live service, eu-west-2)."""
    try:
        return write_expressions(operation, request, with_update)
    except ValidationException as error:
        message = str(error.message)
        if message.startswith(ENVELOPE):
            raise
        raise ValidationException(ENVELOPE + message) from None


# --- shared by the single-item writes ---------------------------------------------------


def write_expressions(
    operation: str, request: dict[str, Any], with_update: bool = False
) -> tuple[Condition | None, Update | None]:
    """The compiled condition (and update) of a write request, from its
    expressions or its legacy parameters; every ExpressionAttributeNames and
    ExpressionAttributeValues entry must be used."""
    if request.keys().isdisjoint(EXPRESSION_PARAMETERS):
        return None, None
    legacy.check_request(operation, request)
    condition_text = request.get("ConditionExpression")
    update_text = request.get("UpdateExpression") if with_update else None
    if condition_text is None and update_text is None:
        return _legacy_condition(request), _legacy_update(request) if with_update else None
    names = request.get("ExpressionAttributeNames")
    values = request.get("ExpressionAttributeValues")
    key = expression_cache.write_key(condition_text, update_text, names, values)
    if key is not None:
        known: tuple[Condition | None, Update | None] | None = expression_cache.compiled_write(key)
        if known is not None:
            return known
    context = ExpressionContext(names, values)
    update = compile_update(update_text, context) if update_text is not None else None
    condition = None
    if condition_text is not None:
        condition = compile_condition(condition_text, context, "ConditionExpression")
    context.check_all_used()
    # A request may use expressions for one parameter and nothing for the
    # other; legacy parameters were refused above (check_request).
    compiled = (condition, update)
    if key is not None:
        expression_cache.remember_write(key, compiled)
    return compiled


def _legacy_condition(request: dict[str, Any]) -> Condition | None:
    expected = request.get("Expected")
    if not expected:
        return None
    converted = legacy.expected_to_condition(expected, request.get("ConditionalOperator"))
    if converted is None:
        return None
    text, names, values = converted
    return compile_condition(
        text, ExpressionContext(names or None, values or None), "ConditionExpression"
    )


def _legacy_update(request: dict[str, Any]) -> Update | None:
    attribute_updates = request.get("AttributeUpdates")
    if not attribute_updates:
        return None
    converted = legacy.attribute_updates_to_update(attribute_updates)
    if converted is None:
        return None
    text, names, values = converted
    return compile_update(text, ExpressionContext(names or None, values or None))


def check_return_values_old_only(return_values: str | None, enveloped: bool = False) -> str:
    """PutItem and DeleteItem return nothing or the whole old item."""
    if return_values is None or return_values in ("NONE", "ALL_OLD"):
        return return_values or "NONE"
    prefix = ENVELOPE if enveloped else ""
    raise ValidationException(prefix + MESSAGE_RETURN_VALUES_OLD_ONLY)


def condition_failed(
    request: dict[str, Any], failed: ConditionFailed, write_units_consumed: float
) -> ConditionalCheckFailedException:
    """DynamoDB's error; with ReturnValuesOnConditionCheckFailure=ALL_OLD it
    carries the item as it is (when there is one).

    A failed conditional write still consumes write capacity, but DynamoDB's
    error response reports none, whatever ReturnConsumedCapacity asked; the
    units ride on the exception (``write_units_consumed``, never on the wire)
    for the server's own accounting."""
    wants_item = request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    if wants_item and failed.old_item is not None:
        error = ConditionalCheckFailedException(Item=failed.old_item)
    else:
        error = ConditionalCheckFailedException()
    error.write_units_consumed = write_units_consumed  # type: ignore[attr-defined]
    return error


def size_of(row: Row | None) -> int:
    return 0 if row is None else row.size


def add_write_capacity(
    response: dict[str, Any],
    request: dict[str, Any],
    table_name: str,
    old_size_bytes: int,
    new_size_bytes: int,
    index_units: dict[str, dict[str, float]] | None = None,
) -> None:
    """A write costs 1 WCU per KB of the larger of the item before and after,
    plus what its index entries cost (``index_units``, from the write path)."""
    if not wants_capacity(request):
        return
    mode = request["ReturnConsumedCapacity"]
    units = write_units(max(old_size_bytes, new_size_bytes))
    capacity = consumed_capacity(mode, table_name, write=units, indexes=index_units)
    if mode == "TOTAL" and capacity is not None and index_units:
        capacity["CapacityUnits"] += sum(sum(by_name.values()) for by_name in index_units.values())
    response["ConsumedCapacity"] = capacity
