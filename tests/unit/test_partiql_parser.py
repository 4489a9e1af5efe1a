"""PartiQL parsing: the accepted forms and the trees they make, and the
refused ones with DynamoDB's exact messages (pinned against the service by
the suites docs/partiql.md cites)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore import partiql
from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql.ast import (
    And,
    BagLiteral,
    Between,
    Call,
    Comparison,
    Delete,
    In,
    Insert,
    Is,
    ListLiteral,
    Not,
    Or,
    Parameter,
    Path,
    Select,
    Source,
    TupleLiteral,
    Update,
    Value,
)

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "


def p(*steps: str | int) -> Path:
    return Path(tuple(steps))


def s(text: str) -> Value:
    return Value({"S": text})


def n(text: str) -> Value:
    return Value({"N": text})


PARSED = [
    ('SELECT * FROM "t"', Select(None, Source("t"), None)),
    ("select * from t;", Select(None, Source("t"), None)),
    ('SELECT a, b.c[0], "d e" FROM "t"."i"',
     Select((p("a"), p("b", "c", 0), p("d e")), Source("t", "i"), None)),
    ("SELECT * FROM t WHERE pk = 'x' -- a comment\n",
     Select(None, Source("t"), Comparison("=", p("pk"), s("x")))),
    ("SELECT * FROM t /* c */ WHERE pk = ? AND sk >= ?",
     Select(None, Source("t"), And(Comparison("=", p("pk"), Parameter(0)),
                                   Comparison(">=", p("sk"), Parameter(1))), (), 2)),
    ("SELECT * FROM t WHERE pk = 1 OR pk = 2 AND NOT x <> 3",
     Select(None, Source("t"), Or(Comparison("=", p("pk"), n("1")),
                                  And(Comparison("=", p("pk"), n("2")),
                                      Not(Comparison("<>", p("x"), n("3"))))))),
    ("SELECT * FROM t WHERE pk IN [1, 2] AND sk BETWEEN 'a' AND 'b'",
     Select(None, Source("t"), And(In(p("pk"), (n("1"), n("2"))), Between(p("sk"), s("a"), s("b"))))),
    ("SELECT * FROM t WHERE pk IN ('a') AND x IS NOT MISSING AND y IS NULL",
     Select(None, Source("t"), And(And(In(p("pk"), (s("a"),)), Is(p("x"), "MISSING", True)),
                                   Is(p("y"), "NULL", False)))),
    ("SELECT * FROM t WHERE begins_with(sk, 'a') AND size(l) > 2 AND x != -1.5",
     Select(None, Source("t"), And(And(Call("begins_with", (p("sk"), s("a"))),
                                       Comparison(">", Call("size", (p("l"),)), n("2"))),
                                   Comparison("<>", p("x"), n("-1.5"))))),
    ("SELECT * FROM t WHERE pk = 'a' ORDER BY sk DESC, pk",
     Select(None, Source("t"), Comparison("=", p("pk"), s("a")), (("sk", True), ("pk", False)))),
    ("SELECT * FROM t WHERE \"pad\" = 'it''s'",
     Select(None, Source("t"), Comparison("=", p("pad"), s("it's")))),
    ("INSERT INTO \"t\" VALUE {'pk': 'a', 'n': 1.5e3, 'l': [true, null], 'b': <<1, 2>>, 'p': ?}",
     Insert(Source("t"), TupleLiteral((("pk", s("a")), ("n", n("1.5e3")),
                                       ("l", ListLiteral((Value({"BOOL": True}), Value({"NULL": True})))),
                                       ("b", BagLiteral((n("1"), n("2")))), ("p", Parameter(0)))), 1)),
    ("UPDATE t SET a = a + 1, b = list_append(b, [1]) SET c = set_add(c, <<'x'>>) REMOVE d, e.f "
     "WHERE pk = 'k' RETURNING MODIFIED NEW *",
     Update(Source("t"),
            ((p("a"), ast.Arithmetic("+", p("a"), n("1"))),
             (p("b"), Call("list_append", (p("b"), ListLiteral((n("1"),))))),
             (p("c"), Call("set_add", (p("c"), BagLiteral((s("x"),)))))),
            (p("d"), p("e", "f")), Comparison("=", p("pk"), s("k")), "UPDATED_NEW")),
    ("DELETE FROM t WHERE pk = 'k' AND v = 1 RETURNING ALL OLD *",
     Delete(Source("t"), And(Comparison("=", p("pk"), s("k")), Comparison("=", p("v"), n("1"))), "ALL_OLD")),
    ("FROM t WHERE pk = 'k' SET a = 1 RETURNING ALL NEW *",
     Update(Source("t"), ((p("a"), n("1")),), (), Comparison("=", p("pk"), s("k")), "ALL_NEW")),
    ("FROM t REMOVE a", Update(Source("t"), (), (p("a"),), None)),
    ("EXISTS(SELECT * FROM t WHERE pk = 'k' AND v = 1)",
     ast.Exists(Select(None, Source("t"), And(Comparison("=", p("pk"), s("k")), Comparison("=", p("v"), n("1")))))),
]


@pytest.mark.parametrize(("text", "tree"), PARSED, ids=[case[0][:60] for case in PARSED])
def test_parses(text: str, tree: ast.Statement) -> None:
    assert partiql.parse(text) == tree


REFUSED = [
    ("SELECT * FROM t WHERE pk = 1 foo", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SELECT * FROM t WHERE pk = 1 e5", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SELECT * FROM t WHERE pk = 1)", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("DELETE FROM t WHERE pk = 1 ORDER BY pk", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SELECT * FROM t ORDER BY pk WHERE pk = 1", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SELECT * FROM t WHERE pk = 1 # note", NOT_WELL_FORMED),
    ("SELECT * FROM t WHERE pk = 1e2147483648", NOT_WELL_FORMED),
    ("SELECT * FROM t WHERE pk = 1e99999999999", NOT_WELL_FORMED),
    ("SELECT * FROM t WHERE pk = 1.5e-2147483647", NOT_WELL_FORMED),
    ("SELECT * FROM t WHERE pk = 1 /* note", NOT_WELL_FORMED),
    ("SELECT * FROM t WHERE pk = 'open", NOT_WELL_FORMED),
    ('SELECT * FROM "t" x WHERE pk = 1', "Aliasing is not supported"),
    ('SELECT * FROM "t" AS x WHERE pk = 1', "Aliasing is not supported"),
    ('UPDATE "t" x SET a = 3 WHERE pk = 1', "Aliasing is not supported"),
    ('DELETE FROM "t" x WHERE pk = 1', "Aliasing is not supported"),
    ("INSERT INTO \"t\" x VALUE {'pk': 1}", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SELECT * FROM t WHERE", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM t WHERE;", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM t WHERE NOT", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM t WHERE (", NOT_WELL_FORMED + "Unexpected term"),
    ("UPDATE t SET a = 1 WHERE", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM t WHERE pk = 'a' AND", NOT_WELL_FORMED + "Missing right-hand side expression of infix operator"),
    ("SELECT * FROM t WHERE pk = 'a' OR", NOT_WELL_FORMED + "Missing right-hand side expression of infix operator"),
    ("SELECT * FROM t WHERE ORDER BY pk", NOT_WELL_FORMED + "Unexpected keyword"),
    ("SELECT * FROM t WHERE pad = 'none'", NOT_WELL_FORMED + "Unexpected keyword"),
    ("SELECT * FROM t WHERE pk = 'a' AND x IS FOO", NOT_WELL_FORMED + "Expected type name"),
    ("SELECT * FROM t WHERE IS NULL", NOT_WELL_FORMED + "Unexpected operator"),
    ("SELECT * FROM t WHERE pk = LIKE", NOT_WELL_FORMED + "Unexpected operator"),
    ("DELETE FROM", NOT_WELL_FORMED + "Expected identifier for simple path"),
    ("DELETE FROM;", NOT_WELL_FORMED + "Expected identifier for simple path"),
    ("DELETE FROM WHERE pk = 'a'", NOT_WELL_FORMED + "Expected identifier for simple path"),
    ("SLECT * FROM t", NOT_WELL_FORMED + "Expected data manipulation"),
    ("UPSERT INTO t VALUE {'pk': 1}", NOT_WELL_FORMED + "Expected data manipulation"),
    ("FROM \"t\" SET c = 1 WHERE pk = 'x'", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("FROM \"t\" SET c = 1 WHERE pk = 'x' SET d = 2", NOT_WELL_FORMED + "Unexpected token after expression"),
    ('SELECT * FROM "" WHERE pk = 1', "Path component cannot be an empty string"),
    ('SELECT * FROM "t"."" WHERE pk = 1', "Path component cannot be an empty string"),
    ('SELECT * FROM "t"."i"."x" WHERE pk = 1', "A path may contain at most 2 components in the FROM clause"),
    ("SELECT *, a FROM t", "Other attributes should not be present in the projection when '*' is used."),
    ("INSERT INTO t VALUE {'pk': 1} RETURNING ALL OLD *", "RETURNING is not supported in INSERT"),
    ("INSERT INTO t VALUE 'x'", "Unsupported format in item expression. Please use struct format {...} "
                                "to express item values for insert statement."),
    ("INSERT INTO t VALUE <<{'pk': 1}, {'pk': 2}>>", "Unsupported operation: Inserting multiple items in a "
     "single statement is not supported, use \"INSERT INTO tableName VALUE item\" instead"),
    ("UPDATE t SET a = 1 WHERE pk = 1 RETURNING ALL NEW a",
     "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"),
    ("SELECT * FROM t WHERE " + "x" * 8200, "Member must have length less than or equal to 8192"),
]


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=[case[0][:60] for case in REFUSED])
def test_refuses(text: str, message: str) -> None:
    with pytest.raises(ValidationException) as excinfo:
        partiql.parse(text)
    assert excinfo.value.message == message


def test_each_text_is_parsed_once() -> None:
    text = "SELECT * FROM t WHERE pk = 'cached-once'"
    assert partiql.parse(text) is partiql.parse(text)


def test_deep_nesting_parses_or_is_refused_never_crashes() -> None:
    deep = partiql.parse("SELECT * FROM t WHERE " + "(" * 3000 + "a = 1" + ")" * 3000)
    assert isinstance(deep, Select) and deep.where == Comparison("=", p("a"), n("1"))
    nots = partiql.parse("SELECT * FROM t WHERE " + "NOT " * 1500 + "a = 1")
    assert isinstance(nots, Select) and isinstance(nots.where, Not)


FRAGMENTS = [
    "SELECT", "INSERT", "INTO", "UPDATE", "DELETE", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "IS",
    "MISSING", "NULL", "BETWEEN", "SET", "REMOVE", "VALUE", "RETURNING", "ALL", "MODIFIED", "OLD", "NEW",
    "ORDER", "BY", "DESC", "EXISTS", "size", "begins_with", "set_add", "list_append", "t", '"t"', '"i"',
    "pk", "sk", "a", "'x'", "''", "1", "-2.5", "1e3", "?", "*", ",", ".", "(", ")", "[", "]", "{", "}",
    "<<", ">>", ":", "=", "<>", "<", ">=", "+", "-", ";", "--", "/*", "*/", "'", '"', "#", "TRUE",
]


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25))
@settings(max_examples=400, deadline=None)
def test_any_token_soup_parses_or_is_a_validation_error(fragments: list[str]) -> None:
    try:
        partiql.parse(" ".join(fragments))
    except ValidationException:
        pass


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_text_parses_or_is_a_validation_error(statement: str) -> None:
    try:
        partiql.parse("SELECT * FROM t WHERE " + statement)
    except ValidationException:
        pass
