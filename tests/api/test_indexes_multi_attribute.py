"""Multi-attribute GSI keys in every shape DynamoDB accepts (issue 17): one
to four HASH attributes and none to four RANGE attributes, the table's own
key attributes among them; DescribeTable returns the key schema exactly as
created; UpdateTable creates (with a backfill) and deletes such indexes.

Query on such an index: every HASH attribute with equality; RANGE
attributes left to right, equality on all but the last, which alone may
take a range condition or begins_with; the clauses in any order. Legacy
KeyConditions are answered as the expression is (DynamoDB accepts them:
ScyllaDB's issue 31393, checked against the service).

The rules come from the developer guide's "Multi-attribute keys pattern"
and ScyllaDB's test_gsi_composite_keys.py (run against DynamoDB). The two
rule texts are ours, worded so that they name HASH or RANGE and equality
as the service's do; docs/compatibility.md records them as unconfirmed.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

HASH_EQUALITY = (
    "Query key condition not supported: All HASH key attributes of the index must be "
    "specified with equality conditions"
)
RANGE_ORDER = (
    "Query key condition not supported: RANGE key attributes of the index must be used "
    "left to right, with equality conditions on all but the last"
)
TYPE_MISMATCH = "One or more parameter values were invalid: Condition parameter type does not match schema type"


def S(text: str) -> dict[str, str]:  # noqa: N802 - DynamoDB's type letter
    return {"S": text}


def N(number: int) -> dict[str, str]:  # noqa: N802
    return {"N": str(number)}


def definitions(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": kind} for name, kind in pairs]


def key(*elements: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": kind} for name, kind in elements]


def gsi(name: str, *elements: tuple[str, str], projection: str = "ALL") -> dict[str, Any]:
    return {"IndexName": name, "KeySchema": key(*elements), "Projection": {"ProjectionType": projection}}


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


# --- every shape --------------------------------------------------------------------------

SHAPES = {
    "h1-r2": (("a", "HASH"), ("b", "RANGE"), ("c", "RANGE")),
    "h1-r4": (("a", "HASH"), ("b", "RANGE"), ("c", "RANGE"), ("d", "RANGE"), ("e", "RANGE")),
    "hh2": (("a", "HASH"), ("b", "HASH")),
    "hh3": (("a", "HASH"), ("b", "HASH"), ("c", "HASH")),
    "hh4": (("a", "HASH"), ("b", "HASH"), ("c", "HASH"), ("d", "HASH")),
    "h2-r1": (("c", "HASH"), ("d", "HASH"), ("e", "RANGE")),
    "h4-r4": (("a", "HASH"), ("b", "HASH"), ("c", "HASH"), ("d", "HASH"),
              ("e", "RANGE"), ("f", "RANGE"), ("g", "RANGE"), ("sk", "RANGE")),
    "table-keys": (("pk", "HASH"), ("a", "HASH"), ("sk", "RANGE"), ("b", "RANGE")),
    "table-keys-swapped": (("sk", "HASH"), ("pk", "RANGE"), ("a", "RANGE")),
}
ITEM = {"pk": S("p1"), "sk": S("s1"), "a": S("A"), "b": N(2), "c": S("C"), "d": S("D"),
        "e": S("E"), "f": N(6), "g": S("G")}
TYPES = {"pk": "S", "sk": "S", "a": "S", "b": "N", "c": "S", "d": "S", "e": "S", "f": "N", "g": "S"}


def all_equal(elements: tuple[tuple[str, str], ...]) -> tuple[str, dict[str, Any]]:
    """A key condition with equality on every key attribute of the index (ITEM's values)."""
    names = [name for name, _ in elements]
    text = " AND ".join(f"#{name} = :{name}" for name in reversed(names))  # clause order is free
    return text, {f":{name}": ITEM[name] for name in names}


def test_every_key_shape_is_accepted_described_as_created_and_queried(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=definitions(*TYPES.items()),
        GlobalSecondaryIndexes=[gsi(name, *elements) for name, elements in SHAPES.items()],
    )
    client.put_item(TableName=table, Item=ITEM)
    # An item that differs in every attribute (but pk) matches none of the conditions below.
    other = {name: ({"S": value["S"] + "2"} if "S" in value else {"N": value["N"] + "0"}) for name, value in ITEM.items()}
    client.put_item(TableName=table, Item={**other, "pk": ITEM["pk"]})
    described = client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    assert {index["IndexName"]: index["KeySchema"] for index in described} == {
        name: key(*elements) for name, elements in SHAPES.items()
    }
    for name, elements in SHAPES.items():
        text, values = all_equal(elements)
        found = client.query(TableName=table, IndexName=name, KeyConditionExpression=text,
                             ExpressionAttributeNames={f"#{attribute}": attribute for attribute, _ in elements},
                             ExpressionAttributeValues=values)
        assert [item["sk"] for item in found["Items"]] == [S("s1")], name


def test_a_key_schema_beyond_the_shapes_is_refused(client: Any, make_table: Any) -> None:
    table = make_table()
    create = client.create_table
    base = {"TableName": table + "-x", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": key(("pk", "HASH"))}
    many = definitions(("pk", "S"), *[(f"k{number}", "S") for number in range(5)])
    cases = [
        (gsi("idx", *[(f"k{number}", "HASH") for number in range(5)]),
         "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of HASH key attributes"),
        (gsi("idx", ("pk", "HASH"), *[(f"k{number}", "RANGE") for number in range(5)]),
         "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of RANGE key attributes"),
        (gsi("idx", ("k0", "HASH"), ("k1", "RANGE"), ("k2", "HASH")),
         "One or more parameter values were invalid: All HASH key attributes must precede RANGE key attributes in the KeySchema"),
        (gsi("idx", ("k0", "RANGE"), ("k1", "RANGE"), ("k2", "RANGE")),
         "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
        (gsi("idx", ("k0", "HASH"), ("k1", "HASH"), ("k0", "RANGE")),
         "The KeySchema contains multiple key attributes with the same name"),
    ]
    for index, message in cases:
        # Exactly the attributes the keys use: an unused definition is refused
        # before the index's own rules (docs/compatibility.md, judgement calls).
        used = {"pk"} | {element["AttributeName"] for element in index["KeySchema"]}
        exact = [definition for definition in many if definition["AttributeName"] in used]
        assert refused(create, **base, AttributeDefinitions=exact, GlobalSecondaryIndexes=[index]) == (
            "ValidationException", message)


# --- UpdateTable --------------------------------------------------------------------------


def wait_active(client: Any, table: str, index: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for entry in client.describe_table(TableName=table)["Table"].get("GlobalSecondaryIndexes", []):
            if entry["IndexName"] == index and entry["IndexStatus"] == "ACTIVE":
                return
        time.sleep(0.02)
    raise AssertionError(f"index {index} did not become ACTIVE")


def test_update_table_creates_with_a_backfill_and_deletes_a_multi_attribute_index(
    client: Any, make_table: Any
) -> None:
    table = make_table()
    for number in range(6):
        client.put_item(TableName=table, Item={"pk": S(f"p{number}"), "sk": S("x"), "t": S("T"),
                                               "u": N(number % 2), "v": N(number)})
    client.put_item(TableName=table, Item={"pk": S("sparse"), "sk": S("x"), "t": S("T"), "u": N(0)})
    elements = (("t", "HASH"), ("u", "HASH"), ("v", "RANGE"), ("pk", "RANGE"))
    client.update_table(
        TableName=table,
        AttributeDefinitions=definitions(("pk", "S"), ("sk", "S"), ("t", "S"), ("u", "N"), ("v", "N")),
        GlobalSecondaryIndexUpdates=[{"Create": gsi("later", *elements)}],
    )
    wait_active(client, table, "later")
    (index,) = client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    assert index["KeySchema"] == key(*elements)
    found = client.query(TableName=table, IndexName="later", KeyConditionExpression="t = :t AND u = :u",
                         ExpressionAttributeValues={":t": S("T"), ":u": N(0)}, ScanIndexForward=False)
    assert [item["pk"]["S"] for item in found["Items"]] == ["p4", "p2", "p0"]
    client.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "later"}}])
    described = client.describe_table(TableName=table)["Table"]
    assert "GlobalSecondaryIndexes" not in described
    assert [entry["AttributeName"] for entry in described["AttributeDefinitions"]] == ["pk", "sk"]
    assert refused(client.query, TableName=table, IndexName="later", KeyConditionExpression="t = :t AND u = :u",
                   ExpressionAttributeValues={":t": S("T"), ":u": N(0)}) == (
        "ValidationException", "The table does not have the specified index: later")
    client.put_item(TableName=table, Item={"pk": S("q"), "sk": S("x"), "u": S("no longer a key")})


