"""UpdateExpression: SET, REMOVE, ADD and DELETE.

``compile_update`` checks an expression completely against the request's
placeholders; ``UpdatePlan.apply`` then runs it on one item. Every value is
worked out from the item as it was before the update (``SET a = b, b = a``
swaps), and the new item is built only after every check passed, so a
failing update never leaves a half-written item.

What ``apply`` can still refuse depends on the item, as in DynamoDB:

- a path whose parent is missing or is not a map/list as the path needs:
  "The document path provided in the update expression is invalid for update";
- an operand of the wrong type (``+`` on a string, ADD of a number to a set):
  "An operand in the update expression has an incorrect data type";
- a SET reading an attribute the item lacks:
  "The provided expression refers to an attribute that does not exist in the item";
- arithmetic beyond DynamoDB's number range (number.py's messages).

DynamoDB reports a wrong type anywhere first, then, section by section from
the last to the first, a path it cannot write and then a missing attribute.

List semantics: indexes in REMOVE refer to the list as it was (so
``REMOVE l[0], l[1]`` removes the first two elements); a SET or ADD past the
end appends, in the order of the indexes written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dynastore import limits
from dynastore.errors import ValidationException
from dynastore.expressions import cache
from dynastore.expressions.ast import (
    Arithmetic,
    FunctionCall,
    Node,
    Path,
    ValueRef,
    unwrap,
)
from dynastore.expressions.evaluate import checked_text, get_path, invalid, path_getter
from dynastore.expressions.parser import ExpressionParseError
from dynastore.expressions.projection import project
from dynastore.expressions.resolve import ExpressionContext
from dynastore.expressions.validate import (
    ExpressionError,
    ResolvedPath,
    check_update_bound,
    collect_paths,
    resolve_path,
)
from dynastore.types.number import add_numbers, subtract_numbers

Item = dict[str, Any]
Value = dict[str, Any]
Compute = Callable[[Item], Value]

LABEL = "UpdateExpression"
MESSAGE_WRONG_TYPE = "An operand in the update expression has an incorrect data type"
MESSAGE_MISSING_ATTRIBUTE = (
    "The provided expression refers to an attribute that does not exist in the item"
)
MESSAGE_INVALID_PATH = "The document path provided in the update expression is invalid for update"
SET_TYPES = ("SS", "NS", "BS")


class _MissingAttribute(Exception):
    """A SET read a missing attribute; reported only after path checks."""


def _wrong_type() -> ValidationException:
    return ValidationException(MESSAGE_WRONG_TYPE)


# --- SET values -----------------------------------------------------------------------


def _compile_set_value(node: Node, context: ExpressionContext) -> Compute:
    node = unwrap(node)
    if isinstance(node, ValueRef):
        constant = context.values[node.name]
        return lambda item: constant
    if isinstance(node, Path):
        return _compile_read(resolve_path(node, context))
    if isinstance(node, Arithmetic):
        return _compile_arithmetic(node, context)
    assert isinstance(node, FunctionCall)
    if node.name == "if_not_exists":
        target = unwrap(node.arguments[0])
        assert isinstance(target, Path)  # validate.py requires a document path here
        existing = path_getter(resolve_path(target, context))
        default = _compile_set_value(node.arguments[1], context)

        def if_not_exists(item: Item) -> Value:
            value = existing(item)
            return value if value is not None else default(item)

        return if_not_exists
    first = _compile_set_value(node.arguments[0], context)
    second = _compile_set_value(node.arguments[1], context)

    def list_append(item: Item) -> Value:
        head = first(item)
        if "L" not in head:
            raise _wrong_type()
        tail = second(item)
        if "L" not in tail:
            raise _wrong_type()
        return {"L": head["L"] + tail["L"]}

    return list_append


def _compile_read(path: ResolvedPath) -> Compute:
    getter = path_getter(path)

    def read(item: Item) -> Value:
        value = getter(item)
        if value is None:
            raise _MissingAttribute
        return value

    return read


def _is_small_integer(text: str) -> bool:
    return len(text) < 19 and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit()))


def _add(left: str, right: str) -> str:
    """``left + right``; integers that fit a machine word skip Decimal (most counters)."""
    if _is_small_integer(left) and _is_small_integer(right):
        return str(int(left) + int(right))
    return add_numbers(left, right)


def _subtract(left: str, right: str) -> str:
    if _is_small_integer(left) and _is_small_integer(right):
        return str(int(left) - int(right))
    return subtract_numbers(left, right)


def _compile_arithmetic(node: Arithmetic, context: ExpressionContext) -> Compute:
    left = _compile_set_value(node.left, context)
    right = _compile_set_value(node.right, context)
    operation = _add if node.operator == "+" else _subtract

    def arithmetic(item: Item) -> Value:
        a = left(item)
        if "N" not in a:
            raise _wrong_type()
        b = right(item)
        if "N" not in b:
            raise _wrong_type()
        return {"N": operation(a["N"], b["N"])}

    return arithmetic


# --- the plan -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Action:
    keyword: str
    path: ResolvedPath
    clause: int
    compute: Compute | None  # SET
    operand: Value | None  # ADD / DELETE


def _writable(item: Item, path: ResolvedPath) -> bool:
    """Whether the place ``path`` names can exist: its parent is a map before
    a name, a list before an index."""
    if len(path) == 1:
        return True
    parent = get_path(item, path[:-1])
    if parent is None:
        return False
    return ("L" if type(path[-1]) is int else "M") in parent


def _parent_has_wrong_type(item: Item, path: ResolvedPath) -> bool:
    if len(path) == 1:
        return False
    parent = get_path(item, path[:-1])
    return parent is not None and not _writable(item, path)


def _set_tag(value: Value) -> str:
    for tag in value:
        return tag
    return ""


def _added(current: Value | None, operand: Value) -> Value:
    if current is None:
        return operand
    if "N" in operand:
        return {"N": _add(current["N"], operand["N"])}
    tag = _set_tag(operand)
    members = current[tag]
    present = set(members)
    return {tag: members + [member for member in operand[tag] if member not in present]}


def _deleted(current: Value, operand: Value) -> Value | None:
    tag = _set_tag(operand)
    removed = set(operand[tag])
    remaining = [member for member in current[tag] if member not in removed]
    return {tag: remaining} if remaining else None


def clone_value(value: Value) -> Value:
    """A copy of a value whose maps and lists can be changed freely."""
    if "M" in value:
        return {"M": {name: clone_value(child) for name, child in value["M"].items()}}
    if "L" in value:
        return {"L": [clone_value(child) for child in value["L"]]}
    return value


class UpdatePlan:
    """A compiled UpdateExpression, bound to one request's placeholders."""

    __slots__ = ("_actions", "_clause_count", "paths", "top_level_names", "text", "read_paths",
                 "only_removes")

    def __init__(
        self,
        actions: list[_Action],
        clause_count: int,
        text: str,
        read_paths: tuple[ResolvedPath, ...] = (),
    ) -> None:
        self._actions = actions
        self._clause_count = clause_count
        self.text = text
        # Paths the SET values read (UpdateItem refuses nested reads of keys).
        self.read_paths = read_paths
        self.paths: tuple[ResolvedPath, ...] = tuple(action.path for action in actions)
        self.top_level_names: frozenset[str] = frozenset(
            str(action.path[0]) for action in actions
        )
        self.only_removes = all(action.keyword in ("REMOVE", "DELETE") for action in actions)
        """Every action takes something away: on a missing item such an
        update creates nothing (DynamoDB leaves the item absent)."""

    def apply(self, item: Item, exists: bool = True) -> Item:
        """The item after the update; ``item`` is left unchanged. ``exists``
        False means ``item`` is only the key of a missing item: REMOVE
        actions are then no-ops whatever their path (DynamoDB answers
        ``REMOVE x.y`` there without the invalid-path error it gives on an
        item without ``x``: ScyllaDB's test_nested_attribute_remove_from_missing_item,
        run against the service)."""
        checked = [action for action in self._actions if exists or action.keyword != "REMOVE"]
        for action in checked:
            if _parent_has_wrong_type(item, action.path):
                raise ValidationException(MESSAGE_INVALID_PATH)
        results, missing = self._compute(item)
        for clause in range(self._clause_count - 1, -1, -1):
            in_clause = [index for index, a in enumerate(self._actions) if a.clause == clause]
            for action in checked:
                if action.clause == clause and not _writable(item, action.path):
                    raise ValidationException(MESSAGE_INVALID_PATH)
            if any(index in missing for index in in_clause):
                raise ValidationException(MESSAGE_MISSING_ATTRIBUTE)
        writes = self._writes(item, results)
        if not exists:
            writes = [(path, value) for path, value in writes if value is not None or len(path) == 1]
        return _write(item, writes)

    def updated_attributes(self, item: Item) -> Item:
        """The parts of ``item`` this update touches (ReturnValues UPDATED_*)."""
        return project(item, self.paths)

    def _compute(self, item: Item) -> tuple[dict[int, Value], set[int]]:
        """SET values and ADD/DELETE type checks, from the item as it was."""
        results: dict[int, Value] = {}
        missing: set[int] = set()
        for index, action in enumerate(self._actions):
            if action.compute is not None:
                try:
                    results[index] = action.compute(item)
                except _MissingAttribute:
                    missing.add(index)
            elif action.operand is not None:
                current = get_path(item, action.path) if _writable(item, action.path) else None
                if current is None:
                    continue
                if action.keyword == "ADD":
                    if _set_tag(current) != _set_tag(action.operand):
                        raise _wrong_type()
                    results[index] = _added(current, action.operand)
                elif _set_tag(current) != _set_tag(action.operand):
                    raise _wrong_type()
        return results, missing

    def _writes(self, item: Item, results: dict[int, Value]) -> list[tuple[ResolvedPath, Value | None]]:
        writes: list[tuple[ResolvedPath, Value | None]] = []
        for index, action in enumerate(self._actions):
            if action.keyword == "SET":
                writes.append((action.path, results[index]))
            elif action.keyword == "REMOVE":
                writes.append((action.path, None))
            elif action.keyword == "ADD":
                assert action.operand is not None
                writes.append((action.path, results.get(index, action.operand)))
            else:
                current = get_path(item, action.path)
                if current is not None:
                    assert action.operand is not None
                    writes.append((action.path, _deleted(current, action.operand)))
        return writes


