"""PartiQL's exact error texts where a public suite pinned them against the
service (October 2026): functions, set_add/set_delete, positions
``at line:column:length``, the batch and transaction wording."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

ITEM = "pq-fn-msg"


@pytest.fixture
def table(client: Any, make_table: Any) -> str:
    name = str(make_table(pk=("pk", "S"), sk=None))
    client.put_item(TableName=name, Item={
        "pk": {"S": ITEM}, "ss": {"SS": ["a", "b", "c"]}, "ns": {"NS": ["1", "2", "3"]}, "s": {"S": "str"},
        "m": {"M": {"inner": {"SS": ["x"]}}}})
    return name


def at(statement: str, token: str, length: int | None = None, start: int = 0) -> str:
    return f"1:{statement.index(token, start) + 1}:{len(token) if length is None else length}"


def message_of(client: Any, statement: str, *parameters: dict[str, Any]) -> str:
    with pytest.raises(ClientError) as excinfo:
        client.execute_statement(Statement=statement, **({"Parameters": list(parameters)} if parameters else {}))
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    return message


def where(table: str, condition: str) -> str:
    return f"SELECT * FROM \"{table}\" WHERE pk = '{ITEM}' AND {condition}"


def update(table: str, assignment: str) -> str:
    return f"UPDATE \"{table}\" SET {assignment} WHERE pk = '{ITEM}'"


def test_condition_functions(client: Any, table: str) -> None:
    document_path = "Operator or function requires a document path; operator or function: attribute_exists"
    assert message_of(client, where(table, "attribute_exists('ss')")) == document_path
    assert message_of(client, where(table, "attribute_exists(?)"), {"S": "ss"}) == document_path
    operands = "Incorrect number of operands for operator or function; operator or function: attribute_exists, "
    assert message_of(client, where(table, "attribute_exists()")) == operands + "number of operands: 0"
    assert message_of(client, where(table, "attribute_exists(ss, ns)")) == operands + "number of operands: 2"
    projection = f"SELECT attribute_exists(ss) FROM \"{table}\" WHERE pk = '{ITEM}'"
    assert message_of(client, projection) == f"Unexpected path component at {at(projection, 'attribute_exists')}"
    exists = where(table, "EXISTS(ss)")
    assert message_of(client, exists) == f"Unrecognized function: exists at {at(exists, 'EXISTS')}"
    assert message_of(client, where(table, "attribute_exists(m.inner)")) == (
        "Statement wasn't well formed, can't be processed: Invalid path dot component")


def test_set_functions(client: Any, table: str) -> None:
    other = update(table, "t = set_add(ss, <<'x'>>)")
    assert message_of(client, other) == f"The first argument to SET_ADD must equal the assignment value at {at(other, 'set_add')}"
    literal = update(table, "ss = set_add(<<'a'>>, <<'b'>>)")
    assert message_of(client, literal) == (
        f"The first argument to SET_ADD must equal the assignment value at {at(literal, 'set_add')}")
    for added in ("'x'", "['x']"):
        statement = update(table, f"ss = set_add(ss, {added})")
        first = at(statement, "ss", 2, statement.index("set_add("))
        assert message_of(client, statement) == f"The second argument to SET_ADD must be a value with type SET at {first}"
    for arguments in ("ss", "ss, <<'x'>>, <<'y'>>"):
        statement = update(table, f"ss = set_add({arguments})")
        assert message_of(client, statement) == f"SET_ADD must have exactly two arguments at {at(statement, 'set_add')}"
    wrong_type = "An operand in the update expression has an incorrect data type"
    assert message_of(client, update(table, "ss = set_add(ss, <<1>>)")) == wrong_type
    assert message_of(client, update(table, "s = set_add(s, <<'x'>>)")) == wrong_type
    assert message_of(client, update(table, "ss = set_delete(ss, <<1>>)")) == wrong_type
    assert message_of(client, update(table, "ss = set_add(ss, <<'x', 'x'>>)")) == (
        "One or more parameter values were invalid: Input collection [x, x] contains duplicates.")
    assert message_of(client, update(table, "ss = set_add(ss, <<>>)")) == "Empty bags are not supported"
    in_where = where(table, "set_add(ss, <<'x'>>) = ss")
    assert message_of(client, in_where) == f"Unrecognized function: set_add at {at(in_where, 'set_add')}"
    insert = f"INSERT INTO \"{table}\" VALUE {{'pk': 'pq-fn-msg-insert', 'ss': set_add(<<'a'>>, <<'b'>>)}}"
    assert message_of(client, insert) == f"Unsupported data type: set_add under key root at {at(insert, 'set_add')}"
    deleted = update(table, "ss = set_delete(ss, 'a')")
    first = at(deleted, "ss", 2, deleted.index("set_delete("))
    assert message_of(client, deleted) == f"The second argument to SET_DELETE must be a value with type SET at {first}"
    assert client.get_item(TableName=table, Key={"pk": {"S": ITEM}})["Item"]["ss"] == {"SS": ["a", "b", "c"]}


def test_batch_and_transaction_wording(client: Any, table: str) -> None:
    response = client.batch_execute_statement(Statements=[{"Statement": where(table, "attribute_exists(ss)")}])
    assert response["Responses"][0]["Error"] == {
        "Code": "ValidationError",
        "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where clause."}
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[{"Statement": where(table, "attribute_exists(ss)")}])
    assert error_of(excinfo) == ("ValidationException", "Validation failed in TransactStatements[0]: Select "
                                 "statements within ExecuteTransaction must specify the primary key in the where clause.")
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[
            {"Statement": f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = '{ITEM}')"},
            {"Statement": f"UPDATE \"{table}\" SET z = 1 WHERE pk = 'pq-fn-msg-never-written'"},
        ])
    assert error_of(excinfo) == ("ValidationException", "Validation failed in TransactStatements[0]: "
                                 "EXISTS() must contain a single item read with additional condition")


def test_index_texts(client: Any, make_table: Any) -> None:
    name = make_table(
        pk=("pk", "S"), sk=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g", "lsk")],
        GlobalSecondaryIndexes=[{"IndexName": "gsi-inc", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["kept"]}}],
        LocalSecondaryIndexes=[{"IndexName": "lsi-keys", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
    )
    invalid = "One or more parameter values were invalid: "
    assert message_of(client, f"SELECT pk FROM \"{name}\".\"gsi-inc\" WHERE g = 'y' AND np = 'np1'") == (
        invalid + "Secondary index gsi-inc does not project one or more filter attributes: [np]")
    assert message_of(client, f"SELECT pk FROM \"{name}\".\"lsi-keys\" WHERE pk = 'p' AND np = 'np1'") == (
        invalid + "Secondary index lsi-keys does not project one or more filter attributes: [np]")
    assert message_of(client, f"SELECT np FROM \"{name}\".\"gsi-inc\" WHERE g = 'y'") == (
        invalid + "Global secondary index gsi-inc does not project [np]")
    assert client.execute_statement(Statement=f"SELECT kept FROM \"{name}\".\"gsi-inc\" WHERE g = 'y' AND kept = 1")[
        "Items"] == []
    for index in ("no-such-index", name):
        assert message_of(client, f"SELECT * FROM \"{name}\".\"{index}\" WHERE pk = 'p'") == (
            "The table does not have the specified index")
    with pytest.raises(ClientError) as excinfo:  # the unknown index wins over the consistent read
        client.execute_statement(Statement=f"SELECT * FROM \"{name}\".\"no-such-index\"", ConsistentRead=True)
    assert error_of(excinfo) == ("ValidationException", "The table does not have the specified index")


def test_an_ordering_comparison_on_an_unordered_operand(client: Any, table: str) -> None:
    assert message_of(client, f"SELECT pk FROM \"{table}\" WHERE pk = 'x' AND val < ?", {"BOOL": True}) == (
        "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL")


UNCONVERTIBLE = "The parameter cannot be converted to a numeric value"
NEST = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"


def deep(depth: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    value: dict[str, Any] = leaf or {"S": "leaf"}
    for _ in range(depth):
        value = {"M": {"n": value}}
    return value


def test_number_parameters(client: Any, make_table: Any) -> None:
    name = make_table(pk=("pk", "S"), sk=("sk", "S"))
    positions = [
        f"SELECT * FROM \"{name}\" WHERE pk = 'pq-pn' AND n = ?",
        f"INSERT INTO \"{name}\" VALUE {{'pk': 'pq-pn-insert', 'sk': 's', 'n': ?}}",
        f"UPDATE \"{name}\" SET n = ? WHERE pk = 'pq-pn' AND sk = 's'",
        f"SELECT * FROM \"{name}\" WHERE pk = ?",
    ]
    for statement in positions:
        for value in ("1e99999999999", "-1e99999999999", "1e-99999999999", "1e2147483648", "1e-2147483648"):
            assert message_of(client, statement, {"N": value}) == f"{UNCONVERTIBLE}: {value}"
        assert message_of(client, statement, {"N": "1e2147483647"}) == (
            "Number underflow. Attempting to store a number with magnitude smaller than supported range")
        assert message_of(client, statement, {"N": ""}) == UNCONVERTIBLE
    first = positions[0]
    assert message_of(client, first, {"L": [{"N": "1"}, {"N": "1e99999999999"}]}) == f"{UNCONVERTIBLE}: 1e99999999999"
    assert message_of(client, first, {"NS": ["1", "1e99999999999"]}) == f"{UNCONVERTIBLE}: 1e99999999999"
    pair = f"SELECT * FROM \"{name}\" WHERE pk = 'pq-pn' AND x = ? AND y = ?"
    assert message_of(client, pair, deep(40), {"N": "abc"}) == NEST
    assert message_of(client, pair, {"N": "abc"}, deep(40)) == f"{UNCONVERTIBLE}: abc"
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[{
            "Statement": f"UPDATE \"{name}\" SET x = ? SET y = ? WHERE pk = 'pq-pn' AND sk = '1'",
            "Parameters": [deep(40), {"N": "abc"}]}])
    assert error_of(excinfo) == ("ValidationException", NEST)
    response = client.batch_execute_statement(Statements=[{
        "Statement": f"SELECT * FROM \"{name}\" WHERE pk = 'pq-pn' AND sk = 's' AND n = ?",
        "Parameters": [{"N": "1e99999999999"}]}])
    assert response["Responses"][0]["Error"] == {"Code": "ValidationError", "Message": f"{UNCONVERTIBLE}: 1e99999999999"}


def test_the_operand_type_check_comes_before_the_table(client: Any) -> None:
    message = message_of(client, "SELECT pk FROM \"no-such-table-vo\" WHERE pk = ? AND val < ?", {"S": "x"}, {"BOOL": True})
    assert message == "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL"
    with pytest.raises(ClientError) as excinfo:
        client.execute_statement(Statement="SELECT pk FROM \"no-such-table-vo\" WHERE pk = ?", Parameters=[{"S": "x"}])
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    assert message_of(client, "SELECT * FROM \"\" WHERE pk = 'x'") == "Path component cannot be an empty string"


def test_multi_attribute_index_keys_are_refused(client: Any, make_table: Any) -> None:
    refused = ("PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
               "multi-attribute RANGE keys.")
    name = make_table(
        pk=("id", "S"), sk=None,
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("id", "h1", "h2", "r1")],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [
            {"AttributeName": "h1", "KeyType": "HASH"}, {"AttributeName": "h2", "KeyType": "HASH"},
            {"AttributeName": "r1", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
    )
    client.put_item(TableName=name, Item={"id": {"S": "i1"}, "h1": {"S": "a"}, "h2": {"S": "x"}, "r1": {"S": "m"}})
    index = f"\"{name}\".\"gsi\""
    for where in (" WHERE h1 = 'a'", " WHERE h1 = 5", " WHERE id = 'i1'", ""):
        assert message_of(client, f"SELECT * FROM {index}{where}") == refused
    assert message_of(client, f"SELECT * FROM {index} WHERE") == (
        "Statement wasn't well formed, can't be processed: Unexpected term")
    response = client.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM {index} WHERE h1 = 'a' AND h2 = 'x' AND r1 = 'm'"},
        {"Statement": f"SELECT * FROM \"{name}\" WHERE id = 'i1'"},
    ])
    multi, base = response["Responses"]
    assert multi["Error"] == {"Code": "ValidationError", "Message": refused}
    assert base["Item"]["id"] == {"S": "i1"}
