"""TransactGetItems and TransactWriteItems: passed through; after a
successful TransactWriteItems the written items are read back into the
item cache, as DAX does (docs/dax.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.dax.expressions import Renderer
from dynastore.dax.items import (
    KeySchema,
    item_from_parts,
    put_projection,
    stream_item,
)
from dynastore.dax.methods import (
    ON_CONDITION_FAILURE_NAMES,
    P_CLIENT_TOKEN,
    TRANSACT_OPERATIONS,
    common_parameters,
    enum_parameter,
    key_schema,
    parameters,
    put_capacity_map,
    put_collection_metrics_by_table,
    result_of,
    text_argument,
)
from dynastore.dax.wire import (
    SUCCESS,
    MalformedFrame,
    decode_key,
    put_array_head,
    put_bytes,
    put_null,
    put_text,
)
from dynastore.errors import (
    TransactionCanceledException,
    ValidationException,
)

if TYPE_CHECKING:
    from dynastore.dax.service import DaxService, Session


# --- transactions (passed through; written items refreshed in the item cache) ---------------


def array_argument(value: Any, size: int | None, what: str) -> list[Any]:
    if value is None and size is not None:
        return [None] * size
    if not isinstance(value, list | tuple) or (size is not None and len(value) != size):
        raise MalformedFrame(f"{what} must be an array of one entry per item")
    return list(value)


def transact_get_items(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    tables = [text_argument(name, "TableName") for name in array_argument(arguments[0], None, "tableNames")]
    keys = array_argument(arguments[1], len(tables), "keys")
    projections = array_argument(arguments[2], len(tables), "projectionExpressions")
    schemas = [key_schema(session.database, table) for table in tables]
    paths = [None if projection is None else Renderer().projection(projection)[1] for projection in projections]
    request: dict[str, Any] = {"TransactItems": [
        {"Get": {"TableName": table, "Key": decode_key(key, schema)}}
        for table, key, schema in zip(tables, keys, schemas, strict=True)
    ]}
    common_parameters(request, parameters(arguments[3]))
    result = result_of(session.database, "TransactGetItems", request)
    out = bytearray(SUCCESS)
    put_array_head(out, 2)
    responses = result.get("Responses") or []
    put_array_head(out, len(responses))
    for response, schema, item_paths in zip(responses, schemas, paths, strict=False):
        item = response.get("Item")
        if item is None:
            put_null(out)
        elif item_paths is not None:
            put_projection(out, item, item_paths)
        else:
            put_bytes(out, stream_item(item, schema, service.lists))
    capacities = result.get("ConsumedCapacity") or []
    put_array_head(out, len(capacities))
    for capacity in capacities:
        put_capacity_map(out, capacity)
    return bytes(out)


def transact_write_items(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    operations = array_argument(arguments[0], None, "operations")
    count = len(operations)
    tables = [text_argument(name, "TableName") for name in array_argument(arguments[1], count, "tableNames")]
    keys, values = array_argument(arguments[2], count, "keys"), array_argument(arguments[3], count, "values")
    on_failure = array_argument(arguments[5], count, "returnValuesOnConditionCheckFailure")
    conditions = array_argument(arguments[6], count, "conditionExpressions")
    updates = array_argument(arguments[7], count, "updateExpressions")
    schemas = [key_schema(session.database, table) for table in tables]
    actions = []
    for index in range(count):
        actions.append(transact_action(service, operations[index], tables[index], schemas[index], keys[index],
                                       values[index], on_failure[index], conditions[index], updates[index]))
    given = parameters(arguments[8])
    request: dict[str, Any] = {"TransactItems": actions}
    common_parameters(request, given)
    if P_CLIENT_TOKEN in given:
        request["ClientRequestToken"] = given[P_CLIENT_TOKEN]
    try:
        result = result_of(session.database, "TransactWriteItems", request)
    except TransactionCanceledException as error:
        error.dax_reasons = cancellation_reasons_bytes(  # type: ignore[attr-defined]
            service, error.extra_fields.get("CancellationReasons") or [], schemas)
        raise
    refresh_written(service, session, actions, tables, schemas, keys)
    out = bytearray(SUCCESS)
    put_array_head(out, 3)
    put_null(out)
    capacities = result.get("ConsumedCapacity") or []
    put_array_head(out, len(capacities))
    for capacity in capacities:
        put_capacity_map(out, capacity)
    put_collection_metrics_by_table(out, result.get("ItemCollectionMetrics") or {})
    return bytes(out)


def cancellation_reasons_bytes(service: DaxService, reasons: list[dict[str, Any]],
                               schemas: list[KeySchema]) -> bytes:
    """A cancelled transaction's reasons as the DAX clients read them: code,
    message (or null) and the item (its non-key attributes, or null) for
    each action, one flat array."""
    out = bytearray()
    put_array_head(out, 3 * len(reasons))
    for reason, schema in zip(reasons, schemas, strict=False):
        put_text(out, str(reason.get("Code", "None")))
        message = reason.get("Message")
        put_null(out) if message is None else put_text(out, str(message))
        item = reason.get("Item")
        if item is None:
            put_null(out)
        else:
            put_bytes(out, stream_item(item, schema, service.lists))
    return bytes(out)


def transact_action(service: DaxService, operation: Any, table: str, schema: KeySchema, key_bytes: Any,
                    values: Any, on_failure: Any, condition: Any, update: Any) -> dict[str, Any]:
    kind = TRANSACT_OPERATIONS.get(operation) if type(operation) is int else None
    if kind is None:
        raise ValidationException(f"Unknown TransactWriteItems operation {operation!r}")
    key = decode_key(key_bytes, schema)
    renderer = Renderer()
    action: dict[str, Any] = {"TableName": table}
    if kind == "Put":
        action["Item"] = item_from_parts(key, values, service.lists)
    else:
        action["Key"] = key
    if condition is not None:
        action["ConditionExpression"] = renderer.condition(condition, "c")
    if update is not None:
        action["UpdateExpression"] = renderer.update(update)
    if on_failure is not None and on_failure != 1:
        action["ReturnValuesOnConditionCheckFailure"] = enum_parameter(
            ON_CONDITION_FAILURE_NAMES, on_failure, "ReturnValuesOnConditionCheckFailure")
    action.update(renderer.request_fields())
    return {kind: action}


def refresh_written(service: DaxService, session: Session, actions: list[dict[str, Any]], tables: list[str],
                    schemas: list[KeySchema], keys: list[Any]) -> None:
    """As DAX does after a transaction: read the written items back and
    keep them in the item cache (capacity of the read is not reported)."""
    written = [index for index, action in enumerate(actions) if "ConditionCheck" not in action]
    if not written or not service.item_cache.enabled:
        return
    result = result_of(session.database, "TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": tables[index], "Key": decode_key(keys[index], schemas[index])}} for index in written
    ]})
    for index, response in zip(written, result.get("Responses") or [], strict=False):
        service.cache_item((session.namespace, tables[index], bytes(keys[index])), response.get("Item"),
                           schemas[index])