def _write(item: Item, writes: list[tuple[ResolvedPath, Value | None]]) -> Item:
    new = dict(item)
    nested: list[tuple[ResolvedPath, Value | None]] = []
    cloned: set[str] = set()
    for path, value in writes:
        name = str(path[0])
        if len(path) == 1:
            if value is None:
                new.pop(name, None)
            else:
                new[name] = value
            continue
        if name not in cloned:
            new[name] = clone_value(new[name])
            cloned.add(name)
        nested.append((path, value))
    # Every parent is found before any list changes shape.
    located = [(get_path(new, path[:-1]), path[-1], value) for path, value in nested]
    list_changes: dict[int, tuple[Value, list[tuple[int, Value | None]]]] = {}
    for parent, step, value in located:
        assert parent is not None
        if type(step) is int:
            list_changes.setdefault(id(parent), (parent, []))[1].append((step, value))
        elif value is None:
            parent["M"].pop(step, None)
        else:
            parent["M"][step] = value
    for parent, changes in list_changes.values():
        parent["L"] = _changed_list(parent["L"], changes)
    return new


def _changed_list(elements: list[Value], changes: list[tuple[int, Value | None]]) -> list[Value]:
    result: list[Value | None] = list(elements)
    appended: list[tuple[int, Value]] = []
    for index, value in changes:
        if index < len(elements):
            result[index] = value  # None marks a removal
        elif value is not None:
            appended.append((index, value))
    appended.sort(key=lambda pair: pair[0])
    kept = [element for element in result if element is not None]
    return kept + [value for _, value in appended]


