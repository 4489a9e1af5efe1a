"""Condition and filter expressions: compile once per request, test many items.

A compiled condition is a tree of small closures over the request's resolved
paths and values, so testing an item is plain dict lookups and calls, with no
walking of the syntax tree and no placeholder lookups per item.

DynamoDB's rules for a test that cannot be made are followed exactly: a
missing attribute or a comparison of two different types is simply false
(``<>`` is then true), never an error.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from dynastore.errors import ValidationException
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
    Path,
    ValueRef,
    unwrap,
)
from dynastore.expressions.parser import ExpressionParseError
from dynastore.expressions.resolve import ExpressionContext
from dynastore.expressions.validate import (
    ExpressionError,
    ResolvedPath,
    check_bound,
    collect_paths,
    resolve_path,
    value_type,
)
from dynastore.types.attribute_value import compare_values, decode_base64, values_equal
from dynastore.types.size import binary_length, utf8_length

Item = dict[str, Any]
Value = dict[str, Any]
Getter = Callable[[Item], "Value | None"]
Test = Callable[[Item], bool]

order_values = compare_values  # validate.py orders BETWEEN bounds with it


# --- shared by all expression kinds ---------------------------------------------


def checked_text(text: str, label: str, max_bytes: int) -> None:
    """DynamoDB's checks before parsing: not empty, not too long."""
    if text == "":
        raise ValidationException(f"Invalid {label}: The expression can not be empty;")
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > max_bytes:
        raise ValidationException(
            f"Invalid {label}: Expression size has exceeded the maximum allowed size; "
            f"expression size: {size}"
        )


def invalid(label: str, error: ExpressionError | ExpressionParseError) -> ValidationException:
    return ValidationException(f"Invalid {label}: {error.message}")


def get_path(item: Item, path: ResolvedPath) -> Value | None:
    """The value at a document path of an item, or None when there is none."""
    value = item.get(str(path[0]))
    for step in path[1:]:
        if value is None:
            return None
        if type(step) is int:
            elements = value.get("L")
            if elements is None or step >= len(elements):
                return None
            value = elements[step]
        else:
            attributes = value.get("M")
            if attributes is None:
                return None
            value = attributes.get(step)
    return value


def path_getter(path: ResolvedPath) -> Getter:
    if len(path) == 1:
        name = str(path[0])
        return lambda item: item.get(name)
    return lambda item: get_path(item, path)


# --- operands -----------------------------------------------------------------------


def size_of(value: Value | None) -> Value | None:
    """``size()`` of a value: string/binary length, element count; else None."""
    if value is None:
        return None
    for tag, inner in value.items():
        if tag == "S":
            return {"N": str(utf8_length(inner))}
        if tag == "B":
            return {"N": str(binary_length(inner))}
        if tag in ("SS", "NS", "BS", "L", "M"):
            return {"N": str(len(inner))}
    return None


def compile_operand(node: Node, context: ExpressionContext) -> Getter:
    node = unwrap(node)
    if isinstance(node, ValueRef):
        constant = context.values[node.name]
        return lambda item: constant
    if isinstance(node, Path):
        return path_getter(resolve_path(node, context))
    if isinstance(node, FunctionCall) and node.name == "size":
        inner = compile_operand(node.arguments[0], context)
        return lambda item: size_of(inner(item))
    raise AssertionError(f"not an operand: {node!r}")  # excluded by validation


# --- conditions ---------------------------------------------------------------------


def _constant(node: Node, context: ExpressionContext) -> Value | None:
    node = unwrap(node)
    return context.values[node.name] if isinstance(node, ValueRef) else None


_SCALAR_TAGS = frozenset({"S", "N", "B", "BOOL", "NULL"})
_ORDERS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _compile_equality(node: Comparison, context: ExpressionContext) -> Test:
    left = compile_operand(node.left, context)
    right = compile_operand(node.right, context)
    constant = _constant(node.right, context) or _constant(node.left, context)
    other = left if _constant(node.right, context) is not None else right
    if constant is not None and value_type(constant) in _SCALAR_TAGS:
        # Validated values are canonical (normal-form numbers, canonical
        # base64), so equal scalars have equal wire text: compare directly.
        tag, inner = next(iter(constant.items()))

        def equal(item: Item) -> bool:
            value = other(item)
            return value is not None and value.get(tag) == inner

    else:

        def equal(item: Item) -> bool:
            a = left(item)
            if a is None:
                return False
            b = right(item)
            return b is not None and values_equal(a, b)

    if node.operator == "=":
        return equal
    return lambda item: not equal(item)


