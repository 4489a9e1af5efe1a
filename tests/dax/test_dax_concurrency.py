"""Many DAX connections on one key (one client shared by threads: its pool
opens a connection per thread): exactly one attribute_not_exists winner, no
lost increment, and the item cache ends with the last write."""

from __future__ import annotations

import threading
from typing import Any

from botocore.exceptions import ClientError

from tests.dax.conftest import unique

THREADS = 12


def run_threads(work: Any) -> list[Any]:
    results: list[Any] = [None] * THREADS

    def run(index: int) -> None:
        try:
            results[index] = work(index)
        except ClientError as error:
            results[index] = error.response["Error"]["Code"]

    threads = [threading.Thread(target=run, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_exactly_one_conditional_put_wins(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    results = run_threads(lambda index: dax.put_item(
        TableName=hash_table, Item={**key, "winner": {"N": str(index)}}, ConditionExpression="attribute_not_exists(pk)"))
    winners = [index for index, result in enumerate(results) if isinstance(result, dict)]
    assert len(winners) == 1
    assert results.count("ConditionalCheckFailedException") == THREADS - 1
    stored = ddb.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"]
    assert stored["winner"] == {"N": str(winners[0])}
    assert dax.get_item(TableName=hash_table, Key=key)["Item"] == stored


def test_no_increment_is_lost(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}

    def increment(index: int) -> None:
        for _ in range(10):
            dax.update_item(TableName=hash_table, Key=key, UpdateExpression="ADD n :one",
                            ExpressionAttributeValues={":one": {"N": "1"}})

    assert run_threads(increment) == [None] * THREADS
    assert ddb.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"]["n"] == {"N": str(10 * THREADS)}
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["n"] == {"N": str(10 * THREADS)}
