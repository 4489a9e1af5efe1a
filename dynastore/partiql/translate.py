"""PartiQL tree -> the equivalent DynamoDB request (pure: no storage).

Each statement becomes the request an application would have sent to the
item API, with ExpressionAttributeNames/Values generated, so that the
existing operations (dynastore/ops) run it: one write path, exact costs.

- SELECT: GetItem when the WHERE is exactly an equality on every key
  attribute of the table; Query when a conjunct fixes the partition key
  (``=``, ``IN``, or an OR whose every side does: one Query per value, in
  order); otherwise Scan. The rest of the WHERE is the FilterExpression.
- INSERT: PutItem under ``attribute_not_exists(pk)``.
- UPDATE: UpdateItem under ``attribute_exists(pk) [AND the rest]``, so an
  UPDATE of a missing item fails as DynamoDB's does.
- DELETE: DeleteItem [under the rest of the WHERE].
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits
from dynastore.engine import indexes
from dynastore.engine.schema import KeyAttribute, TableSchema
from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql import messages as text
from dynastore.partiql.parser import IS_TYPES
from dynastore.types.attribute_value import compare_values
from dynastore.types.number import normalize_number

Item = dict[str, Any]
KEY_TYPES = ("S", "N", "B")
IS_TYPE_CODES = {"BOOL", "S", "N", "B", "M", "L", "NULL"}
CONDITION_FUNCTIONS = ("begins_with", "contains", "attribute_type", "attribute_exists", "attribute_not_exists")
FILTER_MAY_NAME_KEYS = "dynastore:FilterMayNameKeys"
FILTER_MAY_NAME_KEYS_MARK = object()
"""A translated Query carries this object under FILTER_MAY_NAME_KEYS: a
PartiQL WHERE may test key attributes beyond the key condition, as
DynamoDB's does, which a Query's FilterExpression may not (ops/query.py
skips that check for it). No JSON body can hold this object, so a client's
own Query cannot set it."""
PARTITION_PLACEHOLDER = ":pk"
"""The partition key's value in a Query's key condition: one request per
value then differs in this one entry of ExpressionAttributeValues."""


# --- values ---------------------------------------------------------------------------


def check_parameters(statement: ast.Statement, parameters: list[Item] | None) -> list[Item]:
    given = parameters or []
    if len(given) != statement.parameters:
        raise ValidationException(text.PARAMETER_COUNT)
    return given


def bind(node: ast.Node, parameters: list[Item], where: str = "root") -> Item:
    """The attribute value of a literal (or ``?``), typed as DynamoDB types it."""
    if isinstance(node, ast.Value):
        if "N" in node.value:
            return {"N": _number(node.value["N"], where)}
        return node.value
    if isinstance(node, ast.Parameter):
        return parameters[node.index]
    if isinstance(node, ast.ListLiteral):
        return {"L": [bind(item, parameters, f"{where}[{i}]") for i, item in enumerate(node.items)]}
    if isinstance(node, ast.TupleLiteral):
        members: Item = {}
        for key, value in node.entries:
            if key in members:
                raise ValidationException(text.DUPLICATE_TUPLE_KEY.format(key, where))
            members[key] = bind(value, parameters, f"{where}.{key}")
        return {"M": members}
    if isinstance(node, ast.BagLiteral):
        return _bag(node, parameters, where)
    if isinstance(node, ast.Missing):
        raise ValidationException(text.MISSING_NOT_WITH_IS)
    if isinstance(node, ast.Call):
        raise ValidationException(f"Unsupported data type: {node.name} under key root at {node.at}")
    raise ValidationException(text.UNSUPPORTED_OPERATION.format(type(node).__name__))


def _number(literal: str, where: str) -> str:
    try:
        return normalize_number(literal)
    except ValidationException as error:
        raise ValidationException(f"{error.message} under {where}") from None


def _bag(node: ast.BagLiteral, parameters: list[Item], where: str) -> Item:
    if not node.items:
        raise ValidationException(text.EMPTY_BAG)
    values = [bind(item, parameters, where) if isinstance(item, ast.Value) else None for item in node.items]
    kinds = {next(iter(value)) if value is not None else None for value in values}
    if len(kinds) != 1 or not kinds <= {"S", "N"}:
        raise ValidationException(text.BAG_TYPES)
    kind = kinds.pop()
    assert kind is not None
    members = [value[kind] for value in values if value is not None]
    return {kind + "S": members}  # duplicates are the item API's to refuse, in DynamoDB's words


def is_value(node: ast.Node) -> bool:
    return isinstance(node, (ast.Value, ast.Parameter, ast.ListLiteral, ast.TupleLiteral, ast.BagLiteral))


ORDERING_OPERATORS = frozenset(("<", "<=", ">", ">="))


def check_operand_types(statement: ast.Statement, parameters: list[Item]) -> None:
    """An ordering comparison (< <= > >= BETWEEN) of a value that has no
    order is refused from the statement alone, before its table is looked
    up (as the service answers; the expression compiler words it the same)."""
    for operator, operands in _ordering_comparisons(statement):
        _check_ordered(operator, operands, parameters)


_ORDERINGS: dict[int, tuple[ast.Statement, list[tuple[str, tuple[ast.Node, ...]]]]] = {}
"""Each parsed statement's ordering comparisons, found once (the parse cache
hands out one tree per text; the tree is kept so its id stays its own)."""


def _ordering_comparisons(statement: ast.Statement) -> list[tuple[str, tuple[ast.Node, ...]]]:
    known = _ORDERINGS.get(id(statement))
    if known is not None and known[0] is statement:
        return known[1]
    found: list[tuple[str, tuple[ast.Node, ...]]] = []
    where = statement.select.where if isinstance(statement, ast.Exists) else getattr(statement, "where", None)
    pending = [where]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.And, ast.Or)):
            pending += [node.left, node.right]
        elif isinstance(node, ast.Not):
            pending.append(node.operand)
        elif isinstance(node, ast.Comparison) and node.operator in ORDERING_OPERATORS:
            found.append((node.operator, (node.left, node.right)))
        elif isinstance(node, ast.Between):
            found.append(("BETWEEN", (node.operand, node.low, node.high)))
    if len(_ORDERINGS) >= limits.PARTIQL_PARSE_CACHE_ENTRIES:
        _ORDERINGS.clear()
    _ORDERINGS[id(statement)] = (statement, found)
    return found


def _check_ordered(operator: str, operands: tuple[ast.Node, ...], parameters: list[Item]) -> None:
    for operand in operands:
        if is_value(operand):
            kind = next(iter(bind(operand, parameters)))
            if kind not in KEY_TYPES:
                raise ValidationException(
                    "Incorrect operand type for operator or function; "
                    f"operator or function: {operator}, operand type: {kind}"
                )


# --- expression text --------------------------------------------------------------------


@dataclass
class Expressions:
    """Generated ExpressionAttributeNames/Values for one request."""

    parameters: list[Item]
    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Item] = field(default_factory=dict)
    _placeholders: dict[str, str] = field(default_factory=dict)

    def name(self, attribute: str) -> str:
        placeholder = self._placeholders.get(attribute)
        if placeholder is None:
            placeholder = self._placeholders[attribute] = f"#n{len(self._placeholders)}"
            self.names[placeholder] = attribute
        return placeholder

    def path(self, path: ast.Path) -> str:
        parts = [self.name(path.root)]
        for step in path.steps[1:]:
            parts.append(f"[{step}]" if isinstance(step, int) else "." + self.name(step))
        return "".join(parts)

    def value(self, value: Item) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def operand(self, node: ast.Node) -> str:
        if isinstance(node, ast.Path):
            return self.path(node)
        if isinstance(node, ast.Call) and node.name == "size":
            return self._call_text(node)
        if isinstance(node, ast.Call):
            raise ValidationException(text.UNRECOGNIZED_FUNCTION.format(node.name, node.at))
        if isinstance(node, ast.Arithmetic):
            raise ValidationException(text.UNSUPPORTED_OPERATION.format("Arithmetic"))
        if not is_value(node) and not isinstance(node, ast.Missing):
            raise ValidationException("WHERE clause must contain an expression that resolves to a boolean")
        return self.value(bind(node, self.parameters))

    def condition(self, node: ast.Node) -> str:
        if isinstance(node, ast.And):
            return f"({self.condition(node.left)}) AND ({self.condition(node.right)})"
        if isinstance(node, ast.Or):
            return f"({self.condition(node.left)}) OR ({self.condition(node.right)})"
        if isinstance(node, ast.Not):
            return f"NOT ({self.condition(node.operand)})"
        if isinstance(node, ast.Comparison):
            if isinstance(node.left, ast.Missing) or isinstance(node.right, ast.Missing):
                raise ValidationException(text.MISSING_NOT_WITH_IS)
            return f"{self.operand(node.left)} {node.operator} {self.operand(node.right)}"
        if isinstance(node, ast.Between):
            return f"{self.operand(node.operand)} BETWEEN {self.operand(node.low)} AND {self.operand(node.high)}"
        if isinstance(node, ast.In):
            options = ", ".join(self.operand(option) for option in node.options)
            return f"{self.operand(node.operand)} IN ({options})"
        if isinstance(node, ast.Is):
            return self._is(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ValidationException("WHERE clause must contain an expression that resolves to a boolean")

    def _is(self, node: ast.Is) -> str:
        if not isinstance(node.operand, ast.Path):
            raise ValidationException(
                "The left hand side argument to IS must be a Variable Reference, Literal, or Path"
            )
        path = self.path(node.operand)
        if node.type_name == "MISSING":
            return f"attribute_exists({path})" if node.negated else f"attribute_not_exists({path})"
        code = IS_TYPES[node.type_name]
        if code not in IS_TYPE_CODES:
            raise ValidationException(
                f"Unsupported data type for IS operator: {node.type_name}. Supported data types are "
                "[MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]"
            )
        test = f"attribute_type({path}, {self.value({'S': code})})"
        return f"NOT ({test})" if node.negated else test

    def _call(self, node: ast.Call) -> str:
        if node.name not in CONDITION_FUNCTIONS:
            raise ValidationException(text.UNRECOGNIZED_FUNCTION.format(node.name, node.at))
        return self._call_text(node)

    def _call_text(self, node: ast.Call) -> str:
        """The function as the expression language spells it; its operands'
        count and kinds are the expression compiler's to check (its messages
        are DynamoDB's: "Operator or function requires a document path; ...")."""
        if not node.arguments:  # the expression language's parser has no word for this one
            raise ValidationException(
                "Incorrect number of operands for operator or function; "
                f"operator or function: {node.name}, number of operands: 0"
            )
        return f"{node.name}({', '.join(self.operand(argument) for argument in node.arguments)})"

    def update_value(self, node: ast.Node) -> str:
        if isinstance(node, ast.Arithmetic):
            return f"{self.update_value(node.left)} {node.operator} {self.update_value(node.right)}"
        if isinstance(node, ast.Call) and node.name == "list_append" and len(node.arguments) == 2:
            return f"list_append({self.update_value(node.arguments[0])}, {self.update_value(node.arguments[1])})"
        if isinstance(node, ast.Call) and node.name == "if_not_exists" and len(node.arguments) == 2:
            return f"if_not_exists({self.update_value(node.arguments[0])}, {self.update_value(node.arguments[1])})"
        if isinstance(node, ast.Call):
            raise ValidationException(text.UNRECOGNIZED_FUNCTION.format(node.name, node.at))
        if isinstance(node, ast.Is):
            raise ValidationException(text.IS_IN_UPDATE)
        if isinstance(node, ast.Path):
            return self.path(node)
        return self.value(bind(node, self.parameters))

    def attach(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


# --- the WHERE clause ------------------------------------------------------------------


def conjuncts(node: ast.Node | None) -> list[ast.Node]:
    if node is None:
        return []
    if isinstance(node, ast.And):
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


def conjunction(nodes: list[ast.Node]) -> ast.Node | None:
    if not nodes:
        return None
    combined = nodes[0]
    for node in nodes[1:]:
        combined = ast.And(combined, node)
    return combined


def _is_attribute(node: ast.Node, name: str) -> bool:
    return isinstance(node, ast.Path) and len(node.steps) == 1 and node.root == name


def equality_value(node: ast.Node, name: str) -> ast.Node | None:
    """The value ``name`` is equal to in ``name = v`` (or ``v = name``)."""
    if not isinstance(node, ast.Comparison) or node.operator != "=":
        return None
    if _is_attribute(node.left, name) and is_value(node.right):
        return node.right
    if _is_attribute(node.right, name) and is_value(node.left):
        return node.left
    return None


def partition_values(node: ast.Node, name: str) -> list[ast.Node] | None:
    """The values a conjunct fixes ``name`` to: ``=``, ``IN``, or an OR of them."""
    value = equality_value(node, name)
    if value is not None:
        return [value]
    if isinstance(node, ast.In) and _is_attribute(node.operand, name) and all(map(is_value, node.options)):
        return list(node.options)
    if isinstance(node, ast.Or):
        left = partition_values(node.left, name)
        right = partition_values(node.right, name) if left is not None else None
        if left is not None and right is not None:
            return left + right
    return None


_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def sort_condition(node: ast.Node, name: str, exprs: Expressions, kind: str) -> str | None:
    """``node`` as the sort-key half of a key condition, when it is one."""
    if isinstance(node, ast.Comparison) and node.operator in _FLIPPED:
        if _is_attribute(node.left, name) and is_value(node.right):
            operator, value_node = node.operator, node.right
        elif _is_attribute(node.right, name) and is_value(node.left):
            operator, value_node = _FLIPPED[node.operator], node.left
        else:
            return None
        value = bind(value_node, exprs.parameters)
        if kind not in value:
            return None
        return f"{exprs.name(name)} {operator} {exprs.value(value)}"
    if isinstance(node, ast.Between) and _is_attribute(node.operand, name):
        if not (is_value(node.low) and is_value(node.high)):
            return None
        low, high = bind(node.low, exprs.parameters), bind(node.high, exprs.parameters)
        if kind not in low or kind not in high:
            return None
        return f"{exprs.name(name)} BETWEEN {exprs.value(low)} AND {exprs.value(high)}"
    if isinstance(node, ast.Call) and node.name == "begins_with" and len(node.arguments) == 2:
        subject, prefix = node.arguments
        if _is_attribute(subject, name) and is_value(prefix) and kind in ("S", "B"):
            value = bind(prefix, exprs.parameters)
            if kind not in value:
                return None
            return f"begins_with({exprs.name(name)}, {exprs.value(value)})"
    return None


def _check_key_value(attribute: KeyAttribute, value: Item) -> None:
    kind = next(iter(value))
    if kind not in KEY_TYPES:
        raise ValidationException(text.KEY_TYPE_INVALID.format(attribute.name, kind))
    if kind != attribute.type:
        raise ValidationException(text.KEY_TYPE_MISMATCH.format(attribute.name))


# --- SELECT ---------------------------------------------------------------------------


@dataclass
class ReadPlan:
    """What a SELECT runs: ``operation`` once per request in ``requests``
    (several Queries for several partition values), in order."""

    operation: str  # GetItem Query Scan
    requests: list[dict[str, Any]]
    table: str
    renames: tuple[tuple[ast.Path, str], ...] = ()
    """Projected nested paths and the leaf name each is answered under."""


def _key_attributes(schema: TableSchema, index_name: str | None) -> tuple[KeyAttribute, KeyAttribute | None]:
    if index_name is None:
        return schema.partition_key, schema.sort_key
    index = schema.index(index_name)
    if index is None:
        raise ValidationException(text.MISSING_INDEX)  # (no name: Query's own text appends one)
    if len(index.partition_keys) > 1 or len(index.sort_keys) > 1:
        raise ValidationException(text.MULTI_ATTRIBUTE_INDEX)
    return index.partition_keys[0], index.sort_keys[0] if index.sort_keys else None


def translate_select(
    statement: ast.Select,
    parameters: list[Item],
    schema: TableSchema,
    consistent_read: bool | None = None,
) -> ReadPlan:
    source = statement.source
    if source.index is not None and consistent_read:
        index = schema.index(source.index)
        if index is not None and index.is_global:
            raise ValidationException(text.CONSISTENT_READ_ON_GSI)
    partition, sort = _key_attributes(schema, source.index)
    if source.index is not None:
        _check_index_projection(statement, schema, source.index)
    exprs = Expressions(parameters)
    base: dict[str, Any] = {"TableName": source.table}
    if source.index is not None:
        base["IndexName"] = source.index
    if consistent_read is not None:
        base["ConsistentRead"] = consistent_read
    renames = _projection(statement.projection, exprs, base)
    parts = conjuncts(statement.where)
    fixed = next(
        ((i, found) for i, part in enumerate(parts) if (found := partition_values(part, partition.name))),
        None,
    )
    if fixed is None:
        if len(parts) == 1 and isinstance(parts[0], ast.Or):
            queries = _disjunct_queries(statement, parameters, schema, consistent_read)
            if queries is not None:
                return queries
        return _scan(statement, exprs, base, renames)
    position, value_nodes = fixed
    values = _distinct([bind(node, parameters) for node in value_nodes])
    if len(values) > limits.PARTIQL_PARTITION_VALUES_MAX:
        raise ValidationException(text.TOO_MANY_READS)
    for value in values:
        _check_key_value(partition, value)
    rest = parts[:position] + parts[position + 1:]
    if (
        source.index is None and len(values) == 1
        and _is_full_key_equality(rest, sort)
    ):
        key = {partition.name: values[0]}
        if sort is not None:
            sort_value = bind(equality_value(rest[0], sort.name), parameters)  # type: ignore[arg-type]
            _check_key_value(sort, sort_value)
            key[sort.name] = sort_value
        request = dict(base, Key=key)
        exprs.attach(request)
        return ReadPlan("GetItem", [request], source.table, renames)
    key_condition = f"{exprs.name(partition.name)} = {PARTITION_PLACEHOLDER}"
    if sort is not None:
        for i, part in enumerate(rest):
            condition = sort_condition(part, sort.name, exprs, sort.type)
            if condition is not None:
                key_condition += " AND " + condition
                del rest[i]
                break
    base["KeyConditionExpression"] = key_condition
    base[FILTER_MAY_NAME_KEYS] = FILTER_MAY_NAME_KEYS_MARK
    remaining = conjunction(rest)
    if remaining is not None:
        base["FilterExpression"] = exprs.condition(remaining)
    _order(statement, base, partition, sort, values)
    exprs.attach(base)
    requests = []
    for value in values:
        request = dict(base)
        request["ExpressionAttributeValues"] = {**exprs.values, PARTITION_PLACEHOLDER: value}
        requests.append(request)
    return ReadPlan("Query", requests, source.table, renames)


def _check_index_projection(statement: ast.Select, schema: TableSchema, index_name: str) -> None:
    """An index read may only filter on (and, for a GSI, project) what the
    index holds (the service's texts: "Secondary index" for both kinds in
    the filter's, "Global secondary index" in the projection's)."""
    index = schema.index(index_name)
    assert index is not None
    projected = indexes.projected_names(schema, index)
    if projected is None:
        return
    filtered = [name for name in _roots(statement.where) if name not in projected]
    if filtered:
        raise ValidationException(
            f"One or more parameter values were invalid: Secondary index {index_name} does not project "
            f"one or more filter attributes: [{', '.join(filtered)}]"
        )
    if index.is_global and statement.projection is not None:
        missing = [name for name in dict.fromkeys(path.root for path in statement.projection) if name not in projected]
        if missing:
            raise ValidationException(
                f"One or more parameter values were invalid: Global secondary index {index_name} "
                f"does not project [{', '.join(missing)}]"
            )


def _roots(node: Any) -> list[str]:
    """The top-level attributes a WHERE names, in order, once each."""
    found: dict[str, None] = {}
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Path):
            found.setdefault(current.root)
        elif isinstance(current, tuple):
            pending.extend(reversed(current))
        elif current is not None and hasattr(current, "__dataclass_fields__"):
            pending.extend(reversed([getattr(current, name) for name in current.__dataclass_fields__]))
    return list(found)


