"""DAX's compiled expressions back into DynamoDB's expression language.

The DAX clients parse every expression themselves and send it as a CBOR
s-expression: ``[1, SPEC, [VALUE...]]`` (a projection has no values). A
function is an array led by its code (``FUNCTIONS``), a document path is
``[18, NAME-OR-INDEX...]`` with every ``#name`` already substituted, and a
value is ``[17, N]``, the N-th of the expression's values. The clients
validate names and values before sending (unused and undefined ones).

``Renderer`` writes each expression as DynamoDB text with placeholders of its
own (``#n0``... for every name, ``:c0``... per expression for values), so the
operation runs through the same parser, validation and evaluation as an
HTTP request. Error messages therefore name these placeholders, not the
application's (docs/compatibility.md).
"""

from __future__ import annotations

from typing import Any

import cbor2

from dynastore.dax.wire import (
    TAG_DOCUMENT_PATH_ORDINAL,
    MalformedFrame,
    attribute_value,
    decode_one,
)
from dynastore.errors import ValidationException

ENCODING_FORMAT = 1

EQUAL, NOT_EQUAL, LESS, GREATER_EQUAL, GREATER, LESS_EQUAL = range(6)
AND, OR, NOT, BETWEEN, IN = 6, 7, 8, 9, 10
ATTRIBUTE_EXISTS, ATTRIBUTE_NOT_EXISTS, ATTRIBUTE_TYPE, BEGINS_WITH, CONTAINS, SIZE = range(11, 17)
VARIABLE, DOCUMENT_PATH = 17, 18
SET_ACTION, ADD_ACTION, DELETE_ACTION, REMOVE_ACTION = 19, 20, 21, 22
IF_NOT_EXISTS, LIST_APPEND, PLUS, MINUS = 23, 24, 25, 26

COMPARATORS = {EQUAL: "=", NOT_EQUAL: "<>", LESS: "<", GREATER_EQUAL: ">=", GREATER: ">", LESS_EQUAL: "<="}
FUNCTIONS = {
    ATTRIBUTE_EXISTS: "attribute_exists",
    ATTRIBUTE_NOT_EXISTS: "attribute_not_exists",
    ATTRIBUTE_TYPE: "attribute_type",
    BEGINS_WITH: "begins_with",
    CONTAINS: "contains",
    SIZE: "size",
    IF_NOT_EXISTS: "if_not_exists",
    LIST_APPEND: "list_append",
}
ACTIONS = {SET_ACTION: "SET", REMOVE_ACTION: "REMOVE", ADD_ACTION: "ADD", DELETE_ACTION: "DELETE"}

_PRECEDENCE_OR, _PRECEDENCE_AND, _PRECEDENCE_NOT, _PRECEDENCE_ATOM = 1, 2, 3, 4
MAX_DEPTH = 64
"""Deeper s-expressions than any DynamoDB expression can be are refused."""


def check_projection(text: str, names: dict[str, str]) -> None:
    """DynamoDB's errors for a projection (overlapping paths, too deep...):
    the endpoint applies projections to cached items itself, so it checks
    them as the operation would."""
    from dynastore.expressions import ExpressionContext, compile_projection

    compile_projection(text, ExpressionContext(dict(names) or None, None))


def invalid(what: str) -> ValidationException:
    return ValidationException(f"Invalid {what}: the DAX request's expression is malformed")


