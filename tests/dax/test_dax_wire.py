"""DAX's wire pieces, table-driven and randomized: the order-preserving
decimal of sort keys (against the published Python client's own codec, and
its order), keys, attribute values, and expressions compiled by the client
and rendered back into DynamoDB's language."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import pytest

from dynastore.dax.expressions import Renderer
from dynastore.dax.wire import (
    MalformedFrame,
    attribute_value,
    decode_key,
    decode_one,
    encode_key,
    encoded_attribute_value,
    lex_decode,
    lex_encode,
)

LexDecimal = pytest.importorskip("amazondax.LexDecimal")
CborSExprGenerator = pytest.importorskip("amazondax.CborSExprGenerator")
AttributeValueEncoder = pytest.importorskip("amazondax.AttributeValueEncoder")

def random_numbers(count: int) -> list[str]:
    """DynamoDB numbers of every size and exponent, from a seeded generator of
    the test's own (not Hypothesis: the DAX clients' background threads of
    other tests in this process draw from the global ``random`` meanwhile,
    which Hypothesis refuses). DYNASTORE_TEST_SEED replays a run."""
    import os
    import random

    seed = int(os.environ.get("DYNASTORE_TEST_SEED", random.Random().randrange(1 << 30)))
    print(f"seed {seed} (DYNASTORE_TEST_SEED replays it)")
    rng = random.Random(seed)
    numbers = ["0", "-0", "1", "-1", "0.5", "100", "1E+125", "-1E+125", "1E-130", "-1E-130",
               "99999999999999999999999999999999999999", "0.001", "1000", "12", "-12"]
    while len(numbers) < count:
        digits = rng.randint(1, 38)
        mantissa = rng.randint(-(10**digits) + 1, 10**digits - 1)
        numbers.append(str(Decimal(mantissa).scaleb(rng.randint(-120, 80), EXACT)))
    return numbers


EXACT = Context(prec=38, Emax=999, Emin=-999)


def test_sort_key_numbers_round_trip_with_the_clients_codec() -> None:
    for text in random_numbers(3000):
        assert Decimal(lex_decode(bytes(LexDecimal.encode(text)))) == Decimal(text), text
        assert LexDecimal.decode_all(lex_encode(text)) == Decimal(text), text


def test_sort_key_numbers_keep_their_order() -> None:
    numbers = sorted(random_numbers(3000), key=Decimal)
    encoded = [lex_encode(text) for text in numbers]
    for index in range(len(numbers) - 1):
        left, right = numbers[index], numbers[index + 1]
        left_bytes, right_bytes = encoded[index], encoded[index + 1]
        assert (left_bytes < right_bytes) == (Decimal(left) < Decimal(right)), (left, right)
        assert (left_bytes == right_bytes) == (Decimal(left) == Decimal(right)), (left, right)


@pytest.mark.parametrize("schema,key", [
    ([("pk", "S")], {"pk": {"S": "ümlaut"}}),
    ([("pk", "N")], {"pk": {"N": "-12.5"}}),
    ([("pk", "B")], {"pk": {"B": "AAEC"}}),
    ([("pk", "S"), ("sk", "N")], {"pk": {"S": "a"}, "sk": {"N": "1E+20"}}),
    ([("pk", "N"), ("sk", "S")], {"pk": {"N": "7"}, "sk": {"S": "x/y"}}),
    ([("pk", "B"), ("sk", "B")], {"pk": {"B": "AA=="}, "sk": {"B": "/w=="}}),
])
def test_keys_match_the_clients_encoding(schema: list[tuple[str, str]], key: dict[str, Any]) -> None:
    import base64

    client_key = {name: ({"B": base64.b64decode(value["B"])} if "B" in value else value) for name, value in key.items()}
    client_schema = [{"AttributeName": name, "AttributeType": kind} for name, kind in schema]
    sent = AttributeValueEncoder.encode_key(client_key, client_schema)
    decoded = decode_key(sent, schema)

    def comparable(value: dict[str, Any]) -> dict[str, Any]:
        return {name: {k: (Decimal(v) if k == "N" else v) for k, v in av.items()} for name, av in value.items()}

    assert comparable(decoded) == comparable(key)
    assert decode_key(encode_key(decoded, schema), schema) == decoded


@pytest.mark.parametrize("value", [
    {"S": ""}, {"N": "0.001"}, {"N": "-99999999999999999999999999999999999999"}, {"B": "AAEC"},
    {"BOOL": False}, {"NULL": True}, {"SS": ["a", "b"]}, {"NS": ["1", "-2.5"]}, {"BS": ["AA==", "AQ=="]},
    {"L": [{"M": {"k": {"L": []}}}]}, {"M": {"z": {"N": "1"}, "a": {"S": "x"}}},
])
def test_attribute_values_round_trip(value: dict[str, Any]) -> None:
    assert attribute_value(decode_one(encoded_attribute_value(value))) == value


def test_broken_items_are_malformed() -> None:
    for data in (b"\x5a\x00\x00\x00\x05ab", b"\x1c", b""):
        with pytest.raises(MalformedFrame):
            decode_one(data)


EXPRESSIONS = [
    ("Condition", "attribute_not_exists(pk) OR (#s = :b AND NOT (size(#d.x[2]) > :a))",
     "attribute_not_exists(#n0) OR (#n1 = :c0 AND (NOT (size(#n2.#n3[2]) > :c1)))"),
    ("Condition", "#s IN (:a, :b) AND a.b BETWEEN :a AND :a", "#n1 IN (:c0, :c1) AND #n4.#n5 BETWEEN :c0 AND :c0"),
    ("Update", "SET #d.x[1] = if_not_exists(cnt, :a) + :a, lst = list_append(lst, :l) REMOVE old ADD tags :z",
     "SET #n2.#n3[1] = if_not_exists(#n6, :u0) + :u0, #n7 = list_append(#n7, :u1) REMOVE #n8 ADD #n9 :u2"),
]


@pytest.mark.parametrize("kind,expression,expected", EXPRESSIONS)
def test_expressions_render_back_into_dynamodbs_language(kind: str, expression: str, expected: str) -> None:
    names = {"#s": "status", "#d": "data"}
    values = {":a": {"N": "1"}, ":b": {"S": "x"}, ":l": {"L": [{"N": "2"}]}, ":z": {"SS": ["q"]}}
    used_names = {k: v for k, v in names.items() if k in expression}
    used_values = {k: v for k, v in values.items() if k in expression}
    encoded = CborSExprGenerator.encode_expressions(
        expression if kind == "Condition" else None, None, None, expression if kind == "Update" else None,
        None, used_names, used_values)
    renderer = Renderer()
    for name in ("pk", "status", "data", "x", "a", "b"):  # fix the placeholder numbering
        renderer.name(name)
    text = renderer.condition(encoded.Condition, "c") if kind == "Condition" else renderer.update(encoded.Update)
    assert text == expected
    assert all(placeholder in renderer.names for placeholder in ("#n0", "#n1"))


def test_a_malformed_expression_is_a_validation_error() -> None:
    from dynastore.errors import ValidationException

    with pytest.raises(ValidationException):
        Renderer().condition(b"\x83\x01\x82\x63\x00\x80", "c")  # [1, [99, []], []]