def disjuncts(node: ast.Node) -> list[ast.Node]:
    if isinstance(node, ast.Or):
        return disjuncts(node.left) + disjuncts(node.right)
    return [node]


def _disjunct_queries(
    statement: ast.Select, parameters: list[Item], schema: TableSchema, consistent_read: bool | None
) -> ReadPlan | None:
    """``A OR B OR ...`` where every side fixes the partition key (with
    conditions of its own): one Query per side and partition value, or None
    (a Scan) when a side does not. Two sides on one partition overlap unless
    each fixes a different sort-key value (DynamoDB refuses the overlap)."""
    source = statement.source
    partition, sort = _key_attributes(schema, source.index)
    assert statement.where is not None
    queries: list[tuple[Item, dict[str, Any], Item | None]] = []
    for side in disjuncts(statement.where):
        parts = conjuncts(side)
        fixed = next(
            ((i, found) for i, part in enumerate(parts) if (found := partition_values(part, partition.name))),
            None,
        )
        if fixed is None:
            return None
        position, value_nodes = fixed
        rest = parts[:position] + parts[position + 1:]
        sort_value = None
        if sort is not None:
            equal = next((equality_value(part, sort.name) for part in rest if equality_value(part, sort.name)), None)
            sort_value = bind(equal, parameters) if equal is not None else None
        for value in _distinct([bind(node, parameters) for node in value_nodes]):
            _check_key_value(partition, value)
            request = _query_request(statement, parameters, partition, sort, consistent_read, list(rest))
            request["ExpressionAttributeValues"] = {**request.get("ExpressionAttributeValues", {}),
                                                    PARTITION_PLACEHOLDER: value}
            queries.append((value, request, sort_value))
    if len(queries) > limits.PARTIQL_PARTITION_VALUES_MAX:
        raise ValidationException(text.TOO_MANY_READS)
    _check_no_overlap(queries)
    values = [value for value, _, _ in queries]
    order = {id(value): i for i, value in enumerate(values)}
    probe: dict[str, Any] = {}
    _order(statement, probe, partition, sort, values)
    requests = [queries[order[id(value)]][1] for value in values]
    for request in requests:
        request.update(probe)
    renames = _projection(statement.projection, Expressions(parameters), {})
    return ReadPlan("Query", requests, source.table, renames)


