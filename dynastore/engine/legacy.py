"""The legacy (pre-expression) parameters, translated into expressions.

DynamoDB still accepts the 2012 parameters: ``Expected`` and
``ConditionalOperator`` (PutItem, UpdateItem, DeleteItem), ``AttributeUpdates``
(UpdateItem), ``AttributesToGet`` (GetItem, BatchGetItem, Query, Scan),
``KeyConditions`` and ``QueryFilter`` (Query), ``ScanFilter`` (Scan).

Each converter here validates one legacy parameter with DynamoDB's own
messages, then returns ``(expression_text, names, values)`` for
dynastore.expressions to compile like any user expression, so there is one
evaluator. Placeholders carry a per-converter prefix (``#le0``/``:le0`` for
Expected, ``#lf``/``:lf`` for filters, ...), so the outputs of two converters
can share one ExpressionContext. Legacy and expression parameters can never be
mixed in one request (``check_no_mixing``) except Query's KeyConditions, which
is compiled on its own context.

Semantics that differ from the obvious expression are spelled out where they
are translated (NOT_CONTAINS on a missing attribute is false; NULL/NOT_NULL
test existence; ADD of a list appends).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dynastore import limits
from dynastore.errors import ValidationException, invalid_parameter
from dynastore.types.attribute_value import compare_values, type_of, validate_attribute_value

Converted = tuple[str, dict[str, str], dict[str, Any]]
"""(expression text, ExpressionAttributeNames, ExpressionAttributeValues)."""

# --- which parameters belong together, in DynamoDB's order -------------------

#: operation -> (legacy parameters, expression parameters), each in the order
#: DynamoDB lists them in the mixing error.
PARAMETERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "PutItem": (("Expected", "ConditionalOperator"), ("ConditionExpression",)),
    "DeleteItem": (("Expected", "ConditionalOperator"), ("ConditionExpression",)),
    "UpdateItem": (
        ("AttributeUpdates", "Expected", "ConditionalOperator"),
        ("UpdateExpression", "ConditionExpression"),
    ),
    "GetItem": (("AttributesToGet",), ("ProjectionExpression",)),
    "Query": (
        ("AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions"),
        ("ProjectionExpression", "FilterExpression", "KeyConditionExpression"),
    ),
    "Scan": (
        ("AttributesToGet", "ScanFilter", "ConditionalOperator"),
        ("ProjectionExpression", "FilterExpression"),
    ),
}

_CONDITION_MAPS = ("Expected", "QueryFilter", "ScanFilter")

MESSAGE_CONDITIONAL_OPERATOR_ALONE = "ConditionalOperator cannot be used without Filter or Expected"
MESSAGE_CONDITIONAL_OPERATOR_ONE = (
    "ConditionalOperator can only be used when Filter or Expected has two or more elements"
)
MESSAGE_BETWEEN_BOUNDS = (
    "The BETWEEN condition was provided a range where the lower bound is greater than the "
    "upper bound"
)


def check_no_mixing(
    request: dict[str, Any], legacy: Sequence[str], expressions: Sequence[str]
) -> None:
    """DynamoDB's checks on which legacy/expression parameters may appear together.

    ``legacy`` and ``expressions`` are the operation's parameter names in
    DynamoDB's order (see ``PARAMETERS``). In order: the mixing error; the
    ExpressionAttributeNames/Values-without-expression errors; a
    ConditionalOperator without a two-element Expected/QueryFilter/ScanFilter.
    Query's KeyConditions may be combined with FilterExpression or
    ProjectionExpression; only KeyConditionExpression excludes it.
    """
    used_legacy = [name for name in legacy if request.get(name) is not None]
    names_given = request.get("ExpressionAttributeNames") is not None
    values_given = request.get("ExpressionAttributeValues") is not None
    if not used_legacy and not names_given and not values_given:
        return  # the common case: nothing to check
    used_expressions = [name for name in expressions if request.get(name) is not None]
    if used_expressions and used_legacy:
        _check_mixing(request, used_legacy, used_expressions)
    if names_given and not used_expressions:
        raise ValidationException(
            "ExpressionAttributeNames can only be specified when using expressions"
        )
    value_expressions = [name for name in expressions if name != "ProjectionExpression"]
    # isdisjoint, not any(generator): the generator any() abandons is closed
    # by raising GeneratorExit into it, on every request that has values.
    if values_given and value_expressions and set(value_expressions).isdisjoint(used_expressions):
        verb = "are" if len(value_expressions) > 1 else "is"
        raise ValidationException(
            "ExpressionAttributeValues can only be specified when using expressions: "
            f"{' and '.join(value_expressions)} {verb} null"
        )
    if used_legacy:
        _check_conditional_operator(request, legacy)


def _check_mixing(
    request: dict[str, Any], used_legacy: list[str], used_expressions: list[str]
) -> None:
    if request.get("KeyConditionExpression") is None:
        used_legacy = [name for name in used_legacy if name != "KeyConditions"]
    if used_legacy:
        raise ValidationException(
            "Can not use both expression and non-expression parameters in the same request: "
            f"Non-expression parameters: {{{', '.join(used_legacy)}}} "
            f"Expression parameters: {{{', '.join(used_expressions)}}}"
        )


def check_request(operation: str, request: dict[str, Any]) -> None:
    """``check_no_mixing`` with the operation's own parameter lists."""
    legacy, expressions = PARAMETERS[operation]
    check_no_mixing(request, legacy, expressions)


