"""A bounded cache of parsed and text-checked expressions.

Applications send the same few expression texts over and over, so each text
is parsed (and given the checks that depend on the text alone) once. The
cached trees are immutable and shared between requests and threads. Texts
that fail are not cached; they are rare and cheap to fail again.

Deep nesting: a 4 KB expression can nest about 400 parentheses, deeper than
Python's default recursion limit allows a recursive-descent parser to go.
Such a text is parsed again with a higher limit (DynamoDB accepts it when it
has at most 300 operators, and refuses it for the operator count otherwise).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, TypeVar

import orjson

from dynastore import limits
from dynastore.expressions import lexer, parser, validate
from dynastore.expressions.ast import ConditionNode, ProjectionExpression, UpdateExpression
from dynastore.expressions.resolve import ExpressionContext

Parsed = TypeVar("Parsed")

DEEP_RECURSION_LIMIT = limits.EXPRESSION_DEEP_RECURSION_LIMIT
"""Recursion limit while re-parsing a deeply nested expression (Python 3.11
runs Python-to-Python calls without growing the C stack)."""

_recursion_lock = threading.Lock()


@lru_cache(maxsize=limits.EXPRESSION_PARSE_CACHE_ENTRIES)
def condition(text: str) -> ConditionNode:
    return _parse_deep(_condition, text)


@lru_cache(maxsize=limits.EXPRESSION_PARSE_CACHE_ENTRIES)
def update(text: str) -> UpdateExpression:
    return _parse_deep(_update, text)


@lru_cache(maxsize=limits.EXPRESSION_PARSE_CACHE_ENTRIES)
def projection(text: str) -> ProjectionExpression:
    return _parse_deep(_projection, text)


def _condition(text: str) -> ConditionNode:
    node = parser.parse_condition(text)
    validate.check_operator_count((node,))
    validate.check_condition_text(node)
    return node


def _update(text: str) -> UpdateExpression:
    node = parser.parse_update(text)
    validate.check_operator_count(action.value for action in node.actions if action.value)
    validate.check_update_text(node)
    return node


def _projection(text: str) -> ProjectionExpression:
    node = parser.parse_projection(text)
    validate.check_projection_text(node.paths)
    return node


def _parse_deep(parse: Callable[[str], Parsed], text: str) -> Parsed:
    try:
        return parse(text)
    except RecursionError:
        pass
    _check_token_operator_count(text)
    with _recursion_lock:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous, DEEP_RECURSION_LIMIT))
        try:
            return parse(text)
        finally:
            sys.setrecursionlimit(previous)


def _check_token_operator_count(text: str) -> None:
    """The operator count, from the tokens (for texts too deep to parse cheaply)."""
    tokens = lexer.tokenize(text)
    count = 0
    for index, token in enumerate(tokens):
        if token.kind in lexer.COMPARATORS or token.kind in ("BETWEEN", "IN", "+", "-"):
            count += 1
        elif token.kind == lexer.NAME and tokens[min(index + 1, len(tokens) - 1)].kind == "(":
            count += 1
    if count > limits.EXPRESSION_MAX_OPERATORS:
        raise validate.ExpressionError(
            f"The expression contains too many operators; operator count: {count}"
        )


# --- compiled expressions ------------------------------------------------------------
#
# Many requests repeat not only the text but the whole request: the same
# ``SET #c = #c + :one`` with ``:one = 1``, the same ``attribute_not_exists(pk)``.
# A compiled Condition / UpdatePlan / KeyCondition is immutable, so it is
# kept under (kind, text, names, values) and handed out again; the
# placeholders it used are recorded so ``check_all_used`` still works.

Compiled = TypeVar("Compiled")
_UNHASHABLE = object()


class _BoundedCache:
    """A small thread-safe LRU map."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: dict[Hashable, Any] = {}
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self.lock:
            entry = self.entries.pop(key, None)
            if entry is not None:
                self.entries[key] = entry  # now the most recently used
            return entry

    def put(self, key: Hashable, entry: Any) -> None:
        with self.lock:
            self.entries[key] = entry
            if len(self.entries) > self.capacity:
                del self.entries[next(iter(self.entries))]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_compiled_cache = _BoundedCache(limits.EXPRESSION_PARSE_CACHE_ENTRIES)


COMPILED_KEY_MAX_CHARACTERS = limits.EXPRESSION_COMPILED_KEY_MAX_CHARACTERS
"""Requests whose values are bigger than this are compiled without the cache,
so the cache holds at most about 4096 x 2 KB of keys."""
COMPILED_KEY_MAX_NAMES = limits.EXPRESSION_COMPILED_KEY_MAX_NAMES


