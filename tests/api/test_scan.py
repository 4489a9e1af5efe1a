"""Scan, black-box: whole tables, parallel segments, paging, filters,
projections, Select, capacity, legacy parameters and validation messages."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

INVALID = "One or more parameter values were invalid: "


def put_all(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        response = client.batch_write_item(RequestItems={table: requests})
        assert not response.get("UnprocessedItems")


def scan_error(client: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.scan(**arguments)
    return error_of(excinfo)


def keys_of(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["pk"]["S"], item["sk"]["S"]) for item in items]


def scan_all(client: Any, **arguments: Any) -> tuple[list[dict[str, Any]], int]:
    """Every item, following LastEvaluatedKey; also the number of pages."""
    items: list[dict[str, Any]] = []
    pages = 0
    while True:
        response = client.scan(**arguments)
        pages += 1
        items += response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return items, pages
        arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]


@pytest.fixture(scope="module")
def table(client: Any) -> Iterator[str]:
    """40 partitions p00..p39, each with sort keys a, b, c; n = partition number.
    Shared by the module's tests, which only read it."""
    name = f"scan-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    put_all(
        client,
        name,
        [
            {"pk": {"S": f"p{p:02d}"}, "sk": {"S": s}, "n": {"N": str(p)}}
            for p in range(40)
            for s in "abc"
        ],
    )
    yield name
    client.delete_table(TableName=name)


ALL_KEYS = sorted((f"p{p:02d}", s) for p in range(40) for s in "abc")


# --- results -----------------------------------------------------------------------


def test_scan_returns_every_item(client: Any, table: str) -> None:
    response = client.scan(TableName=table)
    assert sorted(keys_of(response["Items"])) == ALL_KEYS
    assert response["Count"] == response["ScannedCount"] == 120
    assert "LastEvaluatedKey" not in response


def test_items_of_a_partition_are_together_and_sorted(client: Any, table: str) -> None:
    keys = keys_of(client.scan(TableName=table)["Items"])
    partitions = [pk for pk, _ in keys]
    assert [pk for i, pk in enumerate(partitions) if i == 0 or partitions[i - 1] != pk] == list(
        dict.fromkeys(partitions)
    )
    for pk in set(partitions):
        assert [sk for p, sk in keys if p == pk] == ["a", "b", "c"]


def test_scan_order_is_stable(client: Any, table: str) -> None:
    assert client.scan(TableName=table)["Items"] == client.scan(TableName=table)["Items"]


def test_empty_table(client: Any, make_table: Callable[..., str]) -> None:
    response = client.scan(TableName=make_table())
    assert (response["Items"], response["Count"], response["ScannedCount"]) == ([], 0, 0)


@pytest.mark.parametrize("total", [1, 2, 3, 7, 64])
def test_segments_partition_the_table_exactly(client: Any, table: str, total: int) -> None:
    seen: list[tuple[str, str]] = []
    for segment in range(total):
        items, _ = scan_all(client, TableName=table, Segment=segment, TotalSegments=total)
        seen += keys_of(items)
        partitions = {pk for pk, _ in keys_of(items)}
        for pk in partitions:  # a partition never straddles two segments
            assert sum(1 for p, _ in keys_of(items) if p == pk) == 3
    assert sorted(seen) == ALL_KEYS


def test_segments_with_limit(client: Any, table: str) -> None:
    seen: list[tuple[str, str]] = []
    for segment in range(4):
        items, _ = scan_all(client, TableName=table, Segment=segment, TotalSegments=4, Limit=7)
        seen += keys_of(items)
    assert sorted(seen) == ALL_KEYS


def test_million_segments_is_allowed(client: Any, table: str) -> None:
    response = client.scan(TableName=table, Segment=999_999, TotalSegments=1_000_000)
    assert response["Count"] <= 120


# --- paging -----------------------------------------------------------------------------


def test_limit_pages_through_everything_once(client: Any, table: str) -> None:
    items, pages = scan_all(client, TableName=table, Limit=13)
    assert sorted(keys_of(items)) == ALL_KEYS
    assert pages == 10  # 9 full pages, and the 10th: Limit reached exactly on the 120th item


def test_limit_sets_last_evaluated_key(client: Any, table: str) -> None:
    response = client.scan(TableName=table, Limit=2)
    assert response["Count"] == 2
    last = response["Items"][-1]
    assert response["LastEvaluatedKey"] == {"pk": last["pk"], "sk": last["sk"]}


def test_limit_counts_items_read_before_the_filter(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        Limit=10,
        FilterExpression="sk = :b",
        ExpressionAttributeValues={":b": {"S": "b"}},
    )
    assert response["ScannedCount"] == 10
    assert response["Count"] <= 4
    assert "LastEvaluatedKey" in response


