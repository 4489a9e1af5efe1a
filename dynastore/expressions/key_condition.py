"""KeyConditionExpression: the partition key value and one sort-key range.

A key condition is parsed and checked like any condition (same grammar, same
messages, prefixed ``Invalid KeyConditionExpression: ``), then held to the
shape Query can serve: ``pk = :v`` optionally ANDed with one of ``=, <, <=, >,
>=, BETWEEN, begins_with`` on the sort key. The result names the operator
the way the legacy KeyConditions API does (EQ, LT, ..., BEGINS_WITH), which is
what the storage range scan is built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynastore.errors import ValidationException, invalid_parameter
from dynastore.expressions import cache
from dynastore.expressions.ast import (
    And,
    Between,
    Comparison,
    ConditionNode,
    FunctionCall,
    In,
    Node,
    Not,
    Or,
    Parenthesized,
    Path,
    ValueRef,
    unwrap,
)
from dynastore.expressions.evaluate import parse_checked_condition
from dynastore.expressions.resolve import ExpressionContext
from dynastore.expressions.validate import resolve_path, value_type
from dynastore.types.attribute_value import compare_values

Value = dict[str, Any]
LABEL = "KeyConditionExpression"

_OPERATOR_NAMES = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
_MIRRORED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NOT_FOR_KEYS = frozenset({"attribute_exists", "attribute_not_exists", "attribute_type", "contains"})
MAX_KEY_CONDITIONS = 2


@dataclass(frozen=True, slots=True)
class KeyCondition:
    partition_key: str
    partition_value: Value
    sort_key: str | None
    sort_operator: str | None  # "EQ" "LT" "LE" "GT" "GE" "BETWEEN" "BEGINS_WITH"
    sort_values: tuple[Value, ...]

    def sort_matches(self, value: Value | None) -> bool:
        """Whether a sort key value satisfies the sort condition (True if none)."""
        if self.sort_operator is None:
            return True
        if value is None:
            return False
        if self.sort_operator == "BEGINS_WITH":
            from dynastore.expressions.evaluate import begins_with

            return begins_with(value, self.sort_values[0])
        order = compare_values(value, self.sort_values[0])
        if order is None:
            return False
        if self.sort_operator == "BETWEEN":
            upper = compare_values(value, self.sort_values[1])
            return upper is not None and order >= 0 and upper <= 0
        return bool(_ORDER_ACCEPTS[self.sort_operator](order))


_ORDER_ACCEPTS = {
    "EQ": lambda order: order == 0,
    "LT": lambda order: order < 0,
    "LE": lambda order: order <= 0,
    "GT": lambda order: order > 0,
    "GE": lambda order: order >= 0,
}


def _error(message: str) -> ValidationException:
    return ValidationException(message)


def _invalid_operator(name: str) -> ValidationException:
    return _error(f"Invalid operator used in KeyConditionExpression: {name}")


class _Collector:
    """Walks a checked key condition top-down, as DynamoDB does, collecting
    one (operator, values) per key attribute."""

    def __init__(self, context: ExpressionContext) -> None:
        self.context = context
        self.conditions: dict[str, tuple[str, tuple[Value, ...]]] = {}

    def walk(self, node: Node) -> None:
        node = unwrap(node)
        if isinstance(node, And):
            self.walk(node.left)
            self.walk(node.right)
        elif isinstance(node, Or):
            raise _invalid_operator("OR")
        elif isinstance(node, Not):
            raise _invalid_operator("NOT")
        elif isinstance(node, In):
            raise _invalid_operator("IN")
        elif isinstance(node, Comparison):
            if node.operator == "<>":
                raise _invalid_operator("<>")
            self.condition(node.operator, (node.left, node.right))
        elif isinstance(node, Between):
            self.require_key_first("BETWEEN", node.operand)
            self.condition("BETWEEN", (node.operand, node.lower, node.upper))
        elif isinstance(node, FunctionCall):
            if node.name in _NOT_FOR_KEYS:
                raise _invalid_operator(node.name)
            if node.name == "size":
                raise _error("KeyConditionExpressions cannot contain nested operations")
            self.require_key_first(node.name, node.arguments[0])
            self.condition("BEGINS_WITH", node.arguments)

    @staticmethod
    def require_key_first(operator: str, first: Node) -> None:
        if not isinstance(unwrap(first), Path):
            raise _error(
                f"Invalid condition in KeyConditionExpression: {operator} operator must have "
                "the key attribute as its first operand"
            )

    def condition(self, operator: str, operands: tuple[Node, ...]) -> None:
        key: str | None = None
        key_position = 0
        values: list[Value] = []
        for position, operand in enumerate(operands):
            operand = unwrap(operand)
            if isinstance(operand, Path):
                if key is not None:
                    raise _error(
                        "Invalid condition in KeyConditionExpression: "
                        "Multiple attribute names used in one condition"
                    )
                if len(operand.parts) > 1:
                    raise _error("KeyConditionExpressions cannot have conditions on nested attributes")
                key, key_position = str(resolve_path(operand, self.context)[0]), position
            elif isinstance(operand, FunctionCall):
                self.walk(operand)
            elif isinstance(operand, ValueRef):
                values.append(self.context.values[operand.name])
        if key is None:
            raise _error("Invalid condition in KeyConditionExpression: No key attribute specified")
        if key in self.conditions:
            raise _error("KeyConditionExpressions must only contain one condition per key")
        if key_position != 0:
            operator = _MIRRORED[operator]
        self.conditions[key] = (_OPERATOR_NAMES.get(operator, operator), tuple(values))


def _check_key_value(key: str, key_type: str | None, value: Value) -> None:
    if key_type is None:
        return
    if value_type(value) != key_type:
        raise invalid_parameter("Condition parameter type does not match schema type")
    if key_type in ("S", "B") and value[key_type] == "":
        kind = "string" if key_type == "S" else "binary"
        raise ValidationException(
            "One or more parameter values are not valid. The AttributeValue for a key attribute "
            f"cannot contain an empty {kind} value. Key: {key}"
        )


def compile_key_condition(
    text: str,
    context: ExpressionContext,
    partition_key: str,
    sort_key: str | None,
    partition_key_type: str | None = None,
    sort_key_type: str | None = None,
) -> KeyCondition:
    """Compile a KeyConditionExpression for a table or index with these keys.

    The key types are optional; given, values of another type are refused.
    """
    kind = (LABEL, partition_key, sort_key, partition_key_type, sort_key_type)
    return cache.compiled(
        kind,
        text,
        context,
        lambda bound: _compile(
            text, bound, partition_key, sort_key, partition_key_type, sort_key_type
        ),
    )


def _compile(
    text: str,
    context: ExpressionContext,
    partition_key: str,
    sort_key: str | None,
    partition_key_type: str | None,
    sort_key_type: str | None,
) -> KeyCondition:
    node: ConditionNode = parse_checked_condition(text, context, LABEL)
    collector = _Collector(context)
    collector.walk(node if not isinstance(node, Parenthesized) else node.inner)
    conditions = collector.conditions
    if len(conditions) > MAX_KEY_CONDITIONS:
        raise _error("Conditions can be of length 1 or 2 only")
    if partition_key not in conditions:
        raise _error(f"Query condition missed key schema element: {partition_key}")
    for name in conditions:
        if name not in (partition_key, sort_key):
            raise _error(f"Query condition missed key schema element: {sort_key or partition_key}")
    partition_operator, partition_values = conditions[partition_key]
    if partition_operator != "EQ":
        raise _error("Query key condition not supported")
    _check_key_value(partition_key, partition_key_type, partition_values[0])
    sort_operator: str | None = None
    sort_values: tuple[Value, ...] = ()
    if sort_key is not None and sort_key in conditions:
        sort_operator, sort_values = conditions[sort_key]
        for value in sort_values:
            _check_key_value(sort_key, sort_key_type, value)
    return KeyCondition(partition_key, partition_values[0], sort_key, sort_operator, sort_values)
