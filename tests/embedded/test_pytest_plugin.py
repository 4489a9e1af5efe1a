"""The pytest plugin's fixtures, used exactly as a project would use them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3

from dynastore.pytest_plugin import load_tables

SCHEMA = {
    "tables": [
        {
            "TableName": "app",
            "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            "AttributeDefinitions": [
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": "S"},
            ],
            "Items": [
                {"PK": {"S": "USER#1"}, "SK": {"S": f"ORDER#{n:05d}"}, "total": {"N": str(n)}}
                for n in range(40)
            ],
        }
    ]
}


def test_fresh_database_per_test_part_one(dynamodb_client: Any) -> None:
    assert dynamodb_client.list_tables()["TableNames"] == []
    load_tables(dynamodb_client, SCHEMA)


def test_fresh_database_per_test_part_two(dynamodb_client: Any) -> None:
    assert dynamodb_client.list_tables()["TableNames"] == []


def test_load_tables_from_a_file(tmp_path: Path, dynamodb_client: Any, dynamodb_resource: Any) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    # A plain client: the resource's own client would re-serialise DynamoDB JSON.
    assert load_tables(dynamodb_client, path) == ["app"]
    table = dynamodb_resource.Table("app")
    assert table.scan(Select="COUNT")["Count"] == 40


def test_client_and_resource_share_the_database(dynamodb_client: Any, dynamodb_resource: Any) -> None:
    load_tables(dynamodb_client, SCHEMA)
    assert dynamodb_resource.Table("app").item_count == 40


def test_server_fixture_is_a_real_endpoint(dynastore_server: str, dynamodb_client: Any) -> None:
    load_tables(dynamodb_client, SCHEMA)
    remote = boto3.client("dynamodb", endpoint_url=dynastore_server, region_name="us-east-1",
                          aws_access_key_id="a", aws_secret_access_key="b")
    assert remote.describe_table(TableName="app")["Table"]["ItemCount"] == 40


def test_session_scoped_database_persists(dynastore_db_session: Any) -> None:
    client = dynastore_db_session.client()
    if "shared" not in client.list_tables()["TableNames"]:
        load_tables(client, {"tables": [{**SCHEMA["tables"][0], "TableName": "shared", "Items": []}]})
    assert "shared" in client.list_tables()["TableNames"]


def test_application_clients_find_the_server_through_the_environment(
    dynastore_server: str, dynamodb_client: Any, monkeypatch: Any
) -> None:
    """The recipe in docs/testing-with-dynastore.md for code that builds its own client."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynastore_server)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    load_tables(dynamodb_client, SCHEMA)
    application_client = boto3.client("dynamodb")  # as application code would
    assert application_client.list_tables()["TableNames"] == ["app"]