def _values_key(values: dict[str, dict[str, Any]]) -> Hashable | None:
    """The values as a hashable key; None when they are too big to keep."""
    parts: list[Hashable] = []
    size = 0
    for name, value in values.items():
        for tag, inner in value.items():
            if type(inner) is not str and type(inner) is not bool:
                # A text copy: long-lived orjson bytes cost ~8 KB each.
                inner = orjson.dumps(inner).decode()
            size += len(inner) if type(inner) is str else 1
            parts.append((name, tag, inner))
    if size > COMPILED_KEY_MAX_CHARACTERS:
        return None
    return tuple(parts)


def compiled(
    kind: Hashable,
    text: str,
    context: ExpressionContext,
    build: Callable[[ExpressionContext], Compiled],
) -> Compiled:
    """``build(context)``, or the identical result of an earlier identical request."""
    values_key = _values_key(context.values)
    names_key = tuple(context.names.items())
    if (
        values_key is None
        or len(names_key) > COMPILED_KEY_MAX_NAMES
        or sum(len(name) for _, name in names_key) > COMPILED_KEY_MAX_CHARACTERS
    ):
        return build(context)
    key = (kind, text, names_key, values_key)
    entry = _compiled_cache.get(key)
    if entry is None:
        scratch = ExpressionContext.trusted(context.names, context.values)
        result = build(scratch)
        entry = (result, frozenset(scratch.used_names), frozenset(scratch.used_values))
        _compiled_cache.put(key, entry)
    result, used_names, used_values = entry
    context.used_names.update(used_names)
    context.used_values.update(used_values)
    return result


# --- whole write requests --------------------------------------------------------
#
# A conditional write repeats more than its texts: the same condition and
# update with the same names and values, request after request. Building the
# ExpressionContext (checking every name and value) and looking up each
# compiled expression cost ~9 µs of an UpdateItem; the pair compiled from
# identical inputs is looked up here first, keyed by the raw request
# parameters, before any of that. Only successes are kept, so an entry
# stands for inputs that passed every check once.


_compiled_writes = _BoundedCache(limits.EXPRESSION_PARSE_CACHE_ENTRIES)


def _raw_values_key(values: Any) -> Hashable | None:
    """ExpressionAttributeValues as a key, exactly: each value's type tag and
    contents kept with their Python types (a number sent as a JSON number
    must not meet the entry of one sent as a string). None for anything else,
    or too big to keep."""
    if values is None:
        return ()
    if type(values) is not dict:
        return None
    parts: list[Hashable] = []
    size = 0
    for name, value in values.items():
        if type(value) is not dict or len(value) != 1:
            return None
        for tag, inner in value.items():
            if type(inner) is str:
                size += len(inner)
            elif type(inner) is list and all(type(member) is str for member in inner):
                inner = tuple(inner)
                size += sum(len(member) for member in inner)
            elif type(inner) is not bool:
                return None  # lists and maps of values: the per-expression caches still apply
            parts.append((name, tag, inner))
    if size > COMPILED_KEY_MAX_CHARACTERS:
        return None
    return tuple(parts)


def _raw_names_key(names: Any) -> Hashable | None:
    if names is None:
        return ()
    if type(names) is not dict or len(names) > COMPILED_KEY_MAX_NAMES:
        return None
    size = 0
    for placeholder, name in names.items():
        if type(name) is not str:
            return None
        size += len(placeholder) + len(name)
    if size > COMPILED_KEY_MAX_CHARACTERS:
        return None
    return tuple(names.items())


def write_key(
    condition_text: Any, update_text: Any, names: Any, values: Any
) -> Hashable | None:
    """The key of a write request's expressions, or None when it cannot be cached."""
    if not (condition_text is None or type(condition_text) is str):
        return None
    if not (update_text is None or type(update_text) is str):
        return None
    names_key = _raw_names_key(names)
    if names_key is None:
        return None
    values_key = _raw_values_key(values)
    if values_key is None:
        return None
    return (condition_text, update_text, names_key, values_key)


def compiled_write(key: Hashable) -> Any:
    """The (condition, update) an identical write request compiled, or None."""
    return _compiled_writes.get(key)


def remember_write(key: Hashable, compiled_pair: Any) -> None:
    _compiled_writes.put(key, compiled_pair)


def clear() -> None:
    """Forget every cached expression (tests use this to count parses)."""
    from dynastore.expressions.projection import _compiled

    for cached in (condition, update, projection, _compiled):
        cached.cache_clear()
    _compiled_cache.clear()
    _compiled_writes.clear()
