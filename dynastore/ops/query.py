"""Query: the items of one partition, in sort-key order.

Validation runs in DynamoDB's order (checked against dynalite's conformance
tests): Select rules, legacy/expression mixing, the legacy condition maps,
ExclusiveStartKey's attribute values, the expressions, then the table, then
everything that needs the key schema (the key condition, ExclusiveStartKey's
shape and position, key attributes in the filter). The read loop itself is
engine/pagination.py.

Also home of the request helpers Scan shares (Select, filter, projection,
ExclusiveStartKey), so the two operations cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.engine import indexes, legacy
from dynastore.engine.pagination import ReadPlan, read_page, response_bytes
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.errors import ResourceNotFoundException, ValidationException, invalid_parameter
from dynastore.expressions import (
    Condition,
    ExpressionContext,
    Projection,
    compile_condition,
    compile_key_condition,
    compile_projection,
)
from dynastore.expressions.ast import Path
from dynastore.expressions.evaluate import parse_checked_condition
from dynastore.expressions.validate import resolve_path
from dynastore.partiql.translate import FILTER_MAY_NAME_KEYS, FILTER_MAY_NAME_KEYS_MARK
from dynastore.storage.base import Row, SortKeyRange, Storage
from dynastore.types.attribute_value import compare_values, type_of, validate_attribute_value
from dynastore.types.keys import encode_attribute

if TYPE_CHECKING:
    from dynastore.database import Database

Item = dict[str, Any]

MESSAGE_NO_KEY_CONDITION = (
    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."
)
MESSAGE_TYPE_MISMATCH = "Condition parameter type does not match schema type"
MESSAGE_START_KEY_INVALID = "The provided starting key is invalid"
MESSAGE_START_KEY_OUTSIDE = (
    "The provided starting key is outside query boundaries based on provided conditions"
)
MESSAGE_START_KEY_PREDICATE = "The provided starting key does not match the range key predicate"
MESSAGE_ONE_ROW = "The query can return at most one row and cannot be restarted"
MESSAGE_NOT_INDEXABLE = "Attempted conditional constraint is not an indexable operation"
MESSAGE_KEY_CONDITION_NOT_SUPPORTED = "Query key condition not supported"


# --- helpers shared with Scan -------------------------------------------------------


def check_limit(request: dict[str, Any]) -> int | None:
    limit = request.get("Limit")
    if limit is not None and limit < 1:
        raise ValidationException(
            f"1 validation error detected: Value '{limit}' at 'limit' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1"
        )
    return limit


def check_select(request: dict[str, Any], operation: str) -> str:
    """Validate Select against the projection parameters; return the mode in force.

    Query's refusals carry the "1 validation error detected: " prefix, Scan's
    do not (as DynamoDB answers).
    """
    select = request.get("Select")
    projection = next(
        (name for name in ("ProjectionExpression", "AttributesToGet") if request.get(name) is not None),
        None,
    )
    prefix = "1 validation error detected: " if operation == "Query" else ""
    if select == "COUNT" and projection:
        raise ValidationException(
            f"{prefix}Cannot specify the {projection} when choosing to get only the Count"
        )
    if select in ("ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES") and projection:
        raise ValidationException(
            f"{prefix}Cannot specify the {projection} when choosing to get {select}"
        )
    if select == "ALL_PROJECTED_ATTRIBUTES" and request.get("IndexName") is None:
        raise ValidationException(
            "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
        )
    if select == "SPECIFIC_ATTRIBUTES" and not projection:
        raise invalid_parameter(
            "Select type SPECIFIC_ATTRIBUTES requires AttributesToGet or ProjectionExpression"
        )
    if select is None:
        return "SPECIFIC_ATTRIBUTES" if projection else "ALL_ATTRIBUTES"
    return str(select)


def check_attributes_to_get(request: dict[str, Any]) -> None:
    attributes = request.get("AttributesToGet")
    if attributes is not None:
        legacy.attributes_to_get_to_projection(attributes)  # duplicates check


def check_start_key_values(request: dict[str, Any]) -> Item | None:
    """Validate ExclusiveStartKey's attribute values (before the table is known)."""
    start_key = request.get("ExclusiveStartKey")
    if start_key is None:
        return None
    checked: Item = {}
    for name, value in start_key.items():
        try:
            checked[name] = validate_attribute_value(value)
        except ValidationException as error:
            raise ValidationException(f"{MESSAGE_START_KEY_INVALID}: {error.message}") from None
    return checked


