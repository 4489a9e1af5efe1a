"""The checks DynamoDB makes on a parsed expression, in DynamoDB's order.

Two passes, as DynamoDB makes them:

1. ``check_*_text``: what depends on the text alone (reserved words, list
   index range, function names, where each function may appear, how many
   operands it takes, repeated update sections). Its outcome is cached with
   the parse.
2. ``check_*_bound``: what depends on the request's placeholders (undefined
   #names and :values, operand types, BETWEEN bounds, IN size, distinct
   operands, overlapping update paths).

Messages are returned without the ``Invalid <Expression>: `` prefix; the
caller adds it (see ``ExpressionError``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from typing import Any

from dynastore import limits
from dynastore.expressions.ast import (
    And,
    Arithmetic,
    Between,
    Comparison,
    FunctionCall,
    In,
    Node,
    Not,
    Or,
    Parenthesized,
    Path,
    UpdateAction,
    UpdateExpression,
    ValueRef,
    unwrap,
)
from dynastore.expressions.reserved import is_reserved
from dynastore.expressions.resolve import ExpressionContext
from dynastore.types.attribute_value import compare_values

CONDITION_FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
}
OPERAND_FUNCTIONS = {"size": 1}
UPDATE_FUNCTIONS = {"if_not_exists": 2, "list_append": 2}
ALL_FUNCTIONS = {**CONDITION_FUNCTIONS, **OPERAND_FUNCTIONS, **UPDATE_FUNCTIONS}
PATH_FUNCTIONS = frozenset({"attribute_exists", "attribute_not_exists", "attribute_type", "if_not_exists"})

ATTRIBUTE_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"})
TYPE_NAMES_TEXT = "{N,BS,L,B,NULL,M,S,SS,NS,BOOL}"
ANY_TYPE_TEXT = (
    "{SS,M,DECIMAL,DOUBLESET,HDS,N,B,DICT,INTSET,BOOL,HD,BS,INT,DECIMALSET,NULL,FLOAT,FS,S,L,NS,DOUBLE}"
)
LONG_TYPE_NAMES = {
    "S": "STRING", "N": "NUMBER", "B": "BINARY", "BOOL": "BOOL", "NULL": "NULL",
    "L": "LIST", "M": "MAP", "SS": "STRING_SET", "NS": "NUMBER_SET", "BS": "BINARY_SET",
}
SCALAR_TYPES = frozenset({"S", "N", "B"})
SIZED_TYPES = frozenset({"S", "B", "SS", "NS", "BS", "L", "M"})
ADD_OPERAND_TYPES = frozenset({"N", "SS", "NS", "BS"})
DELETE_OPERAND_TYPES = frozenset({"SS", "NS", "BS"})
LIST_INDEX_MAX = 2**31 - 1


class ExpressionError(Exception):
    """A problem with an expression; ``message`` lacks the ``Invalid X: `` prefix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


ResolvedPath = tuple[str | int, ...]


def value_type(value: dict[str, Any]) -> str:
    """The type tag of a wire attribute value (``{"S": "x"}`` -> ``"S"``)."""
    for tag in value:
        return tag
    return ""


def path_text(path: ResolvedPath) -> str:
    """DynamoDB's way to show a path in messages: ``[a, [1], b]``."""
    return "[" + ", ".join(f"[{step}]" if isinstance(step, int) else step for step in path) + "]"


# --- pass 1: the text alone ------------------------------------------------------------


def _check_path_text(path: Path) -> None:
    for part in path.parts:
        if part.kind == "index":
            if len(part.text) > 10 or part.index > LIST_INDEX_MAX:
                raise ExpressionError(
                    f"List index is not within the allowable range; index: [{part.text}]"
                )
        elif part.kind == "name" and is_reserved(part.text):
            raise ExpressionError(
                f"Attribute name is a reserved keyword; reserved keyword: {part.text}"
            )


def _check_arity(call: FunctionCall) -> None:
    if len(call.arguments) != ALL_FUNCTIONS[call.name]:
        raise ExpressionError(
            "Incorrect number of operands for operator or function; operator or function: "
            f"{call.name}, number of operands: {len(call.arguments)}"
        )


