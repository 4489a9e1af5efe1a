"""The embedded database through aiobotocore: its own serialisation, parsing,
paginators and waiters, answered in-process without sockets.

Each test drives its coroutine with ``asyncio.run`` (no pytest-asyncio needed).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import dynastore

pytest.importorskip("aiobotocore")

from aiobotocore.config import AioConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "N"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())  # type: ignore[arg-type]


def key(pk: str, sk: int) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}}


async def create(client: Any, name: str = "things", **extra: Any) -> None:
    await client.create_table(TableName=name, **{**KEYS, **extra})


def test_crud_and_a_condition_failure_through_aiobotocore_parsing() -> None:
    async def scenario() -> None:
        with dynastore.open() as db:
            async with db.aio_client() as client:
                await create(client)
                await client.put_item(TableName="things", Item={**key("a", 1), "v": {"S": "one"}})
                got = await client.get_item(TableName="things", Key=key("a", 1))
                assert got["Item"]["v"] == {"S": "one"}
                updated = await client.update_item(
                    TableName="things", Key=key("a", 1), UpdateExpression="SET v = :v ADD n :one",
                    ExpressionAttributeValues={":v": {"S": "two"}, ":one": {"N": "1"}},
                    ReturnValues="ALL_NEW",
                )
                assert updated["Attributes"]["v"] == {"S": "two"}
                assert updated["Attributes"]["n"] == {"N": "1"}
                with pytest.raises(client.exceptions.ConditionalCheckFailedException) as failure:
                    await client.put_item(
                        TableName="things", Item=key("a", 1),
                        ConditionExpression="attribute_not_exists(pk)",
                        ReturnValuesOnConditionCheckFailure="ALL_OLD",
                    )
                # The modeled error fields are parsed by aiobotocore too.
                assert failure.value.response["Error"]["Message"] == "The conditional request failed"
                assert failure.value.response["Item"]["v"] == {"S": "two"}
                await client.delete_item(TableName="things", Key=key("a", 1))
                assert "Item" not in await client.get_item(TableName="things", Key=key("a", 1))
                with pytest.raises(client.exceptions.ResourceNotFoundException):
                    await client.get_item(TableName="missing", Key=key("a", 1))

    run(scenario)


def test_query_paginator_and_waiters() -> None:
    async def scenario() -> None:
        with dynastore.open() as db:
            async with db.aio_client() as client:
                await create(client)
                await client.get_waiter("table_exists").wait(TableName="things", WaiterConfig={"Delay": 1})
                for n in range(23):
                    await client.put_item(TableName="things", Item=key("a", n))
                paginator = client.get_paginator("query")
                pages = [
                    page
                    async for page in paginator.paginate(
                        TableName="things", KeyConditionExpression="pk = :p",
                        ExpressionAttributeValues={":p": {"S": "a"}},
                        PaginationConfig={"PageSize": 5},
                    )
                ]
                assert [len(page["Items"]) for page in pages] == [5, 5, 5, 5, 3]
                sks = [item["sk"]["N"] for page in pages for item in page["Items"]]
                assert sks == [str(n) for n in range(23)]
                await client.delete_table(TableName="things")
                await client.get_waiter("table_not_exists").wait(TableName="things", WaiterConfig={"Delay": 1})

    run(scenario)


def test_transactions_and_their_cancellation_reasons() -> None:
    async def scenario() -> None:
        with dynastore.open() as db:
            async with db.aio_client() as client:
                await create(client)
                await client.transact_write_items(TransactItems=[
                    {"Put": {"TableName": "things", "Item": {**key("acct", 1), "balance": {"N": "10"}}}},
                    {"Put": {"TableName": "things", "Item": {**key("acct", 2), "balance": {"N": "0"}}}},
                ])
                with pytest.raises(client.exceptions.TransactionCanceledException) as cancelled:
                    await client.transact_write_items(TransactItems=[
                        {"Update": {"TableName": "things", "Key": key("acct", 1),
                                    "UpdateExpression": "SET balance = balance - :x",
                                    "ConditionExpression": "balance >= :x",
                                    "ExpressionAttributeValues": {":x": {"N": "50"}}}},
                        {"Update": {"TableName": "things", "Key": key("acct", 2),
                                    "UpdateExpression": "SET balance = balance + :x",
                                    "ExpressionAttributeValues": {":x": {"N": "50"}}}},
                    ])
                reasons = cancelled.value.response["CancellationReasons"]
                assert [reason["Code"] for reason in reasons] == ["ConditionalCheckFailed", "None"]
                got = await client.transact_get_items(TransactItems=[
                    {"Get": {"TableName": "things", "Key": key("acct", n)}} for n in (1, 2)
                ])
                assert [r["Item"]["balance"]["N"] for r in got["Responses"]] == ["10", "0"]

    run(scenario)


def test_streams_client() -> None:
    async def scenario() -> None:
        with dynastore.open() as db:
            async with db.aio_client() as client, db.aio_streams_client() as streams:
                await create(client, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
                await client.put_item(TableName="things", Item=key("s", 1))
                await client.delete_item(TableName="things", Key=key("s", 1))
                arn = (await client.describe_table(TableName="things"))["Table"]["LatestStreamArn"]
                stream = (await streams.describe_stream(StreamArn=arn))["StreamDescription"]
                iterator = (await streams.get_shard_iterator(
                    StreamArn=arn, ShardId=stream["Shards"][0]["ShardId"], ShardIteratorType="TRIM_HORIZON",
                ))["ShardIterator"]
                records = (await streams.get_records(ShardIterator=iterator))["Records"]
                assert [record["eventName"] for record in records] == ["INSERT", "REMOVE"]
                assert records[0]["dynamodb"]["NewImage"] == key("s", 1)
                listed = (await streams.list_streams(TableName="things"))["Streams"]
                assert [entry["StreamArn"] for entry in listed] == [arn]

    run(scenario)


def test_two_databases_at_once_stay_apart() -> None:
    async def fill(db: Any, name: str, count: int) -> list[str]:
        async with db.aio_client() as client:
            await create(client, name)
            await asyncio.gather(*(client.put_item(TableName=name, Item=key("p", n)) for n in range(count)))
            listed = await client.list_tables()
            scanned = await client.scan(TableName=name, Select="COUNT")
            return [*listed["TableNames"], str(scanned["Count"])]

    async def scenario() -> None:
        with dynastore.open() as first, dynastore.open() as second:
            answers = await asyncio.gather(fill(first, "first", 7), fill(second, "second", 11))
            assert answers == [["first", "7"], ["second", "11"]]

    run(scenario)


def test_closing_the_database_and_the_clients() -> None:
    db = dynastore.open()

    async def scenario() -> None:
        async with db.aio_client() as client:
            await client.list_tables()
            db.close()
            with pytest.raises(RuntimeError, match="closed"):
                await client.list_tables()

    run(scenario)
    # A second event loop reuses the process-wide aiobotocore session.
    with dynastore.open() as other:
        async def again() -> None:
            async with other.aio_client() as client:
                assert (await client.list_tables())["TableNames"] == []

        run(again)


def test_threads_and_an_event_loop_share_one_database_without_lost_updates() -> None:
    """A busy lock (another thread mid-request) is waited for off the event loop."""
    with dynastore.open() as db:
        counter = key("counter", 0)
        add = {"UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}
        sync_client = db.client()
        sync_client.create_table(TableName="things", **KEYS)

        def from_a_thread() -> None:
            own = db.client()
            for _ in range(40):
                own.update_item(TableName="things", Key=counter, **add)

        async def from_the_loop() -> None:
            async with db.aio_client() as client:
                for _ in range(10):
                    await asyncio.gather(*(client.update_item(TableName="things", Key=counter, **add)
                                           for _ in range(4)))

        threads = [threading.Thread(target=from_a_thread) for _ in range(2)]
        for thread in threads:
            thread.start()
        asyncio.run(from_the_loop())
        for thread in threads:
            thread.join()
        assert sync_client.get_item(TableName="things", Key=counter)["Item"]["n"] == {"N": "120"}


def test_admin_controls_apply_to_aio_clients() -> None:
    async def scenario() -> None:
        with dynastore.open() as db:
            config = AioConfig(retries={"total_max_attempts": 1})
            async with db.aio_client(config=config) as client:
                await create(client, GlobalSecondaryIndexes=[{
                    "IndexName": "by_v", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }], AttributeDefinitions=[*KEYS["AttributeDefinitions"], {"AttributeName": "v", "AttributeType": "S"}])
                db.faults.add("ProvisionedThroughputExceededException", operation="GetItem")
                with pytest.raises(client.exceptions.ProvisionedThroughputExceededException):
                    await client.get_item(TableName="things", Key=key("a", 1))
                db.gsi_lag_seconds = 5
                await client.put_item(TableName="things", Item={**key("a", 1), "v": {"S": "x"}})
                query = {"TableName": "things", "IndexName": "by_v", "KeyConditionExpression": "v = :v",
                         "ExpressionAttributeValues": {":v": {"S": "x"}}}
                assert (await client.query(**query))["Count"] == 0
                db.advance_clock(6)
                assert (await client.query(**query))["Count"] == 1

    run(scenario)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_aiobotocore_is_imported_only_when_the_aio_api_is_used() -> None:
    completed = _python(
        "import sys, dynastore\n"
        "with dynastore.open() as db: db.client().list_tables()\n"
        "assert 'aiobotocore' not in sys.modules and 'aiohttp' not in sys.modules, 'imported'\n"
    )
    assert completed.returncode == 0, completed.stderr


def test_a_missing_aiobotocore_is_named() -> None:
    completed = _python(
        "import sys, dynastore\n"
        "sys.modules['aiobotocore.session'] = None  # as if not installed\n"
        "db = dynastore.open()\n"
        "for attempt in (lambda: db.aio_client().__aenter__().send(None), db.aio_session):\n"
        "    try:\n"
        "        attempt()\n"
        "    except ImportError as error:\n"
        "        print(error)\n"
    )
    assert completed.stdout.count("pip install 'dynastore[aio]'") == 2, completed.stderr


def test_an_aio_session_for_code_that_makes_its_own_clients() -> None:
    async def application(session: Any) -> list[str]:
        """Application code that is handed a session and creates its clients."""
        async with session.create_client("dynamodb") as client:
            await client.put_item(TableName="things", Item=key("a", 1))
            return list((await client.list_tables())["TableNames"])

    async def scenario() -> None:
        with dynastore.open() as db, dynastore.open() as other:
            async with db.aio_client() as client:
                await create(client)
                assert await application(db.aio_session()) == ["things"]
                assert "Item" in await client.get_item(TableName="things", Key=key("a", 1))
            async with other.aio_session().create_client("dynamodb") as client:
                assert (await client.list_tables())["TableNames"] == []
            async with db.aio_session().create_client("dynamodbstreams") as streams:
                assert (await streams.list_streams())["Streams"] == []

    run(scenario)