def check_start_key_shape(schema: TableSchema, start_key: Item, message: str) -> None:
    """ExclusiveStartKey must hold exactly the table's key attributes, of the
    key types; anything else is refused with ``message`` (Query and Scan word
    it differently)."""
    if len(start_key) != len(schema.key_names):
        raise ValidationException(message)
    for attribute in (schema.partition_key, schema.sort_key):
        if attribute is None:
            continue
        value = start_key.get(attribute.name)
        if value is None or attribute.type not in value:
            raise ValidationException(message)
    schema.check_key_shape(start_key)


@dataclass(frozen=True)
class Expressions:
    """The compiled filter and projection of a Query or Scan request."""

    filter: Condition | None = None
    projection: Projection | None = None
    filter_paths: tuple[tuple[str, bool], ...] = ()
    """(top-level attribute, whether the path goes deeper) for each path the
    filter refers to, for the key-attribute checks."""
    legacy_filter: bool = False


def compile_read_expressions(
    request: dict[str, Any], context: ExpressionContext, filter_parameter: str
) -> Expressions:
    """FilterExpression/ProjectionExpression on ``context``, or their legacy
    forms (QueryFilter/ScanFilter named ``filter_parameter``, AttributesToGet)."""
    condition = projection = None
    paths: tuple[tuple[str, bool], ...] = ()
    legacy_filter = False
    if request.get("FilterExpression") is not None:
        condition = compile_condition(request["FilterExpression"], context, "FilterExpression")
        paths = _condition_paths(request["FilterExpression"], context)
    elif request.get(filter_parameter):
        converted = legacy.filter_to_condition(
            request[filter_parameter], request.get("ConditionalOperator"), filter_parameter
        )
        if converted is not None:
            text, legacy_names, values = converted
            condition = compile_condition(
                text, ExpressionContext(legacy_names, values or None), "FilterExpression"
            )
            paths = tuple((name, False) for name in request[filter_parameter])
            legacy_filter = True
    if request.get("ProjectionExpression") is not None:
        projection = compile_projection(request["ProjectionExpression"], context)
    elif request.get("AttributesToGet") is not None:
        text, legacy_names, _ = legacy.attributes_to_get_to_projection(request["AttributesToGet"])
        projection = compile_projection(text, ExpressionContext(legacy_names, None))
    return Expressions(condition, projection, paths, legacy_filter)


def _condition_paths(text: str, context: ExpressionContext) -> tuple[tuple[str, bool], ...]:
    """Every document path of a (cached, already checked) condition."""
    pending: list[Any] = [parse_checked_condition(text, context, "FilterExpression")]
    paths: list[tuple[str, bool]] = []
    while pending:
        node = pending.pop()
        if isinstance(node, Path):
            resolved = resolve_path(node, context)
            paths.append((str(resolved[0]), len(resolved) > 1))
        elif isinstance(node, tuple):
            pending.extend(node)
        elif hasattr(node, "__slots__") and not isinstance(node, str):
            pending.extend(getattr(node, slot) for slot in node.__slots__)
    return tuple(paths)


