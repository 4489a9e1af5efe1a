"""Concurrent clients on one item: every read-modify-write is atomic.

The server runs operations one at a time, so a conditional write or an
update's read-then-write can never interleave with another writer. Each
thread uses its own boto3 client (and so its own connections).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from tests.api.conftest import make_client

THREADS = 8
UPDATES_PER_THREAD = 25


def run_in_threads(endpoint: str, work: Any) -> list[Any]:
    clients = [make_client(endpoint) for _ in range(THREADS)]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(work, clients))


def test_exactly_one_attribute_not_exists_put_wins(endpoint: str, client: Any, make_table: Any) -> None:
    table = make_table(sk=None)

    def create(thread_client: Any) -> str:
        try:
            thread_client.put_item(
                TableName=table,
                Item={"pk": {"S": "singleton"}, "owner": {"S": str(id(thread_client))}},
                ConditionExpression="attribute_not_exists(pk)",
            )
            return "won"
        except ClientError as error:
            return str(error.response["Error"]["Code"])

    outcomes = run_in_threads(endpoint, create)
    assert outcomes.count("won") == 1
    assert outcomes.count("ConditionalCheckFailedException") == THREADS - 1


def test_no_increment_is_lost(endpoint: str, client: Any, make_table: Any) -> None:
    table = make_table(sk=None)

    def increment(thread_client: Any) -> None:
        for _ in range(UPDATES_PER_THREAD):
            thread_client.update_item(
                TableName=table,
                Key={"pk": {"S": "counter"}},
                UpdateExpression="ADD hits :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )

    run_in_threads(endpoint, increment)
    item = client.get_item(TableName=table, Key={"pk": {"S": "counter"}}, ConsistentRead=True)["Item"]
    assert item["hits"] == {"N": str(THREADS * UPDATES_PER_THREAD)}


def test_optimistic_locking_never_loses_an_update(endpoint: str, client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.put_item(TableName=table, Item={"pk": {"S": "doc"}, "version": {"N": "0"}})

    def bump(thread_client: Any) -> int:
        successes = 0
        for _ in range(UPDATES_PER_THREAD):
            current = thread_client.get_item(TableName=table, Key={"pk": {"S": "doc"}}, ConsistentRead=True)
            version = int(current["Item"]["version"]["N"])
            try:
                thread_client.update_item(
                    TableName=table,
                    Key={"pk": {"S": "doc"}},
                    UpdateExpression="SET version = :next",
                    ConditionExpression="version = :current",
                    ExpressionAttributeValues={":next": {"N": str(version + 1)}, ":current": {"N": str(version)}},
                )
                successes += 1
            except ClientError as error:
                assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
        return successes

    total = sum(run_in_threads(endpoint, bump))
    item = client.get_item(TableName=table, Key={"pk": {"S": "doc"}}, ConsistentRead=True)["Item"]
    assert total > 0
    assert item["version"] == {"N": str(total)}