def _query_request(
    statement: ast.Select,
    parameters: list[Item],
    partition: KeyAttribute,
    sort: KeyAttribute | None,
    consistent_read: bool | None,
    rest: list[ast.Node],
) -> dict[str, Any]:
    """One side's Query, with expressions of its own (every placeholder used)."""
    exprs = Expressions(parameters)
    request: dict[str, Any] = {"TableName": statement.source.table}
    if statement.source.index is not None:
        request["IndexName"] = statement.source.index
    if consistent_read is not None:
        request["ConsistentRead"] = consistent_read
    _projection(statement.projection, exprs, request)
    key_condition = f"{exprs.name(partition.name)} = {PARTITION_PLACEHOLDER}"
    if sort is not None:
        for i, part in enumerate(rest):
            condition = sort_condition(part, sort.name, exprs, sort.type)
            if condition is not None:
                key_condition += " AND " + condition
                del rest[i]
                break
    request["KeyConditionExpression"] = key_condition
    request[FILTER_MAY_NAME_KEYS] = FILTER_MAY_NAME_KEYS_MARK
    remaining = conjunction(rest)
    if remaining is not None:
        request["FilterExpression"] = exprs.condition(remaining)
    return exprs.attach(request)


def _check_no_overlap(queries: list[tuple[Item, dict[str, Any], Item | None]]) -> None:
    by_partition: dict[bytes, list[Item | None]] = {}
    for value, _, sort_value in queries:
        by_partition.setdefault(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), []).append(sort_value)
    for sort_values in by_partition.values():
        if len(sort_values) < 2:
            continue
        if any(value is None for value in sort_values) or len(_distinct(sort_values)) != len(sort_values):  # type: ignore[arg-type]
            raise ValidationException(text.OVERLAPPING_CONDITIONS)


