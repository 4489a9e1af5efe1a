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

from dynastore import limits
from dynastore.engine import legacy
from dynastore.engine.pagination import ReadPlan, read_page, response_bytes
from dynastore.engine.schema import KeyAttribute, TableSchema
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
from dynastore.storage.base import SortKeyRange
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


def check_no_index(request: dict[str, Any]) -> None:
    index_name = request.get("IndexName")
    if index_name is not None:
        raise ValidationException(
            f"The table does not have the specified index: {index_name} "
            "(dynastore does not support secondary indexes yet)"
        )


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


def check_key_paths(schema: TableSchema, expressions: Expressions) -> None:
    """Key attributes are scalars: no ``pk.x`` or ``pk[0]`` in a filter or projection."""
    projected = expressions.projection.paths if expressions.projection is not None else ()
    nested = [name for name, deeper in expressions.filter_paths if deeper]
    nested += [str(path[0]) for path in projected if len(path) > 1]
    for name in schema.key_names:
        if name in nested:
            raise ValidationException(
                "Key attributes must be scalars; list random access '[]' and map lookup '.' "
                f"are not allowed: Key: {name}"
            )


def read_plan(schema: TableSchema, request: dict[str, Any], expressions: Expressions, select: str) -> ReadPlan:
    return ReadPlan(
        key_names=schema.key_names,
        limit=request.get("Limit"),
        filter=expressions.filter.evaluate if expressions.filter is not None else None,
        projection=expressions.projection.apply if expressions.projection is not None else None,
        count_only=select == "COUNT",
    )


def respond(schema: TableSchema, request: dict[str, Any], plan: ReadPlan, rows: Any) -> bytes:
    page = read_page(rows, plan)
    return response_bytes(
        page,
        count_only=plan.count_only,
        table_name=schema.name,
        consistent=bool(request.get("ConsistentRead")),
        return_consumed_capacity=request.get("ReturnConsumedCapacity"),
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
        if len(request["KeyConditions"]) not in (1, 2):
            raise ValidationException("Conditions can be of length 1 or 2 only")
    schema = _table(database, request, key_text, context)
    check_no_index(request)
    if start_key is not None:
        check_start_key_shape(schema, start_key, MESSAGE_START_KEY_INVALID)
    key_range = _key_range(schema, request, key_text, context)
    context.check_all_used()
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
    )
    return respond(schema, request, read_plan(schema, request, expressions, select), rows)


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


__all__ = [
    "KeyRange",
    "check_select",
    "compile_read_expressions",
    "handle",
    "key_range_from_conditions",
]