def _check_condition_function_text(call: FunctionCall, in_condition_place: bool) -> None:
    if call.name not in ALL_FUNCTIONS:
        raise ExpressionError(f"Invalid function name; function: {call.name}")
    if call.name in UPDATE_FUNCTIONS:
        raise ExpressionError(
            f"The function is not allowed in a condition expression; function: {call.name}"
        )
    if in_condition_place != (call.name in CONDITION_FUNCTIONS):
        raise ExpressionError(
            "The function is not allowed to be used this way in an expression; "
            f"function: {call.name}"
        )
    _check_arity(call)


_COUNTED = (Comparison, Between, In, FunctionCall, Arithmetic)


def count_operators(node: Node) -> int:
    """Comparisons, BETWEEN, IN, functions and arithmetic; AND/OR/NOT are free
    (DynamoDB counts 301 for ``a < b AND (a < b AND ...)`` with 301 ``<``)."""
    count = 0
    pending: list[Node] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, _COUNTED):
            count += 1
        pending.extend(_children(current))
    return count


def check_operator_count(nodes: Iterable[Node]) -> None:
    count = sum(count_operators(node) for node in nodes)
    if count > limits.EXPRESSION_MAX_OPERATORS:
        raise ExpressionError(
            f"The expression contains too many operators; operator count: {count}"
        )


def check_condition_text(node: Node, in_condition_place: bool = True) -> None:
    """Pass 1 over a condition, in the order the expression is written."""
    if isinstance(node, Path):
        _check_path_text(node)
    elif isinstance(node, FunctionCall):
        _check_condition_function_text(node, in_condition_place)
        for argument in node.arguments:
            check_condition_text(argument, False)
    elif isinstance(node, Parenthesized):
        check_condition_text(node.inner, in_condition_place)
    elif isinstance(node, (And, Or)):
        check_condition_text(node.left, True)
        check_condition_text(node.right, True)
    elif isinstance(node, Not):
        check_condition_text(node.inner, True)
    else:
        for child in _children(node):
            check_condition_text(child, False)


def _check_update_operand_text(node: Node) -> None:
    if isinstance(node, Path):
        _check_path_text(node)
        return
    if isinstance(node, FunctionCall):
        if node.name not in ALL_FUNCTIONS:
            raise ExpressionError(f"Invalid function name; function: {node.name}")
        if node.name not in UPDATE_FUNCTIONS:
            raise ExpressionError(
                f"The function is not allowed in an update expression; function: {node.name}"
            )
    for child in _children(node):
        _check_update_operand_text(child)


def check_update_text(update: UpdateExpression) -> None:
    """Pass 1 over an update: a section (SET, REMOVE, ADD, DELETE) at a time."""
    sections: dict[str, list[Any]] = {}
    for clause in update.clauses:
        sections.setdefault(clause.keyword, []).append(clause)
    for keyword, clauses in sections.items():
        for clause in clauses:
            for action in clause.actions:
                _check_path_text(action.path)
                if action.value is not None:
                    _check_update_operand_text(action.value)
        if len(clauses) > 1:
            raise ExpressionError(
                f'The "{keyword}" section can only be used once in an update expression;'
            )


def check_projection_text(paths: Iterable[Path]) -> None:
    for path in paths:
        _check_path_text(path)


_CHILDREN: dict[type, Any] = {
    Comparison: lambda node: (node.left, node.right),
    Between: lambda node: (node.operand, node.lower, node.upper),
    In: lambda node: (node.operand, *node.candidates),
    And: lambda node: (node.left, node.right),
    Or: lambda node: (node.left, node.right),
    Not: lambda node: (node.inner,),
    Parenthesized: lambda node: (node.inner,),
    FunctionCall: lambda node: node.arguments,
    Arithmetic: lambda node: (node.left, node.right),
}


def _children(node: Node) -> Sequence[Node]:
    children = _CHILDREN.get(type(node))
    return children(node) if children is not None else ()