def _is_full_key_equality(rest: list[ast.Node], sort: KeyAttribute | None) -> bool:
    if sort is None:
        return not rest
    return len(rest) == 1 and equality_value(rest[0], sort.name) is not None


def _distinct(values: list[Item]) -> list[Item]:
    seen: set[bytes] = set()
    distinct = []
    for value in values:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        if encoded not in seen:
            seen.add(encoded)
            distinct.append(value)
    return distinct


def _projection(
    projection: tuple[ast.Path, ...] | None, exprs: Expressions, request: dict[str, Any]
) -> tuple[tuple[ast.Path, str], ...]:
    if projection is None:
        return ()
    request["ProjectionExpression"] = ", ".join(exprs.path(path) for path in projection)
    renames = []
    for path in projection:
        if len(path.steps) > 1:
            renames.append((path, leaf_name(path)))
    return tuple(renames)


def leaf_name(path: ast.Path) -> str:
    """The name a projected path is answered under: its last attribute name,
    with the list indexes after it (``a.b`` -> ``b``, ``l[1]`` -> ``l[1]``)."""
    last = max(i for i, step in enumerate(path.steps) if isinstance(step, str))
    return str(path.steps[last]) + "".join(f"[{step}]" for step in path.steps[last + 1:])


def _scan(
    statement: ast.Select, exprs: Expressions, base: dict[str, Any], renames: tuple[tuple[ast.Path, str], ...]
) -> ReadPlan:
    if statement.order_by:
        if statement.where is None:
            raise ValidationException(text.ORDER_BY_WITHOUT_WHERE)
        raise ValidationException(text.ORDER_BY_WITHOUT_HASH_KEY)
    if statement.where is not None:
        base["FilterExpression"] = exprs.condition(statement.where)
    exprs.attach(base)
    return ReadPlan("Scan", [base], statement.source.table, renames)


