"""TransactGetItems: up to 100 Gets across tables, projections, capacity, limits."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def s(value: str) -> dict[str, str]:
    return {"S": value}


def get(table: str, key: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Get": {"TableName": table, "Key": key, **extra}}


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.transact_get_items(**request)
    return error_of(excinfo)


def test_items_in_request_order_across_tables(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table()
    client.put_item(TableName=first, Item={"pk": s("a"), "v": s("1")})
    client.put_item(TableName=second, Item={"pk": s("b"), "sk": s("x"), "v": s("2")})
    response = client.transact_get_items(
        TransactItems=[
            get(second, {"pk": s("b"), "sk": s("x")}),
            get(first, {"pk": s("missing")}),
            get(first, {"pk": s("a")}),
        ]
    )
    assert response["Responses"] == [
        {"Item": {"pk": s("b"), "sk": s("x"), "v": s("2")}},
        {},
        {"Item": {"pk": s("a"), "v": s("1")}},
    ]
    assert "ConsumedCapacity" not in response


def test_projection_expression(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": s("a"), "name": s("n"), "m": {"M": {"x": s("1"), "y": s("2")}}})
    response = client.transact_get_items(
        TransactItems=[get(table, {"pk": s("a")}, ProjectionExpression="#n, m.y",
                           ExpressionAttributeNames={"#n": "name"})]
    )
    assert response["Responses"] == [{"Item": {"name": s("n"), "m": {"M": {"y": s("2")}}}}]
    nothing = client.transact_get_items(TransactItems=[get(table, {"pk": s("a")}, ProjectionExpression="absent")])
    assert nothing["Responses"] == [{}]
    code, message = refused(client, TransactItems=[get(table, {"pk": s("a")}, ProjectionExpression="v",
                                                       ExpressionAttributeNames={"#unused": "x"})])
    assert code == "ValidationException"
    assert "unused" in message


def test_capacity_is_twice_a_strongly_consistent_read(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    client.put_item(TableName=first, Item={"pk": s("big"), "d": s("x" * 5000)})  # 2 RCU
    response = client.transact_get_items(
        TransactItems=[get(first, {"pk": s("big")}), get(first, {"pk": s("none")}), get(second, {"pk": s("none")})],
        ReturnConsumedCapacity="TOTAL",
    )
    assert response["ConsumedCapacity"] == [
        {"TableName": first, "CapacityUnits": 6.0, "ReadCapacityUnits": 6.0},
        {"TableName": second, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0},
    ]


def test_limits_and_validation(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TransactItems=[])
    assert code == "ValidationException"
    assert "Member must have length greater than or equal to 1" in message
    many = [get(table, {"pk": s(str(i))}) for i in range(101)]
    code, message = refused(client, TransactItems=many)
    assert "Member must have length less than or equal to 100" in message
    assert len(client.transact_get_items(TransactItems=many[:100])["Responses"]) == 100
    code, message = refused(client, TransactItems=[get(table, {"pk": s("a")}), get(table, {"pk": s("a")})])
    assert (code, message) == ("ValidationException", "Transaction request cannot include multiple operations on one item")
    code, message = refused(client, TransactItems=[get(table, {"pk": s("a")}), get(table, {"nope": s("a")})])
    assert (code, message) == (
        "TransactionCanceledException",
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]",
    )
    assert refused(client, TransactItems=[get("no-such-table-here", {"pk": s("a")})])[0] == "ResourceNotFoundException"
