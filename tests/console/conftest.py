"""Fixtures for the console's tests: a dynastore server on a background thread and
the console served in front of it over HTTP (the way ``dynastore console
--endpoint URL`` runs), plus seed data in single-table-design shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import dynastore
from dynastore.console import ConsoleServer, start_console

BIG_NUMBER = "12345678901234567890123456789012345678"


@pytest.fixture(scope="module")
def embedded() -> Iterator[Any]:
    with dynastore.open() as database:
        yield database


@pytest.fixture(scope="module")
def endpoint(embedded: Any) -> str:
    return embedded.serve().endpoint_url


@pytest.fixture(scope="module")
def client(embedded: Any) -> Any:
    return embedded.client()


@pytest.fixture(scope="module")
def console(endpoint: str) -> Iterator[ConsoleServer]:
    server = start_console(endpoint)
    yield server
    server.stop()


def seed_single_table(client: Any, name: str = "app") -> None:
    """Users with orders under one partition each, and a singleton settings item."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for user in range(1, 4):
        client.put_item(TableName=name, Item={
            "PK": {"S": f"USER#{user}"}, "SK": {"S": "PROFILE#"}, "name": {"S": f"User {user}"},
            "tags": {"SS": ["a", "b"]},
        })
        for order in range(1, 4):
            client.put_item(TableName=name, Item={
                "PK": {"S": f"USER#{user}"}, "SK": {"S": f"ORDER#2024-01-{order:02d}#{order:05d}"},
                "total": {"N": f"{order * 10}.5"}, "status": {"S": "SHIPPED" if order % 2 else "PENDING"},
            })
    client.put_item(TableName=name, Item={
        "PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}, "dark": {"BOOL": True},
        "schema_version": {"N": BIG_NUMBER}, "blob": {"B": b"\x00\x01hello"},
    })


def seed_numbers(client: Any, name: str = "numbers", count: int = 60) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for number in range(count):
        client.put_item(TableName=name, Item={"id": {"N": str(number)}, "v": {"S": "x" * (number % 5)}})
