"""Condition/Filter expression errors: DynamoDB's exact messages, table-driven."""

from __future__ import annotations

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext, compile_condition

NAMES = {"#a": "a", "#b": "b", "#l": "[1]"}
VALUES = {
    ":s": {"S": "x"},
    ":t": {"S": "y"},
    ":n": {"N": "1"},
    ":m": {"N": "5"},
    ":b": {"B": "YQ=="},
    ":bool": {"BOOL": True},
    ":null": {"NULL": True},
    ":ss": {"SS": ["a"]},
    ":l": {"L": []},
    ":map": {"M": {}},
    ":type": {"S": "N"},
    ":badtype": {"S": "X"},
}
P = "Invalid ConditionExpression: "


def message_of(text: str, parameter: str = "ConditionExpression") -> str:
    context = ExpressionContext(NAMES, VALUES)
    with pytest.raises(ValidationException) as raised:
        compile_condition(text, context, parameter)
    return str(raised.value.message)


SYNTAX = [
    ("foo", '<EOF>', "foo"),
    ("a = ", "<EOF>", "= "),
    ("a = :s AND", "<EOF>", "AND"),
    ("a = :s and", "<EOF>", "and"),
    ("a == :s", "=", "== :s"),
    ("a = :s b = :t", "b", ":s b ="),
    ("SET a = :s", "SET", "SET a"),
    ("a IN ()", ")", "()"),
    ("a BETWEEN :s", "<EOF>", ":s"),
    ("a BETWEEN :s OR :t", "OR", ":s OR :t"),
    ("_a = :s", "_", "_a"),
    ("a = :s !", "!", ":s !"),
    ("#", "#", "#"),
    ("a[x] = :s", "x", "[x]"),
    ("a[-1] = :s", "-", "[-1"),
    ("a. = :s", "=", ". = :s"),
    ("(a = :s", "<EOF>", ":s"),
    ("a = :s)", ")", ":s)"),
    ("NOT", "<EOF>", "NOT"),
    ("a = :s OR OR b = :t", "OR", "OR OR b"),
    ("1 = :s", "1", "1 ="),
    ("a < = :s", "=", "< = :s"),
    ("a = 'x'", "'", "= 'x"),
    ('a = "x"', '"', '= "x'),
    ("a > 4", "4", "> 4"),
    ("things are not gonna be ok", "are", "things are not"),
]


@pytest.mark.parametrize(("text", "token", "near"), SYNTAX)
def test_syntax_errors_name_the_token_and_its_neighbours(text: str, token: str, near: str) -> None:
    assert message_of(text) == f'{P}Syntax error; token: "{token}", near: "{near}"'


