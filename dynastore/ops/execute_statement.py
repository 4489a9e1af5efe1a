"""ExecuteStatement: one PartiQL statement, run as the item-API request it
translates to (dynastore/partiql/translate.py) through that operation's own
handler, so a PartiQL write takes the one write path (streams, indexes,
TTL, throughput and faults see a PutItem/UpdateItem/DeleteItem) and a
SELECT costs exactly the GetItem, Query or Scan it runs.

A SELECT answers ``Items`` (nested projected paths under their leaf names)
and, when more remain, an opaque ``NextToken``: which of its Queries
(several for ``pk IN [...]``) and where in it to go on. A write answers
``Items: []``, or the RETURNING item.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits, partiql
from dynastore.engine.schema import TableSchema
from dynastore.errors import (
    ConditionalCheckFailedException,
    DuplicateItemException,
    ValidationException,
)
from dynastore.ops.put_item import ENVELOPE as REQUEST_ENVELOPE
from dynastore.partiql import ast
from dynastore.partiql import messages as text
from dynastore.partiql.translate import (
    ReadPlan,
    WritePlan,
    check_operand_types,
    check_parameters,
    rename_projected,
    translate_select,
    translate_write,
)
from dynastore.types.attribute_value import validate_attribute_value

if TYPE_CHECKING:
    from dynastore.database import Database

Item = dict[str, Any]
_TABLE_NAME = re.compile(limits.TABLE_NAME_PATTERN)


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any] | bytes:
    text_of = request["Statement"]
    statement = partiql.parse(text_of)
    if isinstance(statement, ast.Exists):
        raise ValidationException(text.EXISTS_OUTSIDE_TRANSACTION)
    parameters = bound_parameters(statement, request.get("Parameters"))
    check_operand_types(statement, parameters)
    schema = table_of(database, statement.source)
    consistent = request.get("ConsistentRead")
    key = (text_of, consistent, tuple(next(iter(value)) for value in parameters))
    template = _TEMPLATES.get(key)
    if template is not None and template.schema is schema:
        base = template.base
        if isinstance(base, ReadPlan):  # a GetItem: the commonest statement, kept short
            return _get(database, template.filled(base.requests[0], parameters), base.renames, request)
        plan: ReadPlan | WritePlan = template.plan(parameters)
    else:
        plan = partiql.deep(_translate, statement, parameters, schema, consistent)
        _remember(key, plan, parameters, schema)
    if isinstance(plan, ReadPlan):
        return run_select(database, plan, request)
    return run_write(database, plan, request)


def _translate(
    statement: ast.Statement, parameters: list[Item], schema: TableSchema, consistent: bool | None
) -> ReadPlan | WritePlan:
    if isinstance(statement, ast.Select):
        return translate_select(statement, parameters, schema, consistent)
    assert not isinstance(statement, ast.Exists)
    return translate_write(statement, parameters, schema)


# --- translations remembered per statement text ---------------------------------------------
#
# A statement's translation depends on its text, the table's schema and the
# types of its parameters; their values only fill places in the request. So
# a GetItem or a write is translated once per (text, ConsistentRead,
# parameter types) and later requests copy the request along the paths
# where each parameter sits. Plans whose shape depends on the values (one
# Query per distinct partition value, sorted by ORDER BY) are translated
# each time.

Slot = tuple[tuple[str | int, ...], int]


class _Template:
    __slots__ = ("schema", "base", "slots", "_containers")

    def __init__(self, schema: TableSchema, base: ReadPlan | WritePlan, slots: list[Slot]) -> None:
        self.schema = schema
        self.base = base
        self.slots = slots
        # The containers to copy, outermost first (each once).
        containers: dict[tuple[str | int, ...], None] = {}
        for path, _ in slots:
            for depth in range(1, len(path)):
                containers.setdefault(path[:depth])
        self._containers = list(containers)

    def plan(self, parameters: list[Item]) -> ReadPlan | WritePlan:
        base = self.base
        if isinstance(base, ReadPlan):
            return ReadPlan(base.operation, [self.filled(base.requests[0], parameters)], base.table, base.renames)
        return WritePlan(base.operation, self.filled(base.request, parameters), base.table, base.is_insert)

    def filled(self, request: dict[str, Any], parameters: list[Item]) -> dict[str, Any]:
        """A copy of ``request`` with each slot holding its parameter
        (containers are copied along the slots' paths only; the rest is
        shared, read-only)."""
        result = dict(request)
        copies: dict[tuple[str | int, ...], Any] = {(): result}
        for prefix in self._containers:
            parent = copies[prefix[:-1]]
            original = parent[prefix[-1]]
            copy = copies[prefix] = list(original) if type(original) is list else dict(original)
            parent[prefix[-1]] = copy
        for path, index in self.slots:
            copies[path[:-1]][path[-1]] = parameters[index]
        return result


_TEMPLATES: dict[tuple[Any, ...], _Template] = {}


def _remember(key: tuple[Any, ...], plan: ReadPlan | WritePlan, parameters: list[Item], schema: TableSchema) -> None:
    if isinstance(plan, ReadPlan):
        if plan.operation != "GetItem":
            return
        request = plan.requests[0]
    else:
        request = plan.request
    slots: list[Slot] = []
    _find_parameters(request, (), {id(value): i for i, value in enumerate(parameters)}, slots)
    if len({index for _, index in slots}) != len(parameters):
        return  # a parameter was transformed (or two were one object): no template
    if len(_TEMPLATES) >= limits.PARTIQL_PARSE_CACHE_ENTRIES:
        _TEMPLATES.clear()
    _TEMPLATES[key] = _Template(schema, plan, slots)


def _find_parameters(node: Any, path: tuple[str | int, ...], positions: dict[int, int], slots: list[Slot]) -> None:
    entries = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for step, child in entries:
        index = positions.get(id(child))
        if index is not None:
            slots.append(((*path, step), index))
        elif isinstance(child, (dict, list)):
            _find_parameters(child, (*path, step), positions, slots)


# --- shared with BatchExecuteStatement and ExecuteTransaction ---------------------------


def bound_parameters(statement: ast.Statement, parameters: list[Any] | None) -> list[Item]:
    """The statement's parameters, validated, in number as its ``?`` are."""
    return check_parameters(statement, validated_parameters(parameters))