def _order(
    statement: ast.Select,
    request: dict[str, Any],
    partition: KeyAttribute,
    sort: KeyAttribute | None,
    values: list[Item],
) -> None:
    """ORDER BY: the partition key orders the Queries, the sort key each one."""
    for name, descending in statement.order_by:
        if name == partition.name:
            values.sort(key=functools.cmp_to_key(lambda a, b: compare_values(a, b) or 0), reverse=descending)
        elif sort is not None and name == sort.name:
            if descending:
                request["ScanIndexForward"] = False
        else:
            raise ValidationException(text.ORDER_BY_NOT_KEY.format(name))


def rename_projected(item: Item, renames: tuple[tuple[ast.Path, str], ...]) -> Item:
    """A projected item with each nested path answered under its leaf name.

    A projection keeps only the chosen elements of a list, in order, so
    ``l[3]`` is found at its rank among the indexes projected from ``l``."""
    renamed = dict(item)
    for root in {path.root for path, _ in renames}:
        renamed.pop(root, None)
    for path, name in renames:
        value = _navigate(item, path, renames)
        if value is not None:
            renamed[name] = value
    return renamed


def _navigate(item: Item, path: ast.Path, renames: tuple[tuple[ast.Path, str], ...]) -> Item | None:
    current: Any = item.get(path.root)
    for depth, step in enumerate(path.steps[1:], start=1):
        if not isinstance(current, dict):
            return None
        if isinstance(step, int):
            prefix = path.steps[:depth]
            chosen = sorted({
                other.steps[depth] for other, _ in renames
                if other.steps[:depth] == prefix and len(other.steps) > depth
                and isinstance(other.steps[depth], int)
            })
            items = current.get("L")
            rank = chosen.index(step)
            current = items[rank] if items is not None and rank < len(items) else None
        else:
            members = current.get("M")
            current = members.get(step) if members is not None else None
    return current if isinstance(current, dict) else None