class Renderer:
    """Renders one request's expressions, sharing its attribute names."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        """placeholder -> attribute name"""
        self._placeholders: dict[str, str] = {}
        self.values: dict[str, dict[str, Any]] = {}

    def request_fields(self) -> dict[str, Any]:
        """ExpressionAttributeNames / Values for the DynamoDB request."""
        fields: dict[str, Any] = {}
        if self.names:
            fields["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            fields["ExpressionAttributeValues"] = dict(self.values)
        return fields

    # --- entry points -----------------------------------------------------------

    def condition(self, encoded: Any, prefix: str, what: str = "ConditionExpression") -> str:
        spec, values = self._unpack(encoded, what, with_values=True)
        return _Expression(self, prefix, values, what).condition(spec, 0)[0]

    def update(self, encoded: Any, prefix: str = "u") -> str:
        spec, values = self._unpack(encoded, "UpdateExpression", with_values=True)
        return _Expression(self, prefix, values, "UpdateExpression").update(spec)

    def projection(self, encoded: Any) -> tuple[str, list[list[str | int]]]:
        """The ProjectionExpression, and each of its paths (names and list
        indexes): a DAX answer sends projected values by path ordinal."""
        spec, _ = self._unpack(encoded, "ProjectionExpression", with_values=False)
        if not isinstance(spec, list | tuple) or not spec:
            raise invalid("ProjectionExpression")
        expression = _Expression(self, "p", [], "ProjectionExpression")
        paths = [expression.path_elements(path) for path in spec]
        text = ", ".join(expression.path(path) for path in spec)
        check_projection(text, self.names)
        return text, paths

    def name(self, attribute: str) -> str:
        placeholder = self._placeholders.get(attribute)
        if placeholder is None:
            placeholder = f"#n{len(self._placeholders)}"
            self._placeholders[attribute] = placeholder
            self.names[placeholder] = attribute
        return placeholder

    def _unpack(self, encoded: Any, what: str, with_values: bool) -> tuple[Any, list[Any]]:
        if not isinstance(encoded, bytes | bytearray):
            raise invalid(what)
        try:
            decoded = decode_one(bytes(encoded))
        except MalformedFrame:
            raise invalid(what) from None
        size = 3 if with_values else 2
        if (not isinstance(decoded, list | tuple) or len(decoded) != size
                or decoded[0] != ENCODING_FORMAT):
            raise invalid(what)
        values = list(decoded[2]) if with_values and isinstance(decoded[2], list | tuple) else []
        if with_values and not isinstance(decoded[2], list | tuple):
            raise invalid(what)
        return decoded[1], values


class _Expression:
    """One expression's rendering: its value placeholders are its own."""

    def __init__(self, renderer: Renderer, prefix: str, values: list[Any], what: str) -> None:
        self.renderer = renderer
        self.prefix = prefix
        self.raw_values = values
        self.what = what

    def fail(self) -> ValidationException:
        return invalid(self.what)

    def node(self, spec: Any, depth: int) -> tuple[int, list[Any]]:
        if depth > MAX_DEPTH or not isinstance(spec, list | tuple) or not spec:
            raise self.fail()
        code = spec[0]
        if type(code) is not int:
            raise self.fail()
        return code, list(spec[1:])

    def condition(self, spec: Any, depth: int) -> tuple[str, int]:
        """(text, precedence) of a condition."""
        code, arguments = self.node(spec, depth)
        if code in COMPARATORS and len(arguments) == 2:
            left, right = (self.operand(argument, depth + 1) for argument in arguments)
            return f"{left} {COMPARATORS[code]} {right}", _PRECEDENCE_ATOM
        if code in (AND, OR) and len(arguments) == 2:
            precedence = _PRECEDENCE_AND if code == AND else _PRECEDENCE_OR
            parts = [self.grouped(argument, depth + 1, precedence) for argument in arguments]
            return f" {'AND' if code == AND else 'OR'} ".join(parts), precedence
        if code == NOT and len(arguments) == 1:
            return f"NOT ({self.condition(arguments[0], depth + 1)[0]})", _PRECEDENCE_NOT
        if code == BETWEEN and len(arguments) == 3:
            subject, low, high = (self.operand(argument, depth + 1) for argument in arguments)
            return f"{subject} BETWEEN {low} AND {high}", _PRECEDENCE_ATOM
        if code == IN and len(arguments) == 2 and isinstance(arguments[1], list | tuple):
            subject = self.operand(arguments[0], depth + 1)
            choices = ", ".join(self.operand(choice, depth + 1) for choice in arguments[1])
            return f"{subject} IN ({choices})", _PRECEDENCE_ATOM
        if code in FUNCTIONS:
            return self.function(code, arguments, depth), _PRECEDENCE_ATOM
        raise self.fail()

    def grouped(self, spec: Any, depth: int, parent: int) -> str:
        """A condition inside AND, OR or NOT: in parentheses unless it is a
        comparison or a function (so no precedence rule is relied on)."""
        del parent
        text, precedence = self.condition(spec, depth)
        return f"({text})" if precedence < _PRECEDENCE_ATOM else text

    def function(self, code: int, arguments: list[Any], depth: int) -> str:
        rendered = ", ".join(self.operand(argument, depth + 1) for argument in arguments)
        return f"{FUNCTIONS[code]}({rendered})"

    def operand(self, spec: Any, depth: int) -> str:
        code, arguments = self.node(spec, depth)
        if code == DOCUMENT_PATH:
            return self.path(spec)
        if code == VARIABLE and len(arguments) == 1:
            return self.value(arguments[0])
        if code in (PLUS, MINUS) and len(arguments) == 2:
            left, right = (self.operand(argument, depth + 1) for argument in arguments)
            return f"{left} {'+' if code == PLUS else '-'} {right}"
        if code in FUNCTIONS:
            return self.function(code, arguments, depth)
        raise self.fail()

    def value(self, index: Any) -> str:
        if type(index) is not int or not 0 <= index < len(self.raw_values):
            raise self.fail()
        placeholder = f":{self.prefix}{index}"
        if placeholder not in self.renderer.values:
            try:
                self.renderer.values[placeholder] = attribute_value(self.raw_values[index])
            except MalformedFrame:
                raise self.fail() from None
        return placeholder

    def path_elements(self, spec: Any) -> list[str | int]:
        if not isinstance(spec, list | tuple) or len(spec) < 2 or spec[0] != DOCUMENT_PATH:
            raise self.fail()
        elements: list[str | int] = []
        for element in spec[1:]:
            if isinstance(element, str):
                elements.append(element)
            elif (isinstance(element, cbor2.CBORTag) and element.tag == TAG_DOCUMENT_PATH_ORDINAL
                  and type(element.value) is int and elements):
                elements.append(element.value)
            else:
                raise self.fail()
        if not isinstance(elements[0], str):
            raise self.fail()
        return elements

    def path(self, spec: Any) -> str:
        text = ""
        for element in self.path_elements(spec):
            if isinstance(element, int):
                text += f"[{element}]"
            else:
                text += ("." if text else "") + self.renderer.name(element)
        return text

    def update(self, spec: Any) -> str:
        if not isinstance(spec, list | tuple) or not spec:
            raise self.fail()
        sections: dict[str, list[str]] = {}
        for action in spec:
            code, arguments = self.node(action, 1)
            if code not in ACTIONS:
                raise self.fail()
            if code == REMOVE_ACTION and len(arguments) == 1:
                clause = self.path(arguments[0])
            elif code == SET_ACTION and len(arguments) == 2:
                clause = f"{self.path(arguments[0])} = {self.operand(arguments[1], 2)}"
            elif len(arguments) == 2:
                clause = f"{self.path(arguments[0])} {self.operand(arguments[1], 2)}"
            else:
                raise self.fail()
            sections.setdefault(ACTIONS[code], []).append(clause)
        return " ".join(f"{keyword} {', '.join(clauses)}" for keyword, clauses in sections.items())