def check_key_paths(
    schema: TableSchema, expressions: Expressions, key_names: tuple[str, ...] | None = None
) -> None:
    """Key attributes are scalars: no ``pk.x`` or ``pk[0]`` in a filter or projection."""
    projected = expressions.projection.paths if expressions.projection is not None else ()
    nested = [name for name, deeper in expressions.filter_paths if deeper]
    nested += [str(path[0]) for path in projected if len(path) > 1]
    for name in key_names or schema.key_names:
        if name in nested:
            raise ValidationException(
                "Key attributes must be scalars; list random access '[]' and map lookup '.' "
                f"are not allowed: Key: {name}"
            )


def read_plan(
    schema: TableSchema,
    request: dict[str, Any],
    expressions: Expressions,
    select: str,
    key_names: tuple[str, ...] | None = None,
) -> ReadPlan:
    return ReadPlan(
        key_names=key_names or schema.key_names,
        limit=request.get("Limit"),
        filter=expressions.filter.evaluate if expressions.filter is not None else None,
        projection=expressions.projection.apply if expressions.projection is not None else None,
        count_only=select == "COUNT",
    )


def respond(
    storage: Storage,
    schema: TableSchema,
    request: dict[str, Any],
    plan: ReadPlan,
    rows: Any,
    index: IndexDefinition | None = None,
) -> bytes:
    """Read one page from ``rows`` (a lazy iterator of storage rows: its
    reads happen here, inside one snapshot of the store) and answer it."""
    with storage.snapshot(request.get("Limit")):
        page = read_page(rows, plan)
    return response_bytes(
        page,
        count_only=plan.count_only,
        table_name=schema.name,
        consistent=bool(request.get("ConsistentRead")),
        return_consumed_capacity=request.get("ReturnConsumedCapacity"),
        index=(indexes.capacity_kind(index), index.name) if index is not None else None,
        fetched_bytes=rows.fetched_bytes if isinstance(rows, TableFetch) else 0,
    )


# --- Query --------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRange:
    """The key condition of a Query, bound to the table's key schema."""

    partition_value: Item
    sort_operator: str | None = None  # EQ LT LE GT GE BETWEEN BEGINS_WITH
    sort_values: tuple[Item, ...] = ()


def handle(database: Database, request: dict[str, Any]) -> bytes:
    select = check_select(request, "Query")
    legacy.check_request("Query", request)
    if request.get("QueryFilter"):
        legacy.validate_conditions(request["QueryFilter"])
    check_attributes_to_get(request)
    start_key = check_start_key_values(request)
    if request.get("KeyConditions") is None and request.get("KeyConditionExpression") is None:
        raise ValidationException(MESSAGE_NO_KEY_CONDITION)
    check_limit(request)
    context = ExpressionContext(
        request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
    )
    key_text = request.get("KeyConditionExpression")
    expressions = compile_read_expressions(request, context, "QueryFilter")
    if key_text is None:
        legacy.validate_conditions(request["KeyConditions"])
        if request.get("IndexName") is None:
            # On an index the count is checked against its key schema: a
            # multi-attribute key takes up to eight conditions.
            _check_key_conditions_count(request["KeyConditions"], 2)
    schema = _table(database, request, key_text, context)
    index = resolve_index(schema, request, start_key)
    if index is not None:
        return _query_index(database, schema, index, request, key_text, context, expressions, select, start_key)
    if start_key is not None:
        check_start_key_shape(schema, start_key, MESSAGE_START_KEY_INVALID)
    key_range = _key_range(schema, request, key_text, context)
    context.check_all_used()
    if request.get(FILTER_MAY_NAME_KEYS) is not FILTER_MAY_NAME_KEYS_MARK:
        _check_filter_keys(schema, expressions)
    check_key_paths(schema, expressions)
    sort_range = _sort_range(schema, key_range)
    pk = encode_attribute(schema.partition_key.type, key_range.partition_value)
    start_sk = _start_sort_key(schema, key_range, sort_range, pk, start_key)
    rows = database.storage.query(
        schema.table_id,
        pk,
        sort_range,
        forward=request.get("ScanIndexForward", True) is not False,
        exclusive_start_sk=start_sk,
        expected_rows=request.get("Limit"),
    )
    return respond(database.storage, schema, request, read_plan(schema, request, expressions, select), rows)


