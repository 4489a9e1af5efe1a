"""The pure transaction core (dynastore.engine.transactions): parsing,
evaluation against one state, CancellationReasons, capacity, the token book;
and all-or-nothing when storage fails in the middle of a transaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config

import dynastore
from dynastore.engine import transactions
from dynastore.engine.transactions import cancellation_reason, parse_write_action
from dynastore.errors import (
    IdempotentParameterMismatchException,
    TransactionCanceledException,
    ValidationException,
)


def test_parse_refuses_zero_or_two_actions() -> None:
    with pytest.raises(ValidationException, match="should contain Delete or Put or Update"):
        parse_write_action(0, {})
    with pytest.raises(ValidationException, match="can only contain one of Check, Put, Update or Delete"):
        parse_write_action(0, {"Put": {"TableName": "t", "Item": {}}, "Delete": {"TableName": "t", "Key": {}}})


def test_parse_compiles_each_kind() -> None:
    put = parse_write_action(0, {"Put": {"TableName": "t", "Item": {"pk": {"S": "a"}}}})
    assert put.kind == "Put" and put.request_bytes == 3
    update = parse_write_action(
        1,
        {"Update": {"TableName": "t", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": "xyz"}}}},
    )
    assert update.kind == "Update" and update.request_bytes == 3 + len(":v") + 3
    check = parse_write_action(
        2, {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_exists(v)",
                               "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}
    )
    assert check.kind == "ConditionCheck" and check.return_old_on_failure


def test_evaluate_reports_one_reason_per_action() -> None:
    actions = [
        parse_write_action(0, {"Put": {"TableName": "t", "Item": {"pk": {"S": "a"}}}}),
        parse_write_action(1, {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "b"}},
                                                  "ConditionExpression": "attribute_exists(pk)"}}),
        parse_write_action(2, {"Delete": {"TableName": "t", "Key": {"pk": {"S": "c"}}}}),
    ]
    evaluation = transactions.evaluate(actions, [None, None, None], {2}, now=0.0)
    assert evaluation.cancelled
    assert evaluation.reasons == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
    ]
    ok = transactions.evaluate(actions[:1], [None], set(), now=0.0)
    assert not ok.cancelled and ok.mutations[0] is not None


def test_cancelled_error_wire_shape() -> None:
    error = transactions.cancelled([cancellation_reason("None"), cancellation_reason("ConditionalCheckFailed", "m")])
    assert isinstance(error, TransactionCanceledException)
    wire = error.to_wire()
    assert wire["__type"] == "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
    assert wire["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]"
    )
    assert wire["CancellationReasons"] == [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Message": "m"}]


def test_units_are_doubled_and_summed_per_table() -> None:
    assert transactions.read_units_by_table(["a", "a", "b"], [0, 5000, 4096]) == {"a": 6.0, "b": 2.0}


def test_token_records_replay_mismatch_and_expire() -> None:
    record = transactions.token_record(b"f1", now=0, window_seconds=600)
    assert not transactions.replays(None, b"f1", now=0)
    assert transactions.replays(record, b"f1", now=599.9)
    with pytest.raises(IdempotentParameterMismatchException, match="same client token"):
        transactions.replays(record, b"f2", now=1)
    assert not transactions.replays(record, b"f2", now=600)  # expired: a new request
    assert transactions.token_expired(record, now=600)
    assert not transactions.token_expired(record, now=599)


def test_fingerprint_ignores_return_consumed_capacity() -> None:
    items = [{"Put": {"TableName": "t", "Item": {"pk": {"S": "a"}}}}]
    plain = transactions.request_fingerprint({"TransactItems": items})
    assert plain == transactions.request_fingerprint({"TransactItems": items, "ReturnConsumedCapacity": "TOTAL"})
    assert plain != transactions.request_fingerprint({"TransactItems": items * 2})


# --- embedded: the clock and storage failures ------------------------------------------------


@pytest.fixture
def embedded() -> Iterator[Any]:
    with dynastore.open() as db:
        client = db.client()
        client.create_table(
            TableName="accounts",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield db


def counter(token: str) -> dict[str, Any]:
    return {
        "ClientRequestToken": token,
        "TransactItems": [{"Update": {"TableName": "accounts", "Key": {"pk": {"S": "c"}},
                                      "UpdateExpression": "ADD hits :one",
                                      "ExpressionAttributeValues": {":one": {"N": "1"}}}}],
    }


def test_token_expires_after_ten_minutes_of_database_time(embedded: Any) -> None:
    now = [1_000_000.0]
    embedded.database.clock = lambda: now[0]
    client = embedded.client()
    client.transact_write_items(**counter("tok"))
    now[0] += 599
    client.transact_write_items(**counter("tok"))
    assert client.get_item(TableName="accounts", Key={"pk": {"S": "c"}})["Item"]["hits"] == {"N": "1"}
    now[0] += 2
    client.transact_write_items(**counter("tok"))
    assert client.get_item(TableName="accounts", Key={"pk": {"S": "c"}})["Item"]["hits"] == {"N": "2"}


def test_storage_failure_mid_transaction_leaves_nothing_half_applied(embedded: Any) -> None:
    client = embedded.client(config=Config(retries={"total_max_attempts": 1}))
    client.put_item(TableName="accounts", Item={"pk": {"S": "a"}, "balance": {"N": "10"}})
    storage = embedded.database.storage
    real_put = storage.put
    calls = [0]

    def failing_put(table_id: int, row: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError("disk on fire")
        real_put(table_id, row)

    storage.put = failing_put
    try:
        with pytest.raises(client.exceptions.ClientError) as excinfo:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": "accounts", "Key": {"pk": {"S": "a"}},
                            "UpdateExpression": "SET balance = :zero", "ExpressionAttributeValues": {":zero": {"N": "0"}}}},
                {"Put": {"TableName": "accounts", "Item": {"pk": {"S": "b"}, "balance": {"N": "10"}}}},
            ])
    finally:
        storage.put = real_put
    assert excinfo.value.response["Error"]["Code"] == "InternalServerError"
    assert calls[0] == 2
    assert client.get_item(TableName="accounts", Key={"pk": {"S": "a"}})["Item"]["balance"] == {"N": "10"}
    assert "Item" not in client.get_item(TableName="accounts", Key={"pk": {"S": "b"}})


def test_a_cancelled_transaction_still_consumed_its_units() -> None:
    from dynastore.database import Database
    from dynastore.ops import dispatch

    database = Database.open()
    try:
        dispatch(database, "CreateTable", {
            "TableName": "units",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        })
        dispatch(database, "PutItem", {"TableName": "units", "Item": {"pk": {"S": "big"}, "d": {"S": "x" * 1500}}})
        with pytest.raises(TransactionCanceledException) as excinfo:
            dispatch(database, "TransactWriteItems", {"TransactItems": [
                {"ConditionCheck": {"TableName": "units", "Key": {"pk": {"S": "big"}},
                                    "ConditionExpression": "attribute_not_exists(pk)"}},  # 2 KB: 2 x 2
                {"Put": {"TableName": "units", "Item": {"pk": {"S": "new"}}}},  # 1 KB: 2 x 1
            ]})
        assert excinfo.value.write_units_consumed == 6.0  # type: ignore[attr-defined]
    finally:
        database.close()
