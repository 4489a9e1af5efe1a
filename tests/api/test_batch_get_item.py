"""BatchGetItem: many keys across tables, limits, projections, capacity."""

from __future__ import annotations

import os
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.batch_get_item(**request)
    return error_of(excinfo)


def put_all(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for item in items:
        client.put_item(TableName=table, Item=item)


def test_reads_across_tables(client: Any, make_table: Any) -> None:
    hash_table = make_table(sk=None)
    range_table = make_table(sk=("sk", "N"))
    put_all(client, hash_table, [{"pk": {"S": "a"}, "v": {"N": "1"}}, {"pk": {"S": "b"}}])
    put_all(client, range_table, [{"pk": {"S": "a"}, "sk": {"N": "1"}}])
    response = client.batch_get_item(
        RequestItems={
            hash_table: {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}, {"pk": {"S": "missing"}}]},
            range_table: {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "1.0"}}], "ConsistentRead": True},
        }
    )
    found = sorted(response["Responses"][hash_table], key=lambda item: item["pk"]["S"])
    assert found == [{"pk": {"S": "a"}, "v": {"N": "1"}}, {"pk": {"S": "b"}}]
    assert response["Responses"][range_table] == [{"pk": {"S": "a"}, "sk": {"N": "1"}}]
    assert response["UnprocessedKeys"] == {}
    assert "ConsumedCapacity" not in response


