"""GetItem: reads by key, projections, key validation, read capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

KEY_MISMATCH = "The provided key element does not match the schema"


def refused(client: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.get_item(**request)
    return error_of(excinfo)


def test_missing_item_answers_empty(client: Any, make_table: Any) -> None:
    table = make_table()
    response = client.get_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"S": "b"}})
    assert set(response) == {"ResponseMetadata"}


def test_get_existing_item(client: Any, make_table: Any) -> None:
    table = make_table()
    item = {"pk": {"S": "a"}, "sk": {"S": "b"}, "v": {"N": "1"}}
    client.put_item(TableName=table, Item=item)
    client.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"S": "c"}})
    for consistent in (True, False):
        response = client.get_item(
            TableName=table, Key={"pk": {"S": "a"}, "sk": {"S": "b"}}, ConsistentRead=consistent
        )
        assert response["Item"] == item


def test_number_key_matches_numerically(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    client.put_item(TableName=table, Item={"pk": {"N": "1"}})
    assert client.get_item(TableName=table, Key={"pk": {"N": "1.00"}})["Item"] == {"pk": {"N": "1"}}


def test_projection_expression(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    item = {
        "pk": {"S": "a"},
        "keep": {"S": "x"},
        "drop": {"S": "y"},
        "m": {"M": {"deep": {"N": "1"}, "other": {"N": "2"}}},
        "l": {"L": [{"S": "zero"}, {"S": "one"}]},
    }
    client.put_item(TableName=table, Item=item)
    response = client.get_item(
        TableName=table,
        Key={"pk": {"S": "a"}},
        ProjectionExpression="keep, #m.deep, l[1], absent",
        ExpressionAttributeNames={"#m": "m"},
    )
    assert response["Item"] == {
        "keep": {"S": "x"},
        "m": {"M": {"deep": {"N": "1"}}},
        "l": {"L": [{"S": "one"}]},
    }


def test_projection_of_missing_item(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.get_item(TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="v")
    assert "Item" not in response


def test_attributes_to_get(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "a"}, "b": {"S": "x"}, "c": {"S": "y"}})
    response = client.get_item(TableName=table, Key={"pk": {"S": "a"}}, AttributesToGet=["b", "missing"])
    assert response["Item"] == {"b": {"S": "x"}}


def test_attributes_to_get_duplicates_refused(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Key={"pk": {"S": "a"}}, AttributesToGet=["b", "b"])
    assert code == "ValidationException"
    assert "Duplicate value in attribute name: b" in message


def test_projection_and_attributes_to_get_cannot_mix(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TableName=table, Key={"pk": {"S": "a"}}, AttributesToGet=["b"], ProjectionExpression="b"
    )
    assert code == "ValidationException"
    assert message == (
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"
    )


def test_unused_expression_attribute_names(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client,
        TableName=table,
        Key={"pk": {"S": "a"}},
        ProjectionExpression="b",
        ExpressionAttributeNames={"#x": "x"},
    )
    assert code == "ValidationException"
    assert "Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}" in message


def test_expression_attribute_names_without_projection(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(
        client, TableName=table, Key={"pk": {"S": "a"}}, ExpressionAttributeNames={"#x": "x"}
    )
    assert code == "ValidationException"
    assert "ExpressionAttributeNames can only be specified when using expressions" in message


# --- key validation -----------------------------------------------------------------------


def test_missing_table(client: Any, unique_name: Any) -> None:
    code, message = refused(client, TableName=unique_name("missing"), Key={"pk": {"S": "a"}})
    assert code == "ResourceNotFoundException"
    assert "Requested resource not found" in message


@pytest.mark.parametrize(
    "key",
    [
        {},
        {"other": {"S": "a"}},
        {"pk": {"S": "a"}, "other": {"S": "b"}},
        {"pk": {"N": "1"}},
        {"pk": {"B": "YQ=="}},
        {"pk": {"SS": ["a"]}},
        {"pk": {"M": {}}},
    ],
)
def test_key_must_match_schema(client: Any, make_table: Any, key: dict[str, Any]) -> None:
    table = make_table(sk=None)
    assert refused(client, TableName=table, Key=key) == ("ValidationException", KEY_MISMATCH)


def test_missing_sort_key(client: Any, make_table: Any) -> None:
    table = make_table()
    assert refused(client, TableName=table, Key={"pk": {"S": "a"}}) == ("ValidationException", KEY_MISMATCH)


def test_empty_string_key(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Key={"pk": {"S": ""}})
    assert code == "ValidationException"
    assert "The AttributeValue for a key attribute cannot contain an empty string value. Key: pk" in message


def test_invalid_number_in_key(client: Any, make_table: Any) -> None:
    table = make_table(pk=("pk", "N"), sk=None)
    code, message = refused(client, TableName=table, Key={"pk": {"N": "b"}})
    assert code == "ValidationException"
    assert "The parameter cannot be converted to a numeric value: b" in message


def test_partition_key_too_large(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    code, message = refused(client, TableName=table, Key={"pk": {"S": "a" * 2049}})
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: "
        "Size of hashkey has exceeded the maximum size limit of2048 bytes"
    )


def test_sort_key_too_large(client: Any, make_table: Any) -> None:
    table = make_table()
    code, message = refused(client, TableName=table, Key={"pk": {"S": "a"}, "sk": {"S": "b" * 1025}})
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: "
        "Aggregated size of all range keys has exceeded the size limit of 1024 bytes"
    )


# --- capacity -----------------------------------------------------------------------------


def capacity(client: Any, table: str, key: dict[str, Any], **options: Any) -> float:
    response = client.get_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL", **options)
    assert response["ConsumedCapacity"]["TableName"] == table
    units: float = response["ConsumedCapacity"]["CapacityUnits"]
    return units


def test_read_capacity(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    key = {"pk": {"S": "k"}}
    assert capacity(client, table, key) == 0.5
    assert capacity(client, table, key, ConsistentRead=True) == 1.0
    # 2 + 1 + 1 + 4093 = 4097 bytes: just over one 4 KB read unit
    client.put_item(TableName=table, Item={"pk": {"S": "k"}, "v": {"S": "x" * 4093}})
    assert capacity(client, table, key) == 1.0
    assert capacity(client, table, key, ConsistentRead=True) == 2.0
    assert capacity(client, table, key, ProjectionExpression="pk") == 1.0


def test_capacity_indexes_mode(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    response = client.get_item(
        TableName=table, Key={"pk": {"S": "k"}}, ReturnConsumedCapacity="INDEXES", ConsistentRead=True
    )
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0
    assert response["ConsumedCapacity"]["Table"]["CapacityUnits"] == 1.0
    none = client.get_item(TableName=table, Key={"pk": {"S": "k"}}, ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in none
