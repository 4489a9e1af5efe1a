"""Query, black-box: key conditions, order, paging, filters, projections,
Select, capacity, legacy parameters and DynamoDB's validation messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

INVALID = "One or more parameter values were invalid: "


def put_all(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for item in items:
        client.put_item(TableName=table, Item=item)


def query_error(client: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.query(**arguments)
    return error_of(excinfo)


def eq(name: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"ComparisonOperator": "EQ", "AttributeValueList": [value]}


@pytest.fixture
def range_table(client: Any, make_table: Callable[..., str]) -> str:
    """pk S / sk S with partition "p" holding sk 1..5 (and a "c" attribute) and
    partition "q" holding one item."""
    table = make_table()
    put_all(
        client,
        table,
        [{"pk": {"S": "p"}, "sk": {"S": str(i)}, "c": {"N": str(i)}} for i in range(1, 6)]
        + [{"pk": {"S": "q"}, "sk": {"S": "1"}}],
    )
    return table


def sort_keys(response: dict[str, Any], name: str = "sk") -> list[str]:
    return [next(iter(item[name].values())) for item in response["Items"]]


# --- results -------------------------------------------------------------------------


def test_hash_table_query_returns_the_item(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table(sk=None)
    put_all(client, table, [{"pk": {"S": "a"}, "x": {"S": "1"}}, {"pk": {"S": "b"}}])
    response = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "a"}},
    )
    assert response["Items"] == [{"pk": {"S": "a"}, "x": {"S": "1"}}]
    assert (response["Count"], response["ScannedCount"]) == (1, 1)
    assert "LastEvaluatedKey" not in response


def test_empty_partition(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "nothing"}},
    )
    assert (response["Items"], response["Count"], response["ScannedCount"]) == ([], 0, 0)


def test_strings_sort_by_utf8_bytes(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table()
    keys = ["1", "2", "10", "a", "b", "aa", "ab", "A", "B", "é", "z"]
    put_all(client, table, [{"pk": {"S": "p"}, "sk": {"S": key}} for key in keys])
    response = client.query(
        TableName=table, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}}
    )
    assert sort_keys(response) == sorted(keys, key=lambda key: key.encode("utf-8"))


def test_numbers_sort_numerically(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table(sk=("sk", "N"))
    keys = ["0", "99.1", "10.9", "10.1", "9.1", "9", "1.9", "1", "0.01", "-0.01", "-1", "-1.01", "-99.1"]
    put_all(client, table, [{"pk": {"S": "p"}, "sk": {"N": key}} for key in keys])
    response = client.query(
        TableName=table, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}}
    )
    assert sort_keys(response) == sorted(keys, key=float)
    backwards = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ScanIndexForward=False,
    )
    assert sort_keys(backwards) == sorted(keys, key=float, reverse=True)


def test_binaries_sort_by_unsigned_bytes(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table(sk=("sk", "B"))
    keys = [b"\x00", b"\x01", b"\x7f", b"\x80", b"\xff", b"\x80\x00", b"a"]
    put_all(client, table, [{"pk": {"S": "p"}, "sk": {"B": key}} for key in keys])
    response = client.query(
        TableName=table, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}}
    )
    assert [item["sk"]["B"] for item in response["Items"]] == sorted(keys)


@pytest.mark.parametrize(
    ("condition", "values", "expected"),
    [
        ("sk = :a", {":a": "3"}, ["3"]),
        ("sk < :a", {":a": "3"}, ["1", "2"]),
        ("sk <= :a", {":a": "3"}, ["1", "2", "3"]),
        ("sk > :a", {":a": "3"}, ["4", "5"]),
        ("sk >= :a", {":a": "3"}, ["3", "4", "5"]),
        (":a > sk", {":a": "3"}, ["1", "2"]),
        ("sk BETWEEN :a AND :b", {":a": "2", ":b": "4"}, ["2", "3", "4"]),
        ("begins_with(sk, :a)", {":a": "4"}, ["4"]),
    ],
)
def test_sort_key_conditions(
    client: Any, range_table: str, condition: str, values: dict[str, str], expected: list[str]
) -> None:
    attribute_values = {name: {"S": value} for name, value in values.items()}
    attribute_values[":p"] = {"S": "p"}
    response = client.query(
        TableName=range_table,
        KeyConditionExpression=f"pk = :p AND {condition}",
        ExpressionAttributeValues=attribute_values,
    )
    assert sort_keys(response) == expected
    assert response["Count"] == response["ScannedCount"] == len(expected)


def test_scan_index_forward_false_reverses(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ScanIndexForward=False,
    )
    assert sort_keys(response) == ["5", "4", "3", "2", "1"]


def test_number_key_condition_compares_numerically(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table(pk=("pk", "N"), sk=("sk", "N"))
    put_all(client, table, [{"pk": {"N": "1"}, "sk": {"N": str(n)}} for n in (2, 10, 33)])
    response = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p AND sk > :s",
        ExpressionAttributeValues={":p": {"N": "1.0"}, ":s": {"N": "9"}},
    )
    assert sort_keys(response) == ["10", "33"]


# --- paging ------------------------------------------------------------------------


def test_limit_returns_last_evaluated_key_and_resumes(client: Any, range_table: str) -> None:
    arguments = {
        "TableName": range_table,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p"}},
        "Limit": 2,
    }
    first = client.query(**arguments)
    assert sort_keys(first) == ["1", "2"]
    assert first["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"S": "2"}}
    second = client.query(**arguments, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert sort_keys(second) == ["3", "4"]
    third = client.query(**arguments, ExclusiveStartKey=second["LastEvaluatedKey"])
    assert sort_keys(third) == ["5"]
    assert "LastEvaluatedKey" not in third


def test_limit_reached_exactly_still_returns_last_evaluated_key(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Limit=5,
    )
    assert response["Count"] == 5
    assert response["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"S": "5"}}
    after = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Limit=5,
        ExclusiveStartKey=response["LastEvaluatedKey"],
    )
    assert (after["Items"], after["Count"]) == ([], 0)
    assert "LastEvaluatedKey" not in after


def test_reverse_paging(client: Any, range_table: str) -> None:
    arguments = {
        "TableName": range_table,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p"}},
        "ScanIndexForward": False,
        "Limit": 2,
    }
    first = client.query(**arguments)
    assert sort_keys(first) == ["5", "4"]
    second = client.query(**arguments, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert sort_keys(second) == ["3", "2"]


def test_limit_counts_items_read_before_the_filter(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        FilterExpression="c = :two",
        ExpressionAttributeValues={":p": {"S": "p"}, ":two": {"N": "2"}},
        Limit=3,
    )
    assert sort_keys(response) == ["2"]
    assert (response["Count"], response["ScannedCount"]) == (1, 3)
    assert response["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"S": "3"}}


def test_exclusive_start_key_with_sort_condition(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p AND sk >= :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "2"}},
        ExclusiveStartKey={"pk": {"S": "p"}, "sk": {"S": "3"}},
    )
    assert sort_keys(response) == ["4", "5"]


def test_page_stops_at_one_megabyte(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table()
    filler = "x" * (100 * 1024)
    put_all(
        client, table, [{"pk": {"S": "p"}, "sk": {"S": f"{i:02d}"}, "f": {"S": filler}} for i in range(14)]
    )
    first = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="COUNT",
    )
    assert 9 <= first["Count"] <= 11
    assert first["LastEvaluatedKey"]["sk"] == {"S": f"{first['Count'] - 1:02d}"}
    rest = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="COUNT",
        ExclusiveStartKey=first["LastEvaluatedKey"],
    )
    assert first["Count"] + rest["Count"] == 14
    assert "LastEvaluatedKey" not in rest


# --- filters, projections, Select ------------------------------------------------------


def test_filter_reduces_count_not_scanned_count(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        FilterExpression="c > :n",
        ExpressionAttributeValues={":p": {"S": "p"}, ":n": {"N": "3"}},
    )
    assert sort_keys(response) == ["4", "5"]
    assert (response["Count"], response["ScannedCount"]) == (2, 5)


def test_projection_expression(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table()
    put_all(
        client,
        table,
        [
            {
                "pk": {"S": "p"}, "sk": {"S": "1"}, "b": {"S": "b1"},
                "e": {"M": {"a": {"S": "x"}, "d": {"S": "y"}}}, "f": {"L": [{"S": "0"}, {"S": "1"}, {"S": "2"}]},
            },
            {"pk": {"S": "p"}, "sk": {"S": "2"}},
        ],
    )
    response = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ProjectionExpression="f[2], e.#d, b",
        ExpressionAttributeNames={"#d": "d"},
    )
    assert response["Items"] == [
        {"b": {"S": "b1"}, "e": {"M": {"d": {"S": "y"}}}, "f": {"L": [{"S": "2"}]}},
        {},
    ]


def test_select_count(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p AND sk >= :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "2"}},
        Select="COUNT",
    )
    assert "Items" not in response
    assert (response["Count"], response["ScannedCount"]) == (4, 4)


def test_select_count_with_limit_returns_last_evaluated_key(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="COUNT",
        Limit=2,
    )
    assert (response["Count"], response["LastEvaluatedKey"]["sk"]) == (2, {"S": "2"})


def test_select_specific_attributes_with_projection(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p AND sk = :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "1"}},
        Select="SPECIFIC_ATTRIBUTES",
        ProjectionExpression="c",
    )
    assert response["Items"] == [{"c": {"N": "1"}}]


def test_select_all_attributes(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p AND sk = :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "1"}},
        Select="ALL_ATTRIBUTES",
    )
    assert response["Items"] == [{"pk": {"S": "p"}, "sk": {"S": "1"}, "c": {"N": "1"}}]


# --- capacity ----------------------------------------------------------------------------


def test_consumed_capacity_sums_sizes_before_rounding(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table()
    filler = "x" * 1500
    put_all(client, table, [{"pk": {"S": "p"}, "sk": {"S": str(i)}, "f": {"S": filler}} for i in range(4)])
    arguments = {
        "TableName": table,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p"}},
        "ReturnConsumedCapacity": "TOTAL",
    }
    eventual = client.query(**arguments)
    # four items of ~1.5 KB: 6 KB -> 2 read units, halved when eventually consistent
    assert eventual["ConsumedCapacity"]["TableName"] == table
    assert eventual["ConsumedCapacity"]["CapacityUnits"] == 1.0
    strong = client.query(**arguments, ConsistentRead=True)
    assert strong["ConsumedCapacity"]["CapacityUnits"] == 2.0


def test_consumed_capacity_of_nothing_is_the_minimum(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "none"}},
        ReturnConsumedCapacity="INDEXES",
    )
    capacity = response["ConsumedCapacity"]
    assert (capacity["TableName"], capacity["CapacityUnits"]) == (range_table, 0.5)
    assert capacity["Table"]["CapacityUnits"] == 0.5


def test_filter_does_not_reduce_capacity(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table()
    put_all(
        client, table, [{"pk": {"S": "p"}, "sk": {"S": str(i)}, "f": {"S": "x" * 3000}} for i in range(4)]
    )
    response = client.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        FilterExpression="attribute_not_exists(f)",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ReturnConsumedCapacity="TOTAL",
        ConsistentRead=True,
    )
    assert response["Count"] == 0
    assert response["ConsumedCapacity"]["CapacityUnits"] == 3.0


def test_no_consumed_capacity_unless_asked(client: Any, range_table: str) -> None:
    for mode in (None, "NONE"):
        extra = {"ReturnConsumedCapacity": mode} if mode else {}
        response = client.query(
            TableName=range_table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "p"}},
            **extra,
        )
        assert "ConsumedCapacity" not in response


# --- legacy parameters ---------------------------------------------------------------------


def test_key_conditions(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditions={
            "pk": eq("pk", {"S": "p"}),
            "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"S": "2"}, {"S": "3"}]},
        },
    )
    assert sort_keys(response) == ["2", "3"]


def test_query_filter_and_attributes_to_get(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"})},
        QueryFilter={
            "c": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "4"}]},
            "d": {"ComparisonOperator": "NULL"},
        },
        ConditionalOperator="AND",
        AttributesToGet=["c"],
    )
    assert response["Items"] == [{"c": {"N": "4"}}, {"c": {"N": "5"}}]
    assert (response["Count"], response["ScannedCount"]) == (2, 5)


def test_query_filter_or(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"})},
        QueryFilter={
            "c": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "1"}, {"N": "5"}]},
            "zz": {"ComparisonOperator": "NOT_NULL"},
        },
        ConditionalOperator="OR",
    )
    assert sort_keys(response) == ["1", "5"]


def test_key_conditions_with_filter_expression(client: Any, range_table: str) -> None:
    response = client.query(
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"})},
        FilterExpression="c = :v",
        ExpressionAttributeValues={":v": {"N": "3"}},
    )
    assert sort_keys(response) == ["3"]


# --- validation ------------------------------------------------------------------------------


def test_no_key_condition(client: Any, range_table: str) -> None:
    assert query_error(client, TableName=range_table) == (
        "ValidationException",
        "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
    )


def test_missing_table(client: Any) -> None:
    code, _ = query_error(
        client,
        TableName="no-such-table-here",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
    )
    assert code == "ResourceNotFoundException"


def test_condition_type_must_match_schema(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"N": "1"}},
    ) == ("ValidationException", INVALID + "Condition parameter type does not match schema type")
    assert query_error(
        client,
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"}), "sk": eq("sk", {"N": "1"})},
    ) == ("ValidationException", INVALID + "Condition parameter type does not match schema type")


def test_begins_with_refused_on_number_sort_key(client: Any, make_table: Callable[..., str]) -> None:
    table = make_table(sk=("sk", "N"))
    code, message = query_error(
        client,
        TableName=table,
        KeyConditions={
            "pk": eq("pk", {"S": "p"}),
            "sk": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"N": "1"}]},
        },
    )
    assert (code, message) == (
        "ValidationException",
        INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type",
    )


def test_partition_key_condition_is_required(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditions={"sk": eq("sk", {"S": "1"})},
    ) == ("ValidationException", "Query condition missed key schema element: pk")


def test_legacy_non_indexable_operator(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"}), "sk": {"ComparisonOperator": "NOT_NULL"}},
    ) == ("ValidationException", "Attempted conditional constraint is not an indexable operation")


@pytest.mark.parametrize(
    "conditions",
    [
        {"pk": {"ComparisonOperator": "LE", "AttributeValueList": [{"S": "a"}]}},
        {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
         "x": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
    ],
)
def test_unsupported_key_conditions_on_hash_table(
    client: Any, make_table: Callable[..., str], conditions: dict[str, Any]
) -> None:
    table = make_table(sk=None)
    assert query_error(client, TableName=table, KeyConditions=conditions) == (
        "ValidationException", "Query key condition not supported",
    )


def test_too_many_key_conditions(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditions={name: {"ComparisonOperator": "NULL"} for name in ("a", "b", "c")},
    ) == ("ValidationException", "Conditions can be of length 1 or 2 only")


@pytest.mark.parametrize(
    "start_key",
    [{}, {"pk": {"S": "p"}}, {"pk": {"S": "p"}, "other": {"S": "1"}},
     {"pk": {"S": "p"}, "sk": {"S": "1"}, "x": {"S": "1"}}],
)
def test_start_key_must_have_the_key_attributes(client: Any, range_table: str, start_key: dict[str, Any]) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ExclusiveStartKey=start_key,
    ) == ("ValidationException", "The provided starting key is invalid")


def test_start_key_types_must_match(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ExclusiveStartKey={"pk": {"S": "p"}, "sk": {"N": "1"}},
    ) == ("ValidationException", "The provided starting key is invalid")


def test_start_key_attribute_values_are_validated(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ExclusiveStartKey={"pk": {"S": "p", "N": "1"}, "sk": {"S": "1"}},
    ) == (
        "ValidationException",
        "The provided starting key is invalid: Supplied AttributeValue has more than one "
        "datatypes set, must contain exactly one of the supported datatypes",
    )


def test_start_key_outside_the_partition(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ExclusiveStartKey={"pk": {"S": "q"}, "sk": {"S": "1"}},
    ) == (
        "ValidationException",
        "The provided starting key is outside query boundaries based on provided conditions",
    )


def test_start_key_outside_the_sort_condition(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p AND sk > :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "3"}},
        ExclusiveStartKey={"pk": {"S": "p"}, "sk": {"S": "2"}},
    ) == ("ValidationException", "The provided starting key does not match the range key predicate")


def test_index_name_is_not_supported_yet(client: Any, range_table: str) -> None:
    code, message = query_error(
        client,
        TableName=range_table,
        IndexName="some-index",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
    )
    assert code == "ValidationException"
    assert message.startswith("The table does not have the specified index: some-index")


def test_limit_must_be_positive(client: Any, range_table: str) -> None:
    code, message = query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Limit=0,
    )
    assert code == "ValidationException"
    assert "Member must have value greater than or equal to 1" in message


def test_select_count_with_projection(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="COUNT",
        ProjectionExpression="c",
    ) == (
        "ValidationException",
        "1 validation error detected: Cannot specify the ProjectionExpression when choosing to "
        "get only the Count",
    )


def test_select_all_projected_attributes_needs_an_index(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="ALL_PROJECTED_ATTRIBUTES",
    ) == (
        "ValidationException",
        "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    )


def test_mixing_expressions_and_legacy(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        QueryFilter={"c": {"ComparisonOperator": "NULL"}},
    ) == (
        "ValidationException",
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {QueryFilter} Expression parameters: {KeyConditionExpression}",
    )


def test_conditional_operator_needs_a_filter(client: Any, range_table: str) -> None:
    assert query_error(
        client, TableName=range_table, KeyConditions={"pk": eq("pk", {"S": "p"})}, ConditionalOperator="OR"
    ) == ("ValidationException", "ConditionalOperator cannot be used without Filter or Expected")


def test_filter_expression_may_not_use_key_attributes(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        FilterExpression="sk = :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "1"}},
    ) == (
        "ValidationException",
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: sk",
    )


def test_filter_expression_may_not_use_nested_key_paths(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        FilterExpression="attribute_exists(c) AND pk[1] = :s",
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "1"}},
    ) == (
        "ValidationException",
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: pk",
    )


def test_projection_may_not_use_nested_key_paths(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ProjectionExpression="c, sk.x",
        ExpressionAttributeValues={":p": {"S": "p"}},
    ) == (
        "ValidationException",
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
        "allowed: Key: sk",
    )


def test_query_filter_may_not_use_key_attributes(client: Any, range_table: str) -> None:
    assert query_error(
        client,
        TableName=range_table,
        KeyConditions={"pk": eq("pk", {"S": "p"})},
        QueryFilter={"sk": eq("sk", {"S": "1"})},
    ) == (
        "ValidationException",
        "QueryFilter can only contain non-primary key attributes: Primary key attribute: sk",
    )


def test_unused_expression_attribute_value(client: Any, range_table: str) -> None:
    code, message = query_error(
        client,
        TableName=range_table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}, ":unused": {"S": "x"}},
    )
    assert code == "ValidationException"
    assert message == (
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}"
    )


def test_value_checks_apply_to_every_request_of_a_shape(client: Any, range_table: str) -> None:
    """The key condition's shape is compiled once; value checks still run each time."""
    arguments = {
        "TableName": range_table,
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
    }
    ok = client.query(**arguments, ExpressionAttributeValues={":p": {"S": "p"}, ":a": {"S": "2"}, ":b": {"S": "3"}})
    assert sort_keys(ok) == ["2", "3"]
    code, message = query_error(
        client, **arguments, ExpressionAttributeValues={":p": {"S": "p"}, ":a": {"S": "3"}, ":b": {"S": "2"}}
    )
    assert code == "ValidationException"
    assert message.startswith(
        "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater "
        "than or equal to lower bound"
    )
    assert query_error(
        client, **arguments, ExpressionAttributeValues={":p": {"S": ""}, ":a": {"S": "2"}, ":b": {"S": "3"}}
    ) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot "
        "contain an empty string value. Key: pk",
    )
    again = client.query(**arguments, ExpressionAttributeValues={":p": {"S": "q"}, ":a": {"S": "0"}, ":b": {"S": "9"}})
    assert sort_keys(again) == ["1"]


def test_names_bind_per_request(client: Any, range_table: str) -> None:
    text = "#a = :p AND #b >= :s"
    forward = client.query(
        TableName=range_table,
        KeyConditionExpression=text,
        ExpressionAttributeNames={"#a": "pk", "#b": "sk"},
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "4"}},
    )
    assert sort_keys(forward) == ["4", "5"]
    code, message = query_error(
        client,
        TableName=range_table,
        KeyConditionExpression=text,
        ExpressionAttributeNames={"#a": "sk", "#b": "pk"},
        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"S": "4"}},
    )
    assert (code, message) == ("ValidationException", "Query key condition not supported")


def test_key_condition_errors_come_before_a_missing_table(client: Any) -> None:
    code, message = query_error(
        client, TableName="no-such-table-here", KeyConditionExpression="pk = = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
    )
    assert code == "ValidationException"
    assert message.startswith("Invalid KeyConditionExpression: Syntax error; ")
    assert query_error(
        client, TableName="no-such-table-here", KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}, ":q": {"S": "q"}},
    ) == (
        "ValidationException",
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:q}",
    )
