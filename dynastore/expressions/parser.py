"""Recursive-descent parsers for conditions, updates and projections.

DynamoDB reports a syntax error as the token where its parser stopped and
the text from the token before it to the token after it::

    Syntax error; token: "<EOF>", near: "foo"

Where the grammar has two readings of an opening parenthesis (a parenthesised
operand that starts a comparison, or a condition in parentheses) the parser
tries the operand reading first (when it reads, the other could not have
gone on) and, when both fail, keeps the error of the one that read further,
as DynamoDB's parser does. Two parentheses straight around the same thing are refused as
soon as the outer one closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dynastore.expressions import lexer
from dynastore.expressions.ast import (
    And,
    Arithmetic,
    Between,
    Comparison,
    ConditionNode,
    FunctionCall,
    In,
    Node,
    Not,
    Operand,
    Or,
    Parenthesized,
    Path,
    PathPart,
    ProjectionExpression,
    UpdateAction,
    UpdateClause,
    UpdateExpression,
    ValueRef,
)
from dynastore.expressions.lexer import Token

MESSAGE_REDUNDANT_PARENTHESES = "The expression has redundant parentheses;"

Result = TypeVar("Result")


class ExpressionParseError(Exception):
    """A parse failure; ``message`` lacks the ``Invalid <Expression>: `` prefix."""

    def __init__(self, message: str, token_index: int = -1) -> None:
        super().__init__(message)
        self.message = message
        self.token_index = token_index


class ExpressionSyntaxError(ExpressionParseError):
    """The parser could not read on at ``token_index``."""


class RedundantParenthesesError(ExpressionParseError):
    """Raised at once: no other reading of the text can excuse it."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = lexer.tokenize(text)
        self.position = 0

    # --- token helpers ------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        index = min(self.position + ahead, len(self.tokens) - 1)
        return self.tokens[index]

    def at(self, kind: str) -> bool:
        return self.tokens[self.position].kind == kind

    def advance(self) -> Token:
        token = self.tokens[self.position]
        if self.position < len(self.tokens) - 1:
            self.position += 1
        return token

    def expect(self, kind: str) -> Token:
        if not self.at(kind):
            self.fail()
        return self.advance()

    def fail(self) -> None:
        raise ExpressionSyntaxError(self._syntax_message(self.position), self.position)

    def _syntax_message(self, index: int) -> str:
        token = self.tokens[index]
        start = self.tokens[index - 1].start if index > 0 else 0
        end = self.tokens[index + 1].end if index + 1 < len(self.tokens) else token.end
        return f'Syntax error; token: "{token.text}", near: "{self.text[start:end]}"'

    def expect_end(self) -> None:
        if not self.at(lexer.EOF):
            self.fail()

    def choose(self, *alternatives: Callable[[], Result]) -> Result:
        """The first alternative that parses; else the error that got furthest."""
        start = self.position
        best: ExpressionSyntaxError | None = None
        for alternative in alternatives:
            self.position = start
            try:
                return alternative()
            except ExpressionSyntaxError as error:
                if best is None or error.token_index > best.token_index:
                    best = error
        self.position = start
        assert best is not None
        raise best

    @staticmethod
    def parenthesize(inner: Node) -> Parenthesized:
        if isinstance(inner, Parenthesized):
            raise RedundantParenthesesError(MESSAGE_REDUNDANT_PARENTHESES)
        return Parenthesized(inner)

    # --- conditions -----------------------------------------------------------------
    def condition(self) -> ConditionNode:
        left = self.and_condition()
        while self.at("OR"):
            self.advance()
            left = Or(left, self.and_condition())
        return left

    def and_condition(self) -> ConditionNode:
        left = self.not_condition()
        while self.at("AND"):
            self.advance()
            left = And(left, self.not_condition())
        return left

    def not_condition(self) -> ConditionNode:
        if self.at("NOT"):
            self.advance()
            return Not(self.not_condition())
        return self.primary_condition()

    def primary_condition(self) -> ConditionNode:
        if self.at("("):
            return self.choose(self.comparison, self.parenthesized_condition)
        return self.comparison()

    def parenthesized_condition(self) -> ConditionNode:
        self.expect("(")
        inner = self.condition()
        self.expect(")")
        return self.parenthesize(inner)

    def comparison(self) -> ConditionNode:
        left = self.operand()
        token = self.peek()
        if token.kind in lexer.COMPARATORS:
            self.advance()
            return Comparison(token.kind, left, self.operand())
        if token.kind == "BETWEEN":
            self.advance()
            lower = self.operand()
            self.expect("AND")
            return Between(left, lower, self.operand())
        if token.kind == "IN":
            self.advance()
            self.expect("(")
            candidates = [self.operand()]
            while self.at(","):
                self.advance()
                candidates.append(self.operand())
            self.expect(")")
            return In(left, tuple(candidates))
        if isinstance(left, FunctionCall):
            return left
        self.fail()
        raise AssertionError  # pragma: no cover - fail() raises

    # --- operands -------------------------------------------------------------------
    def operand(self) -> Operand:
        token = self.peek()
        if token.kind == lexer.VALUE_PLACEHOLDER:
            self.advance()
            return ValueRef(token.text)
        if token.kind == "(":
            self.advance()
            inner = self.operand()
            self.expect(")")
            return self.parenthesize(inner)
        if token.kind == lexer.NAME and self.peek(1).kind == "(":
            return self.function_call()
        if token.kind in (lexer.NAME, lexer.NAME_PLACEHOLDER):
            return self.path()
        self.fail()
        raise AssertionError  # pragma: no cover

    def function_call(self) -> FunctionCall:
        name = self.advance().text
        self.expect("(")
        arguments = [self.operand()]
        while self.at(","):
            self.advance()
            arguments.append(self.operand())
        self.expect(")")
        return FunctionCall(name, tuple(arguments))

    def path(self) -> Path:
        parts = [self.path_name()]
        while self.at(".") or self.at("["):
            if self.advance().kind == ".":
                parts.append(self.path_name())
            else:
                digits = self.expect(lexer.INTEGER).text
                self.expect("]")
                parts.append(PathPart("index", digits, int(digits)))
        return Path.of(tuple(parts))

    def path_name(self) -> PathPart:
        token = self.peek()
        if token.kind == lexer.NAME:
            self.advance()
            return PathPart("name", token.text)
        if token.kind == lexer.NAME_PLACEHOLDER:
            self.advance()
            return PathPart("placeholder", token.text)
        self.fail()
        raise AssertionError  # pragma: no cover

    # --- updates --------------------------------------------------------------------
    def update(self) -> UpdateExpression:
        clauses = [self.update_clause()]
        while not self.at(lexer.EOF):
            clauses.append(self.update_clause())
        return UpdateExpression.of(tuple(clauses))

    def update_clause(self) -> UpdateClause:
        keyword = self.peek().kind
        if keyword == "SET":
            read_action = self.set_action
        elif keyword == "REMOVE":
            read_action = self.remove_action
        elif keyword in ("ADD", "DELETE"):
            read_action = self.add_or_delete_action
        else:
            self.fail()
        self.advance()
        actions = [read_action(keyword)]
        while self.at(","):
            self.advance()
            actions.append(read_action(keyword))
        return UpdateClause(keyword, tuple(actions))

    def set_action(self, keyword: str) -> UpdateAction:
        path = self.path()
        self.expect("=")
        return UpdateAction(keyword, path, self.set_value())

    def set_value(self) -> Operand:
        if self.at("("):
            return self.choose(self.plain_set_value, self.parenthesized_set_value)
        return self.plain_set_value()

    def parenthesized_set_value(self) -> Operand:
        self.expect("(")
        inner = self.set_value()
        self.expect(")")
        return self.parenthesize(inner)

    def plain_set_value(self) -> Operand:
        left = self.operand()
        if self.at("+") or self.at("-"):
            operator = self.advance().kind
            return Arithmetic(operator, left, self.operand())
        return left

    def remove_action(self, keyword: str) -> UpdateAction:
        return UpdateAction(keyword, self.path(), None)

    def add_or_delete_action(self, keyword: str) -> UpdateAction:
        path = self.path()
        value = self.expect(lexer.VALUE_PLACEHOLDER)
        return UpdateAction(keyword, path, ValueRef(value.text))

    # --- projections ----------------------------------------------------------------
    def projection(self) -> ProjectionExpression:
        paths = [self.path()]
        while self.at(","):
            self.advance()
            paths.append(self.path())
        return ProjectionExpression(tuple(paths))


def parse_condition(text: str) -> ConditionNode:
    """Parse a Condition-, Filter- or KeyConditionExpression."""
    parser = _Parser(text)
    node = parser.condition()
    parser.expect_end()
    return node


def parse_update(text: str) -> UpdateExpression:
    parser = _Parser(text)
    node = parser.update()
    parser.expect_end()
    return node


def parse_projection(text: str) -> ProjectionExpression:
    parser = _Parser(text)
    node = parser.projection()
    parser.expect_end()
    return node