CHECKS = [
    # empty / parentheses
    ("", "The expression can not be empty;"),
    ("((a = :s))", "The expression has redundant parentheses;"),
    ("((a)) = :s", "The expression has redundant parentheses;"),
    ("a = ((:s))", "The expression has redundant parentheses;"),
    ("((attribute_exists(a)))", "The expression has redundant parentheses;"),
    # reserved words and functions
    ("name = :s", "Attribute name is a reserved keyword; reserved keyword: name"),
    ("a.Status = :s", "Attribute name is a reserved keyword; reserved keyword: Status"),
    ("foo(a)", "Invalid function name; function: foo"),
    ("ATTRIBUTE_EXISTS(a)", "Invalid function name; function: ATTRIBUTE_EXISTS"),
    ("a = foo(b)", "Invalid function name; function: foo"),
    ("if_not_exists(a, :s) = :s", "The function is not allowed in a condition expression; function: if_not_exists"),
    ("a = list_append(a, :l)", "The function is not allowed in a condition expression; function: list_append"),
    ("size(a)", "The function is not allowed to be used this way in an expression; function: size"),
    ("attribute_exists(a) = :s", "The function is not allowed to be used this way in an expression; function: attribute_exists"),
    ("a = begins_with(a, :s)", "The function is not allowed to be used this way in an expression; function: begins_with"),
    ("attribute_exists(size(a))", "Operator or function requires a document path; operator or function: attribute_exists"),
    ("attribute_exists(a, b)", "Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2"),
    ("begins_with(a)", "Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 1"),
    ("size(a, b) = :n", "Incorrect number of operands for operator or function; operator or function: size, number of operands: 2"),
    ("attribute_type(a)", "Incorrect number of operands for operator or function; operator or function: attribute_type, number of operands: 1"),
    ("a[2147483648] = :s", "List index is not within the allowable range; index: [2147483648]"),
    # placeholders
    ("#x = :s", "An expression attribute name used in the document path is not defined; attribute name: #x"),
    ("a.#x = :s", "An expression attribute name used in the document path is not defined; attribute name: #x"),
    ("a = :x", "An expression attribute value used in expression is not defined; attribute value: :x"),
    ("a IN (:s, :x)", "An expression attribute value used in expression is not defined; attribute value: :x"),
    # operand types
    ("a < :bool", "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL"),
    (":null >= a", "Incorrect operand type for operator or function; operator or function: >=, operand type: NULL"),
    ("a > :ss", "Incorrect operand type for operator or function; operator or function: >, operand type: SS"),
    ("a <= :map", "Incorrect operand type for operator or function; operator or function: <=, operand type: M"),
    ("a BETWEEN :l AND :l", "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: L"),
    ("size(a) = :s", None),
    ("size(:n) = :n", "Incorrect operand type for operator or function; operator or function: size, operand type: N"),
    ("size(:bool) > :n", "Incorrect operand type for operator or function; operator or function: size, operand type: BOOL"),
    ("begins_with(a, :n)", "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
    ("begins_with(:ss, a)", "Incorrect operand type for operator or function; operator or function: begins_with, operand type: SS"),
    ("attribute_type(a, :n)", "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"),
    ("attribute_type(a, b)", "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: {SS,M,DECIMAL,DOUBLESET,HDS,N,B,DICT,INTSET,BOOL,HD,BS,INT,DECIMALSET,NULL,FLOAT,FS,S,L,NS,DOUBLE}"),
    ("attribute_type(a, :badtype)", "Invalid attribute type name found; type: X, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}"),
    ("attribute_exists(:s)", "Operator or function requires a document path; operator or function: attribute_exists"),
    ("attribute_not_exists(:s)", "Operator or function requires a document path; operator or function: attribute_not_exists"),
    ("attribute_type(:s, :type)", "Operator or function requires a document path; operator or function: attribute_type"),
    # BETWEEN bounds
    ("a BETWEEN :n AND :s", "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:x}"),
    ("a BETWEEN :t AND :s", "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {S:y}, upper bound operand: AttributeValue: {S:x}"),
    ("a BETWEEN :m AND :n", "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound operand: AttributeValue: {N:1}"),
    ("a BETWEEN :s AND :s", None),
    # distinct operands
    ("a = a", "The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]"),
    ("#a.b <> a.b", "The first operand must be distinct from the remaining operands for this operator or function; operator: <>, first operand: [a, b]"),
    ("a[1] BETWEEN :n AND a[1]", "The first operand must be distinct from the remaining operands for this operator or function; operator: BETWEEN, first operand: [a, [1]]"),
    ("a IN (:s, a)", "The first operand must be distinct from the remaining operands for this operator or function; operator: IN, first operand: [a]"),
    ("contains(a, #a)", "The first operand must be distinct from the remaining operands for this operator or function; operator: contains, first operand: [a]"),
    ("begins_with(a, a)", "The first operand must be distinct from the remaining operands for this operator or function; operator: begins_with, first operand: [a]"),
    ("a.#l = a[1]", None),  # a name "[1]" is not the index [1]
    # order of checks: text checks come before placeholder checks
    ("#x = :s AND name = :s", "Attribute name is a reserved keyword; reserved keyword: name"),
    ("a = :x AND foo(b)", "Invalid function name; function: foo"),
    ("a = :x AND a < :bool", "An expression attribute value used in expression is not defined; attribute value: :x"),
]


@pytest.mark.parametrize(("text", "expected"), CHECKS)
def test_condition_checks(text: str, expected: str | None) -> None:
    if expected is None:
        compile_condition(text, ExpressionContext(NAMES, VALUES))
    else:
        assert message_of(text) == P + expected


def test_in_takes_at_most_100_operands() -> None:
    values = {f":v{i}": {"N": str(i)} for i in range(101)}
    context = ExpressionContext(None, values)
    compile_condition("a IN (" + ", ".join(list(values)[:100]) + ")", context)
    with pytest.raises(ValidationException) as raised:
        compile_condition("a IN (" + ", ".join(values) + ")", context)
    assert raised.value.message == (
        P + "The IN operator is provided with too many operands; number of operands: 101"
    )


def test_filter_expression_names_itself() -> None:
    assert message_of("", "FilterExpression") == (
        "Invalid FilterExpression: The expression can not be empty;"
    )
    assert message_of("foo", "FilterExpression").startswith("Invalid FilterExpression: Syntax error")


def test_expression_size_limit() -> None:
    text = "a = :s OR " * 409 + "ab = :s"
    assert len(text) > 4096
    assert message_of(text) == (
        P + f"Expression size has exceeded the maximum allowed size; expression size: {len(text)}"
    )


def test_document_path_nesting_limit() -> None:
    deep = "a" + ".b" * 32
    assert message_of(f"{deep} = :s") == (
        P + "The document path has too many nesting levels; nesting levels: 33"
    )
    compile_condition("a" + ".b" * 31 + " = :s", ExpressionContext(NAMES, VALUES))


@pytest.mark.parametrize("word", ["ABORT", "abort", "Absolute", "zone", "TTL", "data", "Count"])
def test_reserved_words_in_any_case(word: str) -> None:
    assert message_of(f"{word} = :s") == (
        P + f"Attribute name is a reserved keyword; reserved keyword: {word}"
    )


@pytest.mark.parametrize("word", ["size", "convert", "pk", "sk", "attribute_exists", "a_b1"])
def test_names_that_are_not_refused(word: str) -> None:
    compile_condition(f"{word} = :s", ExpressionContext(None, {":s": {"S": "x"}}))


def test_at_most_300_operators() -> None:
    context = ExpressionContext(None, {":s": {"S": "x"}})
    compile_condition(" AND ".join(["a < :s"] * 300), context)
    with pytest.raises(ValidationException) as raised:
        compile_condition(" AND ".join(["a < :s"] * 301), context)
    assert raised.value.message == (
        P + "The expression contains too many operators; operator count: 301"
    )


@pytest.mark.parametrize("depth", [50, 200, 299])
def test_deeply_nested_conditions(depth: int) -> None:
    context = ExpressionContext(None, {":v": {"N": "1"}})
    text = "a = :v AND (" * depth + "a = :v" + ")" * depth
    condition = compile_condition(text, context)
    assert condition.evaluate({"a": {"N": "1"}})
    assert not condition.evaluate({"a": {"N": "2"}})
    assert len(condition.paths) == depth + 1


def test_deep_nesting_with_too_many_operators() -> None:
    context = ExpressionContext(None, {":v": {"N": "1"}})
    text = "a = :v AND (" * 300 + "a = :v" + ")" * 300
    with pytest.raises(ValidationException) as raised:
        compile_condition(text, context)
    assert raised.value.message == (
        P + "The expression contains too many operators; operator count: 301"
    )


@pytest.mark.parametrize(("negations", "expected"), [(1, False), (2, True), (999, False), (1000, True)])
def test_long_not_chains(negations: int, expected: bool) -> None:
    context = ExpressionContext(None, {":v": {"N": "1"}})
    condition = compile_condition("NOT " * negations + "a = :v", context)
    assert condition.evaluate({"a": {"N": "1"}}) is expected


def test_deep_redundant_parentheses_fail_fast() -> None:
    assert message_of("(" * 2000 + "a" + ")" * 2000 + " = :s") == (
        P + "The expression has redundant parentheses;"
    )