# --- Query rules ----------------------------------------------------------------------------


@pytest.fixture
def matches(client: Any, make_table: Any) -> str:
    """A table whose index "bracket" has HASH (h1 S, h2 S) and RANGE (r1 S, r2 N)."""
    table = make_table(
        AttributeDefinitions=definitions(("pk", "S"), ("sk", "S"), ("h1", "S"), ("h2", "S"), ("r1", "S"), ("r2", "N")),
        GlobalSecondaryIndexes=[gsi("bracket", ("h1", "HASH"), ("h2", "HASH"), ("r1", "RANGE"), ("r2", "RANGE"))],
    )
    rows = [("m1", "semi", 1), ("m2", "semi", 2), ("m3", "semi", 3), ("m4", "final", 1), ("m5", "quarter", 7)]
    for match, stage, game in rows:
        client.put_item(TableName=table, Item={"pk": S(match), "sk": S("x"), "h1": S("winter"), "h2": S("eu"),
                                               "r1": S(stage), "r2": N(game), "note": S(f"{stage}{game}")})
    client.put_item(TableName=table, Item={"pk": S("m6"), "sk": S("x"), "h1": S("winter"), "h2": S("us"),
                                           "r1": S("semi"), "r2": N(1)})
    client.put_item(TableName=table, Item={"pk": S("m7"), "sk": S("x"), "h1": S("winter"), "r1": S("semi")})  # sparse
    return table


