"""DAX's methods: each decodes its arguments into the DynamoDB request the
HTTP API would get, runs it through ``ops.dispatch`` (the same validation,
engine and write path as HTTP), and encodes the result in DAX's shape.

The caches sit here (docs/dax.md): eventually consistent GetItem and
BatchGetItem read the item cache, Query and Scan the query cache (keyed by
the request's bytes); writes made through DAX update the item cache and
leave the query cache alone; strongly consistent reads and transactions
pass through.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.dax import wire
from dynastore.dax.cache import MISSING
from dynastore.dax.expressions import Renderer
from dynastore.dax.items import (
    KeySchema,
    item_from_parts,
    key_schema_of,
    partial_stream_item,
    put_projection,
    stream_item,
)
from dynastore.dax.wire import (
    SUCCESS,
    MalformedFrame,
    decode_key,
    encode_key,
    put_array_head,
    put_attribute_value,
    put_bytes,
    put_float,
    put_int,
    put_map_head,
    put_null,
    put_text,
)
from dynastore.errors import (
    ResourceNotFoundException,
    ValidationException,
    table_not_found,
)
from dynastore.ops import dispatch
from dynastore.types.attribute_value import validate_item

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.dax.service import DaxService, Session

# --- method ids (as the clients number them) --------------------------------------
AUTHORIZE_CONNECTION = 1489122155
BATCH_GET_ITEM = -697851100
BATCH_WRITE_ITEM = 116217951
DEFINE_ATTRIBUTE_LIST = 670678385
DEFINE_ATTRIBUTE_LIST_ID = -1230579644
DEFINE_KEY_SCHEMA = -742646399
DELETE_ITEM = 1013539361
ENDPOINTS = 455855874
GET_ITEM = 263244906
PUT_ITEM = -2106490455
QUERY = -931250863
SCAN = -1875390620
TRANSACT_GET_ITEMS = 1866287579
TRANSACT_WRITE_ITEMS = -1160037738
UPDATE_ITEM = 1425579023

ARGUMENT_COUNTS = {
    AUTHORIZE_CONNECTION: 5, BATCH_GET_ITEM: 2, BATCH_WRITE_ITEM: 2,
    DEFINE_ATTRIBUTE_LIST: 1, DEFINE_ATTRIBUTE_LIST_ID: 1, DEFINE_KEY_SCHEMA: 1,
    DELETE_ITEM: 3, ENDPOINTS: 0, GET_ITEM: 3, PUT_ITEM: 4, QUERY: 3, SCAN: 2,
    TRANSACT_GET_ITEMS: 4, TRANSACT_WRITE_ITEMS: 9, UPDATE_ITEM: 3,
}
"""How many items follow each method id: a request ends after them."""

OPERATION_NAMES = {
    BATCH_GET_ITEM: "BatchGetItem", BATCH_WRITE_ITEM: "BatchWriteItem", DELETE_ITEM: "DeleteItem",
    GET_ITEM: "GetItem", PUT_ITEM: "PutItem", QUERY: "Query", SCAN: "Scan",
    TRANSACT_GET_ITEMS: "TransactGetItems", TRANSACT_WRITE_ITEMS: "TransactWriteItems",
    UPDATE_ITEM: "UpdateItem",
}
"""The DynamoDB operation behind each data method (the others are DAX's own)."""

# --- request parameters (the keys of a request's parameter map) --------------------
P_PROJECTION, P_NAMES, P_CONSISTENT, P_CAPACITY, P_CONDITION, P_VALUES = 0, 1, 2, 3, 4, 5
P_COLLECTION_METRICS, P_RETURN_VALUES, P_UPDATE, P_START_KEY, P_FILTER, P_INDEX = 6, 7, 8, 9, 10, 11
P_KEY_CONDITION, P_LIMIT, P_FORWARD, P_SELECT, P_SEGMENT, P_TOTAL_SEGMENTS = 12, 13, 14, 15, 16, 17
P_CLIENT_TOKEN = 19

# --- response parameters --------------------------------------------------------------
R_ITEM, R_CAPACITY, R_ATTRIBUTES, R_COLLECTION_METRICS = 0, 1, 2, 3
R_ITEMS, R_COUNT, R_LAST_KEY, R_SCANNED_COUNT = 7, 8, 9, 10

CAPACITY_NAMES = {0: "NONE", 1: "TOTAL", 2: "INDEXES"}
RETURN_VALUES_NAMES = {1: "NONE", 2: "ALL_OLD", 3: "UPDATED_OLD", 4: "ALL_NEW", 5: "UPDATED_NEW"}
COLLECTION_METRICS_NAMES = {0: "NONE", 1: "SIZE"}
SELECT_NAMES = {1: "ALL_ATTRIBUTES", 2: "ALL_PROJECTED_ATTRIBUTES", 3: "COUNT", 4: "SPECIFIC_ATTRIBUTES"}
ON_CONDITION_FAILURE_NAMES = {1: "NONE", 2: "ALL_OLD"}
TRANSACT_OPERATIONS = {12: "ConditionCheck", 2: "Put", 7: "Delete", 9: "Update"}

# CONSUMED_CAPACITY map codes (transactions answer consumed capacity as maps)
C_UNITS, C_READ_UNITS, C_WRITE_UNITS, C_TABLE_NAME, C_TABLE, C_GLOBAL, C_LOCAL = 1, 2, 3, 4, 5, 6, 7

Method = Callable[["DaxService", "Session", list[Any], bytes], bytes]


# --- arguments ----------------------------------------------------------------------


def text_argument(value: Any, what: str) -> str:
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedFrame(f"{what} is not UTF-8") from None
    if isinstance(value, str):
        return value
    raise MalformedFrame(f"{what} must be a string")


def parameters(value: Any) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedFrame("a request's parameters must be a map")
    return value


def enum_parameter(names: dict[int, str], value: Any, what: str) -> str:
    name = names.get(value) if type(value) is int else None
    if name is None:
        raise ValidationException(f"Unknown {what} value {value!r}")
    return name


def key_schema(database: Database, table: str) -> KeySchema:
    """The table's key; a missing table is the data plane's ResourceNotFoundException."""
    try:
        return key_schema_of(database.table(table))
    except ResourceNotFoundException:
        if database.storage.exclusive or not database.refresh_catalogue(check=True):
            raise table_not_found() from None
    try:  # another server over the same store created it (PostgreSQL)
        return key_schema_of(database.table(table))
    except ResourceNotFoundException:
        raise table_not_found() from None


def result_of(database: Database, operation: str, request: dict[str, Any]) -> dict[str, Any]:
    """The DynamoDB operation's result, as a dict (the same call as HTTP's)."""
    result = dispatch(database, operation, request)
    return orjson.loads(result) if type(result) is bytes else result  # type: ignore[return-value]


def common_parameters(request: dict[str, Any], given: dict[Any, Any]) -> None:
    """ReturnConsumedCapacity, ReturnValues, ReturnItemCollectionMetrics."""
    if P_CAPACITY in given:
        request["ReturnConsumedCapacity"] = enum_parameter(CAPACITY_NAMES, given[P_CAPACITY], "ReturnConsumedCapacity")
    if P_RETURN_VALUES in given:
        request["ReturnValues"] = enum_parameter(RETURN_VALUES_NAMES, given[P_RETURN_VALUES], "ReturnValues")
    if P_COLLECTION_METRICS in given:
        request["ReturnItemCollectionMetrics"] = enum_parameter(
            COLLECTION_METRICS_NAMES, given[P_COLLECTION_METRICS], "ReturnItemCollectionMetrics"
        )


def expression_parameters(request: dict[str, Any], given: dict[Any, Any], renderer: Renderer) -> None:
    if P_CONDITION in given:
        request["ConditionExpression"] = renderer.condition(given[P_CONDITION], "c")
    if P_UPDATE in given:
        request["UpdateExpression"] = renderer.update(given[P_UPDATE])
    if P_FILTER in given:
        request["FilterExpression"] = renderer.condition(given[P_FILTER], "f", "FilterExpression")


# --- answers ----------------------------------------------------------------------------


def put_units(out: bytearray, units: Any) -> None:
    put_float(out, float(units))


def put_index_units(out: bytearray, indexes: dict[str, Any] | None) -> None:
    if not indexes:
        put_null(out)
        return
    put_map_head(out, len(indexes))
    for name, units in indexes.items():
        put_text(out, name)
        put_units(out, units.get("CapacityUnits", 0))


def consumed_capacity_bytes(capacity: dict[str, Any]) -> bytes:
    """One ConsumedCapacity as the byte string item operations answer."""
    out = bytearray()
    put_text(out, capacity.get("TableName", ""))
    put_units(out, capacity.get("CapacityUnits", 0))
    table = capacity.get("Table")
    if table is None:
        put_null(out)
    else:
        put_units(out, table.get("CapacityUnits", 0))
    put_index_units(out, capacity.get("GlobalSecondaryIndexes"))
    put_index_units(out, capacity.get("LocalSecondaryIndexes"))
    return bytes(out)


def put_capacity_map(out: bytearray, capacity: dict[str, Any]) -> None:
    """One ConsumedCapacity as the map transactions answer (CONSUMED_CAPACITY codes)."""
    fields: list[tuple[int, Any]] = []
    for code, name in ((C_UNITS, "CapacityUnits"), (C_READ_UNITS, "ReadCapacityUnits"),
                       (C_WRITE_UNITS, "WriteCapacityUnits")):
        if name in capacity:
            fields.append((code, float(capacity[name])))
    if "TableName" in capacity:
        fields.append((C_TABLE_NAME, capacity["TableName"]))
    put_map_head(out, len(fields) + sum(
        1 for name in ("Table", "GlobalSecondaryIndexes", "LocalSecondaryIndexes") if name in capacity
    ))
    for code, value in fields:
        put_int(out, code)
        if isinstance(value, str):
            put_text(out, value)
        else:
            put_float(out, value)
    if "Table" in capacity:
        put_int(out, C_TABLE)
        put_capacity_map(out, capacity["Table"])
    for code, name in ((C_GLOBAL, "GlobalSecondaryIndexes"), (C_LOCAL, "LocalSecondaryIndexes")):
        if name in capacity:
            put_int(out, code)
            put_map_head(out, len(capacity[name]))
            for index, units in capacity[name].items():
                put_text(out, index)
                put_capacity_map(out, units)


def collection_metrics_bytes(metrics: dict[str, Any]) -> bytes:
    out = bytearray()
    key = metrics.get("ItemCollectionKey") or {}
    put_attribute_value(out, next(iter(key.values()), {"NULL": True}))
    low, high = (metrics.get("SizeEstimateRangeGB") or [0.0, 0.0])[:2]
    put_float(out, float(low))
    put_float(out, float(high))
    return bytes(out)


def answer_map(fields: list[tuple[int, Callable[[bytearray], None]]]) -> bytes:
    out = bytearray(SUCCESS)
    put_map_head(out, len(fields))
    for code, write in fields:
        put_int(out, code)
        write(out)
    return bytes(out)


def capacity_field(result: dict[str, Any]) -> list[tuple[int, Callable[[bytearray], None]]]:
    capacity = result.get("ConsumedCapacity")
    if not capacity:
        return []
    encoded = consumed_capacity_bytes(capacity)
    return [(R_CAPACITY, lambda out: put_bytes(out, encoded))]


def zero_capacity(table: str, request: dict[str, Any]) -> dict[str, Any]:
    """What a read the cache answered consumed of DynamoDB: nothing."""
    if request.get("ReturnConsumedCapacity", "NONE") == "NONE":
        return {}
    capacity: dict[str, Any] = {"TableName": table, "CapacityUnits": 0.0}
    if request["ReturnConsumedCapacity"] == "INDEXES":
        capacity["Table"] = {"CapacityUnits": 0.0}
    return {"ConsumedCapacity": capacity}


def put_capacity_list(out: bytearray, capacities: list[dict[str, Any]]) -> None:
    put_array_head(out, len(capacities))
    for capacity in capacities:
        put_bytes(out, consumed_capacity_bytes(capacity))


def put_collection_metrics_by_table(out: bytearray, metrics: dict[str, list[dict[str, Any]]]) -> None:
    put_map_head(out, len(metrics))
    for table, entries in metrics.items():
        put_text(out, table)
        put_array_head(out, len(entries))
        for entry in entries:
            put_bytes(out, collection_metrics_bytes(entry))


# --- DAX's own methods ---------------------------------------------------------------


def endpoints(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    """Cluster discovery: this one node, the leader, at the address the client reached."""
    host, port = session.local_address
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    out = bytearray(SUCCESS)
    put_array_head(out, 1)
    put_map_head(out, 7)
    put_int(out, 0)
    put_int(out, 0)  # node id
    put_int(out, 1)
    put_text(out, service.hostname or host)
    put_int(out, 2)
    put_bytes(out, socket.inet_pton(family, host.split("%", 1)[0]))
    put_int(out, 3)
    put_int(out, port)
    put_int(out, 4)
    put_int(out, 1)  # role: leader
    put_int(out, 5)
    put_text(out, session.database.region + "a")
    put_int(out, 6)
    put_int(out, 0)  # leader session id
    return bytes(out)


def define_key_schema(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    schema = key_schema(session.database, text_argument(arguments[0], "TableName"))
    out = bytearray(SUCCESS)
    put_map_head(out, len(schema))
    for name, kind in schema:
        put_text(out, name)
        put_text(out, kind)
    return bytes(out)


def define_attribute_list_id(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    names = arguments[0]
    if not isinstance(names, list | tuple) or not all(isinstance(name, str) for name in names):
        raise MalformedFrame("an attribute list must be an array of strings")
    out = bytearray(SUCCESS)
    put_int(out, service.lists.id_of(tuple(names)))
    return bytes(out)


def define_attribute_list(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    names = service.lists.names_of(arguments[0])
    out = bytearray(SUCCESS)
    put_array_head(out, len(names))
    for name in names:
        put_text(out, name)
    return bytes(out)


# --- single-item methods ----------------------------------------------------------------


class ItemRequest:
    """The parts every single-item method decodes the same way."""

    __slots__ = ("table", "schema", "key", "key_bytes", "given", "request", "renderer")

    def __init__(self, session: Session, arguments: list[Any], parameters_at: int) -> None:
        self.table = text_argument(arguments[0], "TableName")
        self.schema = key_schema(session.database, self.table)
        self.key_bytes = bytes(arguments[1]) if isinstance(arguments[1], bytes | bytearray) else b""
        self.key = decode_key(arguments[1], self.schema)
        self.given = parameters(arguments[parameters_at])
        self.request: dict[str, Any] = {"TableName": self.table}
        self.renderer = Renderer()
        common_parameters(self.request, self.given)
        expression_parameters(self.request, self.given, self.renderer)

    def finish(self) -> dict[str, Any]:
        self.request.update(self.renderer.request_fields())
        return self.request


def get_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    parts = ItemRequest(session, arguments, 2)
    given, request = parts.given, parts.request
    consistent = bool(given.get(P_CONSISTENT, False))
    if consistent:
        request["ConsistentRead"] = True
    paths = None
    if P_PROJECTION in given:
        _, paths = parts.renderer.projection(given[P_PROJECTION])
    request["Key"] = parts.key
    request = parts.finish()
    database = session.database
    cache_key = (session.namespace, parts.table, parts.key_bytes)
    if not consistent:
        cached = service.item_cache.get(cache_key, database.now())
        if cached is not MISSING:
            if paths is None and request.get("ReturnConsumedCapacity", "NONE") == "NONE":
                return cached.answer  # type: ignore[no-any-return]
            return item_answer(service, cached.item, parts.schema, paths, zero_capacity(parts.table, request))
    result = result_of(database, "GetItem", request)
    item = result.get("Item")
    if not consistent:
        service.cache_item(cache_key, item, parts.schema)
    return item_answer(service, item, parts.schema, paths, result)


def item_answer(service: DaxService, item: dict[str, Any] | None, schema: KeySchema,
                paths: list[list[str | int]] | None, result: dict[str, Any]) -> bytes:
    fields: list[tuple[int, Callable[[bytearray], None]]] = []
    if item is not None:
        if paths is None:
            encoded = stream_item(item, schema, service.lists)
            fields.append((R_ITEM, lambda out: put_bytes(out, encoded)))
        else:
            found_paths = paths
            fields.append((R_ITEM, lambda out: put_projection(out, item, found_paths)))
    return answer_map(fields + capacity_field(result))


def write_answer(service: DaxService, result: dict[str, Any], schema: KeySchema, return_values: str) -> bytes:
    fields: list[tuple[int, Callable[[bytearray], None]]] = []
    attributes = result.get("Attributes")
    if attributes:
        if return_values in ("UPDATED_OLD", "UPDATED_NEW"):
            encoded = partial_stream_item(attributes, service.lists)
        else:
            encoded = stream_item(attributes, schema, service.lists)
        fields.append((R_ATTRIBUTES, lambda out: put_bytes(out, encoded)))
    fields += capacity_field(result)
    metrics = result.get("ItemCollectionMetrics")
    if metrics:
        metrics_bytes = collection_metrics_bytes(metrics)
        fields.append((R_COLLECTION_METRICS, lambda out: put_bytes(out, metrics_bytes)))
    return answer_map(fields)


def put_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    parts = ItemRequest(session, arguments, 3)
    item = item_from_parts(parts.key, arguments[2], service.lists)
    parts.request["Item"] = item
    request = parts.finish()
    result = result_of(session.database, "PutItem", request)
    service.cache_item((session.namespace, parts.table, parts.key_bytes), validate_item(item), parts.schema)
    return write_answer(service, result, parts.schema, request.get("ReturnValues", "NONE"))


def update_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    parts = ItemRequest(session, arguments, 2)
    parts.request["Key"] = parts.key
    request = parts.finish()
    asked = request.get("ReturnValues", "NONE")
    cache_key = (session.namespace, parts.table, parts.key_bytes)
    if asked in ("NONE", "ALL_NEW"):  # the new item comes back: write it through
        result = result_of(session.database, "UpdateItem", {**request, "ReturnValues": "ALL_NEW"})
        service.cache_item(cache_key, result.get("Attributes"), parts.schema)
        if asked == "NONE":
            result.pop("Attributes", None)
    else:  # the answer holds part of an item: read the new one back, as DAX does
        result = result_of(session.database, "UpdateItem", request)
        fresh = result_of(session.database, "GetItem",
                          {"TableName": parts.table, "Key": parts.key, "ConsistentRead": True})
        service.cache_item(cache_key, fresh.get("Item"), parts.schema)
    return write_answer(service, result, parts.schema, asked)


def delete_item(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    parts = ItemRequest(session, arguments, 2)
    parts.request["Key"] = parts.key
    request = parts.finish()
    result = result_of(session.database, "DeleteItem", request)
    service.cache_item((session.namespace, parts.table, parts.key_bytes), None, parts.schema)
    return write_answer(service, result, parts.schema, request.get("ReturnValues", "NONE"))


# --- Query and Scan --------------------------------------------------------------------


def query(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    table = text_argument(arguments[0], "TableName")
    renderer = Renderer()
    request: dict[str, Any] = {"TableName": table}
    if arguments[1] is not None:
        request["KeyConditionExpression"] = renderer.condition(arguments[1], "k", "KeyConditionExpression")
    return read_many(service, session, "Query", request, parameters(arguments[2]), renderer, raw)


def scan(service: DaxService, session: Session, arguments: list[Any], raw: bytes) -> bytes:
    table = text_argument(arguments[0], "TableName")
    return read_many(service, session, "Scan", {"TableName": table}, parameters(arguments[1]), Renderer(), raw)


def read_many(service: DaxService, session: Session, operation: str, request: dict[str, Any],
              given: dict[Any, Any], renderer: Renderer, raw: bytes) -> bytes:
    database = session.database
    schema = key_schema(database, request["TableName"])
    consistent = bool(given.get(P_CONSISTENT, False))
    if not consistent:
        cached = service.query_cache.get((session.namespace, raw), database.now())
        if cached is not MISSING:
            return cached  # type: ignore[no-any-return]
    read_parameters(request, given, renderer, schema)
    paths = None
    if P_PROJECTION in given:
        request["ProjectionExpression"], paths = renderer.projection(given[P_PROJECTION])
    request.update(renderer.request_fields())
    result = result_of(database, operation, request)
    answer = many_answer(service, result, schema, paths, "IndexName" in request)
    if not consistent:
        service.cache_query((session.namespace, raw), answer)
    return answer


def read_parameters(request: dict[str, Any], given: dict[Any, Any], renderer: Renderer, schema: KeySchema) -> None:
    if P_INDEX in given:
        request["IndexName"] = text_argument(given[P_INDEX], "IndexName")
    if P_SELECT in given:
        request["Select"] = enum_parameter(SELECT_NAMES, given[P_SELECT], "Select")
    if P_LIMIT in given:
        request["Limit"] = given[P_LIMIT]
    if P_CONSISTENT in given:
        request["ConsistentRead"] = bool(given[P_CONSISTENT])
    if P_FORWARD in given:
        request["ScanIndexForward"] = bool(given[P_FORWARD])
    if P_SEGMENT in given:
        request["Segment"] = given[P_SEGMENT]
    if P_TOTAL_SEGMENTS in given:
        request["TotalSegments"] = given[P_TOTAL_SEGMENTS]
    if P_START_KEY in given:
        request["ExclusiveStartKey"] = start_key(given[P_START_KEY], schema, "IndexName" in request)
    common_parameters(request, given)
    if P_FILTER in given:
        request["FilterExpression"] = renderer.condition(given[P_FILTER], "f", "FilterExpression")


def start_key(value: Any, schema: KeySchema, on_index: bool) -> dict[str, Any]:
    if not on_index:
        return decode_key(value, schema)
    if not isinstance(value, bytes | bytearray):
        raise MalformedFrame("ExclusiveStartKey must be a byte string")
    members = wire.decode_one(bytes(value))
    if not isinstance(members, dict):
        raise MalformedFrame("an index's ExclusiveStartKey must be a map")
    return {text_argument(name, "a key name"): wire.attribute_value(member) for name, member in members.items()}


def many_answer(service: DaxService, result: dict[str, Any], schema: KeySchema,
                paths: list[list[str | int]] | None, on_index: bool) -> bytes:
    fields: list[tuple[int, Callable[[bytearray], None]]] = []
    if "Items" in result:
        items = result["Items"]

        def write_items(out: bytearray) -> None:
            put_array_head(out, len(items))
            for item in items:
                if paths is not None:
                    put_projection(out, item, paths)
                    continue
                put_array_head(out, 2)
                put_bytes(out, encode_key(item, schema))
                put_bytes(out, stream_item(item, schema, service.lists))

        fields.append((R_ITEMS, write_items))
    fields.append((R_COUNT, lambda out: put_int(out, result.get("Count", 0))))
    fields.append((R_SCANNED_COUNT, lambda out: put_int(out, result.get("ScannedCount", 0))))
    last_key = result.get("LastEvaluatedKey")
    if last_key:
        fields.append((R_LAST_KEY, lambda out: put_last_key(out, last_key, schema, on_index)))
    return answer_map(fields + capacity_field(result))


def put_last_key(out: bytearray, key: dict[str, Any], schema: KeySchema, on_index: bool) -> None:
    if not on_index:
        put_bytes(out, encode_key(key, schema))
        return
    inner = bytearray()
    put_map_head(inner, len(key))
    for name in key:
        put_text(inner, name)
        put_attribute_value(inner, key[name])
    put_bytes(out, inner)
