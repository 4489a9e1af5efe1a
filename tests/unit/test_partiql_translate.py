"""PartiQL translation: which request each statement becomes (GetItem,
Query, Scan, PutItem, UpdateItem, DeleteItem, transaction actions), with
the generated expressions, and the refusals with DynamoDB's messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore import partiql
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql.translate import (
    FILTER_MAY_NAME_KEYS,
    bind,
    leaf_name,
    rename_projected,
    transact_get,
    transact_write,
    translate_select,
    translate_write,
)

TABLE = TableSchema(
    name="t", table_id=1, table_uuid="u", arn="arn", partition_key=KeyAttribute("pk", "S"),
    sort_key=KeyAttribute("sk", "N"),
    attribute_definitions=(KeyAttribute("pk", "S"), KeyAttribute("sk", "N"), KeyAttribute("g", "S")),
    creation_time=0.0,
    indexes=(IndexDefinition("gsi", "GLOBAL", (KeyAttribute("g", "S"),), (), "ALL"),),
)
HASH_ONLY = TableSchema(
    name="h", table_id=2, table_uuid="u", arn="arn", partition_key=KeyAttribute("id", "N"), sort_key=None,
    attribute_definitions=(KeyAttribute("id", "N"),), creation_time=0.0,
)


def select(text: str, parameters: list[Any] | None = None, schema: TableSchema = TABLE, **options: Any) -> Any:
    statement = partiql.parse(text)
    assert isinstance(statement, ast.Select)
    return translate_select(statement, parameters or [], schema, **options)


def write(text: str, parameters: list[Any] | None = None, schema: TableSchema = TABLE) -> Any:
    statement = partiql.parse(text)
    assert isinstance(statement, (ast.Insert, ast.Update, ast.Delete))
    return translate_write(statement, parameters or [], schema)


def refused(run: Any, *arguments: Any) -> str:
    with pytest.raises(ValidationException) as excinfo:
        run(*arguments)
    return str(excinfo.value.message)


# --- which read a SELECT becomes ---------------------------------------------------------

READS = [
    # statement, operation, number of requests, key condition, filter
    ("SELECT * FROM t WHERE pk = 'a' AND sk = 1", "GetItem", 1, None, None),
    ("SELECT * FROM t WHERE sk = 1 AND 'a' = pk", "GetItem", 1, None, None),
    ("SELECT * FROM h WHERE id = 7", "GetItem", 1, None, None),
    ("SELECT * FROM t WHERE pk = 'a'", "Query", 1, "#n0 = :pk", None),
    ("SELECT * FROM t WHERE pk = 'a' AND sk > 1", "Query", 1, "#n0 = :pk AND #n1 > :v0", None),
    ("SELECT * FROM t WHERE pk = 'a' AND 1 < sk", "Query", 1, "#n0 = :pk AND #n1 > :v0", None),
    ("SELECT * FROM t WHERE pk = 'a' AND sk BETWEEN 1 AND 5", "Query", 1,
     "#n0 = :pk AND #n1 BETWEEN :v0 AND :v1", None),
    ("SELECT * FROM t WHERE pk = 'a' AND sk = 1 AND x = 2", "Query", 1, "#n0 = :pk AND #n1 = :v0",
     "#n2 = :v1"),
    ("SELECT * FROM t WHERE x = 2 AND pk = 'a'", "Query", 1, "#n0 = :pk", "#n1 = :v0"),
    ("SELECT * FROM t WHERE pk = 'a' AND sk > 1 AND sk < 9", "Query", 1, "#n0 = :pk AND #n1 > :v0",
     "#n1 < :v1"),
    ("SELECT * FROM t WHERE pk IN ['a', 'b', 'a']", "Query", 2, "#n0 = :pk", None),
    ("SELECT * FROM t WHERE pk = 'a' OR pk = 'b'", "Query", 2, "#n0 = :pk", None),
    ("SELECT * FROM t WHERE pk > 'a'", "Scan", 1, None, "#n0 > :v0"),
    ("SELECT * FROM t WHERE pk = 'a' OR x = 1", "Scan", 1, None, "(#n0 = :v0) OR (#n1 = :v1)"),
    ("SELECT * FROM t", "Scan", 1, None, None),
    ("SELECT * FROM t WHERE x IS MISSING", "Scan", 1, None, "attribute_not_exists(#n0)"),
    ("SELECT * FROM t WHERE x IS NOT MISSING", "Scan", 1, None, "attribute_exists(#n0)"),
    ("SELECT * FROM t WHERE x IS NOT STRING", "Scan", 1, None, "NOT (attribute_type(#n0, :v0))"),
    ("SELECT * FROM t WHERE contains(x, 'y') AND size(l) >= 2", "Scan", 1, None,
     "(contains(#n0, :v0)) AND (size(#n1) >= :v1)"),
    ('SELECT * FROM "t"."gsi" WHERE g = \'x\'', "Query", 1, "#n0 = :pk", None),
    ('SELECT * FROM "t"."gsi" WHERE pk = \'x\' AND sk = 1', "Scan", 1, None, "(#n0 = :v0) AND (#n1 = :v1)"),
]


@pytest.mark.parametrize(("text", "operation", "count", "key_condition", "filter_text"), READS,
                         ids=[case[0] for case in READS])
def test_select_becomes(text: str, operation: str, count: int, key_condition: str | None,
                        filter_text: str | None) -> None:
    schema = HASH_ONLY if " h " in text else TABLE
    plan = select(text, schema=schema)
    assert plan.operation == operation
    assert len(plan.requests) == count
    request = plan.requests[0]
    assert request.get("KeyConditionExpression") == key_condition
    assert request.get("FilterExpression") == filter_text
    if operation == "Query":
        assert request[FILTER_MAY_NAME_KEYS] is not None


def test_get_item_request() -> None:
    plan = select("SELECT a, b FROM t WHERE pk = ? AND sk = ?", [{"S": "x"}, {"N": "2"}],
                  consistent_read=True)
    assert plan.requests == [{
        "TableName": "t", "ConsistentRead": True, "Key": {"pk": {"S": "x"}, "sk": {"N": "2"}},
        "ProjectionExpression": "#n0, #n1", "ExpressionAttributeNames": {"#n0": "a", "#n1": "b"},
    }]


def test_queries_per_partition_value_in_order() -> None:
    plan = select("SELECT * FROM t WHERE pk IN ['b', 'a'] ORDER BY pk")
    assert [request["ExpressionAttributeValues"][":pk"] for request in plan.requests] == [{"S": "a"}, {"S": "b"}]
    plan = select("SELECT * FROM t WHERE pk = 'a' ORDER BY sk DESC")
    assert plan.requests[0]["ScanIndexForward"] is False


def test_index_and_projection_renames() -> None:
    plan = select('SELECT m.x, l[2], a FROM "t"."gsi"')
    assert plan.requests[0]["IndexName"] == "gsi"
    assert [name for _, name in plan.renames] == ["x", "l[2]"]
    projected = {"m": {"M": {"x": {"S": "1"}}}, "l": {"L": [{"N": "9"}]}, "a": {"S": "a"}}
    assert rename_projected(projected, plan.renames) == {"x": {"S": "1"}, "l[2]": {"N": "9"}, "a": {"S": "a"}}
    assert leaf_name(ast.Path(("a", "b", 0, 1))) == "b[0][1]"


SELECT_REFUSALS = [
    ("SELECT * FROM t WHERE pk = 1", "Key attribute's data type should match its data type in table's schema: Key pk"),
    ("SELECT * FROM t ORDER BY sk", "Must have WHERE clause in the statement when using ORDER BY clause."),
    ("SELECT * FROM t WHERE x = 1 ORDER BY sk",
     "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."),
    ("SELECT * FROM t WHERE pk = 'a' ORDER BY x", "Variable reference x in ORDER BY clause must be part of the primary key"),
    ('SELECT * FROM "t"."nope" WHERE pk = \'a\'', "The table does not have the specified index"),
    ("SELECT * FROM t WHERE x = MISSING", "MISSING must be compared using IS operator"),
    ("SELECT * FROM t WHERE frobnicate(x)", "Unrecognized function: frobnicate at 1:23:10"),
    ("SELECT * FROM t WHERE\n  exists(x)", "Unrecognized function: exists at 2:3:6"),
    ("SELECT size(x) FROM t", "Unexpected path component at 1:8:4"),
    ("SELECT * FROM t WHERE x = 1e126", "Number overflow. Attempting to store a number with magnitude "
                                        "larger than supported range under root"),
    ("SELECT * FROM t WHERE x = <<>>", "Empty bags are not supported"),
    ("SELECT * FROM t WHERE x = 1e-131", "Number underflow. Attempting to store a number with magnitude "
                                         "smaller than supported range under root"),
    ("SELECT * FROM t WHERE x = 123456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number under root"),
    ("SELECT * FROM t WHERE x = <<1, 'a'>>",
     "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"),
]


@pytest.mark.parametrize(("text", "message"), SELECT_REFUSALS, ids=[case[0] for case in SELECT_REFUSALS])
def test_select_refused(text: str, message: str) -> None:
    assert refused(select, text) == message


def test_strong_reads_of_a_global_index_are_refused() -> None:
    message = refused(lambda: select('SELECT * FROM "t"."gsi" WHERE g = \'x\'', consistent_read=True))
    assert message == "Strongly consistent read is not supported on Global Secondary Indexes"


# --- values --------------------------------------------------------------------------------

VALUES = [
    ("'x'", {"S": "x"}),
    ("1.50", {"N": "1.5"}),
    ("-2", {"N": "-2"}),
    ("true", {"BOOL": True}),
    ("null", {"NULL": True}),
    ("[1, 'a']", {"L": [{"N": "1"}, {"S": "a"}]}),
    ("{'a': {'b': 1}}", {"M": {"a": {"M": {"b": {"N": "1"}}}}}),
    ("<<'x', 'y'>>", {"SS": ["x", "y"]}),
    ("<<1, 2>>", {"NS": ["1", "2"]}),
]


@pytest.mark.parametrize(("literal", "value"), VALUES, ids=[case[0] for case in VALUES])
def test_literals_are_typed_as_dynamodb_types_them(literal: str, value: dict[str, Any]) -> None:
    statement = partiql.parse(f"SELECT * FROM t WHERE x = {literal}")
    assert isinstance(statement, ast.Select) and isinstance(statement.where, ast.Comparison)
    assert bind(statement.where.right, []) == value


def test_number_errors_name_the_path_inside_the_value() -> None:
    message = refused(write, "INSERT INTO t VALUE {'pk': 'a', 'sk': 1, 'l': [1, 1e126]}")
    assert message.endswith(" under root.l[1]")
    message = refused(write, "INSERT INTO t VALUE {'pk': 'a', 'sk': 1, 'a': 1, 'a': 2}")
    assert message == "Duplicate keys in tuple. Key: a under root"


# --- writes ----------------------------------------------------------------------------------


def test_insert_is_a_put_unless_the_key_exists() -> None:
    plan = write("INSERT INTO t VALUE {'pk': ?, 'sk': 1, 'v': 'x'}", [{"S": "a"}])
    assert (plan.operation, plan.is_insert) == ("PutItem", True)
    assert plan.request == {
        "TableName": "t", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}},
        "ConditionExpression": "attribute_not_exists(#n0)", "ExpressionAttributeNames": {"#n0": "pk"},
    }


def test_update_requires_the_item() -> None:
    plan = write("UPDATE t SET a = a + 1, b = list_append(b, [2]) SET c = set_add(c, <<'x'>>) "
                 "SET d = set_delete(d, <<1>>) REMOVE e "
                 "WHERE pk = 'a' AND sk = 1 AND v > 3 RETURNING ALL NEW *")
    assert plan.operation == "UpdateItem"
    request = plan.request
    assert request["Key"] == {"pk": {"S": "a"}, "sk": {"N": "1"}}
    assert request["UpdateExpression"] == (
        "SET #n0 = #n0 + :v0, #n1 = list_append(#n1, :v1) REMOVE #n4 ADD #n2 :v2 DELETE #n3 :v3"
    )
    assert request["ConditionExpression"] == "attribute_exists(#n5) AND (#n6 > :v4)"
    assert request["ReturnValues"] == "ALL_NEW"


def test_delete_by_key_with_a_condition() -> None:
    plan = write("DELETE FROM t WHERE pk = 'a' AND sk = 1 AND attribute_exists(v) RETURNING ALL OLD *")
    assert plan.request == {
        "TableName": "t", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
        "ConditionExpression": "attribute_exists(#n0)", "ExpressionAttributeNames": {"#n0": "v"},
        "ReturnValues": "ALL_OLD",
    }
    assert "ConditionExpression" not in write("DELETE FROM t WHERE pk = 'a' AND sk = 1").request


WRITE_REFUSALS = [
    ("DELETE FROM t WHERE pk = 'a'", "Where clause does not contain a mandatory equality on all key attributes"),
    ("DELETE FROM t", "Where clause does not contain a mandatory equality on all key attributes"),
    ('FROM "t" SET c = 1', "Where clause does not contain a mandatory equality on all key attributes"),
    ('FROM "t" WHERE a = 1 SET c = 1', "Where clause does not contain a mandatory equality on all key attributes"),
    ("UPDATE t SET a = 1 WHERE pk = 'a' OR sk = 1",
     "Where clause does not contain a mandatory equality on all key attributes"),
    ("UPDATE t SET a = 1 WHERE pk = 'a' AND sk = 1 AND pk = 'b'",
     "Multiple conditions on same key pk. Only single item Update/Insert/Delete are supported"),
    ("UPDATE t SET a = 1 WHERE pk = 'a' AND sk = 'x'",
     "Key attribute's data type should match its data type in table's schema: Key sk"),
    ("UPDATE t SET a = 1 WHERE pk = [1] AND sk = 1", "Key value must be of type S, N, or B. Key name: pk, Key type: L"),
    ("INSERT INTO t VALUE {'pk': 'a'}", "Key attribute should be present in the item: Key sk"),
    ("DELETE FROM t WHERE pk = 'a' AND sk = 1 RETURNING MODIFIED OLD *",
     "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is allowed in DELETE statements."),
    ('UPDATE "t"."gsi" SET a = 1 WHERE pk = \'a\' AND sk = 1', "This operation is not supported on an index"),
    ("UPDATE t SET c = set_add(d, <<'x'>>) WHERE pk = 'a' AND sk = 1",
     "The first argument to SET_ADD must equal the assignment value at 1:18:7"),
    ("UPDATE t SET c = set_add(c, 'x') WHERE pk = 'a' AND sk = 1",
     "The second argument to SET_ADD must be a value with type SET at 1:26:1"),
    ("UPDATE t SET c = set_delete(c) WHERE pk = 'a' AND sk = 1", "SET_DELETE must have exactly two arguments at 1:18:10"),
    ("INSERT INTO t VALUE {'pk': 'a', 'sk': 1, 's': set_add(<<'a'>>, <<'b'>>)}",
     "Unsupported data type: set_add under key root at 1:47:7"),
]


@pytest.mark.parametrize(("text", "message"), WRITE_REFUSALS, ids=[case[0] for case in WRITE_REFUSALS])
def test_write_refused(text: str, message: str) -> None:
    assert refused(write, text) == message


# --- transactions ---------------------------------------------------------------------------


def test_transaction_actions() -> None:
    def action(text: str) -> dict[str, Any]:
        return transact_write(partiql.parse(text), [], TABLE)

    assert set(action("INSERT INTO t VALUE {'pk': 'a', 'sk': 1}")) == {"Put"}
    assert set(action("UPDATE t SET v = 1 WHERE pk = 'a' AND sk = 1")) == {"Update"}
    assert set(action("DELETE FROM t WHERE pk = 'a' AND sk = 1")) == {"Delete"}
    check = action("EXISTS(SELECT * FROM t WHERE pk = 'a' AND sk = 1 AND v = 2)")["ConditionCheck"]
    assert check["ConditionExpression"] == "attribute_exists(#n0) AND (#n1 = :v0)"
    assert refused(action, "UPDATE t SET v = 1 WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *") == (
        "RETURNING clause is not supported in ExecuteTransaction."
    )
    statement = partiql.parse("SELECT v FROM t WHERE pk = 'a' AND sk = 1")
    assert isinstance(statement, ast.Select)
    assert transact_get(statement, [], TABLE)["Get"]["Key"] == {"pk": {"S": "a"}, "sk": {"N": "1"}}
    partial = partiql.parse("SELECT v FROM t WHERE pk = 'a'")
    assert isinstance(partial, ast.Select)
    assert refused(transact_get, partial, [], TABLE) == (
        "Select statements within ExecuteTransaction must specify the primary key in the where clause."
    )


def test_at_most_50_partition_values() -> None:
    values = ", ".join(f"'{i}'" for i in range(51))
    assert refused(select, f"SELECT * FROM t WHERE pk IN [{values}]") == (
        "Too many decomposed read operations for a given query."
    )
    assert len(select(f"SELECT * FROM t WHERE pk IN [{values[:-6]}]").requests) == 50


CLAUSES = [
    "pk = 'a'", "sk = 1", "pk = ?", "sk > ?", "x = [1, {'a': ?}]", "pk IN ['a', 'b']", "pk = 'a' OR pk = 'b'",
    "x IS MISSING", "NOT x = 1", "begins_with(sk, 'a')", "size(x) > 1", "x BETWEEN 1 AND ?", "pk = 1",
    "sk = 'z'", "x = <<1, 2>>", "x = <<>>", "x = MISSING", "contains(x, ?)", "attribute_type(x, 'S')",
    "pk = [1]", "x.y[2] = 1e126", "frob(x)", "x = size(y)", "(pk = 'a' AND sk = 2)",
]
STATEMENTS = [
    "SELECT * FROM t WHERE {}", "SELECT a, b.c FROM \"t\".\"gsi\" WHERE {}", "DELETE FROM t WHERE {}",
    "UPDATE t SET v = ? WHERE {}", "UPDATE t SET v = set_add(v, <<'x'>>) REMOVE w WHERE {} RETURNING ALL OLD *",
    "SELECT * FROM t WHERE {} ORDER BY sk DESC", "EXISTS(SELECT * FROM t WHERE {})",
]
PARAMETER_VALUES = [{"S": "a"}, {"N": "1"}, {"L": []}, {"NULL": True}, {"SS": ["x"]}]


@given(st.sampled_from(STATEMENTS), st.lists(st.sampled_from(CLAUSES), min_size=1, max_size=4),
       st.sampled_from(["AND", "OR"]), st.lists(st.sampled_from(PARAMETER_VALUES), max_size=6))
@settings(max_examples=400, deadline=None)
def test_any_statement_translates_or_is_a_validation_error(
    template: str, clauses: list[str], joiner: str, values: list[dict[str, Any]]
) -> None:
    statement = partiql.parse(template.format(f" {joiner} ".join(clauses)))
    parameters = (values * 10)[: statement.parameters] if values else [{"S": "p"}] * statement.parameters
    try:
        if isinstance(statement, ast.Select):
            translate_select(statement, parameters, TABLE)
            transact_get(statement, parameters, TABLE)
        elif isinstance(statement, ast.Exists):
            transact_write(statement, parameters, TABLE)
        else:
            assert isinstance(statement, (ast.Insert, ast.Update, ast.Delete))
            translate_write(statement, parameters, TABLE)
            transact_write(statement, parameters, TABLE)
    except ValidationException:
        pass


def test_an_or_of_partition_sides_is_one_query_per_side() -> None:
    plan = select("SELECT a FROM t WHERE pk = 'b' AND x = 1 OR pk = 'a' AND sk > 2 AND y = 2 ORDER BY pk")
    assert plan.operation == "Query"
    assert [request["ExpressionAttributeValues"][":pk"] for request in plan.requests] == [{"S": "a"}, {"S": "b"}]
    first, second = plan.requests
    assert first["KeyConditionExpression"] == "#n1 = :pk AND #n2 > :v0"
    assert first["FilterExpression"] == "#n3 = :v1"
    assert first["ProjectionExpression"] == "#n0"
    assert second["KeyConditionExpression"] == "#n1 = :pk" and second["FilterExpression"] == "#n2 = :v0"
    assert len(select("SELECT * FROM t WHERE pk = 'a' AND sk = 1 OR pk = 'a' AND sk = 2").requests) == 2
    assert select("SELECT * FROM t WHERE pk = 'a' AND x = 1 OR y = 2").operation == "Scan"


@pytest.mark.parametrize("condition", ["x = '1'", "x <> '1'"])
def test_overlapping_sides_on_one_partition_are_refused(condition: str) -> None:
    assert refused(select, f"SELECT * FROM t WHERE pk = 'a' AND {condition} OR pk = 'a' AND sk = 2") == (
        "Overlapping conditions with range keys are not supported in where clause"
    )