def test_missing_keys_give_empty_responses(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.batch_get_item(RequestItems={table: {"Keys": [{"pk": {"S": "nothing"}}]}})
    assert response["Responses"] == {table: []}
    assert response["UnprocessedKeys"] == {}


def test_projection_per_table(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    put_all(client, table, [{"pk": {"S": "a"}, "b": {"S": "x"}, "c": {"S": "y"}}, {"pk": {"S": "z"}}])
    response = client.batch_get_item(
        RequestItems={
            table: {
                "Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "z"}}],
                "ProjectionExpression": "#b",
                "ExpressionAttributeNames": {"#b": "b"},
            }
        }
    )
    found = response["Responses"][table]
    assert {"b": {"S": "x"}} in found
    assert len(found) == 2  # the item without "b" comes back empty


def test_attributes_to_get(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    put_all(client, table, [{"pk": {"S": "a"}, "b": {"S": "x"}, "c": {"S": "y"}}])
    response = client.batch_get_item(
        RequestItems={table: {"Keys": [{"pk": {"S": "a"}}], "AttributesToGet": ["c"]}}
    )
    assert response["Responses"][table] == [{"c": {"S": "y"}}]


def test_duplicate_keys_refused(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    code, message = refused(
        client, RequestItems={table: {"Keys": [{"pk": {"N": "1"}}, {"pk": {"N": "1.0"}}]}}
    )
    assert (code, message) == ("ValidationException", "Provided list of item keys contains duplicates")


def test_more_than_100_keys_refused(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    keys = [{"pk": {"S": str(index)}} for index in range(60)]
    code, message = refused(client, RequestItems={first: {"Keys": keys}, second: {"Keys": keys[:41]}})
    assert (code, message) == ("ValidationException", "Too many items requested for the BatchGetItem call")


def test_exactly_100_keys(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    keys = [{"pk": {"S": str(index)}} for index in range(50)]
    response = client.batch_get_item(RequestItems={first: {"Keys": keys}, second: {"Keys": keys}})
    assert response["Responses"] == {first: [], second: []}


def test_missing_table(client: Any, make_table: Any, unique_name: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        RequestItems={table: {"Keys": [{"pk": {"S": "a"}}]}, unique_name("missing"): {"Keys": [{"pk": {"S": "a"}}]}},
    )
    assert code == "ResourceNotFoundException"
    assert "Requested resource not found" in message


@pytest.mark.parametrize("key", [{}, {"pk": {"N": "1"}}, {"pk": {"S": "a"}, "x": {"S": "b"}}])
def test_key_must_match_schema(client: Any, make_table: Any, key: dict[str, Any]) -> None:
    table = make_table(sk=None)
    code, message = refused(client, RequestItems={table: {"Keys": [key]}})
    assert (code, message) == ("ValidationException", "The provided key element does not match the schema")


def test_projection_and_attributes_to_get_cannot_mix(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        RequestItems={table: {"Keys": [{"pk": {"S": "a"}}], "AttributesToGet": ["a"], "ProjectionExpression": "a"}},
    )
    assert code == "ValidationException"
    assert "Can not use both expression and non-expression parameters in the same request" in message


def test_consumed_capacity_per_table(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    # 2 + 1 + 1 + 4093 = 4097 bytes: two read units strongly consistent
    put_all(client, first, [{"pk": {"S": "a"}, "v": {"S": "x" * 4093}}, {"pk": {"S": "b"}}])
    response = client.batch_get_item(
        RequestItems={
            first: {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}, {"pk": {"S": "none"}}]},
            second: {"Keys": [{"pk": {"S": "a"}}], "ConsistentRead": True},
        },
        ReturnConsumedCapacity="TOTAL",
    )
    units = {entry["TableName"]: entry["CapacityUnits"] for entry in response["ConsumedCapacity"]}
    assert units == {first: 2.0, second: 1.0}  # 1 + 0.5 + 0.5 eventually consistent
    indexes = client.batch_get_item(
        RequestItems={first: {"Keys": [{"pk": {"S": "b"}}]}}, ReturnConsumedCapacity="INDEXES"
    )
    assert indexes["ConsumedCapacity"][0]["Table"]["CapacityUnits"] == 0.5


def test_response_over_16_megabytes_leaves_keys_unprocessed(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    filler = "x" * 399_000
    keys = [{"pk": {"S": f"{index:03}"}} for index in range(45)]  # 45 x ~400 KB = ~18 MB
    with_filler = [dict(key, v={"S": filler}) for key in keys]
    client.batch_write_item(
        RequestItems={table: [{"PutRequest": {"Item": item}} for item in with_filler[:25]]}
    )
    client.batch_write_item(
        RequestItems={table: [{"PutRequest": {"Item": item}} for item in with_filler[25:]]}
    )
    response = client.batch_get_item(
        RequestItems={table: {"Keys": keys, "ConsistentRead": True}}, ReturnConsumedCapacity="TOTAL"
    )
    found = response["Responses"][table]
    unprocessed = response["UnprocessedKeys"][table]
    assert 0 < len(found) < len(keys)
    assert len(found) + len(unprocessed["Keys"]) == len(keys)
    assert unprocessed["ConsistentRead"] is True
    assert sum(len(item["v"]["S"]) for item in found) <= 16 * 1024 * 1024
    retry = client.batch_get_item(RequestItems=response["UnprocessedKeys"])
    assert len(retry["Responses"][table]) == len(unprocessed["Keys"])


def test_a_reply_longer_than_any_request_is_delivered(client: Any, make_table: Any) -> None:
    """16 MB of binary items are ~21 MB of base64 JSON: more than a request
    may be. Through the HTTP front process (the http transport) the reply
    crossed the link to the engine as one frame, which once exceeded the
    link's bound and stopped the front, dropping every connection."""
    table = make_table(sk=None)
    blob = os.urandom(390_000)
    keys = [{"pk": {"S": f"{index:03}"}} for index in range(40)]  # 40 x 390 KB = 15.6 MB
    for start in range(0, len(keys), 20):
        client.batch_write_item(RequestItems={table: [
            {"PutRequest": {"Item": dict(key, b={"B": blob})}} for key in keys[start:start + 20]
        ]})
    response = client.batch_get_item(RequestItems={table: {"Keys": keys}})
    found = response["Responses"][table]
    assert len(found) + len(response.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])) == len(keys)
    assert len(found) >= 39 and all(item["b"]["B"] == blob for item in found)
    assert client.list_tables()["TableNames"]  # the endpoint still answers