def _check_conditional_operator(request: dict[str, Any], legacy: Sequence[str]) -> None:
    if "ConditionalOperator" not in legacy or request.get("ConditionalOperator") is None:
        return
    conditions = next(
        (request.get(name) for name in legacy if name in _CONDITION_MAPS), None
    )
    count = len(conditions) if isinstance(conditions, dict) else 0
    if count == 0:
        raise ValidationException(MESSAGE_CONDITIONAL_OPERATOR_ALONE)
    if count == 1:
        raise ValidationException(MESSAGE_CONDITIONAL_OPERATOR_ONE)


# --- attribute values ----------------------------------------------------------------


def _validate_value(value: Any) -> dict[str, Any]:
    """Validate one AttributeValue; numbers come back normalized so comparisons
    see DynamoDB's canonical form."""
    return validate_attribute_value(value)


def _type_of(value: dict[str, Any]) -> str:
    return type_of(value)


# --- comparison operators -------------------------------------------------------------

#: operator -> (minimum, maximum) number of values in AttributeValueList
_ARGUMENT_COUNTS: dict[str, tuple[int, int | None]] = {
    "EQ": (1, 1), "NE": (1, 1), "LE": (1, 1), "LT": (1, 1), "GE": (1, 1), "GT": (1, 1),
    "NOT_NULL": (0, 0), "NULL": (0, 0), "CONTAINS": (1, 1), "NOT_CONTAINS": (1, 1),
    "BEGINS_WITH": (1, 1), "IN": (1, None), "BETWEEN": (2, 2),
}

_SCALARS = frozenset({"S", "N", "B"})
#: operator -> the AttributeValue types its arguments may have (EQ/NE take any)
_ARGUMENT_TYPES: dict[str, frozenset[str]] = {
    "LE": _SCALARS, "LT": _SCALARS, "GE": _SCALARS, "GT": _SCALARS,
    "IN": _SCALARS, "BETWEEN": _SCALARS,
    "CONTAINS": _SCALARS | {"BOOL", "NULL"}, "NOT_CONTAINS": _SCALARS | {"BOOL", "NULL"},
    "BEGINS_WITH": frozenset({"S", "B"}),
}

_COMPARISON_SYMBOLS = {"EQ": "=", "NE": "<>", "LE": "<=", "LT": "<", "GE": ">=", "GT": ">"}


def _check_arguments(operator: str, values: list[dict[str, Any]]) -> None:
    """Count, type and bound checks on a validated AttributeValueList."""
    low, high = _ARGUMENT_COUNTS[operator]
    if len(values) < low or (high is not None and len(values) > high):
        raise invalid_parameter(f"Invalid number of argument(s) for the {operator} ComparisonOperator")
    if values and any(_type_of(value) != _type_of(values[0]) for value in values):
        raise invalid_parameter("AttributeValues inside AttributeValueList must be of same type")
    allowed = _ARGUMENT_TYPES.get(operator)
    if allowed is not None:
        for value in values:
            if _type_of(value) not in allowed:
                raise invalid_parameter(
                    f"ComparisonOperator {operator} is not valid for {_type_of(value)} "
                    "AttributeValue type"
                )
    if operator == "BETWEEN" and (compare_values(values[0], values[1]) or 0) > 0:
        raise ValidationException(MESSAGE_BETWEEN_BOUNDS)