def _ordered_against_constant(operand: Getter, order: str, constant: Value) -> Test:
    """``operand <order> constant`` for a constant S, N or B."""
    accepts = _ORDERS[order]
    tag = value_type(constant)
    if tag == "S":
        bound: Any = constant["S"]
        convert: Callable[[Any], Any] = str
    elif tag == "N":
        bound, convert = Decimal(constant["N"]), Decimal
    else:
        bound, convert = decode_base64(constant["B"]), decode_base64

    def ordered(item: Item) -> bool:
        value = operand(item)
        if value is None:
            return False
        inner = value.get(tag)
        return inner is not None and accepts(convert(inner), bound)

    return ordered


def _compile_comparison(node: Comparison, context: ExpressionContext) -> Test:
    if node.operator in ("=", "<>"):
        return _compile_equality(node, context)
    left = compile_operand(node.left, context)
    right = compile_operand(node.right, context)
    right_constant = _constant(node.right, context)
    if right_constant is not None and value_type(right_constant) in ("S", "N", "B"):
        return _ordered_against_constant(left, node.operator, right_constant)
    left_constant = _constant(node.left, context)
    if left_constant is not None and value_type(left_constant) in ("S", "N", "B"):
        return _ordered_against_constant(right, _MIRRORED[node.operator], left_constant)
    accepts = _ORDER_TESTS[node.operator]

    def ordered(item: Item) -> bool:
        a = left(item)
        if a is None:
            return False
        b = right(item)
        if b is None:
            return False
        order = compare_values(a, b)
        return order is not None and accepts(order)

    return ordered


_ORDER_TESTS: dict[str, Callable[[int], bool]] = {
    "<": lambda order: order < 0,
    "<=": lambda order: order <= 0,
    ">": lambda order: order > 0,
    ">=": lambda order: order >= 0,
}


def _compile_between(node: Between, context: ExpressionContext) -> Test:
    operand = compile_operand(node.operand, context)
    lower = compile_operand(node.lower, context)
    upper = compile_operand(node.upper, context)

    def between(item: Item) -> bool:
        value, low, high = operand(item), lower(item), upper(item)
        if value is None or low is None or high is None:
            return False
        above = compare_values(low, value)
        below = compare_values(value, high)
        return above is not None and below is not None and above <= 0 and below <= 0

    return between


def _compile_in(node: In, context: ExpressionContext) -> Test:
    operand = compile_operand(node.operand, context)
    candidates = [compile_operand(candidate, context) for candidate in node.candidates]

    def is_in(item: Item) -> bool:
        value = operand(item)
        if value is None:
            return False
        for candidate in candidates:
            other = candidate(item)
            if other is not None and values_equal(value, other):
                return True
        return False

    return is_in


def begins_with(value: Value, prefix: Value) -> bool:
    if "S" in value and "S" in prefix:
        return bool(value["S"].startswith(prefix["S"]))
    if "B" in value and "B" in prefix:
        return decode_base64(value["B"]).startswith(decode_base64(prefix["B"]))
    return False


def contains(container: Value, member: Value) -> bool:
    for tag, inner in container.items():
        if tag == "S":
            return "S" in member and member["S"] in inner
        if tag == "SS":
            return "S" in member and member["S"] in inner
        if tag == "NS":
            return "N" in member and member["N"] in inner
        if tag == "BS":
            return "B" in member and member["B"] in inner
        if tag == "L":
            return any(values_equal(element, member) for element in inner)
        if tag == "B":
            return "B" in member and decode_base64(member["B"]) in decode_base64(inner)
    return False


def _compile_function(node: FunctionCall, context: ExpressionContext) -> Test:
    first = compile_operand(node.arguments[0], context)
    if node.name == "attribute_exists":
        return lambda item: first(item) is not None
    if node.name == "attribute_not_exists":
        return lambda item: first(item) is None
    second = compile_operand(node.arguments[1], context)
    if node.name == "attribute_type":
        wanted = second({})
        assert wanted is not None
        type_name = wanted["S"]
        return lambda item: (value := first(item)) is not None and type_name in value
    test = begins_with if node.name == "begins_with" else contains

    def function(item: Item) -> bool:
        a = first(item)
        if a is None:
            return False
        b = second(item)
        return b is not None and test(a, b)

    return function