# --- writes ---------------------------------------------------------------------------


@dataclass
class WritePlan:
    operation: str  # PutItem UpdateItem DeleteItem
    request: dict[str, Any]
    table: str
    is_insert: bool = False


def write_key(where: ast.Node | None, schema: TableSchema, parameters: list[Item]) -> tuple[Item, list[ast.Node]]:
    """The full key a write's WHERE fixes, and the conjuncts left over (its condition)."""
    key: Item = {}
    rest: list[ast.Node] = []
    attributes = [schema.partition_key] + ([schema.sort_key] if schema.sort_key is not None else [])
    for part in conjuncts(where):
        for attribute in attributes:
            value = equality_value(part, attribute.name)
            if value is not None:
                if attribute.name in key:
                    raise ValidationException(text.MULTIPLE_CONDITIONS_ON_KEY.format(attribute.name))
                bound = bind(value, parameters)
                _check_key_value(attribute, bound)
                key[attribute.name] = bound
                break
        else:
            rest.append(part)
    if len(key) != len(attributes):
        raise ValidationException(text.INCOMPLETE_KEY)
    return key, rest


def translate_write(
    statement: ast.Insert | ast.Update | ast.Delete,
    parameters: list[Item],
    schema: TableSchema,
) -> WritePlan:
    source = statement.source
    if source.index is not None:
        if isinstance(statement, ast.Insert):
            raise ValidationException(
                "FROM clause may only contain a single table name in data manipulation statements"
            )
        raise ValidationException(text.DML_ON_INDEX)
    exprs = Expressions(parameters)
    request: dict[str, Any] = {"TableName": source.table}
    if isinstance(statement, ast.Insert):
        item = bind(statement.item, parameters)["M"]
        for attribute in (schema.partition_key, schema.sort_key):
            if attribute is None:
                continue
            if attribute.name not in item:
                raise ValidationException(text.KEY_ABSENT.format(attribute.name))
            _check_key_value(attribute, item[attribute.name])
        request["Item"] = item
        request["ConditionExpression"] = f"attribute_not_exists({exprs.name(schema.partition_key.name)})"
        return WritePlan("PutItem", exprs.attach(request), source.table, is_insert=True)
    key, rest = write_key(statement.where, schema, parameters)
    request["Key"] = key
    if isinstance(statement, ast.Update):
        request["UpdateExpression"] = _update_expression(statement, exprs)
        condition = f"attribute_exists({exprs.name(schema.partition_key.name)})"
        remaining = conjunction(rest)
        if remaining is not None:
            condition += f" AND ({exprs.condition(remaining)})"
        request["ConditionExpression"] = condition
        if statement.returning is not None:
            request["ReturnValues"] = statement.returning
        return WritePlan("UpdateItem", exprs.attach(request), source.table)
    remaining = conjunction(rest)
    if remaining is not None:
        request["ConditionExpression"] = exprs.condition(remaining)
    if statement.returning is not None:
        if statement.returning != "ALL_OLD":
            spelled = statement.returning.replace("UPDATED", "MODIFIED").replace("_", " ") + " *"
            raise ValidationException(text.RETURNING_IN_DELETE.format(spelled))
        request["ReturnValues"] = "ALL_OLD"
    return WritePlan("DeleteItem", exprs.attach(request), source.table)


