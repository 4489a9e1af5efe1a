"""The pytest plugin's fixtures, used exactly as a project would use them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest

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


def test_aiobotocore_application_clients_find_the_server_through_the_environment(
    dynastore_server: str, dynamodb_client: Any, monkeypatch: Any
) -> None:
    """The same recipe for application code that builds aiobotocore clients itself."""
    session_module = pytest.importorskip("aiobotocore.session")
    for name, value in (("AWS_ENDPOINT_URL_DYNAMODB", dynastore_server), ("AWS_DEFAULT_REGION", "us-east-1"),
                        ("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(name, value)
    load_tables(dynamodb_client, SCHEMA)

    async def application() -> list[str]:
        async with session_module.get_session().create_client("dynamodb") as client:
            return list((await client.list_tables())["TableNames"])

    assert asyncio.run(application()) == ["app"]


def test_aio_clients_from_the_database_fixture(dynastore_db: Any) -> None:
    """The aiobotocore example of docs/testing-with-dynastore.md; in an async
    test (pytest-asyncio, anyio) the body is the test itself."""
    pytest.importorskip("aiobotocore")

    async def create_users_table(dynamodb: Any) -> None:
        await dynamodb.create_table(
            TableName="users", KeySchema=[{"AttributeName": "name", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "name", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )

    async def signup(dynamodb: Any, name: str) -> None:
        await dynamodb.put_item(TableName="users", Item={"name": {"S": name}},
                                ConditionExpression="attribute_not_exists(#n)",
                                ExpressionAttributeNames={"#n": "name"})

    async def body() -> None:
        async with dynastore_db.aio_client() as dynamodb:
            await create_users_table(dynamodb)
            await signup(dynamodb, "ada")
            with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException):
                await signup(dynamodb, "ada")

    asyncio.run(body())


INNER_SUITE = '''
import os

def make(client, name):
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")

def check(client, db_session):
    assert client.list_tables()["TableNames"] == []          # fresh per test
    make(client, "per-test")
    worker = os.environ["PYTEST_XDIST_WORKER"]
    shared = db_session.client()
    make(shared, "w" + worker + "-" + str(len(shared.list_tables()["TableNames"])))
    assert {name.split("-")[0] for name in shared.list_tables()["TableNames"]} == {"w" + worker}

def test_one(dynamodb_client, dynastore_db_session): check(dynamodb_client, dynastore_db_session)
def test_two(dynamodb_client, dynastore_db_session): check(dynamodb_client, dynastore_db_session)
def test_three(dynamodb_client, dynastore_db_session): check(dynamodb_client, dynastore_db_session)
def test_four(dynamodb_client, dynastore_db_session): check(dynamodb_client, dynastore_db_session)
'''


def test_the_plugin_under_pytest_xdist(tmp_path: Path) -> None:
    """A project's suite on two xdist workers: every worker has its own
    databases, session-scoped ones included, with the plugin found through
    its entry point."""
    pytest.importorskip("xdist")
    (tmp_path / "test_inner.py").write_text(INNER_SUITE)
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "-p", "no:benchmark",
         "test_inner.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert "4 passed" in completed.stdout, completed.stdout + completed.stderr
