"""The parsed form of an expression, before placeholders are resolved.

Nodes are frozen so a parsed expression can be cached and shared by every
request that sends the same text. ``#name`` and ``:value`` placeholders stay
as written here; resolve.py binds them to one request's maps.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- operands -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PathPart:
    """One step of a document path: ``name``, ``#placeholder`` or ``[index]``."""

    kind: str  # "name" | "placeholder" | "index"
    text: str  # as written: "a", "#a", or the digits of the index
    index: int = -1


@dataclass(frozen=True, slots=True)
class Path:
    parts: tuple[PathPart, ...]
    # The resolved steps when the path has no #placeholder, computed once at
    # parse time so binding it to a request costs nothing.
    steps: tuple[str | int, ...] | None = None

    @staticmethod
    def of(parts: tuple[PathPart, ...]) -> Path:
        if any(part.kind == "placeholder" for part in parts):
            return Path(parts)
        return Path(parts, tuple(part.index if part.kind == "index" else part.text for part in parts))


@dataclass(frozen=True, slots=True)
class ValueRef:
    name: str  # ":v"


@dataclass(frozen=True, slots=True)
class FunctionCall:
    name: str
    arguments: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """``left + right`` or ``left - right`` (UpdateExpression SET only)."""

    operator: str
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class Parenthesized:
    """Kept so redundant parentheses can be told apart; evaluation unwraps it."""

    inner: Node


Operand = Path | ValueRef | FunctionCall | Arithmetic | Parenthesized

# --- conditions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    operator: str  # = <> < <= > >=
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class Between:
    operand: Operand
    lower: Operand
    upper: Operand


@dataclass(frozen=True, slots=True)
class In:
    operand: Operand
    candidates: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class And:
    left: ConditionNode
    right: ConditionNode


@dataclass(frozen=True, slots=True)
class Or:
    left: ConditionNode
    right: ConditionNode


@dataclass(frozen=True, slots=True)
class Not:
    inner: ConditionNode


ConditionNode = Comparison | Between | In | And | Or | Not | FunctionCall | Parenthesized
Node = ConditionNode | Operand

# --- updates and projections ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class UpdateAction:
    keyword: str  # "SET" | "REMOVE" | "ADD" | "DELETE"
    path: Path
    value: Operand | None  # None for REMOVE


@dataclass(frozen=True, slots=True)
class UpdateClause:
    keyword: str
    actions: tuple[UpdateAction, ...]


@dataclass(frozen=True, slots=True)
class UpdateExpression:
    clauses: tuple[UpdateClause, ...]
    actions: tuple[UpdateAction, ...] = ()  # every clause's actions, in order

    @staticmethod
    def of(clauses: tuple[UpdateClause, ...]) -> UpdateExpression:
        actions = tuple(action for clause in clauses for action in clause.actions)
        return UpdateExpression(clauses, actions)


@dataclass(frozen=True, slots=True)
class ProjectionExpression:
    paths: tuple[Path, ...]


def unwrap(node: Node) -> Node:
    """The node inside any number of parentheses."""
    while isinstance(node, Parenthesized):
        node = node.inner
    return node