def compile_update(text: str, context: ExpressionContext) -> UpdatePlan:
    """Compile an UpdateExpression completely (every static check DynamoDB makes)."""
    return cache.compiled(LABEL, text, context, lambda bound: _compile(text, bound))


def _compile(text: str, context: ExpressionContext) -> UpdatePlan:
    checked_text(text, LABEL, limits.EXPRESSION_MAX_BYTES)
    try:
        expression = cache.update(text)
        targets = check_update_bound(expression, context)
        actions = _bind_actions(expression.clauses, targets, context)
    except (ExpressionError, ExpressionParseError) as error:
        raise invalid(LABEL, error) from None
    read_paths: list[ResolvedPath] = []
    for action in expression.actions:
        if action.keyword == "SET" and action.value is not None:
            collect_paths(action.value, context.names, read_paths)
    return UpdatePlan(actions, len(expression.clauses), text, tuple(read_paths))


def _bind_actions(clauses: Any, targets: list[ResolvedPath], context: ExpressionContext) -> list[_Action]:
    actions: list[_Action] = []
    for clause_index, clause in enumerate(clauses):
        for action in clause.actions:
            path = targets[len(actions)]
            compute = None
            operand = None
            if action.keyword == "SET":
                assert action.value is not None
                compute = _compile_set_value(action.value, context)
            elif action.keyword in ("ADD", "DELETE"):
                assert isinstance(action.value, ValueRef)
                operand = context.values[action.value.name]
            actions.append(_Action(action.keyword, path, clause_index, compute, operand))
    return actions