BASE_VALUES = {":h1": S("winter"), ":h2": S("eu")}


def matched(client: Any, table: str, condition: str, forward: bool = True, **values: Any) -> list[str]:
    found = client.query(TableName=table, IndexName="bracket", KeyConditionExpression=condition,
                         ExpressionAttributeValues={**BASE_VALUES, **values}, ScanIndexForward=forward)
    return [item["pk"]["S"] for item in found["Items"]]


def test_queries_every_hash_attribute_equal_then_sort_attributes_left_to_right(client: Any, matches: str) -> None:
    base = "h1 = :h1 AND h2 = :h2"
    assert matched(client, matches, base) == ["m4", "m5", "m1", "m2", "m3"]  # by r1, then r2
    assert matched(client, matches, base, forward=False) == ["m3", "m2", "m1", "m5", "m4"]
    assert matched(client, matches, f"{base} AND r1 = :r", **{":r": S("semi")}) == ["m1", "m2", "m3"]
    assert matched(client, matches, f"{base} AND r1 = :r AND r2 = :g", **{":r": S("semi"), ":g": N(2)}) == ["m2"]
    assert matched(client, matches, f"{base} AND r1 = :r AND r2 >= :g", **{":r": S("semi"), ":g": N(2)}) == ["m2", "m3"]
    assert matched(client, matches, f"{base} AND r1 = :r AND r2 BETWEEN :a AND :b",
                   **{":r": S("semi"), ":a": N(1), ":b": N(2)}) == ["m1", "m2"]
    assert matched(client, matches, f"{base} AND r1 > :r", **{":r": S("quarter")}) == ["m1", "m2", "m3"]
    assert matched(client, matches, f"{base} AND begins_with(r1, :r)", **{":r": S("s")}) == ["m1", "m2", "m3"]
    # The left-to-right rule is about positions in the key schema, not the order of the clauses.
    assert matched(client, matches, "r2 < :g AND r1 = :r AND h2 = :h2 AND h1 = :h1",
                   **{":r": S("semi"), ":g": N(3)}) == ["m1", "m2"]