def _table(
    database: Database, request: dict[str, Any], key_text: str | None, context: ExpressionContext
) -> TableSchema:
    """The queried table. DynamoDB checks the key condition's syntax and the
    placeholders before it looks for the table, so when the table is missing
    those errors win; when it exists they surface while compiling, for free."""
    try:
        return database.table(request["TableName"])
    except ResourceNotFoundException:
        if key_text is not None:
            parse_checked_condition(key_text, context, "KeyConditionExpression")
            for placeholder in _PLACEHOLDER.findall(key_text):
                (context.used_names if placeholder[0] == "#" else context.used_values).add(placeholder)
        context.check_all_used()
        raise


def _key_range(
    schema: TableSchema, request: dict[str, Any], key_text: str | None, context: ExpressionContext
) -> KeyRange:
    if key_text is None:
        return key_range_from_conditions(schema, request["KeyConditions"])
    signature = _key_signature(schema, key_text, context)
    template = _KEY_TEMPLATES.get(signature)
    if template is not None:
        key_range = template.bind(context)
        if key_range is not None:
            return key_range
    sort = schema.sort_key
    compiled = compile_key_condition(
        key_text,
        context,
        schema.partition_key.name,
        sort.name if sort is not None else None,
        schema.partition_key.type,
        sort.type if sort is not None else None,
    )
    key_range = KeyRange(compiled.partition_value, compiled.sort_operator, compiled.sort_values)
    _remember_template(signature, key_text, key_range, context)
    return key_range


# A KeyConditionExpression is compiled in full once per shape; later requests
# with the same text, names, value types and key schema reuse where each
# placeholder goes. Only the checks that depend on the values themselves are
# repeated (an empty key string or binary, BETWEEN bounds), by compiling in full.
_KEY_TEMPLATES: dict[tuple[Any, ...], _KeyTemplate] = {}
_PLACEHOLDER = re.compile(r"[#:][0-9A-Za-z_]+")


@dataclass(frozen=True, slots=True)
class _KeyTemplate:
    partition_value: str  # the :placeholder holding the partition key value
    sort_operator: str | None
    sort_values: tuple[str, ...]
    names: frozenset[str]
    values: frozenset[str]

    def bind(self, context: ExpressionContext) -> KeyRange | None:
        """The key range for this request, or None when it needs a full compile."""
        bound = context.values
        partition = bound[self.partition_value]
        sort_values = tuple(bound[placeholder] for placeholder in self.sort_values)
        for value in (partition, *sort_values):
            if "S" in value and value["S"] == "" or "B" in value and value["B"] == "":
                return None
        if self.sort_operator == "BETWEEN" and (compare_values(*sort_values) or 0) > 0:
            return None
        context.used_names.update(self.names)
        context.used_values.update(self.values)
        return KeyRange(partition, self.sort_operator, sort_values)


def _key_signature(schema: TableSchema, key_text: str, context: ExpressionContext) -> tuple[Any, ...]:
    names = tuple(context.names.items()) if context.names else ()
    value_types = tuple((name, *value) for name, value in context.values.items())  # (":v", "S")
    return (key_text, names, value_types, schema.partition_key, schema.sort_key)


def _remember_template(
    signature: tuple[Any, ...], key_text: str, key_range: KeyRange, context: ExpressionContext
) -> None:
    by_identity = {id(value): name for name, value in context.values.items()}
    partition = by_identity.get(id(key_range.partition_value))
    sort_values = tuple(by_identity.get(id(value)) for value in key_range.sort_values)
    if partition is None or None in sort_values:
        return  # the compiler copied a value: nothing to point at, compile each time
    placeholders = set(_PLACEHOLDER.findall(key_text))
    if len(_KEY_TEMPLATES) >= limits.EXPRESSION_PARSE_CACHE_ENTRIES:
        _KEY_TEMPLATES.clear()
    _KEY_TEMPLATES[signature] = _KeyTemplate(
        partition,
        key_range.sort_operator,
        tuple(name for name in sort_values if name is not None),
        frozenset(name for name in placeholders if name.startswith("#")),
        frozenset(name for name in placeholders if name.startswith(":")),
    )


