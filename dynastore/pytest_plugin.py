"""The dynastore pytest plugin (registered through the ``pytest11`` entry
point, so installing dynastore is enough).

Fixtures
    ``dynastore_db``              a fresh in-memory embedded database per test
    ``dynastore_db_module``       one per test module
    ``dynastore_db_session``      one per test session
    ``dynamodb_client``           a boto3 ``dynamodb`` client bound to ``dynastore_db``
    ``dynamodb_resource``         the boto3 resource bound to ``dynastore_db``
    ``dynastore_server``          the endpoint URL of a real HTTP server (free
                                  port) serving ``dynastore_db``

Helper
    ``dynastore.pytest_plugin.load_tables(client, spec)`` creates tables and
    loads items from a schema file or dict (see its docstring).

aiobotocore clients come from the database fixture, inside the test's
coroutine: ``async with dynastore_db.aio_client() as client:`` (no async
fixture here, so the plugin needs no pytest-asyncio).

Each database lives in memory; xdist workers each get their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dynastore.embedded import EmbeddedDatabase


def _database() -> Iterator[EmbeddedDatabase]:
    # Imported here, not at module level: every pytest run in an environment
    # with dynastore installed loads this plugin, and most never use it.
    from dynastore.embedded import open as open_database

    database = open_database()
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def dynastore_db() -> Iterator[EmbeddedDatabase]:
    """A fresh in-memory dynastore database for one test."""
    yield from _database()


@pytest.fixture(scope="module")
def dynastore_db_module() -> Iterator[EmbeddedDatabase]:
    yield from _database()


@pytest.fixture(scope="session")
def dynastore_db_session() -> Iterator[EmbeddedDatabase]:
    yield from _database()


@pytest.fixture
def dynamodb_client(dynastore_db: EmbeddedDatabase) -> Any:
    return dynastore_db.client()


@pytest.fixture
def dynamodb_resource(dynastore_db: EmbeddedDatabase) -> Any:
    return dynastore_db.resource()


@pytest.fixture
def dynastore_server(dynastore_db: EmbeddedDatabase) -> Iterator[str]:
    """The URL of a real HTTP server serving ``dynastore_db``."""
    server = dynastore_db.serve()
    try:
        yield server.endpoint_url
    finally:
        server.stop()


def load_tables(client: Any, spec: str | Path | dict[str, Any]) -> list[str]:
    """Create tables and load items, from a dict or a JSON file of the form::

        {"tables": [
            {"TableName": "app", "KeySchema": [...], "AttributeDefinitions": [...],
             "BillingMode": "PAY_PER_REQUEST",          # any CreateTable arguments
             "Items": [{"PK": {"S": "A"}, ...}, ...]}   # DynamoDB JSON items
        ]}

    Returns the names of the tables created.
    """
    if not isinstance(spec, dict):
        spec = json.loads(Path(spec).read_text())
    names = []
    for table in spec["tables"]:
        arguments = {key: value for key, value in table.items() if key != "Items"}
        arguments.setdefault("BillingMode", "PAY_PER_REQUEST")
        client.create_table(**arguments)
        items = table.get("Items", [])
        for start in range(0, len(items), 25):
            requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
            pending: dict[str, Any] = {arguments["TableName"]: requests}
            while pending:
                pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems", {})
        names.append(arguments["TableName"])
    return names