@pytest.mark.parametrize(
    ("condition", "values", "message"),
    [
        ("h1 = :h1", {":h1": S("winter")}, HASH_EQUALITY),
        ("h2 = :h2 AND r1 = :r", {":h2": S("eu"), ":r": S("semi")}, HASH_EQUALITY),
        ("h1 = :h1 AND h2 > :h2", {**BASE_VALUES}, HASH_EQUALITY),
        ("h1 = :h1 AND h2 BETWEEN :a AND :b", {":h1": S("winter"), ":a": S("a"), ":b": S("z")}, HASH_EQUALITY),
        ("h1 = :h1 AND begins_with(h2, :p)", {":h1": S("winter"), ":p": S("e")}, HASH_EQUALITY),
        ("h1 = :h1 AND h2 = :h2 AND r2 = :g", {**BASE_VALUES, ":g": N(1)}, RANGE_ORDER),
        ("h1 = :h1 AND h2 = :h2 AND r1 > :r AND r2 = :g", {**BASE_VALUES, ":r": S("a"), ":g": N(1)}, RANGE_ORDER),
        ("h1 = :h1 AND h2 = :h2 AND r1 > :r AND r2 > :g", {**BASE_VALUES, ":r": S("a"), ":g": N(1)}, RANGE_ORDER),
        ("h1 = :h1 AND h2 = :h2 AND begins_with(r1, :r) AND r2 = :g", {**BASE_VALUES, ":r": S("s"), ":g": N(1)},
         RANGE_ORDER),
        ("h1 = :h1 AND h2 = :h2 AND r1 = :r AND begins_with(r2, :g)", {**BASE_VALUES, ":r": S("s"), ":g": N(1)},
         "Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
         "operator or function: begins_with, operand type: N"),
        ("h1 = :h1 AND h2 = :h2", {":h1": N(1), ":h2": S("eu")}, TYPE_MISMATCH),
        ("h1 = :h1 AND h2 = :h2 AND r1 = :r AND r2 = :g", {**BASE_VALUES, ":r": S("semi"), ":g": S("1")},
         TYPE_MISMATCH),
        ("h1 = :h1 AND h2 = :h2 AND note = :n", {**BASE_VALUES, ":n": S("x")},
         "Query condition missed key schema element: r1"),
    ],
)
def test_query_rules_on_a_multi_attribute_key(
    client: Any, matches: str, condition: str, values: dict[str, Any], message: str
) -> None:
    assert refused(client.query, TableName=matches, IndexName="bracket", KeyConditionExpression=condition,
                   ExpressionAttributeValues=values) == ("ValidationException", message)


def test_filters_may_not_name_an_index_key_attribute_and_reads_are_eventual(client: Any, matches: str) -> None:
    query = {"TableName": matches, "IndexName": "bracket", "KeyConditionExpression": "h1 = :h1 AND h2 = :h2"}
    assert refused(client.query, **query, FilterExpression="r2 > :g",
                   ExpressionAttributeValues={**BASE_VALUES, ":g": N(1)}) == (
        "ValidationException", "Filter Expression can only contain non-primary key attributes: Primary key attribute: r2")
    assert refused(client.query, **query, ConsistentRead=True, ExpressionAttributeValues=BASE_VALUES) == (
        "ValidationException", "Consistent reads are not supported on global secondary indexes")
    found = client.query(**query, FilterExpression="note = :n", ExpressionAttributeValues={**BASE_VALUES, ":n": S("semi2")})
    assert [item["pk"]["S"] for item in found["Items"]] == ["m2"] and found["ScannedCount"] == 5