def collect_paths(node: Node, names: dict[str, str], into: list[ResolvedPath]) -> None:
    """Every document path ``node`` reads, in order, #names resolved (already checked)."""
    pending: list[Node] = [node]
    while pending:
        current = pending.pop()
        if not isinstance(current, Path):
            pending.extend(reversed(_children(current)))
        elif current.steps is not None:
            into.append(current.steps)
        else:
            into.append(
                tuple(
                    part.index if part.kind == "index"
                    else (names.get(part.text, part.text) if part.kind == "placeholder" else part.text)
                    for part in current.parts
                )
            )


# --- pass 2: with the request's placeholders ------------------------------------------


def resolve_path(path: Path, context: ExpressionContext) -> ResolvedPath:
    """The path with #names substituted; marks them used."""
    if path.steps is not None and len(path.steps) <= limits.NESTING_MAX_DEPTH:
        return path.steps
    steps: list[str | int] = []
    for part in path.parts:
        if part.kind == "index":
            steps.append(part.index)
        elif part.kind == "name":
            steps.append(part.text)
        else:
            name = context.name(part.text)
            if name is None:
                raise ExpressionError(
                    "An expression attribute name used in the document path is not defined; "
                    f"attribute name: {part.text}"
                )
            steps.append(name)
    if len(steps) > limits.NESTING_MAX_DEPTH:
        raise ExpressionError(
            f"The document path has too many nesting levels; nesting levels: {len(steps)}"
        )
    return tuple(steps)


def _check_value_defined(reference: ValueRef, context: ExpressionContext) -> dict[str, Any]:
    value = context.value(reference.name)
    if value is None:
        raise ExpressionError(
            "An expression attribute value used in expression is not defined; "
            f"attribute value: {reference.name}"
        )
    return value


def static_type(node: Node, context: ExpressionContext) -> str | None:
    """An operand's type when it is known before reading an item."""
    node = unwrap(node)
    if isinstance(node, ValueRef):
        value = context.values.get(node.name)
        return value_type(value) if value is not None else None
    if isinstance(node, FunctionCall) and node.name == "size":
        return "N"
    return None


def _type_problem(operator: str, operand_type: str) -> ExpressionError:
    return ExpressionError(
        "Incorrect operand type for operator or function; operator or function: "
        f"{operator}, operand type: {operand_type}"
    )


def _check_operand_types(
    operator: str, operands: Iterable[Node], allowed: frozenset[str], context: ExpressionContext
) -> None:
    for operand in operands:
        operand_type = static_type(operand, context)
        if operand_type is not None and operand_type not in allowed:
            raise _type_problem(operator, operand_type)


def _check_distinct(
    operator: str, first: Node, rest: Iterable[Node], context: ExpressionContext
) -> None:
    first = unwrap(first)
    if type(first) is not Path:
        return
    others = [other for other in map(unwrap, rest) if type(other) is Path]
    if not others:
        return
    first_path = _quiet_path(first, context)
    for other in others:
        assert isinstance(other, Path)
        if _quiet_path(other, context) == first_path:
            raise ExpressionError(
                "The first operand must be distinct from the remaining operands for this "
                f"operator or function; operator: {operator}, first operand: "
                f"{path_text(first_path)}"
            )


def _quiet_path(path: Path, context: ExpressionContext) -> ResolvedPath:
    """A path already checked by resolve_path, resolved again without side effects."""
    if path.steps is not None:
        return path.steps
    return tuple(
        part.index if part.kind == "index"
        else (context.names.get(part.text, part.text) if part.kind == "placeholder" else part.text)
        for part in path.parts
    )


def check_bound(node: Node, context: ExpressionContext, in_update: bool = False) -> None:
    """Pass 2 over a condition or an update value, depth first, left to right."""
    _BOUND_CHECKS[type(node)](node, context, in_update)


def _check_path_bound(node: Any, context: ExpressionContext, in_update: bool) -> None:
    resolve_path(node, context)


def _check_value_bound(node: Any, context: ExpressionContext, in_update: bool) -> None:
    _check_value_defined(node, context)


_LOGIC = (And, Or, Not, Parenthesized)


