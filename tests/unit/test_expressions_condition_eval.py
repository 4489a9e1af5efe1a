"""Condition evaluation: truth tables over wire-format items."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.expressions import ExpressionContext, compile_condition

ITEM = {
    "s": {"S": "hello"},
    "blank": {"S": ""},
    "n": {"N": "10"},
    "neg": {"N": "-2.5"},
    "b": {"B": "AQID"},  # 01 02 03
    "t": {"BOOL": True},
    "nul": {"NULL": True},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "bs": {"BS": ["AQ==", "Ag=="]},
    "l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"k": {"S": "v"}}}]},
    "m": {"M": {"k": {"S": "v"}, "nest": {"M": {"deep": {"N": "3"}}}, "lst": {"L": [{"N": "7"}]}}},
    "odd name": {"S": "spaced"},
    "uni": {"S": "\u00e9t\u00e9"},  # 2 characters of 2 UTF-8 bytes + 1
}

VALUES = {
    ":hello": {"S": "hello"},
    ":he": {"S": "he"},
    ":ll": {"S": "ll"},
    ":z": {"S": "z"},
    ":a": {"S": "a"},
    ":x": {"S": "x"},
    ":v": {"S": "v"},
    ":empty": {"S": ""},
    ":10": {"N": "10"},
    ":tenpoint0": {"N": "10.0"},
    ":9": {"N": "9"},
    ":11": {"N": "11"},
    ":1": {"N": "1"},
    ":2": {"N": "2"},
    ":3": {"N": "3"},
    ":5": {"N": "5"},
    ":7": {"N": "7"},
    ":two_5": {"N": "2.5"},
    ":minus3": {"N": "-3"},
    ":b123": {"B": "AQID"},
    ":b12": {"B": "AQI="},
    ":b2": {"B": "Ag=="},
    ":b1": {"B": "AQ=="},
    ":true": {"BOOL": True},
    ":false": {"BOOL": False},
    ":null": {"NULL": True},
    ":0": {"N": "0"},
    ":ss": {"SS": ["b", "a"]},
    ":ns": {"NS": ["2.50", "1"]},
    ":list": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"k": {"S": "v"}}}]},
    ":map": {"M": {"k": {"S": "v"}}},
    ":S": {"S": "S"},
    ":N": {"N": "1"},
    ":typeS": {"S": "S"},
    ":typeN": {"S": "N"},
    ":typeM": {"S": "M"},
    ":typeL": {"S": "L"},
    ":typeSS": {"S": "SS"},
    ":typeNULL": {"S": "NULL"},
    ":typeBOOL": {"S": "BOOL"},
    ":typeB": {"S": "B"},
}
NAMES = {"#odd": "odd name", "#k": "k", "#m": "m"}

TABLE = [
    # equality across types and values
    ("s = :hello", True),
    ("s = :he", False),
    ("s <> :he", True),
    ("s = :10", False),
    ("s <> :10", True),
    ("n = :tenpoint0", True),
    ("n = :10", True),
    ("n <> :10", False),
    ("b = :b123", True),
    ("b = :b12", False),
    ("t = :true", True),
    ("t = :false", False),
    ("nul = :null", True),
    ("ss = :ss", True),  # sets ignore order
    ("ns = :ns", True),  # numbers compare numerically
    ("l = :list", True),
    ("m.k = :v", True),
    ("#m.#k = :v", True),
    ("#odd = :hello", False),
    ("blank = :empty", True),
    # absent attributes
    ("absent = :10", False),
    ("absent <> :10", True),
    ("absent < :10", False),
    ("absent >= :10", False),
    ("m.nope = :v", False),
    ("m.nope <> :v", True),
    ("l[9] = :x", False),
    ("s[0] = :x", False),  # an index into a string is just absent
    ("m[0] = :v", False),
    ("l.k = :v", False),
    # order
    ("n > :9", True),
    ("n > :10", False),
    ("n >= :10", True),
    ("n < :11", True),
    ("n <= :9", False),
    ("neg < :2", True),
    ("neg > :minus3", True),
    ("s < :z", True),
    ("s > :a", True),
    ("s < :he", False),
    ("uni > :z", True),  # UTF-8 byte order: é (C3 A9) after z
    ("b > :b12", True),
    ("b < :b2", True),
    ("s < :10", False),  # different types never compare
    ("n > :a", False),
    ("n >= :two_5", True),
    # BETWEEN
    ("n BETWEEN :9 AND :11", True),
    ("n BETWEEN :10 AND :10", True),
    ("n BETWEEN :11 AND :11", False),
    ("s BETWEEN :a AND :z", True),
    ("s BETWEEN :he AND :hello", True),
    ("s BETWEEN :1 AND :2", False),
    ("absent BETWEEN :1 AND :2", False),
    ("b BETWEEN :b1 AND :b2", True),
    # IN
    ("n IN (:1, :10)", True),
    ("n IN (:1, :2)", False),
    ("s IN (:hello)", True),
    ("s IN (:10, :hello)", True),
    ("absent IN (:1)", False),
    ("l[0] IN (:x, :z)", True),
    ("m IN (:map, :1)", False),
    # logic and precedence: NOT > AND > OR
    ("n = :10 AND s = :hello", True),
    ("n = :10 AND s = :he", False),
    ("n = :1 OR s = :hello", True),
    ("NOT n = :1", True),
    ("NOT NOT n = :1", False),
    ("n = :1 AND s = :he OR n = :10", True),  # (F and F) or T
    ("n = :1 AND (s = :he OR n = :10)", False),
    ("n = :10 OR n = :1 AND s = :he", True),  # T or (F and F)
    ("(n = :10 OR n = :1) AND s = :he", False),
    ("NOT n = :1 AND s = :he", False),  # (not F) and F
    ("NOT (n = :1 AND s = :he)", True),
    ("n = :1 or n = :2 or n = :10", True),
    ("not (n = :10) and s = :hello", False),
    ("(s = :hello)", True),
    ("(n) = :10", True),
    ("(size(s)) = :5", True),
    # attribute_exists / attribute_not_exists
    ("attribute_exists(s)", True),
    ("attribute_exists(absent)", False),
    ("attribute_not_exists(absent)", True),
    ("attribute_not_exists(s)", False),
    ("attribute_exists(m.nest.deep)", True),
    ("attribute_exists(m.nest.nope)", False),
    ("attribute_exists(l[2].k)", True),
    ("attribute_exists(l[3])", False),
    ("attribute_exists(nul)", True),
    ("attribute_exists(#odd)", True),
    # attribute_type
    ("attribute_type(s, :typeS)", True),
    ("attribute_type(s, :typeN)", False),
    ("attribute_type(n, :typeN)", True),
    ("attribute_type(m, :typeM)", True),
    ("attribute_type(l, :typeL)", True),
    ("attribute_type(ss, :typeSS)", True),
    ("attribute_type(nul, :typeNULL)", True),
    ("attribute_type(t, :typeBOOL)", True),
    ("attribute_type(b, :typeB)", True),
    ("attribute_type(absent, :typeS)", False),
    # begins_with
    ("begins_with(s, :he)", True),
    ("begins_with(s, :hello)", True),
    ("begins_with(s, :ll)", False),
    ("begins_with(s, :empty)", True),
    ("begins_with(b, :b12)", True),
    ("begins_with(b, :b2)", False),
    ("begins_with(absent, :he)", False),
    ("begins_with(n, :he)", False),
    ("begins_with(s, :b12)", False),
    # contains
    ("contains(s, :ll)", True),
    ("contains(s, :z)", False),
    ("contains(ss, :a)", True),
    ("contains(ss, :z)", False),
    ("contains(ns, :two_5)", True),
    ("contains(ns, :3)", False),
    ("contains(bs, :b1)", True),
    ("contains(bs, :b12)", False),
    ("contains(l, :x)", True),
    ("contains(l, :1)", True),
    ("contains(l, :map)", True),
    ("contains(l, :z)", False),
    ("contains(b, :b2)", True),
    ("contains(n, :1)", False),
    ("contains(absent, :a)", False),
    ("contains(m, :v)", False),
    ("contains(ss, :1)", False),
    # size
    ("size(s) = :5", True),
    ("size(blank) = :0", True),
    ("size(uni) = :5", True),  # UTF-8 bytes
    ("size(b) = :3", True),
    ("size(ss) = :2", True),
    ("size(ns) = :2", True),
    ("size(l) = :3", True),
    ("size(m) = :3", True),
    ("size(m.lst) = :1", True),
    ("size(n) = :2", False),  # a number has no size: the comparison is false
    ("size(absent) = :1", False),
    ("size(absent) <> :1", True),
    ("size(s) > :2", True),
    ("size(s) BETWEEN :1 AND :5", True),
    ("size(l) IN (:1, :3)", True),
    ("m.lst[0] = :7", True),
    ("m.nest.deep BETWEEN :2 AND :3", True),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_truth_table(text: str, expected: bool) -> None:
    context = ExpressionContext(NAMES if "#" in text else None, VALUES)
    assert compile_condition(text, context).evaluate(ITEM) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("attribute_not_exists(pk)", True),
        ("attribute_exists(pk)", False),
        ("a = :1", False),
        ("a <> :1", True),
        ("NOT a = :1", True),
        ("size(a) <> :1", True),
    ],
)
def test_no_item_at_all(text: str, expected: bool) -> None:
    context = ExpressionContext(None, {":1": {"N": "1"}} if ":1" in text else None)
    assert compile_condition(text, context).evaluate(None) is expected


def test_names_with_special_characters_via_placeholders() -> None:
    item = {"a.b": {"S": "dotted"}, "a": {"M": {"b": {"S": "nested"}}}}
    context = ExpressionContext({"#ab": "a.b", "#a": "a", "#b": "b"}, {":d": {"S": "dotted"}, ":n": {"S": "nested"}})
    assert compile_condition("#ab = :d AND #a.#b = :n", context).evaluate(item)
    context.check_all_used()


def test_condition_keeps_no_state_between_items() -> None:
    context = ExpressionContext(None, {":v": {"N": "1"}})
    condition = compile_condition("a = :v", context)
    results = [condition.evaluate({"a": {"N": str(i % 2)}}) for i in range(6)]
    assert results == [False, True] * 3


def test_condition_paths_for_key_checks() -> None:
    context = ExpressionContext({"#m": "m"}, {":v": {"N": "1"}})
    condition = compile_condition("#m.k = :v AND (size(l[1]) > :v OR attribute_exists(z))", context)
    assert condition.paths == (("m", "k"), ("l", 1), ("z",))
    assert condition.top_level_names == frozenset({"m", "l", "z"})


@pytest.mark.parametrize(
    ("text", "item", "expected"),
    [
        ("a = :v AND b = :v AND c = :v", {"a": {"N": "1"}, "b": {"N": "1"}, "c": {"N": "1"}}, True),
        ("a = :v AND b = :v AND c = :v", {"a": {"N": "1"}, "b": {"N": "1"}}, False),
        ("a = :v OR b = :v OR c = :v", {"c": {"N": "1"}}, True),
        ("a = :v OR b = :v OR c = :v", {}, False),
        ("(a = :v AND (b = :v AND (c = :v)))", {"a": {"N": "1"}, "b": {"N": "1"}, "c": {"N": "1"}}, True),
        ("a = :v AND (b = :v OR c = :v) AND d = :v", {"a": {"N": "1"}, "c": {"N": "1"}, "d": {"N": "1"}}, True),
    ],
)
def test_long_chains(text: str, item: dict[str, Any], expected: bool) -> None:
    condition = compile_condition(text, ExpressionContext(None, {":v": {"N": "1"}}))
    assert condition.evaluate(item) is expected