def key_range_from_conditions(schema: TableSchema, conditions: dict[str, Any]) -> KeyRange:
    """Bind legacy KeyConditions (already validated) to the key schema."""
    partition = schema.partition_key
    if partition.name not in conditions:
        raise ValidationException(f"Query condition missed key schema element: {partition.name}")
    for condition in conditions.values():
        if condition["ComparisonOperator"] not in ("EQ", "LE", "LT", "GE", "GT", "BEGINS_WITH", "BETWEEN"):
            raise ValidationException(MESSAGE_NOT_INDEXABLE)
    sort = schema.sort_key
    if len(conditions) == 2 and (sort is None or sort.name not in conditions):
        if sort is None:
            raise ValidationException(MESSAGE_KEY_CONDITION_NOT_SUPPORTED)
        raise ValidationException(f"Query condition missed key schema element: {sort.name}")
    partition_condition = conditions[partition.name]
    if partition_condition["ComparisonOperator"] != "EQ":
        raise ValidationException(MESSAGE_KEY_CONDITION_NOT_SUPPORTED)
    partition_value = _typed(partition, partition_condition["AttributeValueList"][0])
    if len(conditions) == 1:
        return KeyRange(partition_value)
    assert sort is not None
    sort_condition = conditions[sort.name]
    values = tuple(_typed(sort, value) for value in sort_condition["AttributeValueList"])
    return KeyRange(partition_value, sort_condition["ComparisonOperator"], values)


def _typed(attribute: KeyAttribute, value: Item) -> Item:
    value = validate_attribute_value(value)
    if type_of(value) != attribute.type:
        raise invalid_parameter(MESSAGE_TYPE_MISMATCH)
    if attribute.type != "N" and value[attribute.type] == "":
        kind = "string" if attribute.type == "S" else "binary"
        raise ValidationException(
            "One or more parameter values are not valid. The AttributeValue for a key attribute "
            f"cannot contain an empty {kind} value. Key: {attribute.name}"
        )
    return value


def _check_filter_keys(schema: TableSchema, expressions: Expressions) -> None:
    """A Query filter may not touch the primary key."""
    referenced = {name for name, _ in expressions.filter_paths}
    for name in schema.key_names:
        if name in referenced:
            parameter = "QueryFilter" if expressions.legacy_filter else "Filter Expression"
            raise ValidationException(
                f"{parameter} can only contain non-primary key attributes: "
                f"Primary key attribute: {name}"
            )


def _sort_range(schema: TableSchema, key_range: KeyRange) -> SortKeyRange:
    operator = key_range.sort_operator
    if operator is None or schema.sort_key is None:
        return SortKeyRange()
    sort_type = schema.sort_key.type
    encoded = [encode_attribute(sort_type, value) for value in key_range.sort_values]
    if operator == "EQ":
        return SortKeyRange(low=encoded[0], high=encoded[0])
    if operator == "LT":
        return SortKeyRange(high=encoded[0], high_inclusive=False)
    if operator == "LE":
        return SortKeyRange(high=encoded[0])
    if operator == "GT":
        return SortKeyRange(low=encoded[0], low_inclusive=False)
    if operator == "GE":
        return SortKeyRange(low=encoded[0])
    if operator == "BETWEEN":
        return SortKeyRange(low=encoded[0], high=encoded[1])
    return SortKeyRange(prefix=encoded[0])  # BEGINS_WITH