def _update_expression(statement: ast.Update, exprs: Expressions) -> str:
    sets: list[str] = []
    adds: list[str] = []
    deletes: list[str] = []
    for target, value in statement.sets:
        if isinstance(value, ast.Call) and value.name in ("set_add", "set_delete"):
            operation = value.name[4:].upper()
            if len(value.arguments) != 2:
                raise ValidationException(f"SET_{operation} must have exactly two arguments at {value.at}")
            first, second = value.arguments
            if first != target:
                raise ValidationException(
                    f"The first argument to SET_{operation} must equal the assignment value at {value.at}"
                )
            bound = bind(second, exprs.parameters) if is_value(second) else {}
            if not any(kind in bound for kind in ("SS", "NS", "BS")):
                raise ValidationException(
                    f"The second argument to SET_{operation} must be a value with type SET at {value.first_at}"
                )
            (adds if operation == "ADD" else deletes).append(f"{exprs.path(target)} {exprs.value(bound)}")
        else:
            sets.append(f"{exprs.path(target)} = {exprs.update_value(value)}")
    sections = []
    if sets:
        sections.append("SET " + ", ".join(sets))
    if statement.removes:
        sections.append("REMOVE " + ", ".join(exprs.path(path) for path in statement.removes))
    if adds:
        sections.append("ADD " + ", ".join(adds))
    if deletes:
        sections.append("DELETE " + ", ".join(deletes))
    return " ".join(sections)