def test_page_stops_at_one_megabyte(client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    filler = "x" * (100 * 1024)
    put_all(client, name, [{"pk": {"S": f"k{i}"}, "sk": {"S": "s"}, "f": {"S": filler}} for i in range(14)])
    first = client.scan(TableName=name, Select="COUNT")
    assert 9 <= first["Count"] <= 11
    assert "LastEvaluatedKey" in first
    items, pages = scan_all(client, TableName=name, ProjectionExpression="pk")
    assert (len(items), pages) == (14, 2)


# --- filters, projections, Select ------------------------------------------------------


def test_filter_expression(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        FilterExpression="n < :three AND sk = :a",
        ExpressionAttributeValues={":three": {"N": "3"}, ":a": {"S": "a"}},
    )
    assert sorted(keys_of(response["Items"])) == [("p00", "a"), ("p01", "a"), ("p02", "a")]
    assert (response["Count"], response["ScannedCount"]) == (3, 120)


def test_filter_may_use_key_attributes(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        FilterExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p07"}},
    )
    assert sorted(keys_of(response["Items"])) == [("p07", "a"), ("p07", "b"), ("p07", "c")]


def test_projection_expression(client: Any, table: str) -> None:
    response = client.scan(TableName=table, ProjectionExpression="sk, #n", ExpressionAttributeNames={"#n": "n"})
    assert all(set(item) == {"sk", "n"} for item in response["Items"])


def test_select_count(client: Any, table: str) -> None:
    response = client.scan(TableName=table, Select="COUNT")
    assert "Items" not in response
    assert (response["Count"], response["ScannedCount"]) == (120, 120)


def test_select_count_with_filter(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        Select="COUNT",
        FilterExpression="sk = :c",
        ExpressionAttributeValues={":c": {"S": "c"}},
    )
    assert (response["Count"], response["ScannedCount"]) == (40, 120)


# --- capacity -------------------------------------------------------------------------------


def test_consumed_capacity_sums_then_rounds(client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    put_all(client, name, [{"pk": {"S": f"k{i}"}, "sk": {"S": "s"}, "f": {"S": "x" * 1000}} for i in range(10)])
    eventual = client.scan(TableName=name, ReturnConsumedCapacity="TOTAL")
    # ten items of ~1 KB: ~10 KB -> 3 read units, halved when eventually consistent
    assert eventual["ConsumedCapacity"]["CapacityUnits"] == 1.5
    strong = client.scan(TableName=name, ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert strong["ConsumedCapacity"]["CapacityUnits"] == 3.0


def test_consumed_capacity_of_empty_scan(client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    response = client.scan(TableName=name, ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0


# --- legacy parameters ------------------------------------------------------------------------


def test_scan_filter_and_attributes_to_get(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        ScanFilter={
            "n": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "10"}, {"N": "11"}]},
            "sk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
        },
        ConditionalOperator="AND",
        AttributesToGet=["pk", "sk"],
    )
    assert sorted(keys_of(response["Items"])) == [("p10", "a"), ("p11", "a")]
    assert all(set(item) == {"pk", "sk"} for item in response["Items"])


def test_scan_filter_or(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        ScanFilter={
            "n": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "5"}]},
            "pk": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "p39"}]},
        },
        ConditionalOperator="OR",
    )
    assert sorted({pk for pk, _ in keys_of(response["Items"])}) == ["p05", "p39"]


@pytest.mark.parametrize(
    ("operator", "values", "expected"),
    [
        ("NE", [{"N": "0"}], 117),
        ("LT", [{"N": "2"}], 6),
        ("GE", [{"N": "38"}], 6),
        ("IN", [{"N": "1"}, {"N": "3"}], 6),
        ("NULL", [], 0),
        ("NOT_NULL", [], 120),
        ("CONTAINS", [{"S": "9"}], 0),
        ("NOT_CONTAINS", [{"S": "9"}], 120),
    ],
)
def test_scan_filter_operators(
    client: Any, table: str, operator: str, values: list[dict[str, Any]], expected: int
) -> None:
    response = client.scan(
        TableName=table,
        ScanFilter={"n": {"ComparisonOperator": operator, "AttributeValueList": values}},
        Select="COUNT",
    )
    assert response["Count"] == expected


def test_not_contains_is_false_on_a_missing_attribute(client: Any, table: str) -> None:
    response = client.scan(
        TableName=table,
        ScanFilter={"missing": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "x"}]}},
        Select="COUNT",
    )
    assert response["Count"] == 0


# --- validation --------------------------------------------------------------------------------


def test_segment_without_total_segments(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, Segment=1) == (
        "ValidationException",
        "The TotalSegments parameter is required but was not present in the request when "
        "Segment parameter is present",
    )


def test_total_segments_without_segment(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, TotalSegments=2) == (
        "ValidationException",
        "The Segment parameter is required but was not present in the request when parameter "
        "TotalSegments is present",
    )


def test_segment_must_be_below_total_segments(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, Segment=2, TotalSegments=2) == (
        "ValidationException",
        "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
        "Segment: 2 is not less than TotalSegments: 2",
    )


def test_total_segments_at_most_a_million(client: Any, table: str) -> None:
    code, message = scan_error(client, TableName=table, Segment=0, TotalSegments=1_000_001)
    assert code == "ValidationException"
    assert "Member must have value less than or equal to 1000000" in message