def _in_range(sort_range: SortKeyRange, sk: bytes) -> bool:
    if sort_range.prefix is not None and not sk.startswith(sort_range.prefix):
        return False
    if sort_range.low is not None:
        if sk < sort_range.low or (sk == sort_range.low and not sort_range.low_inclusive):
            return False
    if sort_range.high is not None:
        if sk > sort_range.high or (sk == sort_range.high and not sort_range.high_inclusive):
            return False
    return True


def _start_sort_key(
    schema: TableSchema, key_range: KeyRange, sort_range: SortKeyRange, pk: bytes, start_key: Item | None
) -> bytes | None:
    """ExclusiveStartKey must lie in the queried partition and sort range."""
    if start_key is None:
        return None
    start_pk, start_sk = schema.encode_key(start_key)
    if key_range.sort_operator is not None:
        if not _in_range(sort_range, start_sk):
            raise ValidationException(MESSAGE_START_KEY_PREDICATE)
        if key_range.sort_operator == "EQ" or start_pk != pk:
            raise ValidationException(MESSAGE_ONE_ROW)
    elif start_pk != pk:
        raise ValidationException(MESSAGE_START_KEY_OUTSIDE)
    return start_sk


# --- reads on a secondary index ----------------------------------------------------

MESSAGE_CONSISTENT_GSI = "Consistent reads are not supported on global secondary indexes"


def resolve_index(
    schema: TableSchema, request: dict[str, Any], start_key: Item | None
) -> IndexDefinition | None:
    """The index a Query/Scan names (None: the table), with DynamoDB's refusals."""
    name = request.get("IndexName")
    if name is None:
        return None
    index = schema.index(name)
    if index is None:
        if start_key is not None:
            raise ValidationException(MESSAGE_START_KEY_INVALID)
        raise ValidationException(f"The table does not have the specified index: {name}")
    if index.is_global and request.get("ConsistentRead"):
        raise ValidationException(MESSAGE_CONSISTENT_GSI)
    if index.backfilling or index.status == "CREATING":
        raise ValidationException(f"Cannot read from backfilling global secondary index: {name}")
    return index


class TableFetch:
    """Index rows replaced by the table's items, for an LSI read that asks for
    attributes the index does not hold; counts the bytes fetched (charged to
    the table)."""

    def __init__(self, storage: Storage, schema: TableSchema, rows: Any) -> None:
        self.storage = storage
        self.schema = schema
        self.rows = rows
        self.fetched_bytes = 0

    def __iter__(self) -> Any:
        schema = self.schema
        for row in self.rows:
            key = schema.key_of(orjson.loads(row.item))
            stored = self.storage.get(schema.table_id, *schema.encode_key(key))
            if stored is None:  # cannot happen: entries follow their items atomically
                continue
            self.fetched_bytes += stored.size
            yield Row(row.pk_hash, row.pk, row.sk, stored.item, row.size)


def index_read_setup(
    database: Database,
    schema: TableSchema,
    index: IndexDefinition,
    request: dict[str, Any],
    expressions: Expressions,
    select: str,
) -> tuple[ReadPlan, bool]:
    """The read plan of an index read, and whether items come from the table
    (an LSI asked for attributes it does not project)."""
    check_key_paths(schema, expressions, indexes.start_key_names(schema, index))
    projected = indexes.projected_names(schema, index)
    wants_all = select == "ALL_ATTRIBUTES" and request.get("Select") is not None
    fetch = False
    if projected is not None:
        needed = {name for name, _ in expressions.filter_paths}
        if expressions.projection is not None:
            needed.update(str(path[0]) for path in expressions.projection.paths)
        if wants_all and index.is_global:
            raise invalid_parameter(
                f"Select type ALL_ATTRIBUTES is not supported for global secondary index "
                f"{index.name} because its projection type is not ALL"
            )
        fetch = not index.is_global and (wants_all or not needed <= projected)
    plan = read_plan(schema, request, expressions, select, indexes.start_key_names(schema, index))
    return plan, fetch