def test_pages_carry_every_key_attribute(client: Any, matches: str) -> None:
    arguments: dict[str, Any] = {"TableName": matches, "IndexName": "bracket", "Limit": 2,
                                 "KeyConditionExpression": "h1 = :h1 AND h2 = :h2",
                                 "ExpressionAttributeValues": BASE_VALUES}
    seen: list[str] = []
    while True:
        page = client.query(**arguments)
        seen += [item["pk"]["S"] for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            break
        assert set(page["LastEvaluatedKey"]) == {"pk", "sk", "h1", "h2", "r1", "r2"}
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert seen == ["m4", "m5", "m1", "m2", "m3"]


# --- legacy KeyConditions ---------------------------------------------------------------------


def legacy(operator: str, *values: dict[str, str]) -> dict[str, Any]:
    return {"ComparisonOperator": operator, "AttributeValueList": list(values)}


def test_legacy_key_conditions_follow_the_same_rules(client: Any, matches: str) -> None:
    hashes = {"h1": legacy("EQ", S("winter")), "h2": legacy("EQ", S("eu"))}

    def legacy_query(**conditions: Any) -> list[str]:
        found = client.query(TableName=matches, IndexName="bracket", KeyConditions={**hashes, **conditions})
        return [item["pk"]["S"] for item in found["Items"]]

    assert legacy_query() == ["m4", "m5", "m1", "m2", "m3"]
    assert legacy_query(r1=legacy("EQ", S("semi")), r2=legacy("LE", N(2))) == ["m1", "m2"]
    assert legacy_query(r1=legacy("BEGINS_WITH", S("s"))) == ["m1", "m2", "m3"]
    refusals = [
        ({"h1": legacy("EQ", S("winter"))}, HASH_EQUALITY),
        ({**hashes, "h2": legacy("GE", S("eu"))}, HASH_EQUALITY),
        ({**hashes, "r2": legacy("EQ", N(1))}, RANGE_ORDER),
        ({**hashes, "r1": legacy("GT", S("a")), "r2": legacy("EQ", N(1))}, RANGE_ORDER),
        ({**hashes, "r1": legacy("EQ", N(1))}, TYPE_MISMATCH),
        ({**hashes, "r1": legacy("NE", S("a"))}, "Attempted conditional constraint is not an indexable operation"),
        ({**hashes, "r1": legacy("EQ", S("a")), "r2": legacy("EQ", N(1)), "pk": legacy("EQ", S("m1"))},
         "Conditions can be of length 1 or 2 only"),
    ]
    for conditions, message in refusals:
        assert refused(client.query, TableName=matches, IndexName="bracket", KeyConditions=conditions) == (
            "ValidationException", message), conditions


def test_legacy_key_conditions_on_a_one_attribute_index_are_held_to_two(client: Any, make_table: Any) -> None:
    table = make_table(AttributeDefinitions=definitions(("pk", "S"), ("sk", "S"), ("g", "S")),
                       GlobalSecondaryIndexes=[gsi("by-g", ("g", "HASH"))])
    client.put_item(TableName=table, Item={"pk": S("a"), "sk": S("x"), "g": S("v")})
    found = client.query(TableName=table, IndexName="by-g", KeyConditions={"g": legacy("EQ", S("v"))})
    assert [item["pk"] for item in found["Items"]] == [S("a")]
    three = {"g": legacy("EQ", S("v")), "pk": legacy("EQ", S("a")), "sk": legacy("EQ", S("x"))}
    assert refused(client.query, TableName=table, IndexName="by-g", KeyConditions=three) == (
        "ValidationException", "Conditions can be of length 1 or 2 only")
    assert refused(client.query, TableName=table, KeyConditions=three) == (
        "ValidationException", "Conditions can be of length 1 or 2 only")


def test_a_local_index_key_is_held_to_two_elements(client: Any, make_table: Any) -> None:
    """Multi-attribute keys are GSI-only: an LSI of three elements is refused
    the way a table's key schema is (the element list as Java prints it)."""
    name = make_table()
    message = refused(client.create_table, TableName=name + "-lsi", BillingMode="PAY_PER_REQUEST",
                      KeySchema=key(("pk", "HASH"), ("sk", "RANGE")),
                      AttributeDefinitions=definitions(("pk", "S"), ("sk", "S"), ("l", "S")),
                      LocalSecondaryIndexes=[gsi("lsi", ("pk", "HASH"), ("sk", "RANGE"), ("l", "RANGE"))])
    assert message[0] == "ValidationException"
    assert re.fullmatch(
        r"1 validation error detected: Value '\[(com\.amazonaws\.dynamodb\.v20120810\.KeySchemaElement@[0-9a-f]+"
        r"(, )?){3}\]' at 'localSecondaryIndexes\.1\.member\.keySchema' failed to satisfy constraint: "
        r"Member must have length less than or equal to 2", message[1]), message
