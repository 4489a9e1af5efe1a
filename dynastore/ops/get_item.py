"""GetItem: read one item by its key.

The fast path: with no projection the stored item bytes are the answer, so
the response is built around them (``{"Item":<stored bytes>}``) without
decoding the item. Reads cost 1 RCU per 4 KB strongly consistent, half of
that eventually consistent, and the minimum even when nothing is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.engine import legacy
from dynastore.engine.capacity import consumed_capacity, read_units
from dynastore.engine.item_ops import check_key
from dynastore.engine.rows import item_of
from dynastore.expressions import ExpressionContext, Projection, compile_projection
from dynastore.types.attribute_value import validate_item

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row

PROJECTION_PARAMETERS = frozenset(
    ("ProjectionExpression", "AttributesToGet", "ExpressionAttributeNames", "ExpressionAttributeValues")
)
"""A read without any of these returns whole items."""

def handle(database: Database, request: dict[str, Any]) -> dict[str, Any] | bytes:
    key = validate_item(request.get("Key") or {})
    projection = read_projection("GetItem", request)
    schema = database.table(request.get("TableName"))  # type: ignore[arg-type]
    check_key(schema, key)
    pk, sk = schema.encode_key(key)
    row = database.storage.get(schema.table_id, pk, sk)
    capacity = read_capacity(request, schema.name, row)
    if projection is None:
        return item_response_bytes(row, capacity)
    response: dict[str, Any] = {}
    if row is not None:
        response["Item"] = projection.apply(item_of(row))
    if capacity is not None:
        response["ConsumedCapacity"] = capacity
    return response


def read_projection(operation: str, request: dict[str, Any]) -> Projection | None:
    """The compiled ProjectionExpression or AttributesToGet of a read, or None
    for the whole item. ``request`` is the operation's request, or one
    table's entry of a BatchGetItem."""
    if request.keys().isdisjoint(PROJECTION_PARAMETERS):
        return None
    legacy.check_request(operation, request)
    text = request.get("ProjectionExpression")
    if text is not None:
        context = ExpressionContext(request.get("ExpressionAttributeNames"), None)
        projection = compile_projection(text, context)
        context.check_all_used()
        return projection
    attributes = request.get("AttributesToGet")
    if attributes is None:
        return None
    text, names, values = legacy.attributes_to_get_to_projection(attributes)
    return compile_projection(text, ExpressionContext(names or None, values or None))


def read_capacity(request: dict[str, Any], table_name: str, row: Row | None) -> Any:
    mode = request.get("ReturnConsumedCapacity")
    if mode is None or mode == "NONE":
        return None
    units = read_units(0 if row is None else row.size, bool(request.get("ConsistentRead")))
    return consumed_capacity(mode, table_name, read=units)


def item_response_bytes(row: Row | None, capacity: dict[str, Any] | None) -> bytes:
    """The serialised response around the stored item bytes, not decoding them."""
    if capacity is None:
        return b"{}" if row is None else b'{"Item":' + row.item + b"}"
    capacity_bytes = orjson.dumps(capacity)
    if row is None:
        return b'{"ConsumedCapacity":' + capacity_bytes + b"}"
    return b'{"Item":' + row.item + b',"ConsumedCapacity":' + capacity_bytes + b"}"
