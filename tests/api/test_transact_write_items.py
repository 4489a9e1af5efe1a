"""TransactWriteItems: all-or-nothing writes across tables, DynamoDB's limits
and messages, CancellationReasons, ClientRequestToken idempotency, capacity."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons"
SAME_ITEM = "Transaction request cannot include multiple operations on one item"


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int | str) -> dict[str, str]:
    return {"N": str(value)}


def get(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return item


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.transact_write_items(**request)
    return error_of(excinfo)


def cancellation(client: Any, **request: Any) -> tuple[str, list[dict[str, Any]]]:
    """(message, CancellationReasons) of a cancelled transaction."""
    with pytest.raises(ClientError) as excinfo:
        client.transact_write_items(**request)
    code, message = error_of(excinfo)
    assert code == "TransactionCanceledException"
    return message, excinfo.value.response["CancellationReasons"]


def put(table: str, item: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": item, **extra}}


def update(table: str, key: dict[str, Any], expression: str, **extra: Any) -> dict[str, Any]:
    return {"Update": {"TableName": table, "Key": key, "UpdateExpression": expression, **extra}}


def delete(table: str, key: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Delete": {"TableName": table, "Key": key, **extra}}


def check(table: str, key: dict[str, Any], expression: str, **extra: Any) -> dict[str, Any]:
    return {"ConditionCheck": {"TableName": table, "Key": key, "ConditionExpression": expression, **extra}}


# --- success ------------------------------------------------------------------------------


def test_all_four_actions_across_tables(client: Any, make_table: Any) -> None:
    accounts, orders = make_table(sk=None), make_table(sk=("sk", "N"))
    client.put_item(TableName=accounts, Item={"pk": s("alice"), "balance": n(100)})
    client.put_item(TableName=accounts, Item={"pk": s("gone")})
    client.put_item(TableName=accounts, Item={"pk": s("guard"), "open": {"BOOL": True}})
    response = client.transact_write_items(
        TransactItems=[
            update(
                accounts,
                {"pk": s("alice")},
                "SET balance = balance - :amount",
                ConditionExpression="balance >= :amount",
                ExpressionAttributeValues={":amount": n(30)},
            ),
            put(orders, {"pk": s("alice"), "sk": n(1), "amount": n(30)}),
            delete(accounts, {"pk": s("gone")}),
            check(accounts, {"pk": s("guard")}, "#open = :yes",
                  ExpressionAttributeNames={"#open": "open"},
                  ExpressionAttributeValues={":yes": {"BOOL": True}}),
        ]
    )
    assert "ConsumedCapacity" not in response
    assert get(client, accounts, {"pk": s("alice")}) == {"pk": s("alice"), "balance": n(70)}
    assert get(client, orders, {"pk": s("alice"), "sk": n(1)}) is not None
    assert get(client, accounts, {"pk": s("gone")}) is None
    assert get(client, accounts, {"pk": s("guard")}) == {"pk": s("guard"), "open": {"BOOL": True}}


def test_update_creates_a_missing_item_and_delete_of_missing_item_succeeds(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.transact_write_items(
        TransactItems=[
            update(table, {"pk": s("new")}, "ADD hits :one", ExpressionAttributeValues={":one": n(1)}),
            delete(table, {"pk": s("never")}),
        ]
    )
    assert get(client, table, {"pk": s("new")}) == {"pk": s("new"), "hits": n(1)}


def test_table_arn_is_accepted(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    arn = client.describe_table(TableName=table)["Table"]["TableArn"]
    client.transact_write_items(TransactItems=[put(arn, {"pk": s("a")})])
    assert get(client, table, {"pk": s("a")}) == {"pk": s("a")}


# --- cancellation ---------------------------------------------------------------------------


def test_failed_condition_cancels_everything(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": s("a"), "v": n(1)})
    message, reasons = cancellation(
        client,
        TransactItems=[
            put(table, {"pk": s("b"), "v": n(2)}),
            update(table, {"pk": s("a")}, "SET v = :two", ConditionExpression="v = :zero",
                   ExpressionAttributeValues={":two": n(2), ":zero": n(0)}),
            delete(table, {"pk": s("c")}),
        ],
    )
    assert message == f"{CANCELLED} [None, ConditionalCheckFailed, None]"
    assert reasons == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        {"Code": "None"},
    ]
    assert get(client, table, {"pk": s("b")}) is None
    assert get(client, table, {"pk": s("a")}) == {"pk": s("a"), "v": n(1)}


def test_every_failed_condition_is_reported(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": s("a")})
    message, reasons = cancellation(
        client,
        TransactItems=[
            check(table, {"pk": s("a")}, "attribute_not_exists(pk)"),
            put(table, {"pk": s("b")}, ConditionExpression="attribute_exists(pk)"),
        ],
    )
    assert message.endswith("[ConditionalCheckFailed, ConditionalCheckFailed]")
    assert [reason["Code"] for reason in reasons] == ["ConditionalCheckFailed"] * 2


def test_all_old_returns_the_item_in_the_reason(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": s("a"), "v": n(5)})
    _, reasons = cancellation(
        client,
        TransactItems=[
            check(table, {"pk": s("a")}, "v > :ten", ExpressionAttributeValues={":ten": n(10)},
                  ReturnValuesOnConditionCheckFailure="ALL_OLD"),
            delete(table, {"pk": s("missing")}, ConditionExpression="attribute_exists(pk)",
                   ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        ],
    )
    assert reasons[0] == {
        "Code": "ConditionalCheckFailed",
        "Message": "The conditional request failed",
        "Item": {"pk": s("a"), "v": n(5)},
    }
    assert "Item" not in reasons[1]  # nothing to return for a missing item


def test_update_that_cannot_apply_is_a_validation_error_reason(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": s("a"), "v": s("text")})
    message, reasons = cancellation(
        client,
        TransactItems=[
            put(table, {"pk": s("b")}),
            update(table, {"pk": s("a")}, "SET v = v + :one", ExpressionAttributeValues={":one": n(1)}),
        ],
    )
    assert message.endswith("[None, ValidationError]")
    assert reasons[1]["Code"] == "ValidationError"
    assert "operand" in reasons[1]["Message"].lower()
    assert get(client, table, {"pk": s("b")}) is None


# --- validation -------------------------------------------------------------------------------


def test_same_item_twice_is_refused(client: Any, make_table: Any) -> None:
    table = make_table()
    key = {"pk": s("a"), "sk": s("1")}
    assert refused(client, TransactItems=[put(table, key), check(table, key, "attribute_exists(pk)")]) == (
        "ValidationException",
        SAME_ITEM,
    )
    assert refused(client, TransactItems=[delete(table, key), delete(table, key)])[1] == SAME_ITEM
    # The same key in two tables is two items.
    other = make_table()
    client.transact_write_items(TransactItems=[put(table, key), put(other, key)])


def test_number_keys_are_compared_by_value(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    assert refused(client, TransactItems=[put(table, {"pk": n("1.0")}), delete(table, {"pk": n("1")})])[1] == SAME_ITEM


def test_action_count_limits(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TransactItems=[])
    assert code == "ValidationException"
    assert "Member must have length greater than or equal to 1" in message
    many = [put(table, {"pk": s(str(i))}) for i in range(101)]
    code, message = refused(client, TransactItems=many)
    assert code == "ValidationException"
    assert "at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100" in message
    client.transact_write_items(TransactItems=many[:100])
    assert client.scan(TableName=table, Select="COUNT")["Count"] == 100


def test_exactly_one_action_per_element(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    both = {**put(table, {"pk": s("a")}), **delete(table, {"pk": s("a")})}
    assert refused(client, TransactItems=[both]) == (
        "ValidationException",
        "TransactItems can only contain one of Check, Put, Update or Delete",
    )
    code, message = refused(client, TransactItems=[{}])
    assert code == "ValidationException"
    assert message == "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"


def test_aggregate_size_over_4_mb_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    big = "x" * (390 * 1024)
    items = [put(table, {"pk": s(str(i)), "data": s(big)}) for i in range(11)]
    code, message = refused(client, TransactItems=items)
    assert code == "ValidationException"
    assert "4MB" in message
    assert client.scan(TableName=table, Select="COUNT")["Count"] == 0
    client.transact_write_items(TransactItems=items[:10])


def test_item_over_400_kb_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TransactItems=[put(table, {"pk": s("a"), "d": s("x" * 410_000)})])
    assert (code, message) == ("ValidationException", "Item size has exceeded the maximum allowed size")


def test_missing_table_fails_before_anything_is_written(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TransactItems=[put(table, {"pk": s("a")}), put("no-such-table-here", {"pk": s("a")})]
    )
    assert code == "ResourceNotFoundException"
    assert get(client, table, {"pk": s("a")}) is None


def test_a_key_that_does_not_fit_the_table_cancels_with_a_validation_error(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    message, reasons = cancellation(
        client,
        TransactItems=[
            put(table, {"pk": s("ok")}),
            delete(table, {"other": s("a")}),
            put(table, {"v": s("a")}),
            check(table, {"pk": n(1)}, "attribute_exists(pk)"),
        ],
    )
    assert message.endswith("[None, ValidationError, ValidationError, ValidationError]")
    assert reasons == [
        {"Code": "None"},
        {"Code": "ValidationError", "Message": "The provided key element does not match the schema"},
        {"Code": "ValidationError", "Message": "One or more parameter values were invalid: Missing the key pk in the item"},
        {"Code": "ValidationError", "Message": "The provided key element does not match the schema"},
    ]
    assert get(client, table, {"pk": s("ok")}) is None


def test_empty_key_value_is_a_validation_exception(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TransactItems=[put(table, {"pk": s("")})])
    assert code == "ValidationException"
    assert "cannot contain an empty string value. Key: pk" in message


def test_names_and_values_without_an_expression_are_accepted(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.transact_write_items(TransactItems=[
        put(table, {"pk": s("a")}, ExpressionAttributeNames={"#n": "x"}, ExpressionAttributeValues={":v": s("y")}),
        delete(table, {"pk": s("b")}, ExpressionAttributeNames={"#n": "x"}),
    ])
    assert get(client, table, {"pk": s("a")}) == {"pk": s("a")}


def test_expression_problems_are_validation_exceptions(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TransactItems=[update(table, {"pk": s("a")}, "SET pk = :v",
                                                          ExpressionAttributeValues={":v": s("b")})])
    assert message == "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"
    code, message = refused(client, TransactItems=[put(table, {"pk": s("a")}, ConditionExpression="attribute_exists(pk)",
                                                       ExpressionAttributeValues={":unused": s("x")})])
    assert code == "ValidationException"
    assert "unused in expressions" in message
    code, message = refused(client, TransactItems=[check(table, {"pk": s("a")}, "attribute_exists(")])
    assert code == "ValidationException"
    assert message.startswith("Invalid ConditionExpression")


# --- capacity -----------------------------------------------------------------------------------


def test_capacity_is_twice_the_plain_units_per_table(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    client.put_item(TableName=first, Item={"pk": s("big"), "d": s("x" * 2500)})  # 3 KB
    response = client.transact_write_items(
        TransactItems=[
            update(first, {"pk": s("big")}, "SET v = :one", ExpressionAttributeValues={":one": n(1)}),  # 3 WCU
            put(first, {"pk": s("small")}),  # 1 WCU
            check(second, {"pk": s("none")}, "attribute_not_exists(pk)"),  # 1 WCU
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert response["ConsumedCapacity"] == [
        {"TableName": first, "CapacityUnits": 8.0, "WriteCapacityUnits": 8.0},
        {"TableName": second, "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0},
    ]
    indexes = client.transact_write_items(
        TransactItems=[put(second, {"pk": s("x")})], ReturnConsumedCapacity="INDEXES"
    )["ConsumedCapacity"]
    assert indexes == [
        {"TableName": second, "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0,
         "Table": {"CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}}
    ]


# --- ClientRequestToken -------------------------------------------------------------------------


def counter_request(table: str, token: str, **extra: Any) -> dict[str, Any]:
    return {
        "ClientRequestToken": token,
        "TransactItems": [update(table, {"pk": s("c")}, "ADD hits :one", ExpressionAttributeValues={":one": n(1)})],
        **extra,
    }


def test_a_retry_with_the_same_token_applies_once(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    token = str(uuid.uuid4())
    client.transact_write_items(**counter_request(table, token))
    retried = client.transact_write_items(**counter_request(table, token, ReturnConsumedCapacity="TOTAL"))
    assert get(client, table, {"pk": s("c")}) == {"pk": s("c"), "hits": n(1)}
    # A retry reports the transactional read of the item, not a write.
    assert retried["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}]
    client.transact_write_items(**counter_request(table, str(uuid.uuid4())))
    assert get(client, table, {"pk": s("c")}) == {"pk": s("c"), "hits": n(2)}


def test_same_token_with_other_parameters_is_a_mismatch(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    token = str(uuid.uuid4())
    client.transact_write_items(**counter_request(table, token))
    other = counter_request(table, token)
    other["TransactItems"][0]["Update"]["ExpressionAttributeValues"][":one"] = n(5)
    code, message = refused(client, **other)
    assert code == "IdempotentParameterMismatchException"
    assert "same client token" in message
    assert get(client, table, {"pk": s("c")}) == {"pk": s("c"), "hits": n(1)}


def test_a_cancelled_request_can_be_retried_with_its_token(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    token = str(uuid.uuid4())
    request = {
        "ClientRequestToken": token,
        "TransactItems": [put(table, {"pk": s("a")}, ConditionExpression="attribute_exists(pk)")],
    }
    cancellation(client, **request)
    client.put_item(TableName=table, Item={"pk": s("a"), "v": n(1)})
    client.transact_write_items(**request)
    assert get(client, table, {"pk": s("a")}) == {"pk": s("a")}


def test_token_longer_than_36_characters_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, **counter_request(table, "t" * 37))
    assert code == "ValidationException"
    assert "at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36" in message


# --- secondary indexes -------------------------------------------------------------------------


def gsi_table(make_table: Any) -> str:
    return str(make_table(
        sk=None,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "owner", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-owner",
            "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    ))


def by_owner(client: Any, table: str, owner: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.query(
        TableName=table, IndexName="by-owner", KeyConditionExpression="#o = :o",
        ExpressionAttributeNames={"#o": "owner"}, ExpressionAttributeValues={":o": s(owner)},
    )["Items"]
    return items


def test_indexes_see_all_of_a_transaction_or_nothing(client: Any, make_table: Any) -> None:
    table = gsi_table(make_table)
    response = client.transact_write_items(
        TransactItems=[put(table, {"pk": s("a"), "owner": s("ann")}), put(table, {"pk": s("b"), "owner": s("ann")})],
        ReturnConsumedCapacity="INDEXES",
    )
    assert len(by_owner(client, table, "ann")) == 2
    capacity = response["ConsumedCapacity"][0]
    assert capacity["Table"] == {"CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}
    assert capacity["GlobalSecondaryIndexes"] == {"by-owner": {"CapacityUnits": 4.0}}
    assert capacity["CapacityUnits"] == 8.0
    # An index key of the wrong type cancels the transaction, after a write was made.
    message, reasons = cancellation(
        client,
        TransactItems=[put(table, {"pk": s("c"), "owner": s("ann")}), put(table, {"pk": s("d"), "owner": n(1)})],
    )
    assert message.endswith("[None, ValidationError]")
    assert "owner" in reasons[1]["Message"]
    assert len(by_owner(client, table, "ann")) == 2
    assert get(client, table, {"pk": s("c")}) is None


# --- fault rules over HTTP (skipped until the admin routes are wired) ----------------------------


def admin(endpoint: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(endpoint + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


@pytest.mark.one_server  # the counters (rules) are the server's own
def test_fault_rules_over_http(endpoint: str, client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    status, body = admin(endpoint, "GET", "/_dynastore/faults")
    if status == 404:
        pytest.skip("the /_dynastore/faults admin routes are not wired yet")
    rule = {"Error": "TransactionConflict", "TableName": table, "Key": {"pk": s("hot")}, "Count": None}
    status, body = admin(endpoint, "POST", "/_dynastore/faults", rule)
    assert status == 200
    rule_id = body["Rule"]["Id"]
    try:
        _, reasons = cancellation(client, TransactItems=[put(table, {"pk": s("cold")}), put(table, {"pk": s("hot")})])
        assert [reason["Code"] for reason in reasons] == ["None", "TransactionConflict"]
        with pytest.raises(ClientError) as excinfo:
            client.put_item(TableName=table, Item={"pk": s("hot")})
        assert error_of(excinfo) == ("TransactionConflictException", "Transaction is ongoing for the item")
        client.put_item(TableName=table, Item={"pk": s("cold")})
        status, body = admin(endpoint, "GET", f"/_dynastore/faults/{rule_id}")
        assert body["Rule"]["Hits"] >= 2
    finally:
        assert admin(endpoint, "DELETE", f"/_dynastore/faults/{rule_id}") == (200, {"Cleared": 1})
    client.put_item(TableName=table, Item={"pk": s("hot")})