# --- transactions ---------------------------------------------------------------------


def transact_get(statement: ast.Select, parameters: list[Item], schema: TableSchema) -> dict[str, Any]:
    """A SELECT of ExecuteTransaction as one Get of TransactGetItems."""
    if statement.source.index is not None:
        raise ValidationException(text.TRANSACTION_READ_ON_INDEX)
    plan = translate_select(statement, parameters, schema)
    if plan.operation != "GetItem":
        raise ValidationException(text.TRANSACTION_READ_NOT_BY_KEY)
    get = dict(plan.requests[0])
    get.pop("ConsistentRead", None)
    return {"Get": get}


def transact_write(statement: ast.Statement, parameters: list[Item], schema: TableSchema) -> dict[str, Any]:
    """A write of ExecuteTransaction as one TransactWriteItems action."""
    if isinstance(statement, ast.Exists):
        select = statement.select
        if select.source.index is not None:
            raise ValidationException(text.TRANSACTION_INDEX_OPERATION)
        exprs = Expressions(parameters)
        try:
            key, rest = write_key(select.where, schema, parameters)
        except ValidationException:
            raise ValidationException(text.TRANSACTION_EXISTS_NOT_BY_KEY) from None
        remaining = conjunction(rest)
        if remaining is None:
            raise ValidationException(text.TRANSACTION_EXISTS_NOT_BY_KEY)
        condition = f"attribute_exists({exprs.name(schema.partition_key.name)}) AND ({exprs.condition(remaining)})"
        check = {"TableName": select.source.table, "Key": key, "ConditionExpression": condition}
        return {"ConditionCheck": exprs.attach(check)}
    assert isinstance(statement, (ast.Insert, ast.Update, ast.Delete))
    if not isinstance(statement, ast.Insert) and statement.returning is not None:
        raise ValidationException(text.RETURNING_IN_TRANSACTION)
    if statement.source.index is not None:
        raise ValidationException(text.TRANSACTION_INDEX_OPERATION)
    plan = translate_write(statement, parameters, schema)
    kind = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}[plan.operation]
    return {kind: plan.request}
