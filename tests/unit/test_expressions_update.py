"""UpdateExpression: compile-time errors, run-time errors and results."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.engine.item_ops import Mutation, UpdatePlan
from dynastore.engine.item_ops import apply as apply_plan
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, compile_update
from dynastore.types.size import item_size

P = "Invalid UpdateExpression: "
VALUES: dict[str, Any] = {
    ":a": {"S": "a"},
    ":b": {"N": "1"},
    ":c": {"B": "YQ=="},
    ":d": {"BOOL": False},
    ":e": {"NULL": True},
    ":f": {"SS": ["a"]},
    ":g": {"NS": ["1"]},
    ":h": {"BS": ["YQ=="]},
    ":i": {"M": {}},
    ":j": {"L": []},
}


def compile_message(text: str, names: dict[str, str] | None = None, values: Any = VALUES) -> str:
    with pytest.raises(ValidationException) as raised:
        compile_update(text, ExpressionContext(names, values))
    return str(raised.value.message)


SYNTAX = [
    "whatever", "set a", "add a", "delete a", "set a=set", "remove a = b", "add a = b",
    "delete a = b", "delete a b", "delete a if_not_exist(b)", "add abort b",
    "add a if_not_exist(b)", "remove a b", "set a b", "set :a = b", "add :a b", "delete :a b",
    "remove :a", "set a = b / c", "set a = b * c", 'set a[1] = "eight"', "set a[1] = 1",
    "SET a = if_not_exist(a, 100)", "SET if_not_exist(a, b) = a", "set (a = (b + c))",
    "set a = (b.c).d + e", "set a = (b.c)[0] + e", "set a = b + c + d", "SET a = :a,",
    "SET a = :a REMOVE", "SET a = :a ,, b = :a", "REMOVE a[]",
]


@pytest.mark.parametrize("text", SYNTAX)
def test_syntax_errors(text: str) -> None:
    assert compile_message(text).startswith(P + "Syntax error; token: ")


@pytest.mark.parametrize(
    ("text", "token", "near"),
    [
        ("whatever", "whatever", "whatever"),
        ("set a", "<EOF>", "a"),
        ("SET _123 = :a", "_", "SET _123"),
        ("set a = b + c + d", "+", "c + d"),
        ("SET a = :a REMOVE", "<EOF>", "REMOVE"),
    ],
)
def test_syntax_error_positions(text: str, token: str, near: str) -> None:
    assert compile_message(text) == f'{P}Syntax error; token: "{token}", near: "{near}"'


ERRORS = [
    ("", None, "The expression can not be empty;"),
    (" set #c = :a set abOrt = :a ", None, "Attribute name is a reserved keyword; reserved keyword: abOrt"),
    (" remove Absolute ", None, "Attribute name is a reserved keyword; reserved keyword: Absolute"),
    ("set #c = if_not_exist(:c) set c = d", None, "Invalid function name; function: if_not_exist"),
    ("set a = size(b)", None, "The function is not allowed in an update expression; function: size"),
    ("set a = attribute_exists(b)", None, "The function is not allowed in an update expression; function: attribute_exists"),
    ("set a = #c set c = :d", None, 'The "SET" section can only be used once in an update expression;'),
    ("remove #d set a = b remove e", None, 'The "REMOVE" section can only be used once in an update expression;'),
    ("add #d :e set a = b add e :f", None, 'The "ADD" section can only be used once in an update expression;'),
    ("delete #d :e set a = b delete #e :f", None, 'The "DELETE" section can only be used once in an update expression;'),
    ("SET #c = if_not_exists(:c)", {"#a": "a"}, "An expression attribute name used in the document path is not defined; attribute name: #c"),
    ("SET a = if_not_exists(:x)", None, "An expression attribute value used in expression is not defined; attribute value: :x"),
    ("set a = if_not_exists(c)", None, "Incorrect number of operands for operator or function; operator or function: if_not_exists, number of operands: 1"),
    ("set a = list_append(c)", None, "Incorrect number of operands for operator or function; operator or function: list_append, number of operands: 1"),
    ("set a = if_not_exists(:a, c)", None, "Operator or function requires a document path; operator or function: if_not_exists"),
    ("set a = if_not_exists(if_not_exists(a, b), c)", None, "Operator or function requires a document path; operator or function: if_not_exists"),
    ("set a = if_not_exists(b, b)", None, "The first operand must be distinct from the remaining operands for this operator or function; operator: if_not_exists, first operand: [b]"),
    ("set a = list_append(:a, a)", None, "Incorrect operand type for operator or function; operator or function: list_append, operand type: S"),
    ("set a = list_append(a, :b)", None, "Incorrect operand type for operator or function; operator or function: list_append, operand type: N"),
    ("set a = list_append(:i, a)", None, "Incorrect operand type for operator or function; operator or function: list_append, operand type: M"),
    ("set a = a + :a", None, "Incorrect operand type for operator or function; operator or function: +, operand type: S"),
    ("set a = :c + a", None, "Incorrect operand type for operator or function; operator or function: +, operand type: B"),
    ("set a = a + :d", None, "Incorrect operand type for operator or function; operator or function: +, operand type: BOOL"),
    ("set a = a + :g", None, "Incorrect operand type for operator or function; operator or function: +, operand type: NS"),
    ("set a = a - :j", None, "Incorrect operand type for operator or function; operator or function: -, operand type: L"),
    ("set a = a - :e", None, "Incorrect operand type for operator or function; operator or function: -, operand type: NULL"),
    ("add a.b :a", None, "Incorrect operand type for operator or function; operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("add a.b :e", None, "Incorrect operand type for operator or function; operator: ADD, operand type: NULL, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("add a :d", None, "Incorrect operand type for operator or function; operator: ADD, operand type: BOOL, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("add a :c", None, "Incorrect operand type for operator or function; operator: ADD, operand type: BINARY, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("add a :i", None, "Incorrect operand type for operator or function; operator: ADD, operand type: MAP, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("add a :j", None, "Incorrect operand type for operator or function; operator: ADD, operand type: LIST, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("delete a :b", None, "Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("delete a :a", None, "Incorrect operand type for operator or function; operator: DELETE, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND"),
    ("a = :x", None, 'Syntax error; token: "a", near: "a ="'),
    ("SET a = :x", None, "An expression attribute value used in expression is not defined; attribute value: :x"),
    ("SET a[2147483648] = :a", None, "List index is not within the allowable range; index: [2147483648]"),
    # overlapping and conflicting paths
    ("set d[1] = a, d.b = a, c[1].a = a, #c = if_not_exists(a)", {"#c": "c"}, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, [1], a], path two: [c]"),
    ("set c.b.#c = a, c = a", {"#c": "c"}, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, b, c], path two: [c]"),
    ("set a = b remove a", None, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"),
    ("set #c[3].#d = a, #c[3] = a", {"#c": "c", "#d": "[3]"}, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, [3], [3]], path two: [c, [3]]"),
    ("remove c, #c.a", {"#c": "c"}, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c], path two: [c, a]"),
    ("remove a, b, a", None, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"),
    ("set #c[3].#d = a, #c.#d[3] = if_not_exists(a, :a)", {"#c": "c", "#d": "[3]"}, "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [c, [3], [3]], path two: [c, [3], [3]]"),
    ("remove a.#c set a[1] = :a", {"#c": "c"}, "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, c], path two: [a, [1]]"),
    ("add s :f delete s :f", None, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [s], path two: [s]"),
]


@pytest.mark.parametrize(("text", "names", "expected"), ERRORS)
def test_compile_errors(text: str, names: dict[str, str] | None, expected: str) -> None:
    assert compile_message(text, names) == P + expected


def apply(text: str, item: dict[str, Any], values: Any = None, names: Any = None) -> dict[str, Any]:
    plan = compile_update(text, ExpressionContext(names, values))
    return plan.apply(item)


def n(text: str) -> dict[str, str]:
    return {"N": text}


def s(text: str) -> dict[str, str]:
    return {"S": text}


RESULTS = [
    # SET
    ("SET a = :v", {}, {":v": s("x")}, {"a": s("x")}),
    ("SET a = :v", {"a": n("1")}, {":v": s("x")}, {"a": s("x")}),
    ("SET a = b, b = a", {"a": n("1"), "b": n("2")}, None, {"a": n("2"), "b": n("1")}),
    ("SET a = a + :v", {"a": n("1.5")}, {":v": n("2")}, {"a": n("3.5")}),
    ("SET a = a - :v", {"a": n("1")}, {":v": n("1")}, {"a": n("0")}),
    ("SET a = :v - a", {"a": n("1")}, {":v": n("-1")}, {"a": n("-2")}),
    ("SET a = :v + :w", {}, {":v": n("0.1"), ":w": n("0.2")}, {"a": n("0.3")}),
    ("SET a = a + :v", {"a": n("99999999999999999999999999999999999999")}, {":v": n("-1")}, {"a": n("99999999999999999999999999999999999998")}),
    ("SET a = (b + :v)", {"b": n("1")}, {":v": n("1")}, {"b": n("1"), "a": n("2")}),
    ("SET a = if_not_exists(a, :v)", {}, {":v": n("0")}, {"a": n("0")}),
    ("SET a = if_not_exists(a, :v)", {"a": n("5")}, {":v": n("0")}, {"a": n("5")}),
    ("SET a = if_not_exists(a, :v) + :w", {}, {":v": n("0"), ":w": n("1")}, {"a": n("1")}),
    ("SET a = if_not_exists(b, c)", {"c": s("c")}, None, {"c": s("c"), "a": s("c")}),
    ("SET l = list_append(l, :v)", {"l": {"L": [n("1")]}}, {":v": {"L": [n("2")]}}, {"l": {"L": [n("1"), n("2")]}}),
    ("SET l = list_append(:v, l)", {"l": {"L": [n("1")]}}, {":v": {"L": [n("2")]}}, {"l": {"L": [n("2"), n("1")]}}),
    ("SET l = list_append(if_not_exists(l, :e), :v)", {}, {":e": {"L": []}, ":v": {"L": [n("2")]}}, {"l": {"L": [n("2")]}}),
    ("SET m.k = :v", {"m": {"M": {}}}, {":v": s("x")}, {"m": {"M": {"k": s("x")}}}),
    ("SET m.k = :v", {"m": {"M": {"k": s("y"), "o": s("o")}}}, {":v": s("x")}, {"m": {"M": {"k": s("x"), "o": s("o")}}}),
    ("SET m.n.k = :v", {"m": {"M": {"n": {"M": {}}}}}, {":v": s("x")}, {"m": {"M": {"n": {"M": {"k": s("x")}}}}}),
    ("SET l[0] = :v", {"l": {"L": [n("1"), n("2")]}}, {":v": s("x")}, {"l": {"L": [s("x"), n("2")]}}),
    ("SET l[5] = :v", {"l": {"L": [n("1")]}}, {":v": s("x")}, {"l": {"L": [n("1"), s("x")]}}),
    ("SET l[9] = :v, l[7] = :w", {"l": {"L": []}}, {":v": s("9"), ":w": s("7")}, {"l": {"L": [s("7"), s("9")]}}),
    ("SET l[1].k = :v", {"l": {"L": [n("0"), {"M": {}}]}}, {":v": s("x")}, {"l": {"L": [n("0"), {"M": {"k": s("x")}}]}}),
    ("SET #k = :v", {}, {":v": s("x")}, {"a.b": s("x")}),
    # REMOVE
    ("REMOVE a", {"a": n("1"), "b": n("2")}, None, {"b": n("2")}),
    ("REMOVE a", {"b": n("2")}, None, {"b": n("2")}),
    ("REMOVE a, b", {"a": n("1"), "b": n("2")}, None, {}),
    ("REMOVE m.k", {"m": {"M": {"k": n("1"), "j": n("2")}}}, None, {"m": {"M": {"j": n("2")}}}),
    ("REMOVE m.x", {"m": {"M": {"k": n("1")}}}, None, {"m": {"M": {"k": n("1")}}}),
    ("REMOVE l[1]", {"l": {"L": [n("0"), n("1"), n("2")]}}, None, {"l": {"L": [n("0"), n("2")]}}),
    ("REMOVE l[0], l[1]", {"l": {"L": [n("0"), n("1"), n("2")]}}, None, {"l": {"L": [n("2")]}}),
    ("REMOVE l[2], l[0]", {"l": {"L": [n("0"), n("1"), n("2")]}}, None, {"l": {"L": [n("1")]}}),
    ("REMOVE l[7]", {"l": {"L": [n("0")]}}, None, {"l": {"L": [n("0")]}}),
    ("REMOVE l[0]", {"l": {"L": [n("0")]}}, None, {"l": {"L": []}}),
    ("REMOVE l[0] SET l[1] = :v", {"l": {"L": [n("0"), n("1")]}}, {":v": s("x")}, {"l": {"L": [s("x")]}}),
    ("REMOVE l[0] SET l[2] = :v", {"l": {"L": [n("0"), n("1")]}}, {":v": s("x")}, {"l": {"L": [n("1"), s("x")]}}),
    ("REMOVE l[0] SET l[1].k = :v", {"l": {"L": [n("0"), {"M": {}}]}}, {":v": s("x")}, {"l": {"L": [{"M": {"k": s("x")}}]}}),
    # ADD
    ("ADD c :v", {}, {":v": n("5")}, {"c": n("5")}),
    ("ADD c :v", {"c": n("5")}, {":v": n("-7")}, {"c": n("-2")}),
    ("ADD c :v", {"c": n("0.1")}, {":v": n("0.2")}, {"c": n("0.3")}),
    ("ADD s :v", {}, {":v": {"SS": ["a"]}}, {"s": {"SS": ["a"]}}),
    ("ADD s :v", {"s": {"SS": ["a", "b"]}}, {":v": {"SS": ["b", "c", "d"]}}, {"s": {"SS": ["a", "b", "c", "d"]}}),
    ("ADD s :v", {"s": {"NS": ["1", "2"]}}, {":v": {"NS": ["2", "3"]}}, {"s": {"NS": ["1", "2", "3"]}}),
    ("ADD s :v", {"s": {"BS": ["AQI=", "Ag=="]}}, {":v": {"BS": ["Ag==", "AQ=="]}}, {"s": {"BS": ["AQI=", "Ag==", "AQ=="]}}),
    ("ADD m.c :v", {"m": {"M": {}}}, {":v": n("1")}, {"m": {"M": {"c": n("1")}}}),
    ("ADD l[3] :v", {"l": {"L": [n("0")]}}, {":v": n("1")}, {"l": {"L": [n("0"), n("1")]}}),
    ("ADD l[0] :v", {"l": {"L": [n("4")]}}, {":v": n("1")}, {"l": {"L": [n("5")]}}),
    # DELETE
    ("DELETE s :v", {"s": {"SS": ["a", "b", "c"]}}, {":v": {"SS": ["a", "c", "z"]}}, {"s": {"SS": ["b"]}}),
    ("DELETE s :v", {"s": {"SS": ["a"]}}, {":v": {"SS": ["a"]}}, {}),
    ("DELETE s :v", {}, {":v": {"SS": ["a"]}}, {}),
    ("DELETE s :v", {"s": {"NS": ["1", "2", "3"]}}, {":v": {"NS": ["1", "4"]}}, {"s": {"NS": ["2", "3"]}}),
    ("DELETE m.s :v", {"m": {"M": {"s": {"BS": ["AQ=="]}}}}, {":v": {"BS": ["AQ=="]}}, {"m": {"M": {}}}),
    # several sections
    (
        "REMOVE b DELETE c :c ADD d :d, e :e SET f = :f",
        {},
        {":c": {"SS": ["a", "b"]}, ":d": n("5"), ":e": {"SS": ["a", "b"]}, ":f": {"L": [s("a"), n("1")]}},
        {"d": n("5"), "e": {"SS": ["a", "b"]}, "f": {"L": [s("a"), n("1")]}},
    ),
    ("set a = :v", {"k": s("key")}, {":v": n("1e3")}, {"k": s("key"), "a": n("1000")}),
]


@pytest.mark.parametrize(("text", "item", "values", "expected"), RESULTS)
def test_the_size_of_an_updated_item_is_measured_from_the_touched_attributes(
    text: str, item: dict[str, Any], values: Any, expected: dict[str, Any]
) -> None:
    """UpdateItem sizes the new item from the stored size and the top-level
    attributes the update touched; it must equal measuring the whole item."""
    names = {"#k": "a.b"} if "#k" in text else None
    old = {"untouched": {"SS": ["x", "yy"]}, "ünï": s("çödé"), **item}
    plan = UpdatePlan(old, compile_update(text, ExpressionContext(names, values)))
    outcome = apply_plan(plan, old, 0.0, item_size(old))
    assert isinstance(outcome, Mutation) and outcome.new_item is not None
    assert outcome.new_size == item_size(outcome.new_item)
    assert outcome.new_item == {"untouched": {"SS": ["x", "yy"]}, "ünï": s("çödé"), **expected}


@pytest.mark.parametrize(("text", "item", "values", "expected"), RESULTS)
def test_update_results(text: str, item: dict[str, Any], values: Any, expected: dict[str, Any]) -> None:
    names = {"#k": "a.b"} if "#k" in text else None
    before = repr(item)
    assert apply(text, item, values, names) == expected
    assert repr(item) == before  # the input item is never changed


def test_dynalite_nested_update_example() -> None:
    """Indexes past the end append in index order; values come from the old item."""
    key = s("key")
    item = {
        "a": key,
        "b": {"M": {"a": n("1"), "b": n("2"), "c": n("3")}},
        "c": {"L": [n("1"), n("3")]},
    }
    plan = compile_update(
        "set b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a - b.b, c[2] = b.c add c[8] :b, c[6] :a",
        ExpressionContext(None, {":a": n("2"), ":b": {"SS": ["a"]}}),
    )
    new = plan.apply(item)
    assert new == {
        "a": key,
        "b": {"M": {"a": key, "b": n("2"), "c": n("4")}},
        "c": {"L": [n("1"), key, n("3"), n("-1"), n("2"), {"SS": ["a"]}]},
    }
    assert plan.updated_attributes(new) == {
        "b": {"M": {"a": key, "c": n("4")}},
        "c": {"L": [key, n("3"), n("2")]},
    }
    assert plan.top_level_names == {"b", "c"}
    assert plan.paths[0] == ("b", "c")
    assert plan.paths[2] == ("c", 1)


def test_updated_old_of_removed_and_new_attributes() -> None:
    plan = compile_update("SET a = :v REMOVE b", ExpressionContext(None, {":v": n("2")}))
    old = {"a": n("1"), "b": n("9"), "c": n("0")}
    new = plan.apply(old)
    assert plan.updated_attributes(old) == {"a": n("1"), "b": n("9")}
    assert plan.updated_attributes(new) == {"a": n("2")}


RUNTIME_ERRORS = [
    # a path that cannot be written
    ("SET m.a = :s", {}, "The document path provided in the update expression is invalid for update"),
    ("SET m[1] = :s", {}, "The document path provided in the update expression is invalid for update"),
    ("SET s.a = :s", {"s": s("x")}, "The document path provided in the update expression is invalid for update"),
    ("SET l.a = :s", {"l": {"L": []}}, "The document path provided in the update expression is invalid for update"),
    ("SET m[0] = :s", {"m": {"M": {}}}, "The document path provided in the update expression is invalid for update"),
    ("SET m.x.y = :s", {"m": {"M": {}}}, "The document path provided in the update expression is invalid for update"),
    ("REMOVE m.a", {}, "The document path provided in the update expression is invalid for update"),
    ("REMOVE s[1]", {"s": s("x")}, "The document path provided in the update expression is invalid for update"),
    ("ADD m.a :n", {}, "The document path provided in the update expression is invalid for update"),
    ("DELETE m.a :ss", {}, "The document path provided in the update expression is invalid for update"),
    ("DELETE l.a :ss", {"l": {"L": []}}, "The document path provided in the update expression is invalid for update"),
    # a missing attribute read by SET
    ("SET a = b", {}, "The provided expression refers to an attribute that does not exist in the item"),
    ("SET a = b + :n", {}, "The provided expression refers to an attribute that does not exist in the item"),
    ("SET a = list_append(b, :l)", {}, "The provided expression refers to an attribute that does not exist in the item"),
    ("SET a = m.x", {"m": {"M": {}}}, "The provided expression refers to an attribute that does not exist in the item"),
    # wrong types found in the item
    ("SET a = s + :n", {"s": s("x")}, "An operand in the update expression has an incorrect data type"),
    ("SET a = :n - s", {"s": s("x")}, "An operand in the update expression has an incorrect data type"),
    ("SET a = list_append(s, :l)", {"s": s("x")}, "An operand in the update expression has an incorrect data type"),
    ("ADD s :n", {"s": s("x")}, "An operand in the update expression has an incorrect data type"),
    ("ADD s :n", {"s": {"NS": ["1"]}}, "An operand in the update expression has an incorrect data type"),
    ("ADD s :ss", {"s": {"NS": ["1"]}}, "An operand in the update expression has an incorrect data type"),
    ("ADD s :ss", {"s": n("1")}, "An operand in the update expression has an incorrect data type"),
    ("DELETE s :ss", {"s": {"NS": ["1"]}}, "An operand in the update expression has an incorrect data type"),
    ("DELETE s :ss", {"s": s("a")}, "An operand in the update expression has an incorrect data type"),
    # DynamoDB's order: wrong types first, then paths, then missing attributes
    ("SET a = b, m.x = :s", {}, "The document path provided in the update expression is invalid for update"),
    ("SET a = b, c = s + :n", {"s": s("x")}, "An operand in the update expression has an incorrect data type"),
    ("SET a = b REMOVE m.x", {}, "The document path provided in the update expression is invalid for update"),
    # number range
    ("SET a = a + :big", {"a": n("9.9999999999999999999999999999999999999E+125")}, "Number overflow. Attempting to store a number with magnitude larger than supported range"),
    ("ADD a :big", {"a": n("9.9999999999999999999999999999999999999E+125")}, "Number overflow. Attempting to store a number with magnitude larger than supported range"),
]


@pytest.mark.parametrize(("text", "item", "expected"), RUNTIME_ERRORS)
def test_runtime_errors(text: str, item: dict[str, Any], expected: str) -> None:
    values = {
        ":s": s("x"),
        ":n": n("1"),
        ":l": {"L": []},
        ":ss": {"SS": ["a"]},
        ":big": n("9.9999999999999999999999999999999999999E+125"),
    }
    used = {key: value for key, value in values.items() if key in text}
    plan = compile_update(text, ExpressionContext(None, used or None))
    before = repr(item)
    with pytest.raises(ValidationException) as raised:
        plan.apply(item)
    assert raised.value.message == expected
    assert repr(item) == before


def test_plan_metadata() -> None:
    plan = compile_update(
        "SET #a.b[1] = :v REMOVE c ADD d :n DELETE e.f :s",
        ExpressionContext({"#a": "a"}, {":v": s("x"), ":n": n("1"), ":s": {"SS": ["z"]}}),
    )
    assert plan.top_level_names == frozenset({"a", "c", "d", "e"})
    assert plan.paths == (("a", "b", 1), ("c",), ("d",), ("e", "f"))


def test_a_plan_can_be_applied_again_to_its_own_result() -> None:
    plan = compile_update("SET m.k = :v, l[0] = :v ADD n :one", ExpressionContext(None, {":v": s("x"), ":one": n("1")}))
    item = {"m": {"M": {}}, "l": {"L": []}}
    once = plan.apply(item)
    twice = plan.apply(once)
    assert once == {"m": {"M": {"k": s("x")}}, "l": {"L": [s("x")]}, "n": n("1")}
    assert twice == {"m": {"M": {"k": s("x")}}, "l": {"L": [s("x")]}, "n": n("2")}
    assert item == {"m": {"M": {}}, "l": {"L": []}}


def test_read_paths() -> None:
    plan = compile_update(
        "SET a = b.c + :v, d = if_not_exists(e[0], :v), f = list_append(g, :l) REMOVE h",
        ExpressionContext(None, {":v": n("1"), ":l": {"L": []}}),
    )
    assert plan.read_paths == (("b", "c"), ("e", 0), ("g",))


def test_counter_arithmetic_stays_exact() -> None:
    plan = compile_update("ADD c :v", ExpressionContext(None, {":v": n("0.1")}))
    item: dict[str, Any] = {}
    for _ in range(10):
        item = plan.apply(item)
    assert item == {"c": n("1")}
    big = compile_update("SET c = c + :v", ExpressionContext(None, {":v": n("1")}))
    assert big.apply({"c": n("999999999999999999")}) == {"c": n("1000000000000000000")}
    assert big.apply({"c": n("-1")}) == {"c": n("0")}
