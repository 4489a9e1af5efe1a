"""Fault rules (dynastore.faults): matching, counting, seeded probability,
the admin handler, and their effect on real requests through the embedded
API (``dynastore.open()``; its ``.database.faults`` is the registry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import dynastore
from dynastore.errors import ThrottlingException, TransactionConflictException
from dynastore.faults import FaultRuleError, FaultRules, handle_admin, request_touches

KEY_A = {"pk": {"S": "a"}}


# --- the registry, pure -----------------------------------------------------------------------


def test_unarmed_registry_is_a_single_false_attribute() -> None:
    faults = FaultRules()
    assert faults.armed is False
    rule = faults.add("ThrottlingException", count=1)
    assert faults.armed is True
    with pytest.raises(ThrottlingException):
        faults.before("GetItem", {"TableName": "t", "Key": KEY_A})
    assert faults.armed is False  # the only rule is spent
    assert rule.hits == 1 and not rule.active
    faults.before("GetItem", {"TableName": "t", "Key": KEY_A})  # nothing fires


def test_rules_match_operation_table_and_key() -> None:
    faults = FaultRules()
    faults.add("TransactionConflict", operation="PutItem", table="t", key=KEY_A, count=None)
    faults.before("PutItem", {"TableName": "t", "Item": {"pk": {"S": "b"}}})
    faults.before("PutItem", {"TableName": "other", "Item": {"pk": {"S": "a"}}})
    faults.before("DeleteItem", {"TableName": "t", "Key": KEY_A})
    with pytest.raises(TransactionConflictException, match="Transaction is ongoing for the item"):
        faults.before("PutItem", {"TableName": "t", "Item": {"pk": {"S": "a"}, "v": {"N": "1"}}})


def test_number_keys_match_by_value() -> None:
    faults = FaultRules()
    faults.add("ThrottlingException", key={"pk": {"N": "1.50"}})
    with pytest.raises(ThrottlingException):
        faults.before("GetItem", {"TableName": "t", "Key": {"pk": {"N": "1.5"}}})


def test_conflict_rules_leave_reads_and_transactions_to_their_handlers() -> None:
    faults = FaultRules()
    faults.add("TransactionConflict", table="t", count=None)
    faults.before("GetItem", {"TableName": "t", "Key": KEY_A})
    faults.before("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "t", "Item": KEY_A}}]})
    touches = [("t", KEY_A), ("u", KEY_A), ("t", {"pk": {"S": "z"}})]
    assert faults.conflicting_actions("TransactWriteItems", touches) == {0, 2}
    assert faults.rules()[0].hits == 1  # one hit per request, not per action


def test_count_and_clear() -> None:
    faults = FaultRules()
    first = faults.add("InternalServerError", count=2)
    second = faults.add("ThrottlingException", operation="Scan", count=None)
    for _ in range(2):
        with pytest.raises(Exception, match="Internal server error"):
            faults.before("GetItem", {"TableName": "t", "Key": KEY_A})
    faults.before("GetItem", {"TableName": "t", "Key": KEY_A})
    assert first.hits == 2 and first.count == 0
    assert faults.armed  # the Scan rule is unlimited
    assert faults.clear(second.id) == 1
    assert not faults.armed
    assert faults.clear() == 1
    assert faults.rules() == []


def test_seeded_probability_is_replayable() -> None:
    def pattern(seed: int) -> list[bool]:
        faults = FaultRules()
        faults.add("ThrottlingException", count=None, probability=0.5, seed=seed)
        fired = []
        for _ in range(40):
            try:
                faults.before("GetItem", {"TableName": "t", "Key": KEY_A})
                fired.append(False)
            except ThrottlingException:
                fired.append(True)
        return fired

    assert pattern(7) == pattern(7)
    assert 0 < sum(pattern(7)) < 40
    assert pattern(7) != pattern(8)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"error": "Nope"}, "Error must be one of"),
        ({"error": "ThrottlingException", "count": 0}, "Count must be a positive integer"),
        ({"error": "ThrottlingException", "probability": 0.5}, "needs a Seed"),
        ({"error": "Unprocessed", "operation": "PutItem"}, "BatchWriteItem and BatchGetItem only"),
        ({"error": "ThrottlingException", "key": {}}, "Key must be a non-empty map"),
    ],
)
def test_invalid_rules_are_refused(arguments: dict[str, Any], message: str) -> None:
    error = arguments.pop("error")
    with pytest.raises(FaultRuleError, match=message):
        FaultRules().add(error, **arguments)


def test_request_touches() -> None:
    assert request_touches("Scan", {"TableName": "t"}) == [("t", None)]
    assert request_touches("PutItem", {"TableName": "t", "Item": KEY_A}) == [("t", KEY_A)]
    batch = {"RequestItems": {"t": [{"PutRequest": {"Item": KEY_A}}, {"DeleteRequest": {"Key": KEY_A}}]}}
    assert request_touches("BatchWriteItem", batch) == [("t", KEY_A), ("t", KEY_A)]
    gets = {"RequestItems": {"t": {"Keys": [KEY_A]}}}
    assert request_touches("BatchGetItem", gets) == [("t", KEY_A)]
    transact = {"TransactItems": [{"Get": {"TableName": "t", "Key": KEY_A}}]}
    assert request_touches("TransactGetItems", transact) == [("t", KEY_A)]


# --- the admin handler ---------------------------------------------------------------------------


class FakeDatabase:
    def __init__(self) -> None:
        self.faults = FaultRules()


def test_admin_routes() -> None:
    database = FakeDatabase()
    spec = {"Error": "ThrottlingException", "Operation": "Query", "TableName": "t", "Count": 3}
    status, body = handle_admin(database, "POST", "/_dynastore/faults", orjson.dumps(spec))
    assert status == 200
    rule_id = body["Rule"]["Id"]
    assert body["Rule"] == {"Id": rule_id, "Error": "ThrottlingException", "Hits": 0, "Operation": "Query",
                            "TableName": "t", "Remaining": 3, "Active": True}
    assert handle_admin(database, "GET", "/_dynastore/faults", None)[1]["Rules"][0]["Id"] == rule_id
    assert handle_admin(database, "GET", f"/_dynastore/faults/{rule_id}", None)[0] == 200
    assert handle_admin(database, "DELETE", f"/_dynastore/faults/{rule_id}", None) == (200, {"Cleared": 1})
    assert handle_admin(database, "GET", f"/_dynastore/faults/{rule_id}", None)[0] == 404
    assert handle_admin(database, "POST", "/_dynastore/faults", b"[") == (400, {"message": "The body must be a JSON object"})
    assert handle_admin(database, "POST", "/_dynastore/faults", b'{"Error": "x"}')[0] == 400
    assert handle_admin(database, "POST", "/_dynastore/faults", b'{"Error": "InternalServerError", "Bogus": 1}')[0] == 400
    assert handle_admin(database, "PUT", "/_dynastore/faults", None)[0] == 405
    assert handle_admin(database, "GET", "/_dynastore/nothing", None)[0] == 404
    handle_admin(database, "POST", "/_dynastore/faults", {"Error": "TransactionConflictException", "Count": None})
    assert database.faults.rules()[0].error == "TransactionConflict"
    assert handle_admin(database, "DELETE", "/_dynastore/faults", None) == (200, {"Cleared": 1})


# --- through the embedded API: real requests ---------------------------------------------------


@pytest.fixture
def embedded() -> Iterator[Any]:
    with dynastore.open() as db:
        client = db.client(config=Config(retries={"total_max_attempts": 1}))
        client.create_table(
            TableName="tab",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        db.test_client = client
        yield db


def code_of(call: Any, **request: Any) -> str:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return str(excinfo.value.response["Error"]["Code"])


@pytest.mark.parametrize(
    "error", ["ThrottlingException", "ProvisionedThroughputExceededException", "InternalServerError"]
)
def test_request_errors_fail_the_request_before_it_runs(embedded: Any, error: str) -> None:
    client = embedded.test_client
    embedded.database.faults.add(error, operation="PutItem", table="tab", count=1)
    assert code_of(client.put_item, TableName="tab", Item=KEY_A) == error
    assert "Item" not in client.get_item(TableName="tab", Key=KEY_A)
    client.put_item(TableName="tab", Item=KEY_A)  # the rule is spent
    assert embedded.database.faults.rules()[0].hits == 1


def test_single_item_write_to_a_covered_key_gets_transaction_conflict(embedded: Any) -> None:
    client = embedded.test_client
    embedded.database.faults.add("TransactionConflict", table="tab", key=KEY_A, count=None)
    for call, request in [
        (client.put_item, {"TableName": "tab", "Item": KEY_A}),
        (client.update_item, {"TableName": "tab", "Key": KEY_A, "UpdateExpression": "SET v = :v",
                              "ExpressionAttributeValues": {":v": {"S": "x"}}}),
        (client.delete_item, {"TableName": "tab", "Key": KEY_A}),
        (client.batch_write_item, {"RequestItems": {"tab": [{"PutRequest": {"Item": KEY_A}}]}}),
    ]:
        assert code_of(call, **request) == "TransactionConflictException"
    client.put_item(TableName="tab", Item={"pk": {"S": "other"}})
    client.get_item(TableName="tab", Key=KEY_A)  # reads are not held


def test_transactions_report_transaction_conflict(embedded: Any) -> None:
    client = embedded.test_client
    embedded.database.faults.add("TransactionConflict", key=KEY_A, count=2)
    with pytest.raises(ClientError) as excinfo:
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": "tab", "Item": {"pk": {"S": "b"}}}},
            {"Put": {"TableName": "tab", "Item": KEY_A}},
        ])
    response = excinfo.value.response
    assert response["Error"]["Message"].endswith("[None, TransactionConflict]")
    assert response["CancellationReasons"][1] == {
        "Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"
    }
    assert "Item" not in client.get_item(TableName="tab", Key={"pk": {"S": "b"}})
    with pytest.raises(ClientError) as excinfo:
        client.transact_get_items(TransactItems=[{"Get": {"TableName": "tab", "Key": KEY_A}}])
    assert excinfo.value.response["CancellationReasons"] == [
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
    ]
    client.transact_write_items(TransactItems=[{"Put": {"TableName": "tab", "Item": KEY_A}}])  # spent


def test_batch_write_returns_held_items_unprocessed(embedded: Any) -> None:
    client = embedded.test_client
    embedded.database.faults.add("Unprocessed", operation="BatchWriteItem", key=KEY_A)
    b = {"pk": {"S": "b"}}
    response = client.batch_write_item(
        RequestItems={"tab": [{"PutRequest": {"Item": {**KEY_A, "v": {"N": "1"}}}}, {"PutRequest": {"Item": b}}]}
    )
    assert response["UnprocessedItems"] == {"tab": [{"PutRequest": {"Item": {**KEY_A, "v": {"N": "1"}}}}]}
    assert "Item" not in client.get_item(TableName="tab", Key=KEY_A)
    assert client.get_item(TableName="tab", Key=b)["Item"] == b
    retried = client.batch_write_item(RequestItems=response["UnprocessedItems"])
    assert retried["UnprocessedItems"] == {}
    assert client.get_item(TableName="tab", Key=KEY_A)["Item"] == {**KEY_A, "v": {"N": "1"}}


def test_batch_get_returns_held_keys_unprocessed(embedded: Any) -> None:
    client = embedded.test_client
    client.put_item(TableName="tab", Item=KEY_A)
    client.put_item(TableName="tab", Item={"pk": {"S": "b"}})
    embedded.database.faults.add("Unprocessed", table="tab", key=KEY_A, count=1)
    response = client.batch_get_item(
        RequestItems={"tab": {"Keys": [KEY_A, {"pk": {"S": "b"}}], "ConsistentRead": True}}
    )
    assert response["Responses"] == {"tab": [{"pk": {"S": "b"}}]}
    assert response["UnprocessedKeys"] == {"tab": {"Keys": [KEY_A], "ConsistentRead": True}}
    again = client.batch_get_item(RequestItems=response["UnprocessedKeys"])
    assert again["Responses"] == {"tab": [KEY_A]} and again["UnprocessedKeys"] == {}


def test_retry_code_sees_exactly_the_armed_conflicts(embedded: Any) -> None:
    client = embedded.test_client
    rule = embedded.database.faults.add("TransactionConflict", table="tab", key=KEY_A, count=2)
    attempts = 0
    while True:
        attempts += 1
        try:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": "tab", "Key": KEY_A, "UpdateExpression": "ADD n :one",
                            "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            ])
            break
        except ClientError as error:
            assert error.response["CancellationReasons"][0]["Code"] == "TransactionConflict"
            assert attempts < 10
    assert attempts == 3
    assert rule.hits == 2 and not embedded.database.faults.armed
    assert client.get_item(TableName="tab", Key=KEY_A)["Item"]["n"] == {"N": "1"}