def _chain(node: Node, kind: type) -> list[Node]:
    """The operands of a chain of one logical operator, through parentheses:
    ``a AND (b AND (c AND d))`` -> [a, b, c, d]. Iterative, so deep nesting is fine."""
    operands: list[Node] = []
    pending = [node]
    while pending:
        current = unwrap(pending.pop())
        if isinstance(current, kind):
            assert isinstance(current, (And, Or))
            pending.append(current.right)
            pending.append(current.left)
        else:
            operands.append(current)
    return operands


def _all_of(tests: list[Test]) -> Test:
    def all_hold(item: Item) -> bool:
        for test in tests:
            if not test(item):
                return False
        return True

    return all_hold


def _any_of(tests: list[Test]) -> Test:
    def any_holds(item: Item) -> bool:
        for test in tests:
            if test(item):
                return True
        return False

    return any_holds


def compile_test(node: ConditionNode | Node, context: ExpressionContext) -> Test:
    """Closures for a condition already checked by validate.py."""
    node = unwrap(node)
    if isinstance(node, (And, Or)):
        tests = [compile_test(operand, context) for operand in _chain(node, type(node))]
        if len(tests) == 2:
            left, right = tests
            if isinstance(node, And):
                return lambda item: left(item) and right(item)
            return lambda item: left(item) or right(item)
        return _all_of(tests) if isinstance(node, And) else _any_of(tests)
    if isinstance(node, Not):
        negations = 0
        while isinstance(node, Not):
            negations += 1
            node = unwrap(node.inner)
        inner = compile_test(node, context)
        return inner if negations % 2 == 0 else (lambda item: not inner(item))
    if isinstance(node, Comparison):
        return _compile_comparison(node, context)
    if isinstance(node, Between):
        return _compile_between(node, context)
    if isinstance(node, In):
        return _compile_in(node, context)
    if isinstance(node, FunctionCall):
        return _compile_function(node, context)
    raise AssertionError(f"not a condition: {node!r}")


class Condition:
    """A compiled Condition- or FilterExpression."""

    __slots__ = ("_test", "text", "_node", "_names", "_paths")

    def __init__(self, test: Test, text: str, node: Node, names: dict[str, str]) -> None:
        self._test = test
        self.text = text
        self._node = node
        self._names = names
        self._paths: tuple[ResolvedPath, ...] | None = None

    @property
    def paths(self) -> tuple[ResolvedPath, ...]:
        """Every document path the condition reads (e.g. to refuse key attributes
        in a Query filter, or nested paths into key attributes)."""
        if self._paths is None:
            found: list[ResolvedPath] = []
            collect_paths(self._node, self._names, found)
            self._paths = tuple(found)
        return self._paths

    @property
    def top_level_names(self) -> frozenset[str]:
        return frozenset(str(path[0]) for path in self.paths)

    def evaluate(self, item: Item | None) -> bool:
        """Whether the condition holds for ``item`` (None: there is no item)."""
        return self._test(item if item is not None else {})


def parse_checked_condition(
    text: str, context: ExpressionContext, label: str
) -> ConditionNode:
    """Parse (cached), then run the placeholder checks; errors carry ``label``."""
    from dynastore import limits

    checked_text(text, label, limits.EXPRESSION_MAX_BYTES)
    try:
        node = cache.condition(text)
        check_bound(node, context)
    except (ExpressionError, ExpressionParseError) as error:
        raise invalid(label, error) from None
    return node


def compile_condition(
    text: str, context: ExpressionContext, parameter: str = "ConditionExpression"
) -> Condition:
    """Compile a ConditionExpression or FilterExpression (``parameter`` names it)."""
    return cache.compiled(parameter, text, context, lambda bound: _compile(text, bound, parameter))


def _compile(text: str, context: ExpressionContext, parameter: str) -> Condition:
    node = parse_checked_condition(text, context, parameter)
    return Condition(compile_test(node, context), text, node, context.names)