def _check_children_bound(node: Any, context: ExpressionContext, in_update: bool) -> None:
    # Iterative over AND/OR/NOT/parentheses, so deeply nested conditions do
    # not need deep recursion; leaves are visited left to right as before.
    pending: list[Node] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, _LOGIC):
            pending.extend(reversed(_children(current)))
        else:
            check_bound(current, context, in_update)


def _check_arithmetic_bound(node: Any, context: ExpressionContext, in_update: bool) -> None:
    check_bound(node.left, context, in_update)
    check_bound(node.right, context, in_update)
    _check_operand_types(node.operator, (node.left, node.right), frozenset({"N"}), context)


def _check_comparison(node: Comparison, context: ExpressionContext, in_update: bool = False) -> None:
    check_bound(node.left, context)
    check_bound(node.right, context)
    _check_distinct(node.operator, node.left, (node.right,), context)
    if node.operator not in ("=", "<>"):
        _check_operand_types(node.operator, (node.left, node.right), SCALAR_TYPES, context)


def _bound_text(value: dict[str, Any]) -> str:
    tag = value_type(value)
    if tag == "B":
        length = len(base64.b64decode(value["B"]))
        return f"AttributeValue: {{B:java.nio.HeapByteBuffer[pos=0 lim={length} cap={length}]}}"
    return f"AttributeValue: {{{tag}:{value[tag]}}}"


def _check_between(node: Between, context: ExpressionContext, in_update: bool = False) -> None:
    for child in (node.operand, node.lower, node.upper):
        check_bound(child, context)
    _check_distinct("BETWEEN", node.operand, (node.lower, node.upper), context)
    operands = (node.operand, node.lower, node.upper)
    _check_operand_types("BETWEEN", operands, SCALAR_TYPES, context)
    lower, upper = unwrap(node.lower), unwrap(node.upper)
    if isinstance(lower, ValueRef) and isinstance(upper, ValueRef):
        low, high = context.values[lower.name], context.values[upper.name]
        bounds = f"lower bound operand: {_bound_text(low)}, upper bound operand: {_bound_text(high)}"
        if value_type(low) != value_type(high):
            raise ExpressionError(
                f"The BETWEEN operator requires same data type for lower and upper bounds; {bounds}"
            )
        if (compare_values(low, high) or 0) > 0:
            raise ExpressionError(
                "The BETWEEN operator requires upper bound to be greater than or equal to "
                f"lower bound; {bounds}"
            )


def _check_in(node: In, context: ExpressionContext, in_update: bool = False) -> None:
    check_bound(node.operand, context)
    for candidate in node.candidates:
        check_bound(candidate, context)
    if len(node.candidates) > limits.EXPRESSION_IN_MAX_OPERANDS:
        raise ExpressionError(
            "The IN operator is provided with too many operands; "
            f"number of operands: {len(node.candidates)}"
        )
    _check_distinct("IN", node.operand, node.candidates, context)


def _check_function(node: FunctionCall, context: ExpressionContext, in_update: bool) -> None:
    for argument in node.arguments:
        check_bound(argument, context, in_update)
    if in_update:  # an update counts operands after checking their placeholders
        _check_arity(node)
    first = unwrap(node.arguments[0])
    if node.name in PATH_FUNCTIONS and not isinstance(first, Path):
        raise ExpressionError(
            f"Operator or function requires a document path; operator or function: {node.name}"
        )
    if node.name == "list_append" and any(_is_list_append(argument) for argument in node.arguments):
        # DynamoDB refuses list_append(list_append(...), ...) although it
        # parses (ScyllaDB's test_update_expression_function_nesting notes
        # the service's text); list_append(if_not_exists(...), ...) is fine.
        raise ExpressionError(
            "The function is not allowed to be used this way in an expression; function: list_append"
        )
    if node.name not in ("size", "list_append"):
        _check_distinct(node.name, node.arguments[0], node.arguments[1:], context)
    if node.name == "size":
        _check_operand_types("size", node.arguments, SIZED_TYPES, context)
    elif node.name == "begins_with":
        _check_operand_types("begins_with", node.arguments, frozenset({"S", "B"}), context)
    elif node.name == "attribute_type":
        _check_attribute_type_argument(node.arguments[1], context)
    elif node.name == "list_append":
        _check_operand_types("list_append", node.arguments, frozenset({"L"}), context)


