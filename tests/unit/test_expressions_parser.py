"""Lexer and parser: tokens, precedence, parentheses, AST shapes."""

from __future__ import annotations

import pytest

from dynastore.expressions import lexer
from dynastore.expressions.ast import (
    And,
    Arithmetic,
    Between,
    Comparison,
    FunctionCall,
    In,
    Not,
    Or,
    Parenthesized,
    Path,
    PathPart,
    UpdateAction,
    ValueRef,
)
from dynastore.expressions.parser import (
    ExpressionParseError,
    parse_condition,
    parse_projection,
    parse_update,
)


def kinds(text: str) -> list[str]:
    return [token.kind for token in lexer.tokenize(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a = :v", ["name", "=", ":value", "eof"]),
        ("#a <> :v", ["#name", "<>", ":value", "eof"]),
        ("a<=b>=c<d>e", ["name", "<=", "name", ">=", "name", "<", "name", ">", "name", "eof"]),
        ("and OR Not between IN", ["AND", "OR", "NOT", "BETWEEN", "IN", "eof"]),
        ("set Remove add DELETE", ["SET", "REMOVE", "ADD", "DELETE", "eof"]),
        ("android oregon notable inside", ["name", "name", "name", "name", "eof"]),
        ("a[10].b", ["name", "[", "integer", "]", ".", "name", "eof"]),
        ("a[01]", ["name", "[", "integer", "integer", "]", "eof"]),
        ("_a", ["bad", "name", "eof"]),
        ("# :", ["bad", "bad", "eof"]),
        ("a\t=\n:v\r", ["name", "=", ":value", "eof"]),
        ("a_1B = :v_2", ["name", "=", ":value", "eof"]),
        ("é", ["bad", "eof"]),
        ("", ["eof"]),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert kinds(text) == expected


def test_token_positions() -> None:
    tokens = lexer.tokenize("ab = :v")
    assert [(t.text, t.start, t.end) for t in tokens] == [
        ("ab", 0, 2), ("=", 3, 4), (":v", 5, 7), ("<EOF>", 7, 7)
    ]


A = Path.of((PathPart("name", "a"),))
B = Path.of((PathPart("name", "b"),))
C = Path.of((PathPart("name", "c"),))
V = ValueRef(":v")


def eq(path: Path) -> Comparison:
    return Comparison("=", path, V)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a = :v", eq(A)),
        ("a = :v OR b = :v AND c = :v", Or(eq(A), And(eq(B), eq(C)))),
        ("a = :v AND b = :v OR c = :v", Or(And(eq(A), eq(B)), eq(C))),
        ("NOT a = :v AND b = :v", And(Not(eq(A)), eq(B))),
        ("NOT (a = :v AND b = :v)", Not(Parenthesized(And(eq(A), eq(B))))),
        ("a = :v OR b = :v OR c = :v", Or(Or(eq(A), eq(B)), eq(C))),
        ("a BETWEEN :v AND :v AND b = :v", And(Between(A, V, V), eq(B))),
        ("a IN (:v, b)", In(A, (V, B))),
        ("attribute_exists(a)", FunctionCall("attribute_exists", (A,))),
        ("size(a) > :v", Comparison(">", FunctionCall("size", (A,)), V)),
        ("(a) = :v", Comparison("=", Parenthesized(A), V)),
        ("(a = :v)", Parenthesized(eq(A))),
        ("NOT NOT a = :v", Not(Not(eq(A)))),
        (":v = a", Comparison("=", V, A)),
    ],
)
def test_condition_trees(text: str, expected: object) -> None:
    assert parse_condition(text) == expected


def test_paths() -> None:
    path = parse_projection("a.#b[3][0].c").paths[0]
    assert [part.kind for part in path.parts] == ["name", "placeholder", "index", "index", "name"]
    assert path.steps is None
    assert parse_projection("a.b[3]").paths[0].steps == ("a", "b", 3)
    assert parse_projection("a . b [ 3 ]").paths[0].steps == ("a", "b", 3)


def test_update_tree() -> None:
    update = parse_update("SET a = b + :v, c = if_not_exists(c, :v) REMOVE b ADD c :v DELETE a :v")
    assert [clause.keyword for clause in update.clauses] == ["SET", "REMOVE", "ADD", "DELETE"]
    assert update.clauses[0].actions[0] == UpdateAction("SET", A, Arithmetic("+", B, V))
    assert update.clauses[0].actions[1].value == FunctionCall("if_not_exists", (C, V))
    assert update.clauses[2].actions[0] == UpdateAction("ADD", C, V)
    assert len(update.actions) == 5


def test_update_parenthesized_arithmetic() -> None:
    update = parse_update("SET a = (b + :v), c = ((b) - (:v))")
    assert update.actions[0].value == Parenthesized(Arithmetic("+", B, V))
    assert update.actions[1].value == Parenthesized(
        Arithmetic("-", Parenthesized(B), Parenthesized(V))
    )


@pytest.mark.parametrize(
    "text",
    ["((a = :v))", "((a)) = :v", "a = ((:v))", "NOT ((a = :v))", "a = :v AND ((b = :v))"],
)
def test_redundant_parentheses(text: str) -> None:
    with pytest.raises(ExpressionParseError) as raised:
        parse_condition(text)
    assert raised.value.message == "The expression has redundant parentheses;"


@pytest.mark.parametrize(
    "text", ["(a = :v) AND (b = :v)", "((a = :v) AND b = :v)", "(a = :v OR (b = :v))", "((a) = :v)"]
)
def test_parentheses_that_are_not_redundant(text: str) -> None:
    parse_condition(text)