class _Builder:
    """Collects placeholders for one converted expression."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.names: dict[str, str] = {}
        self._name_of: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        placeholder = self._name_of.get(attribute)
        if placeholder is None:
            placeholder = f"#{self.prefix}{len(self.names)}"
            self.names[placeholder] = attribute
            self._name_of[attribute] = placeholder
        return placeholder

    def value(self, attribute_value: dict[str, Any]) -> str:
        placeholder = f":{self.prefix}{len(self.values)}"
        self.values[placeholder] = attribute_value
        return placeholder

    def result(self, text: str) -> Converted:
        return text, self.names, self.values


def _comparison(builder: _Builder, attribute: str, operator: str, values: list[dict[str, Any]]) -> str:
    """One legacy comparison as an expression, with the legacy semantics."""
    path = builder.name(attribute)
    if operator == "NULL":  # despite the name: the attribute does not exist
        return f"attribute_not_exists({path})"
    if operator == "NOT_NULL":
        return f"attribute_exists({path})"
    operands = [builder.value(value) for value in values]
    if operator in _COMPARISON_SYMBOLS:
        return f"{path} {_COMPARISON_SYMBOLS[operator]} {operands[0]}"
    if operator == "CONTAINS":
        return f"contains({path}, {operands[0]})"
    if operator == "NOT_CONTAINS":  # false, not true, when the attribute is missing
        return f"(attribute_exists({path}) AND NOT contains({path}, {operands[0]}))"
    if operator == "BEGINS_WITH":
        return f"begins_with({path}, {operands[0]})"
    if operator == "IN":  # an expression's IN takes at most 100 operands; legacy IN has no cap
        step = limits.EXPRESSION_IN_MAX_OPERANDS
        groups = [operands[start : start + step] for start in range(0, len(operands), step)]
        tests = [f"{path} IN ({', '.join(group)})" for group in groups]
        return tests[0] if len(tests) == 1 else "(" + " OR ".join(tests) + ")"
    return f"{path} BETWEEN {operands[0]} AND {operands[1]}"  # BETWEEN


def _join(parts: list[str], conditional_operator: str | None) -> str:
    if len(parts) == 1:
        return parts[0]
    joiner = " OR " if conditional_operator == "OR" else " AND "
    return joiner.join(f"({part})" for part in parts)


def _condition_values(condition: dict[str, Any]) -> list[dict[str, Any]]:
    raw = condition.get("AttributeValueList") or []
    if not isinstance(raw, list):
        raw = []
    return [_validate_value(value) for value in raw]


def _operator_of(condition: dict[str, Any]) -> str:
    operator = condition.get("ComparisonOperator")
    if operator not in _ARGUMENT_COUNTS:
        raise ValidationException(
            f"1 validation error detected: Value '{operator}' at 'comparisonOperator' failed to "
            "satisfy constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, "
            "NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"
        )
    return str(operator)


# --- Expected -----------------------------------------------------------------------------


def expected_to_condition(
    expected: dict[str, Any], conditional_operator: str | None
) -> Converted | None:
    """``Expected`` (+ ``ConditionalOperator``) as a ConditionExpression, or None
    when the map is empty (an empty Expected imposes no condition)."""
    builder = _Builder("le")
    parts = [
        _expected_part(builder, attribute, condition or {})
        for attribute, condition in expected.items()
    ]
    if not parts:
        return None
    return builder.result(_join(parts, conditional_operator))


def _expected_part(builder: _Builder, attribute: str, condition: dict[str, Any]) -> str:
    has_list = condition.get("AttributeValueList") is not None
    has_value = condition.get("Value") is not None
    if has_list and has_value:
        raise invalid_parameter(
            f"Value and AttributeValueList cannot be used together for Attribute: {attribute}"
        )
    if condition.get("ComparisonOperator") is not None:
        return _expected_with_operator(builder, attribute, condition, has_list, has_value)
    if has_list:
        raise invalid_parameter(
            "AttributeValueList can only be used with a ComparisonOperator for Attribute: "
            f"{attribute}"
        )
    exists = condition.get("Exists")
    if exists is None or exists is True:
        if not has_value:
            shown = "null" if exists is None else "true"
            raise invalid_parameter(
                f"Value must be provided when Exists is {shown} for Attribute: {attribute}"
            )
        value = _validate_value(condition["Value"])
        return f"{builder.name(attribute)} = {builder.value(value)}"
    if has_value:
        raise invalid_parameter(
            f"Value cannot be used when Exists is false for Attribute: {attribute}"
        )
    return f"attribute_not_exists({builder.name(attribute)})"


def _expected_with_operator(
    builder: _Builder, attribute: str, condition: dict[str, Any], has_list: bool, has_value: bool
) -> str:
    if condition.get("Exists") is not None:
        raise invalid_parameter(
            f"Exists and ComparisonOperator cannot be used together for Attribute: {attribute}"
        )
    operator = _operator_of(condition)
    if operator not in ("NULL", "NOT_NULL") and not has_list and not has_value:
        raise invalid_parameter(
            f"Value or AttributeValueList must be used with ComparisonOperator: {operator} "
            f"for Attribute: {attribute}"
        )
    if has_value:
        values = [_validate_value(condition["Value"])]
    else:
        values = _condition_values(condition)
    _check_arguments(operator, values)
    return _comparison(builder, attribute, operator, values)


# --- QueryFilter / ScanFilter / KeyConditions ----------------------------------------------


def filter_to_condition(
    conditions: dict[str, Any], conditional_operator: str | None, parameter: str
) -> Converted | None:
    """``QueryFilter``/``ScanFilter`` (named by ``parameter``) as a
    FilterExpression, or None when the map is empty."""
    builder = _Builder("lf")
    parts = []
    for attribute, condition in conditions.items():
        condition = condition or {}
        operator = _operator_of(condition)
        values = _condition_values(condition)
        _check_arguments(operator, values)
        parts.append(_comparison(builder, attribute, operator, values))
    if not parts:
        return None
    return builder.result(_join(parts, conditional_operator))


def validate_conditions(conditions: dict[str, Any]) -> None:
    """Only the validation of a condition map (KeyConditions' first pass)."""
    for condition in conditions.values():
        condition = condition or {}
        operator = _operator_of(condition)
        _check_arguments(operator, _condition_values(condition))


def key_conditions_to_expression(key_conditions: dict[str, Any]) -> Converted:
    """Query's ``KeyConditions`` as a KeyConditionExpression.

    Operators a key condition cannot use (NE, IN, NULL, NOT_NULL, CONTAINS,
    NOT_CONTAINS) are refused with DynamoDB's message; which attribute is the
    partition and which the sort key is for compile_key_condition to check.
    """
    validate_conditions(key_conditions)
    count = len(key_conditions)
    if count not in (1, 2):
        raise ValidationException("Conditions can be of length 1 or 2 only")
    builder = _Builder("lk")
    parts = []
    for attribute, condition in key_conditions.items():
        operator = str(condition["ComparisonOperator"])
        if operator not in ("EQ", "LE", "LT", "GE", "GT", "BEGINS_WITH", "BETWEEN"):
            raise ValidationException(
                "Attempted conditional constraint is not an indexable operation"
            )
        parts.append(_comparison(builder, attribute, operator, _condition_values(condition)))
    return builder.result(" AND ".join(parts))


# --- AttributeUpdates ----------------------------------------------------------------------

_SETS = frozenset({"SS", "NS", "BS"})
_ADDABLE = _SETS | {"N", "L"}


def attribute_updates_to_update(attribute_updates: dict[str, Any]) -> Converted | None:
    """``AttributeUpdates`` as an UpdateExpression, or None when empty.

    PUT -> SET; DELETE without a value -> REMOVE; DELETE of a set -> DELETE;
    ADD of a number or set -> ADD; ADD of a list appends, as the legacy API
    does: ``SET a = list_append(if_not_exists(a, []), value)``.
    """
    builder = _Builder("lu")
    clauses: dict[str, list[str]] = {"SET": [], "REMOVE": [], "ADD": [], "DELETE": []}
    empty_list: str | None = None
    for attribute, update in attribute_updates.items():
        update = update or {}
        action = update.get("Action") or "PUT"
        raw_value = update.get("Value")
        value = _validate_value(raw_value) if raw_value is not None else None
        _check_update(action, value)
        path = builder.name(attribute)
        if value is None:
            clauses["REMOVE"].append(path)
        elif action == "PUT":
            clauses["SET"].append(f"{path} = {builder.value(value)}")
        elif action == "DELETE":
            clauses["DELETE"].append(f"{path} {builder.value(value)}")
        elif _type_of(value) == "L":
            if empty_list is None:
                empty_list = builder.value({"L": []})
            operand = builder.value(value)
            clauses["SET"].append(
                f"{path} = list_append(if_not_exists({path}, {empty_list}), {operand})"
            )
        else:
            clauses["ADD"].append(f"{path} {builder.value(value)}")
    text = " ".join(
        f"{keyword} {', '.join(items)}" for keyword, items in clauses.items() if items
    )
    return builder.result(text) if text else None


def _check_update(action: str, value: dict[str, Any] | None) -> None:
    if action not in ("PUT", "ADD", "DELETE"):
        raise ValidationException(
            f"1 validation error detected: Value '{action}' at 'attributeUpdates.member.action' "
            "failed to satisfy constraint: Member must satisfy enum value set: [ADD, PUT, DELETE]"
        )
    if value is None:
        if action != "DELETE":
            raise invalid_parameter(
                "Only DELETE action is allowed when no attribute value is specified"
            )
        return
    kind = _type_of(value)
    if action == "DELETE" and kind not in _SETS:
        raise invalid_parameter(f"DELETE action with value is not supported for the type {kind}")
    if action == "ADD" and kind not in _ADDABLE:
        raise invalid_parameter(f"ADD action is not supported for the type {kind}")


# --- AttributesToGet ------------------------------------------------------------------------


def attributes_to_get_to_projection(attributes: list[str]) -> Converted:
    """``AttributesToGet`` as a ProjectionExpression of top-level attributes."""
    seen: set[str] = set()
    for attribute in attributes:
        if attribute in seen:
            raise invalid_parameter(f"Duplicate value in attribute name: {attribute}")
        seen.add(attribute)
    builder = _Builder("lp")
    return builder.result(", ".join(builder.name(attribute) for attribute in attributes))
