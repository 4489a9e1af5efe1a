"""ProjectionExpression: nested paths, lists, errors."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, compile_projection

ITEM: dict[str, Any] = {
    "a": {"S": "a"},
    "b": {"N": "1"},
    "m": {"M": {"x": {"S": "x"}, "y": {"M": {"z": {"N": "3"}, "w": {"N": "4"}}}, "l": {"L": [{"N": "0"}, {"N": "1"}]}}},
    "l": {"L": [{"S": "zero"}, {"M": {"k": {"S": "v"}, "j": {"S": "u"}}}, {"L": [{"N": "5"}, {"N": "6"}]}, {"S": "three"}]},
    "dotted.name": {"S": "dn"},
}
NAMES = {"#d": "dotted.name", "#m": "m", "#x": "x"}

TABLE = [
    ("a", {"a": {"S": "a"}}),
    ("a, b", {"a": {"S": "a"}, "b": {"N": "1"}}),
    ("b, a", {"a": {"S": "a"}, "b": {"N": "1"}}),
    ("absent", {}),
    ("a, absent", {"a": {"S": "a"}}),
    ("#d", {"dotted.name": {"S": "dn"}}),
    ("m.x", {"m": {"M": {"x": {"S": "x"}}}}),
    ("#m.#x", {"m": {"M": {"x": {"S": "x"}}}}),
    ("m.y.z", {"m": {"M": {"y": {"M": {"z": {"N": "3"}}}}}}),
    ("m.y.z, m.x", {"m": {"M": {"x": {"S": "x"}, "y": {"M": {"z": {"N": "3"}}}}}}),
    ("m.absent", {}),
    ("m.x.deeper", {}),
    ("m[0]", {}),
    ("l[0]", {"l": {"L": [{"S": "zero"}]}}),
    ("l[3], l[0]", {"l": {"L": [{"S": "zero"}, {"S": "three"}]}}),
    ("l[9]", {}),
    ("l[1].k", {"l": {"L": [{"M": {"k": {"S": "v"}}}]}}),
    ("l[2][1]", {"l": {"L": [{"L": [{"N": "6"}]}]}}),
    ("l[0], l[1].j, l[9]", {"l": {"L": [{"S": "zero"}, {"M": {"j": {"S": "u"}}}]}}),
    ("l.k", {}),
    ("m.l[1], a", {"a": {"S": "a"}, "m": {"M": {"l": {"L": [{"N": "1"}]}}}}),
    ("a.b", {}),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_projection(text: str, expected: dict[str, Any]) -> None:
    context = ExpressionContext(NAMES if "#" in text else None, None)
    projection = compile_projection(text, context)
    assert projection.apply(ITEM) == expected


def test_top_level_names_and_paths() -> None:
    projection = compile_projection("a, m.y.z, l[1], #d", ExpressionContext({"#d": "dotted.name"}, None))
    assert projection.top_level_names == frozenset({"a", "m", "l", "dotted.name"})
    assert projection.paths == (("a",), ("m", "y", "z"), ("l", 1), ("dotted.name",))


def test_projection_does_not_change_the_item() -> None:
    before = repr(ITEM)
    compile_projection("m.y.z, l[1].k", ExpressionContext(None, None)).apply(ITEM)
    assert repr(ITEM) == before


P = "Invalid ProjectionExpression: "
ERRORS = [
    ("", "The expression can not be empty;"),
    ("a,", 'Syntax error; token: "<EOF>", near: ","'),
    ("a b", 'Syntax error; token: "b", near: "a b"'),
    (":a", 'Syntax error; token: ":a", near: ":a"'),
    ("a = b", 'Syntax error; token: "=", near: "a = b"'),
    ("size(a)", 'Syntax error; token: "(", near: "size(a"'),
    ("a, name", "Attribute name is a reserved keyword; reserved keyword: name"),
    ("#n", "An expression attribute name used in the document path is not defined; attribute name: #n"),
    ("a, a", "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"),
    ("m.x, m", "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [m, x], path two: [m]"),
    ("m, m.x", "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [m], path two: [m, x]"),
    ("l[1], l.k", "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [l, [1]], path two: [l, k]"),
    ("a[2147483648]", "List index is not within the allowable range; index: [2147483648]"),
]


@pytest.mark.parametrize(("text", "expected"), ERRORS)
def test_projection_errors(text: str, expected: str) -> None:
    with pytest.raises(ValidationException) as raised:
        compile_projection(text, ExpressionContext(None, None))
    assert raised.value.message == P + expected


def test_projection_marks_names_used() -> None:
    context = ExpressionContext({"#a": "a", "#b": "b"}, None)
    compile_projection("#a", context)
    with pytest.raises(ValidationException) as raised:
        context.check_all_used()
    assert raised.value.message == (
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}"
    )


def test_long_and_many_names_still_work() -> None:
    long_name = "n" * 1000
    names = {f"#n{i}": f"a{i}" for i in range(40)} | {"#long": long_name}
    text = ", ".join(names)
    item = {long_name: {"S": "x"}, "a3": {"N": "3"}}
    for _ in range(2):
        context = ExpressionContext(names, None)
        assert compile_projection(text, context).apply(item) == item
        context.check_all_used()