def test_negative_segment(client: Any, table: str) -> None:
    code, message = scan_error(client, TableName=table, Segment=-1, TotalSegments=2)
    assert code == "ValidationException"
    assert "Member must have value greater than or equal to 0" in message


@pytest.mark.parametrize(
    "start_key",
    [
        {},
        {"pk": {"S": "p01"}},
        {"sk": {"S": "a"}},
        {"pk": {"N": "1"}, "sk": {"S": "a"}},
        {"pk": {"S": "p01"}, "sk": {"S": "a"}, "n": {"N": "1"}},
    ],
)
def test_start_key_must_match_the_schema(client: Any, table: str, start_key: dict[str, Any]) -> None:
    assert scan_error(client, TableName=table, ExclusiveStartKey=start_key) == (
        "ValidationException",
        "The provided starting key is invalid: The provided key element does not match the schema",
    )


def test_start_key_must_lie_in_the_segment(client: Any, table: str) -> None:
    items, _ = scan_all(client, TableName=table, Segment=1, TotalSegments=2)
    start_key = {"pk": items[0]["pk"], "sk": items[0]["sk"]}
    assert scan_error(client, TableName=table, Segment=0, TotalSegments=2, ExclusiveStartKey=start_key) == (
        "ValidationException",
        "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
        "ExclusiveStartKey with correct Segment. TotalSegments: 2 Segment: 0",
    )
    resumed = client.scan(TableName=table, Segment=1, TotalSegments=2, ExclusiveStartKey=start_key)
    assert resumed["Count"] == len(items) - 1


def test_any_start_key_without_segments(client: Any, table: str) -> None:
    response = client.scan(TableName=table, ExclusiveStartKey={"pk": {"S": "zzz"}, "sk": {"S": "a"}})
    assert response["Count"] <= 120


@pytest.mark.parametrize(
    "arguments",
    [
        {"FilterExpression": "attribute_exists(pk.b)"},
        {"FilterExpression": "sk[0] = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}},
        {"ProjectionExpression": "n, pk.x"},
    ],
)
def test_key_attributes_are_scalars(client: Any, table: str, arguments: dict[str, Any]) -> None:
    code, message = scan_error(client, TableName=table, **arguments)
    assert code == "ValidationException"
    assert message.startswith(
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
        "allowed: Key: "
    )


def test_missing_table(client: Any) -> None:
    code, _ = scan_error(client, TableName="no-such-table-here")
    assert code == "ResourceNotFoundException"


def test_select_count_with_projection(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, Select="COUNT", ProjectionExpression="pk") == (
        "ValidationException",
        "Cannot specify the ProjectionExpression when choosing to get only the Count",
    )


def test_select_all_projected_attributes_needs_an_index(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, Select="ALL_PROJECTED_ATTRIBUTES") == (
        "ValidationException",
        "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    )


def test_index_name_is_not_supported_yet(client: Any, table: str) -> None:
    code, message = scan_error(client, TableName=table, IndexName="some-index")
    assert code == "ValidationException"
    assert message.startswith("The table does not have the specified index: some-index")


def test_scan_filter_with_filter_expression(client: Any, table: str) -> None:
    assert scan_error(
        client,
        TableName=table,
        ScanFilter={"n": {"ComparisonOperator": "NULL"}},
        FilterExpression="attribute_exists(n)",
    ) == (
        "ValidationException",
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {ScanFilter} Expression parameters: {FilterExpression}",
    )


def test_conditional_operator_with_one_condition(client: Any, table: str) -> None:
    assert scan_error(
        client,
        TableName=table,
        ScanFilter={"n": {"ComparisonOperator": "NULL"}},
        ConditionalOperator="AND",
    ) == (
        "ValidationException",
        "ConditionalOperator can only be used when Filter or Expected has two or more elements",
    )


def test_scan_filter_argument_count(client: Any, table: str) -> None:
    assert scan_error(
        client,
        TableName=table,
        ScanFilter={"n": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}]}},
    ) == ("ValidationException", INVALID + "Invalid number of argument(s) for the BETWEEN ComparisonOperator")


def test_duplicate_attributes_to_get(client: Any, table: str) -> None:
    assert scan_error(client, TableName=table, AttributesToGet=["a", "a"]) == (
        "ValidationException",
        INVALID + "Duplicate value in attribute name: a",
    )


def test_invalid_filter_expression(client: Any, table: str) -> None:
    code, message = scan_error(client, TableName=table, FilterExpression="n >")
    assert code == "ValidationException"
    assert message.startswith("Invalid FilterExpression: Syntax error; ")


def test_scan_filter_in_takes_more_than_a_hundred_values(client: Any, table: str) -> None:
    values = [{"N": str(n)} for n in range(1000, 1150)] + [{"N": "7"}]
    response = client.scan(
        TableName=table,
        ScanFilter={"n": {"ComparisonOperator": "IN", "AttributeValueList": values}},
    )
    assert sorted(keys_of(response["Items"])) == [("p07", "a"), ("p07", "b"), ("p07", "c")]