def _query_index(
    database: Database,
    schema: TableSchema,
    index: IndexDefinition,
    request: dict[str, Any],
    key_text: str | None,
    context: ExpressionContext,
    expressions: Expressions,
    select: str,
    start_key: Item | None,
) -> bytes:
    if index.is_global:
        database.propagate_index_changes()  # only pending under --gsi-lag-ms
    start = indexes.check_index_start_key(schema, index, start_key) if start_key else None
    partition_values, equal_values, operator, values = _index_key_range(
        schema, index, request, key_text, context
    )
    context.check_all_used()
    if request.get(FILTER_MAY_NAME_KEYS) is not FILTER_MAY_NAME_KEYS_MARK:
        _check_filter_keys_named(index.key_names, expressions)
    plan, fetch = index_read_setup(database, schema, index, request, expressions, select)
    sort_range = indexes.index_sort_range(index, equal_values, operator, values)
    pk = indexes.index_partition(index, partition_values)
    start_sk = None
    if start is not None:
        if operator is not None or equal_values:
            if not _in_range(sort_range, start[1]):
                raise ValidationException(MESSAGE_START_KEY_PREDICATE)
            if start[0] != pk:
                raise ValidationException(MESSAGE_ONE_ROW)
        elif start[0] != pk:
            raise ValidationException(MESSAGE_START_KEY_OUTSIDE)
        start_sk = start[1]
    rows: Any = database.storage.query(
        index.storage_id,
        pk,
        sort_range,
        forward=request.get("ScanIndexForward", True) is not False,
        exclusive_start_sk=start_sk,
        expected_rows=request.get("Limit"),
    )
    if fetch:
        rows = TableFetch(database.storage, schema, rows)
    return respond(database.storage, schema, request, plan, rows, index)


def _index_view(schema: TableSchema, index: IndexDefinition) -> TableSchema:
    """The index seen as a table with a one-attribute key, to reuse the table's
    key-condition compiler and its messages."""
    return indexes.derived(schema, index, "view", _make_index_view)  # type: ignore[no-any-return]


def _make_index_view(schema: TableSchema, index: IndexDefinition) -> TableSchema:
    from dataclasses import replace

    sort = index.sort_keys[0] if index.sort_keys else None
    return replace(schema, partition_key=index.partition_keys[0], sort_key=sort, indexes=())


MESSAGE_HASH_EQUALITY = (
    "Query key condition not supported: All HASH key attributes of the index must be "
    "specified with equality conditions"
)
MESSAGE_RANGE_ORDER = (
    "Query key condition not supported: RANGE key attributes of the index must be used "
    "left to right, with equality conditions on all but the last"
)
"""The two rules of a Query on a multi-attribute key. The service's texts are
not published; ScyllaDB's suite, run against DynamoDB, shows that they name
HASH (or RANGE) and equality (docs/compatibility.md)."""

KeyConditionMap = dict[str, tuple[str, tuple[Item, ...]]]
"""One (operator, values) per attribute a key condition names, operators as
the legacy API names them (EQ, LT, ..., BETWEEN, BEGINS_WITH)."""


def _index_key_range(
    schema: TableSchema,
    index: IndexDefinition,
    request: dict[str, Any],
    key_text: str | None,
    context: ExpressionContext,
) -> tuple[tuple[Item, ...], tuple[Item, ...], str | None, tuple[Item, ...]]:
    """(partition values, equal sort values, operator on the next sort
    attribute, its values) of a Query's key condition on ``index``."""
    if len(index.partition_keys) == 1 and len(index.sort_keys) <= 1:
        if key_text is None:
            _check_key_conditions_count(request["KeyConditions"], 2)
        key_range = _key_range(_index_view(schema, index), request, key_text, context)
        return (key_range.partition_value,), (), key_range.sort_operator, key_range.sort_values
    if key_text is None:
        # DynamoDB answers legacy KeyConditions on such an index as it answers
        # the expression (ScyllaDB's issue 31393, checked against the service).
        _check_key_conditions_count(request["KeyConditions"], len(index.key_names))
        conditions = _legacy_key_conditions(request["KeyConditions"])
    else:
        conditions = _expression_key_conditions(key_text, context)
    return _multi_attribute_bounds(index, conditions)


