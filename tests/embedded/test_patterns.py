"""The source documents' patterns: singleton items, sharded counters, key naming."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from dynastore.patterns import KeyScheme, ShardedCounter, Singleton


@pytest.fixture
def app_table(dynamodb_client: Any) -> str:
    dynamodb_client.create_table(
        TableName="app",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return "app"


SETTINGS_KEY = {"PK": "SETTINGS#APP", "SK": "FLAGS#V1"}


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_singleton_reads_defaults_when_missing(dynamodb_client: Any, app_table: str) -> None:
    flags = Singleton(dynamodb_client, app_table, SETTINGS_KEY, {"dark_mode": False})
    assert flags.get() == {"dark_mode": False}


def test_singleton_update_sets_and_bumps_version(dynamodb_client: Any, app_table: str) -> None:
    flags = Singleton(dynamodb_client, app_table, SETTINGS_KEY, {"dark_mode": False})
    assert flags.update({"dark_mode": True})["schema_version"] == 1
    assert flags.update({"beta": True}) == {**SETTINGS_KEY, "dark_mode": True, "beta": True, "schema_version": 2}


def test_singleton_cache_expires_on_the_clock(dynamodb_client: Any, app_table: str) -> None:
    clock = ManualClock()
    reader = Singleton(dynamodb_client, app_table, SETTINGS_KEY, {"on": False}, clock=clock, cache_ttl_seconds=5)
    writer = Singleton(dynamodb_client, app_table, SETTINGS_KEY, {"on": False})
    assert reader.get()["on"] is False
    writer.update({"on": True})
    clock.now = 4.9
    assert reader.get()["on"] is False  # still cached
    clock.now = 5.0
    assert reader.get()["on"] is True


def test_stale_writer_retries_instead_of_losing_an_update(dynamodb_client: Any, app_table: str, dynastore_db: Any) -> None:
    Singleton(dynamodb_client, app_table, SETTINGS_KEY).update({"count": 0})

    def bump() -> None:
        own = Singleton(dynastore_db.client(), app_table, SETTINGS_KEY, max_attempts=200)
        for _ in range(10):
            own.update(lambda current: {"count": current["count"] + 1})

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = Singleton(dynamodb_client, app_table, SETTINGS_KEY).get(fresh=True)
    assert final["count"] == 40
    assert final["schema_version"] == 41


def test_singleton_write_is_conditional_on_the_version(dynamodb_client: Any, app_table: str) -> None:
    """The write a stale reader would make is refused by DynamoDB itself."""
    Singleton(dynamodb_client, app_table, SETTINGS_KEY).update({"x": 1})
    with pytest.raises(dynamodb_client.exceptions.ConditionalCheckFailedException):
        dynamodb_client.update_item(
            TableName=app_table, Key={"PK": {"S": "SETTINGS#APP"}, "SK": {"S": "FLAGS#V1"}},
            UpdateExpression="SET x = :x, schema_version = :next",
            ConditionExpression="schema_version = :current",
            ExpressionAttributeValues={":x": {"N": "2"}, ":next": {"N": "1"}, ":current": {"N": "0"}},
        )


def test_sharded_counter_sums_over_shards(dynamodb_client: Any, app_table: str) -> None:
    counter = ShardedCounter(dynamodb_client, app_table, "COUNTER#views", shards=8,
                             sort_key=("SK", "TOTAL"), rng=random.Random(7))
    used = {counter.increment() for _ in range(50)}
    assert counter.total() == 50
    assert len(used) > 1  # the writes really were spread


def test_calculated_suffix_is_stable(dynamodb_client: Any, app_table: str) -> None:
    counter = ShardedCounter(dynamodb_client, app_table, "COUNTER#votes", shards=5, sort_key=("SK", "TOTAL"))
    shard = counter.shard_for("candidate-42")
    assert all(counter.increment(2, shard_key="candidate-42") == shard for _ in range(3))
    assert counter.total() == 6


def test_key_scheme_builds_and_splits() -> None:
    keys = KeyScheme()
    key = keys.key("ORDER", "2024-01-20", "00001")
    assert key == "ORDER#2024-01-20#00001"
    assert keys.split(key) == ["ORDER", "2024-01-20", "00001"]
    assert keys.prefix("ORDER") == "ORDER#"
    assert keys.entity_type("USER#42") == "USER"
    with pytest.raises(ValueError, match="separator"):
        keys.key("A#B")
    with pytest.raises(ValueError, match="empty"):
        keys.key("A", "")


def test_key_scheme_prefix_finds_one_level(dynamodb_client: Any, app_table: str) -> None:
    keys = KeyScheme()
    for sort in ("ORDER#1", "ORDER#2", "ORDERLINE#1", "PROFILE"):
        dynamodb_client.put_item(TableName=app_table, Item={"PK": {"S": "USER#1"}, "SK": {"S": sort}})
    found = dynamodb_client.query(
        TableName=app_table,
        KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
        ExpressionAttributeValues={":p": {"S": keys.key("USER", 1)}, ":s": {"S": keys.prefix("ORDER")}},
    )["Items"]
    assert [item["SK"]["S"] for item in found] == ["ORDER#1", "ORDER#2"]
