"""BatchExecuteStatement and ExecuteTransaction over boto3 on every store."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


@pytest.fixture
def table(client: Any, make_table: Any) -> str:
    name = str(make_table(pk=("pk", "S"), sk=None))
    for pk, n in (("a", 1), ("b", 2), ("c", 3)):
        client.put_item(TableName=name, Item={"pk": {"S": pk}, "n": {"N": str(n)}})
    return name


def item(client: Any, table: str, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = client.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")
    return found


# --- BatchExecuteStatement -----------------------------------------------------------------


def test_batch_of_reads(client: Any, table: str) -> None:
    response = client.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a'"},
        {"Statement": f'SELECT n FROM "{table}" WHERE pk = ?', "Parameters": [{"S": "b"}], "ConsistentRead": True},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'missing'"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE n = 1"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE"},
    ], ReturnConsumedCapacity="TOTAL")
    responses = response["Responses"]
    assert responses[0] == {"TableName": table, "Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}
    assert responses[1] == {"TableName": table, "Item": {"n": {"N": "2"}}}
    assert responses[2] == {"TableName": table}
    assert responses[3] == {"TableName": table, "Error": {
        "Code": "ValidationError",
        "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where clause."}}
    assert responses[4] == {"Error": {
        "Code": "ValidationError", "Message": "Statement wasn't well formed, can't be processed: Unexpected term"}}
    assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0}]


def test_batch_of_writes_reports_each_statement(client: Any, table: str) -> None:
    response = client.batch_execute_statement(Statements=[
        {"Statement": f"SLECT * FROM \"{table}\" WHERE pk = 'a'"},
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'a'}}"},
        {"Statement": f"UPDATE \"{table}\" SET t = 'yes' WHERE pk = 'a' AND n = 99",
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'new'}}"},
        {"Statement": f"UPDATE \"{table}\" SET n = n + 1 WHERE pk = 'b' RETURNING MODIFIED NEW *"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'c'"},
        {"Statement": "INSERT INTO \"no-such-table\" VALUE {'pk': 'x'}"},
    ])
    responses = response["Responses"]
    assert responses[0] == {"Error": {
        "Code": "ValidationError",
        "Message": "Statement wasn't well formed, can't be processed: Expected data manipulation"}}
    assert responses[1] == {"TableName": table, "Error": {
        "Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}}
    assert responses[2] == {"TableName": table, "Error": {
        "Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
        "Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}}
    assert responses[3:6] == [{"TableName": table}, {"TableName": table, "Item": {"n": {"N": "3"}}}, {"TableName": table}]
    assert responses[6]["Error"]["Code"] == "ResourceNotFound"
    assert item(client, table, "new") == {"pk": {"S": "new"}}
    assert item(client, table, "b") == {"pk": {"S": "b"}, "n": {"N": "3"}}
    assert item(client, table, "c") is None
    assert "t" not in (item(client, table, "a") or {})


def test_batch_limits_and_mixing(client: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.batch_execute_statement(Statements=[
            {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a'"},
            {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'a'"},
        ])
    assert error_of(excinfo)[0] == "ValidationException"
    assert item(client, table, "a") is not None
    with pytest.raises(ClientError) as excinfo:
        client.batch_execute_statement(Statements=[{"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a'"}] * 26)
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 25" in message


# --- ExecuteTransaction ----------------------------------------------------------------------


def test_transaction_of_writes_applies_all(client: Any, table: str) -> None:
    response = client.execute_transaction(TransactStatements=[
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'd', 'n': 4}}"},
        {"Statement": f"UPDATE \"{table}\" SET n = n + 10 WHERE pk = 'a'"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'b'"},
        {"Statement": f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'c' AND n = ?)", "Parameters": [{"N": "3"}]},
    ], ReturnConsumedCapacity="TOTAL")
    assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 8.0, "WriteCapacityUnits": 8.0}]
    assert item(client, table, "d") == {"pk": {"S": "d"}, "n": {"N": "4"}}
    assert item(client, table, "a") == {"pk": {"S": "a"}, "n": {"N": "11"}}
    assert item(client, table, "b") is None


def test_transaction_cancelled_applies_nothing(client: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[
            {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'e'}}"},
            {"Statement": f"UPDATE \"{table}\" SET n = 0 WHERE pk = 'ghost'"},
            {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'a'}}"},
            {"Statement": f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'c' AND n = 0)",
             "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        ])
    code, message = error_of(excinfo)
    assert code == "TransactionCanceledException"
    assert message == ("Transaction cancelled, please refer cancellation reasons for specific reasons "
                       "[None, ConditionalCheckFailed, DuplicateItem, ConditionalCheckFailed]")
    reasons = excinfo.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[2] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert reasons[3]["Item"] == {"pk": {"S": "c"}, "n": {"N": "3"}}
    assert item(client, table, "e") is None


def test_transaction_token_runs_once(client: Any, table: str) -> None:
    token = uuid.uuid4().hex
    statements = [{"Statement": f"UPDATE \"{table}\" SET n = n + 1 WHERE pk = 'a'"}]
    client.execute_transaction(TransactStatements=statements, ClientRequestToken=token)
    client.execute_transaction(TransactStatements=statements, ClientRequestToken=token)
    assert item(client, table, "a") == {"pk": {"S": "a"}, "n": {"N": "2"}}
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(
            TransactStatements=[{"Statement": f"UPDATE \"{table}\" SET n = n + 5 WHERE pk = 'a'"}],
            ClientRequestToken=token)
    assert error_of(excinfo)[0] == "IdempotentParameterMismatchException"


def test_transaction_of_reads(client: Any, table: str) -> None:
    response = client.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a'"},
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'missing'"},
    ], ReturnConsumedCapacity="TOTAL")
    assert response["Responses"] == [{"Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}, {}]
    assert response["ConsumedCapacity"][0]["CapacityUnits"] == 4.0


TRANSACTION_ERRORS = [
    ([("SELECT * FROM \"{t}\" WHERE pk = 'a'", ()), ("DELETE FROM \"{t}\" WHERE pk = 'a'", ())],
     "ExecuteTransaction API does not support both read and write operations in the same request."),
    ([("SELECT * FROM \"{t}\" WHERE", ())],
     "Validation failed in TransactStatements[0]: Statement wasn't well formed, can't be processed: Unexpected term"),
    ([("DELETE FROM \"{t}\" WHERE pk = 'a'", ()), ("UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' RETURNING ALL NEW *", ())],
     "Validation failed in TransactStatements[1]: RETURNING clause is not supported in ExecuteTransaction."),
    ([("SELECT * FROM \"{t}\" WHERE n = 1", ())],
     "Validation failed in TransactStatements[0]: "
     "Select statements within ExecuteTransaction must specify the primary key in the where clause."),
    ([("UPDATE \"{t}\" SET v = ? WHERE pk = 'a'", ())],
     "Validation failed in TransactStatements[0]: Number of parameters in request and statement don't match."),
]


@pytest.mark.parametrize(("statements", "message"), TRANSACTION_ERRORS, ids=[case[1][:50] for case in TRANSACTION_ERRORS])
def test_transaction_errors(client: Any, table: str, statements: list[tuple[str, Any]], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[{"Statement": text.format(t=table)} for text, _ in statements])
    assert error_of(excinfo) == ("ValidationException", message)
    assert item(client, table, "a") == {"pk": {"S": "a"}, "n": {"N": "1"}}


def test_transaction_size_limit(client: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.execute_transaction(TransactStatements=[
            {"Statement": f"UPDATE \"{table}\" SET n = 1 WHERE pk = '{i}'"} for i in range(101)])
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 100" in message