def _is_list_append(node: Node) -> bool:
    inner = unwrap(node)
    return isinstance(inner, FunctionCall) and inner.name == "list_append"


def _check_attribute_type_argument(argument: Node, context: ExpressionContext) -> None:
    second = unwrap(argument)
    if not isinstance(second, ValueRef):
        is_size = isinstance(second, FunctionCall) and second.name == "size"
        raise _type_problem("attribute_type", "N" if is_size else ANY_TYPE_TEXT)
    value = context.values[second.name]
    if value_type(value) != "S":
        raise _type_problem("attribute_type", value_type(value))
    if value["S"] not in ATTRIBUTE_TYPES:
        raise ExpressionError(
            f"Invalid attribute type name found; type: {value['S']}, valid types: {TYPE_NAMES_TEXT}"
        )


_BOUND_CHECKS: dict[type, Any] = {
    Path: _check_path_bound,
    ValueRef: _check_value_bound,
    And: _check_children_bound,
    Or: _check_children_bound,
    Not: _check_children_bound,
    Parenthesized: _check_children_bound,
    Comparison: _check_comparison,
    Between: _check_between,
    In: _check_in,
    FunctionCall: _check_function,
    Arithmetic: _check_arithmetic_bound,
}


# --- updates --------------------------------------------------------------------------


def check_update_bound(update: UpdateExpression, context: ExpressionContext) -> list[ResolvedPath]:
    """Pass 2 over an update; returns each action's resolved target path."""
    actions = update.actions
    targets = [resolve_path(action.path, context) for action in actions]
    check_paths_disjoint(targets)
    # The target paths resolved above; now the values, from the last action.
    for action in reversed(actions):
        if action.value is not None:
            _check_names_defined(action.value, context)
    for action in reversed(actions):
        if action.value is not None:
            check_bound(action.value, context, in_update=True)
        _check_add_delete_operand(action, context)
    return targets


def _check_names_defined(node: Node, context: ExpressionContext) -> None:
    if isinstance(node, Path):
        resolve_path(node, context)
        return
    for child in _children(node):
        _check_names_defined(child, context)


def _check_add_delete_operand(action: UpdateAction, context: ExpressionContext) -> None:
    if action.keyword not in ("ADD", "DELETE") or action.value is None:
        return
    operand_type = static_type(action.value, context)
    allowed = ADD_OPERAND_TYPES if action.keyword == "ADD" else DELETE_OPERAND_TYPES
    if operand_type is not None and operand_type not in allowed:
        # The service names ADD's type set for DELETE too, and BOOL as BOOL
        # (floci's captures, eu-west-2, 2026-09-17).
        raise ExpressionError(
            f"Incorrect operand type for operator or function; operator: {action.keyword}, "
            f"operand type: {LONG_TYPE_NAMES[operand_type]}, typeSet: ALLOWED_FOR_ADD_OPERAND"
        )


def check_paths_disjoint(paths: Sequence[ResolvedPath]) -> None:
    """No path may equal or contain another, nor use one step as list and map.

    Overlaps are reported before conflicts, each as (earlier path, later path).
    """
    conflict: ExpressionError | None = None
    for later_index, later in enumerate(paths):
        for earlier in paths[:later_index]:
            relation = _relation(earlier, later)
            if relation == "overlap":
                raise ExpressionError(
                    "Two document paths overlap with each other; must remove or rewrite one of "
                    f"these paths; path one: {path_text(earlier)}, path two: {path_text(later)}"
                )
            if relation == "conflict" and conflict is None:
                conflict = ExpressionError(
                    "Two document paths conflict with each other; must remove or rewrite one of "
                    f"these paths; path one: {path_text(earlier)}, path two: {path_text(later)}"
                )
    if conflict is not None:
        raise conflict


def _relation(first: ResolvedPath, second: ResolvedPath) -> str | None:
    for step_one, step_two in zip(first, second, strict=False):
        if isinstance(step_one, int) != isinstance(step_two, int):
            return "conflict"
        if step_one != step_two:
            return None
    return "overlap"
