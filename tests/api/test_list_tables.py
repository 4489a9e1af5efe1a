"""ListTables: byte order, Limit, ExclusiveStartTableName, LastEvaluatedTableName."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


@pytest.fixture
def family(client: Any) -> Iterator[list[str]]:
    """Five tables sharing a random prefix, so pages can be checked exactly
    even on a server that holds other tests' tables."""
    prefix = f"list-{uuid.uuid4().hex[:10]}"
    names = [f"{prefix}-{suffix}" for suffix in ("B", "a", "c", "A", "b")]
    for name in names:
        client.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
    yield sorted(names)
    for name in names:
        try:
            client.delete_table(TableName=name)
        except ClientError:
            pass


def all_names(client: Any, **arguments: Any) -> list[str]:
    names: list[str] = []
    while True:
        page = client.list_tables(**arguments)
        names.extend(page["TableNames"])
        if "LastEvaluatedTableName" not in page:
            return names
        arguments["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]


def test_new_tables_are_listed_in_byte_order(client: Any, family: list[str]) -> None:
    names = all_names(client)
    mine = [name for name in names if name in family]
    # Byte order puts upper case before lower case.
    assert mine == family
    assert [name[-1] for name in mine] == ["A", "B", "a", "b", "c"]
    assert names == sorted(names, key=lambda name: name.encode())


def test_limit_pages_and_last_evaluated_name(client: Any, family: list[str]) -> None:
    start = family[0][:-1]  # just before the family: "<prefix>-" sorts before "<prefix>-A"
    page = client.list_tables(ExclusiveStartTableName=start, Limit=2)
    assert page["TableNames"] == family[:2]
    assert page["LastEvaluatedTableName"] == family[1]
    page = client.list_tables(ExclusiveStartTableName=family[1], Limit=2)
    assert page["TableNames"] == family[2:4]


def test_start_name_is_exclusive(client: Any, family: list[str]) -> None:
    page = client.list_tables(ExclusiveStartTableName=family[2], Limit=1)
    assert page["TableNames"] == [family[3]]


def test_start_name_need_not_exist(client: Any, family: list[str]) -> None:
    missing = family[0] + "0"  # sorts between family[0] and family[1]
    assert client.list_tables(ExclusiveStartTableName=missing, Limit=1)["TableNames"] == [family[1]]


def test_paginator_lists_everything(client: Any, family: list[str]) -> None:
    listed = [
        name
        for page in client.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2})
        for name in page["TableNames"]
    ]
    assert all(name in listed for name in family)


def test_deleted_table_is_not_listed(client: Any, family: list[str]) -> None:
    client.delete_table(TableName=family[2])
    names = all_names(client)
    assert family[2] not in names
    assert family[1] in names and family[3] in names


def test_no_last_evaluated_name_on_the_final_page(client: Any) -> None:
    last = f"zzzz-{uuid.uuid4().hex[:10]}"
    client.create_table(
        TableName=last,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        # A page that ends exactly on the last table is the final page.
        page = client.list_tables(ExclusiveStartTableName=last[:-1], Limit=1)
        assert page["TableNames"] == [last]
        assert "LastEvaluatedTableName" not in page
        page = client.list_tables(ExclusiveStartTableName=last)
        assert page["TableNames"] == []
        assert "LastEvaluatedTableName" not in page
    finally:
        client.delete_table(TableName=last)


def test_limit_of_one_hundred(client: Any) -> None:
    assert len(client.list_tables(Limit=100)["TableNames"]) <= 100


@pytest.mark.parametrize(
    ("limit", "constraint"),
    [(0, "greater than or equal to 1"), (101, "less than or equal to 100")],
)
def test_limit_range(client: Any, limit: int, constraint: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.list_tables(Limit=limit)
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert (
        f"Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value {constraint}"
        in message
    )


def test_start_name_pattern(client: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.list_tables(ExclusiveStartTableName="a;b")
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "exclusiveStartTableName" in message