def validated_parameters(parameters: list[Any] | None) -> list[Item]:
    """Each parameter validated as an attribute value, in order (the first
    problem in document order answers, as the service's does)."""
    checked = []
    for value in parameters or ():
        if type(value) is dict and len(value) == 1 and type(value.get("S")) is str:
            checked.append(value)  # the commonest parameter: nothing to check
            continue
        _check_number_magnitudes(value)
        checked.append(validate_attribute_value(value))
    return checked


_INT32 = 2**32


def _check_number_magnitudes(value: Any) -> None:
    """A number parameter is read as Java's BigDecimal reads it, whose
    magnitude check (precision less scale) is 32-bit arithmetic that wraps:
    1e2147483647 comes out an underflow (pinned on the service; PutItem's
    reading of the same text differs). Only such wrapped texts are refused
    here; everything else is validate_attribute_value's."""
    if type(value) is not dict or len(value) != 1 or "S" in value:
        return
    ((kind, inner),) = value.items()
    if kind == "N" and isinstance(inner, str):
        _check_wrap(inner)
    elif kind == "NS" and isinstance(inner, list):
        for member in inner:
            if isinstance(member, str):
                _check_wrap(member)
    elif kind == "L" and isinstance(inner, list):
        for member in inner:
            _check_number_magnitudes(member)
    elif kind == "M" and isinstance(inner, dict):
        for member in inner.values():
            _check_number_magnitudes(member)


def _check_wrap(number: str) -> None:
    if "e" not in number and "E" not in number:
        return
    mantissa, _, exponent_text = number.lower().partition("e")
    try:
        exponent = int(exponent_text)
    except ValueError:
        return
    if not -(2**31) <= exponent < 2**31:
        return  # "cannot be converted": validate_attribute_value says so
    integer, _, fraction = mantissa.lstrip("+-").partition(".")
    precision = max(len((integer + fraction).lstrip("0")), 1)
    magnitude = precision - (len(fraction) - exponent)
    wrapped = (magnitude + 2**31) % _INT32 - 2**31
    if wrapped != magnitude:
        from dynastore.types.number import MESSAGE_OVERFLOW, MESSAGE_UNDERFLOW

        raise ValidationException(MESSAGE_UNDERFLOW if wrapped < magnitude else MESSAGE_OVERFLOW)


