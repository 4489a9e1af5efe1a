"""DeleteTable: DELETING answer, the table and its items gone at once, protection."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

PROTECTED = (
    "Resource cannot be deleted as it is currently protected against deletion. "
    "Disable deletion protection first."
)


def create(client: Any, name: str, **extra: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    arguments.update(extra)
    return client.create_table(**arguments)["TableDescription"]


def test_delete_answers_deleting(client: Any, unique_name: Any) -> None:
    name = unique_name("delete")
    created = create(client, name)
    client.put_item(TableName=name, Item={"pk": {"S": "abc"}})
    description = client.delete_table(TableName=name)["TableDescription"]
    assert description["TableName"] == name
    assert description["TableStatus"] == "DELETING"
    assert description["TableArn"] == created["TableArn"]
    assert description["TableId"] == created["TableId"]
    assert description["ItemCount"] == 1
    assert description["TableSizeBytes"] == 5
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    # DynamoDB's DeleteTable answer leaves these out.
    for member in ("KeySchema", "AttributeDefinitions", "CreationDateTime", "WarmThroughput"):
        assert member not in description


def test_table_is_gone_at_once(client: Any, unique_name: Any) -> None:
    name = unique_name("delete")
    create(client, name)
    client.delete_table(TableName=name)
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as excinfo:
        client.get_item(TableName=name, Key={"pk": {"S": "abc"}})
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    assert name not in client.list_tables(ExclusiveStartTableName=name[:-1], Limit=5)["TableNames"]


def test_recreated_table_has_no_old_items(client: Any, unique_name: Any) -> None:
    name = unique_name("delete")
    create(client, name)
    client.put_item(TableName=name, Item={"pk": {"S": "old"}})
    client.delete_table(TableName=name)
    create(client, name)
    try:
        assert "Item" not in client.get_item(TableName=name, Key={"pk": {"S": "old"}})
        assert client.describe_table(TableName=name)["Table"]["ItemCount"] == 0
    finally:
        client.delete_table(TableName=name)


def test_delete_missing_table(client: Any, unique_name: Any) -> None:
    name = unique_name("missing")
    with pytest.raises(ClientError) as excinfo:
        client.delete_table(TableName=name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {name} not found",
    )


def test_delete_twice(client: Any, unique_name: Any) -> None:
    name = unique_name("delete")
    create(client, name)
    client.delete_table(TableName=name)
    with pytest.raises(ClientError) as excinfo:
        client.delete_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_delete_by_arn(client: Any, unique_name: Any) -> None:
    name = unique_name("delete")
    arn = create(client, name)["TableArn"]
    assert client.delete_table(TableName=arn)["TableDescription"]["TableName"] == name


def test_deletion_protection_refuses(client: Any, unique_name: Any) -> None:
    name = unique_name("protected")
    create(client, name, DeletionProtectionEnabled=True)
    client.put_item(TableName=name, Item={"pk": {"S": "kept"}})
    with pytest.raises(ClientError) as excinfo:
        client.delete_table(TableName=name)
    assert error_of(excinfo) == ("ValidationException", PROTECTED)
    table = client.describe_table(TableName=name)["Table"]
    assert table["TableStatus"] == "ACTIVE" and table["ItemCount"] == 1
    client.update_table(TableName=name, DeletionProtectionEnabled=False)
    assert client.delete_table(TableName=name)["TableDescription"]["TableStatus"] == "DELETING"


def test_protection_enabled_later_refuses(client: Any, unique_name: Any) -> None:
    name = unique_name("protected")
    create(client, name)
    client.update_table(TableName=name, DeletionProtectionEnabled=True)
    with pytest.raises(ClientError) as excinfo:
        client.delete_table(TableName=name)
    assert error_of(excinfo) == ("ValidationException", PROTECTED)
    client.update_table(TableName=name, DeletionProtectionEnabled=False)
    client.delete_table(TableName=name)


def test_deleted_table_keeps_other_tables(client: Any, unique_name: Any) -> None:
    kept, dropped = unique_name("kept"), unique_name("dropped")
    create(client, kept)
    create(client, dropped)
    try:
        client.put_item(TableName=kept, Item={"pk": {"S": "same"}})
        client.put_item(TableName=dropped, Item={"pk": {"S": "same"}})
        client.delete_table(TableName=dropped)
        assert client.get_item(TableName=kept, Key={"pk": {"S": "same"}})["Item"] == {
            "pk": {"S": "same"}
        }
    finally:
        client.delete_table(TableName=kept)


def test_missing_table_name(client: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.delete_table()
    assert error_of(excinfo)[0] == "ValidationException"
