"""ProjectionExpression: which attributes, or parts of them, a read returns.

``project`` copies the requested paths out of an item: a map keeps only the
requested keys, a list only the requested elements (in index order, closed
up), and a path that leads nowhere is simply left out. UpdateItem uses the
same function for ReturnValues UPDATED_OLD / UPDATED_NEW.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from dynastore import limits
from dynastore.expressions import cache
from dynastore.expressions.evaluate import checked_text, invalid
from dynastore.expressions.parser import ExpressionParseError
from dynastore.expressions.resolve import ExpressionContext
from dynastore.expressions.validate import (
    ExpressionError,
    ResolvedPath,
    check_paths_disjoint,
    resolve_path,
)

Item = dict[str, Any]
Value = dict[str, Any]
LABEL = "ProjectionExpression"

# A tree of requested steps; ``True`` marks a requested path's end.
_Tree = dict[Any, Any]


def _tree(paths: Iterable[ResolvedPath]) -> _Tree:
    root: _Tree = {}
    for path in paths:
        node = root
        for step in path[:-1]:
            child = node.get(step)
            if child is True:
                break  # an ancestor is requested whole already
            node = node.setdefault(step, {})
        else:
            node[path[-1]] = True
    return root


def _copy(value: Value, wanted: _Tree | bool) -> Value | None:
    if wanted is True:
        return value
    assert isinstance(wanted, dict)
    if "M" in value:
        attributes = value["M"]
        kept = {}
        for step, below in wanted.items():
            if type(step) is str and step in attributes:
                copied = _copy(attributes[step], below)
                if copied is not None:
                    kept[step] = copied
        return {"M": kept} if kept else None
    if "L" in value:
        elements = value["L"]
        picked = []
        for step in sorted(step for step in wanted if type(step) is int):
            if step < len(elements):
                copied = _copy(elements[step], wanted[step])
                if copied is not None:
                    picked.append(copied)
        return {"L": picked} if picked else None
    return None


def project(item: Item, paths: Iterable[ResolvedPath]) -> Item:
    """The parts of ``item`` named by ``paths`` (values are shared, not copied)."""
    result: Item = {}
    for name, wanted in _tree(paths).items():
        value = item.get(name)
        if value is None:
            continue
        copied = _copy(value, wanted)
        if copied is not None:
            result[name] = copied
    return result


class Projection:
    """A compiled ProjectionExpression."""

    __slots__ = ("paths", "top_level_names", "text", "_simple_names")

    def __init__(self, paths: tuple[ResolvedPath, ...], text: str) -> None:
        self.paths = paths
        self.text = text
        self.top_level_names: frozenset[str] = frozenset(str(path[0]) for path in paths)
        # Plain top-level names need no tree walk: the common case, kept fast.
        self._simple_names: tuple[str, ...] | None = (
            tuple(str(path[0]) for path in paths) if all(len(p) == 1 for p in paths) else None
        )

    def apply(self, item: Item) -> Item:
        if self._simple_names is not None:
            return {name: item[name] for name in self._simple_names if name in item}
        return project(item, self.paths)


def compile_projection(text: str, context: ExpressionContext) -> Projection:
    """Compile a ProjectionExpression.

    A projection depends on its text and the #names only, so the compiled
    result is cached on both (GetItem's hot path then costs a lookup).
    """
    names_key = tuple(context.names.items())
    if len(names_key) <= _CACHED_NAMES_MAX and all(
        len(name) <= _CACHED_NAME_MAX_LENGTH for _, name in names_key
    ):
        projection, used_names = _compiled(text, names_key)
    else:  # too big to keep: compile without the cache
        projection, used_names = _compile(text, names_key)
    context.used_names.update(used_names)
    return projection


_CACHED_NAMES_MAX = 32
_CACHED_NAME_MAX_LENGTH = 255


@lru_cache(maxsize=limits.EXPRESSION_PARSE_CACHE_ENTRIES)
def _compiled(text: str, names_key: tuple[tuple[str, str], ...]) -> tuple[Projection, frozenset[str]]:
    return _compile(text, names_key)


def _compile(text: str, names_key: tuple[tuple[str, str], ...]) -> tuple[Projection, frozenset[str]]:
    checked_text(text, LABEL, limits.PROJECTION_EXPRESSION_MAX_BYTES)
    scratch = ExpressionContext.trusted(dict(names_key), {})
    try:
        expression = cache.projection(text)
        paths = tuple(resolve_path(path, scratch) for path in expression.paths)
        check_paths_disjoint(paths)
    except (ExpressionError, ExpressionParseError) as error:
        raise invalid(LABEL, error) from None
    return Projection(paths, text), frozenset(scratch.used_names)
