"""The 400 KB item limit and the key size limits, at their exact boundaries."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

ITEM_MAX_BYTES = 400 * 1024
TOO_LARGE = "Item size has exceeded the maximum allowed size"
HASH_KEY_TOO_LARGE = (
    "One or more parameter values were invalid: "
    "Size of hashkey has exceeded the maximum size limit of2048 bytes"
)
RANGE_KEY_TOO_LARGE = (
    "One or more parameter values were invalid: "
    "Aggregated size of all range keys has exceeded the size limit of 1024 bytes"
)


def put_error(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.put_item(**request)
    return error_of(excinfo)


def filler_item(total_bytes: int, name: str = "v") -> dict[str, Any]:
    """An item of exactly ``total_bytes``: "pk" (2) + "k" (1) + name + filler."""
    return {"pk": {"S": "k"}, name: {"S": "x" * (total_bytes - 3 - len(name))}}


def test_item_of_exactly_400_kb_is_accepted(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item=filler_item(ITEM_MAX_BYTES))
    item = client.get_item(TableName=table, Key={"pk": {"S": "k"}}, ConsistentRead=True)["Item"]
    assert len(item["v"]["S"]) == ITEM_MAX_BYTES - 4


def test_item_one_byte_over_is_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    assert put_error(client, TableName=table, Item=filler_item(ITEM_MAX_BYTES + 1)) == (
        "ValidationException",
        TOO_LARGE,
    )


def test_attribute_names_count_towards_the_size(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item=filler_item(ITEM_MAX_BYTES, name="n" * 200))
    code, message = put_error(client, TableName=table, Item=filler_item(ITEM_MAX_BYTES + 1, name="n" * 200))
    assert (code, message) == ("ValidationException", TOO_LARGE)


def test_strings_count_utf8_bytes(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    two_byte_characters = "\u00e9" * ((ITEM_MAX_BYTES - 4) // 2)  # exactly 400 KB in UTF-8
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"S": two_byte_characters}})
    code, message = put_error(
        client, TableName=table, Item={"pk": {"S": "k"}, "v": {"S": two_byte_characters + "x"}}
    )
    assert (code, message) == ("ValidationException", TOO_LARGE)


def test_size_is_checked_before_the_table(client: Any, unique_name: Any) -> None:
    code, message = put_error(client, TableName=unique_name("missing"), Item=filler_item(ITEM_MAX_BYTES + 1))
    assert (code, message) == ("ValidationException", TOO_LARGE)


def update_error(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.update_item(**request)
    return error_of(excinfo)


def test_update_is_measured_without_its_key_plus_a_cost_per_action(client: Any, make_table: Any) -> None:
    """DynamoDB measures an update as the new item without its key attributes,
    plus 3 bytes, plus 19 per SET/ADD action and 2 per REMOVE/DELETE action
    (dynoxide bisected this on the live service)."""
    table = make_table(sk=None)
    key = {"pk": {"S": "k"}}  # 3 bytes of key
    one_set = {"UpdateExpression": "SET w = :y", "ExpressionAttributeValues": {":y": {"S": "y"}}}
    # new item = base + 2 ("w" + "y"); measured = new - 3 + 3 + 19 = base + 21
    client.put_item(TableName=table, Item=filler_item(ITEM_MAX_BYTES - 21))
    client.update_item(TableName=table, Key=key, **one_set)
    client.put_item(TableName=table, Item=filler_item(ITEM_MAX_BYTES - 20))
    assert update_error(client, TableName=table, Key=key, **one_set) == (
        "ValidationException",
        "Item size to update has exceeded the maximum allowed size",
    )


def test_update_of_an_oversized_result_changes_nothing(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item=filler_item(300_000))
    code, message = update_error(
        client,
        TableName=table,
        Key={"pk": {"S": "k"}},
        UpdateExpression="SET w = :y",
        ExpressionAttributeValues={":y": {"S": "y" * 110_000}},
    )
    assert (code, message) == ("ValidationException", "Item size to update has exceeded the maximum allowed size")
    item = client.get_item(TableName=table, Key={"pk": {"S": "k"}}, ConsistentRead=True)["Item"]
    assert "w" not in item


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ({"S": "a" * 2048}, True),
        ({"S": "a" * 2049}, False),
        ({"S": "\u00e9" * 1024}, True),
        ({"S": "\u00e9" * 1024 + "a"}, False),
    ],
)
def test_partition_key_limit(client: Any, make_table: Any, value: dict[str, Any], accepted: bool) -> None:
    table = make_table(sk=None)
    if accepted:
        client.put_item(TableName=table, Item={"pk": value})
        assert client.get_item(TableName=table, Key={"pk": value})["Item"] == {"pk": value}
    else:
        assert put_error(client, TableName=table, Item={"pk": value}) == ("ValidationException", HASH_KEY_TOO_LARGE)


@pytest.mark.parametrize(("length", "accepted"), [(2048, True), (2049, False)])
def test_binary_partition_key_limit(client: Any, make_table: Any, length: int, accepted: bool) -> None:
    table = make_table(pk=("pk", "B"), sk=None)
    item = {"pk": {"B": b"\xff" * length}}
    if accepted:
        client.put_item(TableName=table, Item=item)
    else:
        assert put_error(client, TableName=table, Item=item) == ("ValidationException", HASH_KEY_TOO_LARGE)


@pytest.mark.parametrize(("length", "accepted"), [(1024, True), (1025, False)])
def test_sort_key_limit(client: Any, make_table: Any, length: int, accepted: bool) -> None:
    table = make_table()
    item = {"pk": {"S": "a"}, "sk": {"S": "s" * length}}
    if accepted:
        client.put_item(TableName=table, Item=item)
        assert client.get_item(TableName=table, Key=item)["Item"] == item
    else:
        assert put_error(client, TableName=table, Item=item) == ("ValidationException", RANGE_KEY_TOO_LARGE)


def test_key_limits_apply_to_every_operation(client: Any, make_table: Any) -> None:
    table = make_table()
    key = {"pk": {"S": "a"}, "sk": {"S": "s" * 1025}}
    for call in (
        lambda: client.get_item(TableName=table, Key=key),
        lambda: client.delete_item(TableName=table, Key=key),
        lambda: client.update_item(TableName=table, Key=key),
        lambda: client.batch_get_item(RequestItems={table: {"Keys": [key]}}),
        lambda: client.batch_write_item(RequestItems={table: [{"DeleteRequest": {"Key": key}}]}),
    ):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ValidationException", RANGE_KEY_TOO_LARGE)


def test_largest_number_key(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    largest = "9.9999999999999999999999999999999999999E+125"
    client.put_item(TableName=table, Item={"pk": {"N": largest}})
    item = client.get_item(TableName=table, Key={"pk": {"N": largest}})["Item"]
    assert item["pk"]["N"] == "99999999999999999999999999999999999999" + "0" * 88