def _check_key_conditions_count(key_conditions: dict[str, Any], most: int) -> None:
    if not 1 <= len(key_conditions) <= max(most, 2):
        raise ValidationException("Conditions can be of length 1 or 2 only")


def _legacy_key_conditions(key_conditions: dict[str, Any]) -> KeyConditionMap:
    """KeyConditions (already validated one by one) as a condition map."""
    conditions: KeyConditionMap = {}
    for name, condition in key_conditions.items():
        operator = str(condition["ComparisonOperator"])
        if operator not in ("EQ", "LE", "LT", "GE", "GT", "BEGINS_WITH", "BETWEEN"):
            raise ValidationException(MESSAGE_NOT_INDEXABLE)
        values = condition.get("AttributeValueList") or ()
        conditions[name] = (operator, tuple(validate_attribute_value(value) for value in values))
    return conditions


def _expression_key_conditions(key_text: str, context: ExpressionContext) -> KeyConditionMap:
    from dynastore.expressions.key_condition import _Collector

    node = parse_checked_condition(key_text, context, "KeyConditionExpression")
    collector = _Collector(context)
    collector.walk(node)
    return dict(collector.conditions)


def _multi_attribute_bounds(
    index: IndexDefinition, key_conditions: KeyConditionMap
) -> tuple[tuple[Item, ...], tuple[Item, ...], str | None, tuple[Item, ...]]:
    """Equality on every partition attribute; on the sort attributes, equality
    left to right, then at most one range condition, without gaps."""
    from dynastore.expressions.key_condition import _check_key_value

    conditions = dict(key_conditions)
    partition_values = []
    for attribute in index.partition_keys:
        condition = conditions.pop(attribute.name, None)
        if condition is None or condition[0] != "EQ":
            raise ValidationException(MESSAGE_HASH_EQUALITY)
        _check_key_value(attribute.name, attribute.type, condition[1][0])
        partition_values.append(condition[1][0])
    equal_values: list[Item] = []
    operator: str | None = None
    values: tuple[Item, ...] = ()
    used = 0
    for attribute in index.sort_keys:
        condition = conditions.pop(attribute.name, None)
        if condition is None:
            break
        used += 1
        if operator is not None:
            raise ValidationException(MESSAGE_RANGE_ORDER)
        for value in condition[1]:
            _check_key_value(attribute.name, attribute.type, value)
        if condition[0] == "EQ":
            equal_values.append(condition[1][0])
        else:
            operator, values = condition
    if conditions:
        sort_names = {attribute.name for attribute in index.sort_keys}
        if sort_names.intersection(conditions):
            raise ValidationException(MESSAGE_RANGE_ORDER)  # a later sort attribute skipped this one
        missed = index.sort_keys[used].name if used < len(index.sort_keys) else next(iter(conditions))
        raise ValidationException(f"Query condition missed key schema element: {missed}")
    return tuple(partition_values), tuple(equal_values), operator, values


def _check_filter_keys_named(key_names: tuple[str, ...], expressions: Expressions) -> None:
    referenced = {name for name, _ in expressions.filter_paths}
    for name in key_names:
        if name in referenced:
            parameter = "QueryFilter" if expressions.legacy_filter else "Filter Expression"
            raise ValidationException(
                f"{parameter} can only contain non-primary key attributes: "
                f"Primary key attribute: {name}"
            )


__all__ = [
    "KeyRange",
    "check_select",
    "compile_read_expressions",
    "handle",
    "key_range_from_conditions",
]