def table_of(database: Database, source: ast.Source) -> TableSchema:
    name = source.table
    if name not in database.tables and not (
        limits.TABLE_NAME_MIN_LENGTH <= len(name) <= limits.TABLE_NAME_MAX_LENGTH
        and _TABLE_NAME.fullmatch(name) is not None
    ):
        raise ValidationException(text.TABLE_NAME_INVALID)
    return database.table(name)


def call(database: Database, operation: str, request: dict[str, Any]) -> dict[str, Any] | bytes:
    """Run ``operation``'s own handler, as dispatch would after its shape
    checks: its fault rules first (docs/faults.md), under the throughput
    model when it is on."""
    from dynastore.ops import OPERATIONS

    handler = OPERATIONS[operation]
    try:
        database.faults.armed and database.faults.before(operation, request)
        if database.throughput is not None:
            result: dict[str, Any] | bytes = database.throughput.run(operation, handler, request)
            return result
        return handler(database, request)
    except ValidationException as error:
        error.message = partiql_message(error.message or "")
        error.args = (error.message,)
        raise


_EXPRESSION_PREFIX = re.compile(
    r"^Invalid (?:Filter|Condition|Update|Projection|KeyCondition)Expression: "
)
_VALUE_ENVELOPE = re.compile(r"^ExpressionAttributeValues contains invalid value: (.*) for key :\w+$", re.DOTALL)


def partiql_message(message: str) -> str:
    """An item-API refusal as PartiQL words it: a statement has no
    FilterExpression or ExpressionAttributeValues, so their envelopes go
    ("Invalid FilterExpression: Operator or function requires a document
    path; ..." is "Operator or function requires a document path; ...",
    as the service answers the statement)."""
    if message.startswith(REQUEST_ENVELOPE):  # PutItem's and UpdateItem's, not a statement's
        message = message[len(REQUEST_ENVELOPE):]
    enveloped = _VALUE_ENVELOPE.match(message)
    if enveloped is not None:
        return enveloped.group(1)
    return _EXPRESSION_PREFIX.sub("", message, count=1)


def decoded(response: dict[str, Any] | bytes) -> dict[str, Any]:
    if isinstance(response, bytes):
        loaded: dict[str, Any] = orjson.loads(response)
        return loaded
    return response


def with_options(request: dict[str, Any], outer: dict[str, Any], *names: str) -> dict[str, Any]:
    """``request`` with those of ``names`` that the caller's request set."""
    for name in names:
        value = outer.get(name)
        if value is not None:
            request[name] = value
    return request


def merge_capacity(total: dict[str, Any] | None, more: dict[str, Any] | None) -> dict[str, Any] | None:
    """Two ConsumedCapacity objects of one table, summed field by field."""
    if more is None:
        return total
    if total is None:
        return dict(more)
    merged = dict(total)
    for name, value in more.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            merged[name] = merged.get(name, 0) + value
        elif isinstance(value, dict):
            merged[name] = merge_capacity(merged.get(name), value)
        else:
            merged.setdefault(name, value)
    return merged


def run_write(database: Database, plan: WritePlan, outer: dict[str, Any]) -> dict[str, Any]:
    request = with_options(
        dict(plan.request), outer, "ReturnConsumedCapacity", "ReturnValuesOnConditionCheckFailure"
    )
    try:
        response = decoded(call(database, plan.operation, request))
    except ConditionalCheckFailedException as error:
        if not plan.is_insert:
            raise
        duplicate = DuplicateItemException()
        duplicate.write_units_consumed = getattr(error, "write_units_consumed", 0)  # type: ignore[attr-defined]
        raise duplicate from None
    answer: dict[str, Any] = {"Items": [response["Attributes"]] if response.get("Attributes") else []}
    if "ConsumedCapacity" in response:
        answer["ConsumedCapacity"] = response["ConsumedCapacity"]
    return answer


