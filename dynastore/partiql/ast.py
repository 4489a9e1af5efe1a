"""The typed tree of one PartiQL statement (immutable, shared between
requests by the parse cache). Values are DynamoDB attribute values
(``{"S": "x"}``); a ``?`` is a Parameter bound at translation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

AttributeValue = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Path:
    """``a.b[0]."c d"``: an attribute name, then names and list indexes."""

    steps: tuple[str | int, ...]

    @property
    def root(self) -> str:
        return str(self.steps[0])

    def text(self) -> str:
        parts = [self.root]
        for step in self.steps[1:]:
            parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
        return "".join(parts)


@dataclass(frozen=True, slots=True)
class Value:
    """A literal, already typed as DynamoDB types it."""

    value: AttributeValue


@dataclass(frozen=True, slots=True)
class Parameter:
    index: int  # 0-based position among the statement's ``?``


@dataclass(frozen=True, slots=True)
class TupleLiteral:
    """``{'a': ?}``: a map literal that holds a parameter (one without is a Value)."""

    entries: tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class ListLiteral:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class BagLiteral:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Missing:
    """The MISSING literal (only ``IS [NOT] MISSING`` takes it)."""


@dataclass(frozen=True, slots=True)
class Comparison:
    operator: str  # = <> < <= > >=
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Between:
    operand: Node
    low: Node
    high: Node


@dataclass(frozen=True, slots=True)
class In:
    operand: Node
    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Is:
    """``x IS [NOT] MISSING`` / ``NULL`` / a type name."""

    operand: Node
    type_name: str  # upper case: MISSING NULL BOOLEAN STRING NUMERIC ...
    negated: bool


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


@dataclass(frozen=True, slots=True)
class Call:
    name: str  # lower case
    arguments: tuple[Node, ...]
    at: str = field(default="", compare=False)
    """``line:column:length`` of the name, as the service's messages point at it."""
    first_at: str = field(default="", compare=False)
    """The same of the first argument's first token."""


@dataclass(frozen=True, slots=True)
class Arithmetic:
    operator: str  # + -
    left: Node
    right: Node


Node = (
    Path | Value | Parameter | TupleLiteral | ListLiteral | BagLiteral | Missing | Comparison
    | Between | In | Is | And | Or | Not | Call | Arithmetic
)


@dataclass(frozen=True, slots=True)
class Source:
    table: str
    index: str | None = None


@dataclass(frozen=True, slots=True)
class Select:
    projection: tuple[Path, ...] | None  # None: *
    source: Source
    where: Node | None
    order_by: tuple[tuple[str, bool], ...] = ()  # (attribute, descending)
    parameters: int = 0


@dataclass(frozen=True, slots=True)
class Insert:
    source: Source
    item: Node
    parameters: int = 0


@dataclass(frozen=True, slots=True)
class Update:
    source: Source
    sets: tuple[tuple[Path, Node], ...]
    removes: tuple[Path, ...]
    where: Node | None
    returning: str | None = None  # ALL_OLD ALL_NEW UPDATED_OLD UPDATED_NEW
    parameters: int = 0


@dataclass(frozen=True, slots=True)
class Delete:
    source: Source
    where: Node | None
    returning: str | None = None
    parameters: int = 0


@dataclass(frozen=True, slots=True)
class Exists:
    """``EXISTS(SELECT ...)``: a condition check (ExecuteTransaction writes only)."""

    select: Select
    parameters: int = 0


Statement = Select | Insert | Update | Delete | Exists


def is_read(statement: Statement) -> bool:
    return isinstance(statement, Select)
