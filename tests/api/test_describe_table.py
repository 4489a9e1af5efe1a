"""DescribeTable: the full TableDescription, statistics, ARNs as names, not found."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def test_on_demand_table(client: Any, make_table: Any) -> None:
    name = make_table()
    table = client.describe_table(TableName=name)["Table"]
    assert table["TableName"] == name
    assert table["TableStatus"] == "ACTIVE"
    assert table["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert table["AttributeDefinitions"] == [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
    ]
    assert table["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }
    summary = table["BillingModeSummary"]
    assert summary["BillingMode"] == "PAY_PER_REQUEST"
    assert summary["LastUpdateToPayPerRequestDateTime"] == table["CreationDateTime"]
    assert table["DeletionProtectionEnabled"] is False
    assert table["WarmThroughput"] == {
        "ReadUnitsPerSecond": 12000,
        "WriteUnitsPerSecond": 4000,
        "Status": "ACTIVE",
    }
    assert table["TableArn"].endswith(f":table/{name}")
    assert table["ItemCount"] == 0 and table["TableSizeBytes"] == 0
    assert "TableClassSummary" not in table
    assert "OnDemandThroughput" not in table


def test_provisioned_table(client: Any, unique_name: Any) -> None:
    name = unique_name("describe")
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 2},
    )
    try:
        table = client.describe_table(TableName=name)["Table"]
        assert table["ProvisionedThroughput"] == {
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": 5,
            "WriteCapacityUnits": 2,
        }
        assert "BillingModeSummary" not in table
        # Warm throughput of a provisioned table follows its capacity.
        assert table["WarmThroughput"] == {
            "ReadUnitsPerSecond": 5,
            "WriteUnitsPerSecond": 2,
            "Status": "ACTIVE",
        }
    finally:
        client.delete_table(TableName=name)


def test_describe_matches_create_answer(client: Any, unique_name: Any) -> None:
    name = unique_name("describe")
    created = client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "B"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]
    try:
        table = client.describe_table(TableName=name)["Table"]
        for member in (
            "TableArn",
            "TableId",
            "CreationDateTime",
            "KeySchema",
            "AttributeDefinitions",
        ):
            assert table[member] == created[member]
    finally:
        client.delete_table(TableName=name)


def test_item_count_and_size_follow_writes(client: Any, make_table: Any) -> None:
    name = make_table(sk=None)
    client.put_item(TableName=name, Item={"pk": {"S": "abc"}, "data": {"S": "hello"}})
    client.put_item(TableName=name, Item={"pk": {"S": "xyz"}})
    table = client.describe_table(TableName=name)["Table"]
    assert table["ItemCount"] == 2
    # Sizes by DynamoDB's rules: attribute name bytes plus value bytes.
    assert table["TableSizeBytes"] == (2 + 3 + 4 + 5) + (2 + 3)
    client.delete_item(TableName=name, Key={"pk": {"S": "xyz"}})
    table = client.describe_table(TableName=name)["Table"]
    assert (table["ItemCount"], table["TableSizeBytes"]) == (1, 14)


def test_describe_by_arn(client: Any, make_table: Any) -> None:
    name = make_table()
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    assert client.describe_table(TableName=arn)["Table"]["TableName"] == name


def test_missing_table(client: Any, unique_name: Any) -> None:
    name = unique_name("missing")
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {name} not found",
    )


def test_missing_table_by_arn_names_the_table(
    client: Any, make_table: Any, unique_name: Any
) -> None:
    existing_arn = client.describe_table(TableName=make_table())["Table"]["TableArn"]
    name = unique_name("missing")
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=existing_arn.rsplit("/", 1)[0] + "/" + name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {name} not found",
    )


def test_deleted_table_is_not_found(client: Any, unique_name: Any) -> None:
    name = unique_name("gone")
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.delete_table(TableName=name)
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_table_name_is_case_sensitive(client: Any, make_table: Any) -> None:
    name = make_table()
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name.upper())
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_missing_table_name(client: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.describe_table()
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "tableName" in message or "TableName" in message


@pytest.mark.parametrize("name", ["ab", "a" * 256])
def test_table_name_length(client: Any, name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ValidationException"


def test_waiters_work(client: Any, make_table: Any) -> None:
    name = make_table()
    client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 2}
    )
    client.delete_table(TableName=name)
    client.get_waiter("table_not_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 2}
    )


def test_data_plane_accepts_the_table_arn(client: Any, make_table: Any) -> None:
    name = make_table(sk=None)
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    client.put_item(TableName=arn, Item={"pk": {"S": "via-arn"}})
    assert client.get_item(TableName=name, Key={"pk": {"S": "via-arn"}})["Item"] == {
        "pk": {"S": "via-arn"}
    }