# --- SELECT ------------------------------------------------------------------------------

_GET_PREFIX = b'{"Item":'


def run_select(database: Database, plan: ReadPlan, outer: dict[str, Any]) -> dict[str, Any] | bytes:
    if plan.operation == "GetItem":
        return _run_get(database, plan, outer)
    token_key = fingerprint(outer)
    start, start_key = _start(outer.get("NextToken"), token_key, len(plan.requests))
    limit = outer.get("Limit")
    items: list[Item] = []
    capacity: dict[str, Any] | None = None
    next_token: str | None = None
    last_key: Item | None = None
    position = start
    while position < len(plan.requests):
        request = with_options(dict(plan.requests[position]), outer, "ReturnConsumedCapacity")
        if start_key is not None:
            request["ExclusiveStartKey"] = start_key
        if limit is not None:
            request["Limit"] = limit
        page = decoded(call(database, plan.operation, request))
        items.extend(page.get("Items", ()))
        capacity = merge_capacity(capacity, page.get("ConsumedCapacity"))
        start_key = page.get("LastEvaluatedKey")
        if start_key is not None:
            next_token = _token(token_key, position, start_key)
            last_key = start_key
            break
        position += 1
        if limit is not None:
            limit -= page.get("ScannedCount", 0)
            if limit <= 0:
                if position < len(plan.requests):
                    next_token = _token(token_key, position, None)
                break
    if plan.renames:
        items = [rename_projected(item, plan.renames) for item in items]
    answer: dict[str, Any] = {"Items": items}
    if next_token is not None:
        answer["NextToken"] = next_token
    if last_key is not None:  # the API reference: a read stopped by Limit or 1 MB says where
        answer["LastEvaluatedKey"] = last_key
    if capacity is not None:
        answer["ConsumedCapacity"] = capacity
    return answer


def _run_get(database: Database, plan: ReadPlan, outer: dict[str, Any]) -> dict[str, Any] | bytes:
    return _get(database, dict(plan.requests[0]), plan.renames, outer)


def _get(
    database: Database, request: dict[str, Any], renames: tuple[tuple[ast.Path, str], ...], outer: dict[str, Any]
) -> dict[str, Any] | bytes:
    """Run a SELECT's GetItem (``request`` is this call's own copy)."""
    with_options(request, outer, "ReturnConsumedCapacity")
    response = call(database, "GetItem", request)
    if isinstance(response, bytes) and not renames:
        # The stored item bytes, spliced into the answer undecoded (the fast path).
        if response == b"{}":
            return b'{"Items":[]}'
        if response.startswith(_GET_PREFIX) and "ReturnConsumedCapacity" not in request:
            return b'{"Items":[' + response[len(_GET_PREFIX):-1] + b"]}"
    page = decoded(response)
    item = page.get("Item")
    items = [] if item is None else [rename_projected(item, renames) if renames else item]
    answer: dict[str, Any] = {"Items": items}
    if "ConsumedCapacity" in page:
        answer["ConsumedCapacity"] = page["ConsumedCapacity"]
    return answer


def fingerprint(request: dict[str, Any]) -> str:
    """What a NextToken must come back with: the same statement and parameters."""
    material = orjson.dumps([request["Statement"], request.get("Parameters")], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(material).hexdigest()[:16]


def _token(token_key: str, position: int, start_key: Item | None) -> str:
    body = orjson.dumps({"f": token_key, "q": position, "k": start_key})
    return base64.urlsafe_b64encode(body).decode()


def _start(token: str | None, token_key: str, requests: int) -> tuple[int, Item | None]:
    if token is None:
        return 0, None
    try:
        body = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        position, start_key, key = body["q"], body["k"], body["f"]
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        raise ValidationException(text.INVALID_NEXT_TOKEN) from None
    if key != token_key or not isinstance(position, int) or not 0 <= position < requests:
        raise ValidationException(text.NEXT_TOKEN_MISMATCH)
    if start_key is not None and not isinstance(start_key, dict):
        raise ValidationException(text.INVALID_NEXT_TOKEN)
    return position, start_key

