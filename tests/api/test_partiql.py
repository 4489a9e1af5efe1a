"""ExecuteStatement over boto3 on every store: SELECT (GetItem, Query or
Scan, costing what those cost), INSERT, UPDATE, DELETE, RETURNING,
parameters, pages, and DynamoDB's errors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "


def run(client: Any, statement: str, *parameters: dict[str, Any], **options: Any) -> dict[str, Any]:
    if parameters:
        options["Parameters"] = list(parameters)
    response: dict[str, Any] = client.execute_statement(Statement=statement, **options)
    response.pop("ResponseMetadata", None)
    return response


def refused(client: Any, statement: str, *parameters: dict[str, Any], **options: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        run(client, statement, *parameters, **options)
    return error_of(excinfo)


@pytest.fixture
def table(client: Any, make_table: Any) -> str:
    """pk S, sk N, with items a/1..a/4 and b/1."""
    name = str(make_table(pk=("pk", "S"), sk=("sk", "N")))
    for pk, sk in (("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 1)):
        client.put_item(TableName=name, Item={"pk": {"S": pk}, "sk": {"N": str(sk)}, "n": {"N": str(sk * 10)}})
    return name


def keys(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["pk"]["S"], item["sk"]["N"]) for item in items]


def test_insert_then_select_by_key(client: Any, table: str) -> None:
    assert run(client, f"INSERT INTO \"{table}\" VALUE {{'pk': 'c', 'sk': 7, 'm': {{'x': [1, 'two']}}, "
                       "'tags': <<'p', 'q'>>, 'ok': true, 'none': null}") == {"Items": []}
    response = run(client, f'SELECT * FROM "{table}" WHERE pk = ? AND sk = ?', {"S": "c"}, {"N": "7"})
    assert response["Items"] == [{
        "pk": {"S": "c"}, "sk": {"N": "7"}, "m": {"M": {"x": {"L": [{"N": "1"}, {"S": "two"}]}}},
        "tags": {"SS": ["p", "q"]}, "ok": {"BOOL": True}, "none": {"NULL": True},
    }]
    assert run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'c' AND sk = 8") == {"Items": []}


def test_insert_of_an_existing_key_is_a_duplicate(client: Any, table: str) -> None:
    code, message = refused(client, f"INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'sk': 1, 'n': 0}}")
    assert (code, message) == ("DuplicateItemException", "Duplicate primary key exists in table")
    item = client.get_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    assert item["n"] == {"N": "10"}


def test_select_forms(client: Any, table: str) -> None:
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a'")["Items"]) == [
        ("a", "1"), ("a", "2"), ("a", "3"), ("a", "4")]
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk > 2 ORDER BY sk DESC")["Items"]) == [
        ("a", "4"), ("a", "3")]
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk BETWEEN 2 AND 3")["Items"]) == [
        ("a", "2"), ("a", "3")]
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk > 1 AND sk < 4")["Items"]) == [
        ("a", "2"), ("a", "3")]
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk IN ['b', 'a'] AND sk = 1 ORDER BY pk")["Items"]) == [
        ("a", "1"), ("b", "1")]
    assert sorted(keys(run(client, f"SELECT * FROM \"{table}\" WHERE n >= 30 OR pk = 'b'")["Items"])) == [
        ("a", "3"), ("a", "4"), ("b", "1")]
    assert run(client, f"SELECT n FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND n IS NOT MISSING")["Items"] == [
        {"n": {"N": "20"}}]
    assert run(client, f"SELECT n FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND n IS MISSING")["Items"] == []
    assert len(run(client, f'SELECT * FROM "{table}"')["Items"]) == 5


def test_projection_of_nested_paths_answers_leaf_names(client: Any, table: str) -> None:
    client.put_item(TableName=table, Item={
        "pk": {"S": "p"}, "sk": {"N": "1"}, "profile": {"M": {"sub": {"S": "deep"}, "sib": {"S": "keep"}}},
        "tags": {"L": [{"S": "a"}, {"S": "b"}]}, "top": {"S": "t"}})
    response = run(client, f"SELECT profile.sub, tags[1], top FROM \"{table}\" WHERE pk = 'p' AND sk = 1")
    assert response["Items"] == [{"sub": {"S": "deep"}, "tags[1]": {"S": "b"}, "top": {"S": "t"}}]


def test_select_costs_what_the_equivalent_read_costs(client: Any, table: str) -> None:
    def units(response: dict[str, Any]) -> float:
        return float(response["ConsumedCapacity"]["CapacityUnits"])

    get = client.get_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"N": "1"}}, ReturnConsumedCapacity="TOTAL")
    select = run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1", ReturnConsumedCapacity="TOTAL")
    assert units(select) == units(get) == 0.5
    strong = run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1", ReturnConsumedCapacity="TOTAL",
                 ConsistentRead=True)
    assert units(strong) == 1.0
    query = client.query(TableName=table, KeyConditionExpression="pk = :a", ExpressionAttributeValues={":a": {"S": "a"}},
                         ReturnConsumedCapacity="TOTAL")
    assert units(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", ReturnConsumedCapacity="TOTAL")) == units(query)
    scan = client.scan(TableName=table, ReturnConsumedCapacity="TOTAL")
    assert units(run(client, f"SELECT * FROM \"{table}\" WHERE n = 10", ReturnConsumedCapacity="TOTAL")) == units(scan)
    assert run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", ReturnConsumedCapacity="TOTAL")[
        "ConsumedCapacity"]["TableName"] == table


def test_pages_with_limit_and_next_token(client: Any, table: str) -> None:
    statement = f"SELECT * FROM \"{table}\" WHERE pk IN ['a', 'b'] ORDER BY pk"
    seen: list[tuple[str, str]] = []
    token = None
    pages = 0
    while True:
        options: dict[str, Any] = {"Limit": 3}
        if token is not None:
            options["NextToken"] = token
        page = run(client, statement, **options)
        assert len(page["Items"]) <= 3
        seen += keys(page["Items"])
        pages += 1
        token = page.get("NextToken")
        if token is None:
            break
    assert seen == [("a", "1"), ("a", "2"), ("a", "3"), ("a", "4"), ("b", "1")]
    assert pages >= 2
    first = run(client, statement, Limit=1)
    assert first["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "1"}}
    code, message = refused(client, f"SELECT * FROM \"{table}\" WHERE pk = 'b'", NextToken=first["NextToken"])
    assert (code, message) == ("ValidationException", "NextToken does not match request")
    assert refused(client, statement, NextToken="not a token") == ("ValidationException", "Invalid NextToken")


def test_update_forms_and_returning(client: Any, table: str) -> None:
    client.put_item(TableName=table, Item={"pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "5"},
                                           "l": {"L": [{"N": "1"}]}, "s": {"SS": ["x"]}, "gone": {"S": "g"}})
    response = run(client, f"UPDATE \"{table}\" SET n = n + 2 SET l = list_append(l, [2]) "
                           "SET s = set_add(s, <<'y'>>) REMOVE gone WHERE pk = 'u' AND sk = 1 RETURNING ALL NEW *")
    assert response["Items"] == [{"pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "7"},
                                  "l": {"L": [{"N": "1"}, {"N": "2"}]}, "s": {"SS": ["x", "y"]}}]
    old = run(client, f"UPDATE \"{table}\" SET n = n - 1, s = set_delete(s, <<'x'>>) WHERE pk = 'u' AND sk = 1 "
                      "RETURNING MODIFIED OLD *")
    assert old["Items"] == [{"n": {"N": "7"}, "s": {"SS": ["x", "y"]}}]
    new = run(client, f"UPDATE \"{table}\" SET v = 'new' WHERE pk = 'u' AND sk = 1 RETURNING MODIFIED NEW *")
    assert new["Items"] == [{"v": {"S": "new"}}]
    assert run(client, f"UPDATE \"{table}\" SET v = 'x' WHERE pk = 'u' AND sk = 1") == {"Items": []}
    every = run(client, f"UPDATE \"{table}\" SET w = 1 WHERE pk = 'u' AND sk = 1 RETURNING ALL OLD *")["Items"][0]
    assert every["n"] == {"N": "6"} and "w" not in every


def test_update_of_a_missing_item_or_a_false_condition_fails(client: Any, table: str) -> None:
    code, _ = refused(client, f"UPDATE \"{table}\" SET v = 1 WHERE pk = 'ghost' AND sk = 1")
    assert code == "ConditionalCheckFailedException"
    assert "Item" not in client.get_item(TableName=table, Key={"pk": {"S": "ghost"}, "sk": {"N": "1"}})
    with pytest.raises(ClientError) as excinfo:
        run(client, f"UPDATE \"{table}\" SET v = 1 WHERE pk = 'a' AND sk = 1 AND n = 99",
            ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert excinfo.value.response["Item"]["n"] == {"N": "10"}
    assert "v" not in client.get_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]


def test_delete(client: Any, table: str) -> None:
    assert run(client, f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *")["Items"] == [
        {"pk": {"S": "a"}, "sk": {"N": "1"}, "n": {"N": "10"}}]
    assert run(client, f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *") == {"Items": []}
    assert refused(client, f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND n = 0")[0] == (
        "ConditionalCheckFailedException")
    assert run(client, f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND n = 20") == {"Items": []}
    assert keys(run(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a'")["Items"]) == [("a", "3"), ("a", "4")]


def test_writes_cost_what_the_equivalent_writes_cost(client: Any, table: str) -> None:
    put = run(client, f"INSERT INTO \"{table}\" VALUE {{'pk': 'w', 'sk': 1}}", ReturnConsumedCapacity="TOTAL")
    assert put["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    update = run(client, f"UPDATE \"{table}\" SET big = ? WHERE pk = 'w' AND sk = 1", {"S": "x" * 1500},
                 ReturnConsumedCapacity="TOTAL")
    assert update["ConsumedCapacity"]["CapacityUnits"] == 2.0


def test_reads_through_a_global_index(client: Any, make_table: Any) -> None:
    name = make_table(
        pk=("pk", "S"), sk=None,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    run(client, f"INSERT INTO \"{name}\" VALUE {{'pk': '1', 'g': 'x'}}")
    run(client, f"INSERT INTO \"{name}\" VALUE {{'pk': '2', 'g': 'y'}}")
    assert run(client, f"SELECT pk FROM \"{name}\".\"by-g\" WHERE g = 'x'")["Items"] == [{"pk": {"S": "1"}}]
    code, message = refused(client, f"SELECT pk FROM \"{name}\".\"by-g\" WHERE g = 'x'", ConsistentRead=True)
    assert (code, message) == ("ValidationException",
                               "Strongly consistent read is not supported on Global Secondary Indexes")
    assert refused(client, f"UPDATE \"{name}\".\"by-g\" SET a = 1 WHERE pk = '1'") == (
        "ValidationException", "This operation is not supported on an index")


ERRORS = [
    ("SELECT * FROM \"{t}\" WHERE", NOT_WELL_FORMED + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' foo", NOT_WELL_FORMED + "Unexpected token after expression"),
    ("SLECT * FROM \"{t}\"", NOT_WELL_FORMED + "Expected data manipulation"),
    ("SELECT * FROM \"{t}\" x WHERE pk = 'a'", "Aliasing is not supported"),
    ("UPDATE \"{t}\" SET v = 1 WHERE pk = 'a'", "Where clause does not contain a mandatory equality on all key attributes"),
    ("DELETE FROM \"{t}\" WHERE v = 1", "Where clause does not contain a mandatory equality on all key attributes"),
    ("SELECT * FROM \"{t}\" WHERE pk = 1", "Key attribute's data type should match its data type in table's schema: Key pk"),
    ("INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': 1e126}}",
     "Number overflow. Attempting to store a number with magnitude larger than supported range under root.sk"),
    ("EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1)", "EXISTS can only be used in ExecuteTransaction write requests."),
    ("UPDATE \"{t}\" SET pk = 'b' WHERE pk = 'a' AND sk = 1",
     "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"),
]


@pytest.mark.parametrize(("statement", "message"), ERRORS, ids=[case[0][:50] for case in ERRORS])
def test_errors(client: Any, table: str, statement: str, message: str) -> None:
    assert refused(client, statement.format(t=table)) == ("ValidationException", message)


def test_unknown_table_and_parameters(client: Any, table: str) -> None:
    assert refused(client, "SELECT * FROM \"no-such-table\" WHERE pk = 'a'") == (
        "ResourceNotFoundException", "Requested resource not found")
    message = "Number of parameters in request and statement don't match."
    assert refused(client, f'SELECT * FROM "{table}" WHERE pk = ?') == ("ValidationException", message)
    assert refused(client, f'SELECT * FROM "{table}" WHERE pk = ?', {"S": "a"}, {"S": "b"}) == (
        "ValidationException", message)
    assert len(run(client, f"SELECT * FROM \"{table}\" WHERE pk = ? AND n > ?", {"S": "a"}, {"N": "15"})["Items"]) == 3


def test_a_scan_pages_through_every_item(client: Any, table: str) -> None:
    seen: list[tuple[str, str]] = []
    options: dict[str, Any] = {"Limit": 2}
    while True:
        page = run(client, f'SELECT * FROM "{table}"', **options)
        seen += keys(page["Items"])
        if "NextToken" not in page:
            break
        options["NextToken"] = page["NextToken"]
    assert sorted(seen) == [("a", "1"), ("a", "2"), ("a", "3"), ("a", "4"), ("b", "1")]


def test_partition_values_without_items_and_a_filter_on_keys(client: Any, table: str) -> None:
    response = run(client, f"SELECT * FROM \"{table}\" WHERE pk IN ['none', 'b', 'a'] AND sk <> 2 AND n < 40")
    assert sorted(keys(response["Items"])) == [("a", "1"), ("a", "3"), ("b", "1")]


def test_deeply_nested_statements_are_refused_not_crashed(client: Any, table: str) -> None:
    code, _ = refused(client, f'SELECT * FROM "{table}" WHERE ' + "NOT " * 1500 + "n = 1")
    assert code == "ValidationException"
    code, _ = refused(client, f'SELECT * FROM "{table}" WHERE n = ' + "[" * 1000 + "]" * 1000)
    assert code == "ValidationException"


def test_one_statement_text_with_many_parameter_values(client: Any, table: str) -> None:
    """Each text is translated once per parameter types; the values differ per call."""
    insert = f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': ?, 'doc': {{'l': [?, 1]}}}}"
    update = f'UPDATE "{table}" SET doc.l[1] = ? WHERE pk = ? AND sk = ? RETURNING MODIFIED NEW *'
    select = f'SELECT doc FROM "{table}" WHERE pk = ? AND sk = ?'
    for i in range(3):
        run(client, insert, {"S": f"t{i}"}, {"N": str(i)}, {"S": f"first {i}"})
    for i in range(3):
        assert run(client, update, {"N": str(i * 100)}, {"S": f"t{i}"}, {"N": str(i)})["Items"] == [
            {"doc": {"M": {"l": {"L": [{"N": str(i * 100)}]}}}}]  # UPDATED_NEW: the updated path only
    for i in range(3):
        assert run(client, select, {"S": f"t{i}"}, {"N": str(i)})["Items"] == [
            {"doc": {"M": {"l": {"L": [{"S": f"first {i}"}, {"N": str(i * 100)}]}}}}]
    assert run(client, select, {"S": "t9"}, {"N": "9"})["Items"] == []
    code, message = refused(client, select, {"S": "t1"}, {"S": "1"})
    assert message == "Key attribute's data type should match its data type in table's schema: Key sk"


def test_reads_through_a_local_index_and_capacity_by_index(client: Any, make_table: Any) -> None:
    name = make_table(
        pk=("pk", "S"), sk=("sk", "N"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "rank", "AttributeType": "N"}],
        LocalSecondaryIndexes=[{"IndexName": "by-rank", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "rank", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
    )
    for pk, sk, rank in (("a", 1, 30), ("a", 2, 10), ("a", 3, 20), ("b", 1, 5)):
        run(client, f"INSERT INTO \"{name}\" VALUE {{'pk': ?, 'sk': ?, 'rank': ?}}",
            {"S": pk}, {"N": str(sk)}, {"N": str(rank)})
    ranked = run(client, f"SELECT sk FROM \"{name}\".\"by-rank\" WHERE pk = 'a' AND rank >= 20 ORDER BY rank DESC")
    assert ranked["Items"] == [{"sk": {"N": "1"}}, {"sk": {"N": "3"}}]
    both = run(client, f"SELECT * FROM \"{name}\".\"by-rank\" WHERE pk IN ['a', 'b']", ReturnConsumedCapacity="INDEXES")
    one = client.query(TableName=name, IndexName="by-rank", KeyConditionExpression="pk = :p",
                       ExpressionAttributeValues={":p": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    other = client.query(TableName=name, IndexName="by-rank", KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": {"S": "b"}}, ReturnConsumedCapacity="INDEXES")
    capacity = both["ConsumedCapacity"]
    assert capacity["CapacityUnits"] == one["ConsumedCapacity"]["CapacityUnits"] + other["ConsumedCapacity"]["CapacityUnits"]
    assert capacity["LocalSecondaryIndexes"]["by-rank"]["CapacityUnits"] == capacity["CapacityUnits"]


def test_an_or_of_partition_sides_costs_its_queries(client: Any, table: str) -> None:
    statement = f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk >= 3 OR pk = 'b' AND n = 10 ORDER BY pk"
    response = run(client, statement, ReturnConsumedCapacity="TOTAL")
    assert keys(response["Items"]) == [("a", "3"), ("a", "4"), ("b", "1")]
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0  # two Queries of 0.5, not a Scan
    assert refused(client, f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND n = 1 OR pk = 'a' AND sk = 2") == (
        "ValidationException", "Overlapping conditions with range keys are not supported in where clause")


def test_update_written_from_first(client: Any, table: str) -> None:
    assert run(client, f"FROM \"{table}\" WHERE pk = 'a' AND sk = 1 SET v = 'x' RETURNING MODIFIED NEW *")[
        "Items"] == [{"v": {"S": "x"}}]
    assert refused(client, "FROM \"no-such-table\" WHERE pk = 'x' SET c = 1") == (
        "ResourceNotFoundException", "Requested resource not found")
