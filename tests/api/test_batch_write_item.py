"""BatchWriteItem: puts and deletes across tables, all-or-nothing validation, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

KEY_MISMATCH = "The provided key element does not match the schema"


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.batch_write_item(**request)
    return error_of(excinfo)


def get(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return item


def put(item: dict[str, Any]) -> dict[str, Any]:
    return {"PutRequest": {"Item": item}}


def delete(key: dict[str, Any]) -> dict[str, Any]:
    return {"DeleteRequest": {"Key": key}}


def test_puts_and_deletes_across_tables(client: Any, make_table: Any) -> None:
    hash_table, range_table = make_table(sk=None), make_table(sk=("sk", "N"))
    client.put_item(TableName=hash_table, Item={"pk": {"S": "old"}})
    response = client.batch_write_item(
        RequestItems={
            hash_table: [put({"pk": {"S": "new"}, "v": {"N": "1"}}), delete({"pk": {"S": "old"}})],
            range_table: [put({"pk": {"S": "a"}, "sk": {"N": "2"}})],
        }
    )
    assert response["UnprocessedItems"] == {}
    assert "ConsumedCapacity" not in response
    assert get(client, hash_table, {"pk": {"S": "new"}}) == {"pk": {"S": "new"}, "v": {"N": "1"}}
    assert get(client, hash_table, {"pk": {"S": "old"}}) is None
    assert get(client, range_table, {"pk": {"S": "a"}, "sk": {"N": "2"}}) is not None


def test_delete_of_missing_item_succeeds(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.batch_write_item(RequestItems={table: [delete({"pk": {"S": "none"}})]})
    assert response["UnprocessedItems"] == {}


@pytest.mark.parametrize(
    "requests",
    [
        [put({"pk": {"S": "a"}}), put({"pk": {"S": "a"}, "v": {"S": "x"}})],
        [put({"pk": {"S": "a"}}), delete({"pk": {"S": "a"}})],
        [delete({"pk": {"S": "a"}}), put({"pk": {"S": "a"}})],
        [delete({"pk": {"S": "a"}}), delete({"pk": {"S": "a"}})],
    ],
)
def test_duplicate_keys_refused(client: Any, make_table: Any, requests: list[dict[str, Any]]) -> None:
    table = make_table(sk=None)
    code, message = refused(client, RequestItems={table: requests})
    assert (code, message) == ("ValidationException", "Provided list of item keys contains duplicates")


def test_same_key_in_two_tables_is_fine(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    item = {"pk": {"S": "a"}}
    client.batch_write_item(RequestItems={first: [put(item)], second: [put(item)]})
    assert get(client, first, item) == item
    assert get(client, second, item) == item


def test_more_than_25_requests_in_all_refused(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    requests = [put({"pk": {"S": str(index)}}) for index in range(13)]
    code, message = refused(client, RequestItems={first: requests, second: requests})
    assert (code, message) == ("ValidationException", "Too many items requested for the BatchWriteItem call")


def test_exactly_25_requests(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    requests = [put({"pk": {"S": str(index)}}) for index in range(25)]
    assert client.batch_write_item(RequestItems={table: requests})["UnprocessedItems"] == {}
    assert get(client, table, {"pk": {"S": "24"}}) is not None


def test_request_with_neither_put_nor_delete_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, RequestItems={table: [{}]})
    assert code == "ValidationException"
    assert "must contain exactly one of the supported datatypes" in message


@pytest.mark.parametrize(
    "item", [{}, {"other": {"S": "a"}}, {"pk": {"N": "1"}}, {"pk": {"SS": ["a"]}}]
)
def test_put_key_mismatch(client: Any, make_table: Any, item: dict[str, Any]) -> None:
    table = make_table(sk=None)
    assert refused(client, RequestItems={table: [put(item)]}) == ("ValidationException", KEY_MISMATCH)


def test_missing_sort_key(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(client, RequestItems={table: [put({"pk": {"S": "a"}})]})
    assert (code, message) == ("ValidationException", KEY_MISMATCH)


def test_delete_key_mismatch(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(client, RequestItems={table: [delete({"pk": {"S": "a"}})]})
    assert (code, message) == ("ValidationException", KEY_MISMATCH)


def test_item_too_large(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, RequestItems={table: [put({"pk": {"S": "a"}, "v": {"S": "x" * 409_600}})]}
    )
    assert (code, message) == ("ValidationException", "Item size has exceeded the maximum allowed size")


def test_partition_key_too_large(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, RequestItems={table: [put({"pk": {"S": "a" * 2049}})]})
    assert code == "ValidationException"
    assert "Size of hashkey has exceeded the maximum size limit of2048 bytes" in message


def test_nothing_is_written_when_any_request_is_invalid(client: Any, make_table: Any, unique_name: Any) -> None:
    table = make_table(sk=None)
    code, _ = refused(
        client,
        RequestItems={table: [put({"pk": {"S": "a"}})], unique_name("missing"): [put({"pk": {"S": "b"}})]},
    )
    assert code == "ResourceNotFoundException"
    code, _ = refused(client, RequestItems={table: [put({"pk": {"S": "a"}}), put({"wrong": {"S": "b"}})]})
    assert code == "ValidationException"
    assert get(client, table, {"pk": {"S": "a"}}) is None


def test_consumed_capacity_per_table(client: Any, make_table: Any) -> None:
    first, second = make_table(sk=None), make_table(sk=None)
    large = {"pk": {"S": "big"}, "v": {"S": "x" * 1500}}  # 2 WCU
    response = client.batch_write_item(
        RequestItems={first: [put(large), put({"pk": {"S": "small"}})], second: [delete({"pk": {"S": "a"}})]},
        ReturnConsumedCapacity="TOTAL",
    )
    units = {entry["TableName"]: entry["CapacityUnits"] for entry in response["ConsumedCapacity"]}
    assert units == {first: 3.0, second: 1.0}
    deleted = client.batch_write_item(
        RequestItems={first: [delete({"pk": {"S": "big"}})]}, ReturnConsumedCapacity="INDEXES"
    )
    assert deleted["ConsumedCapacity"][0]["CapacityUnits"] == 2.0
    assert deleted["ConsumedCapacity"][0]["Table"]["CapacityUnits"] == 2.0
