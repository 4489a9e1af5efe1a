"""Every change of a table's definition is a compare-and-set (issue 15).

Two ``dynastore serve --postgres URL`` servers over one database, and
threads of boto3 clients on both changing one table's definition at once:
tags added and removed through either server, UpdateTimeToLive and
Contributor Insights through one while UpdateTable changes the throughput
through the other, a GSI's backfill finishing on one while the other changes
the table. Each change is written only over the definition it was computed
from (its generation, Database.update_table) and redone on a reloaded
catalogue when another server came first, so afterwards the table holds
every acknowledged change: none of these may be lost, and no request may
answer 5xx (an assertion about one quotes the end of both servers' logs).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.api.conftest import TEST_CLIENT_CONFIG
from tests.api.server_pair import ServerPair, make_client, started_pair

THREADS_PER_SERVER = 4
CLIENT_CONFIG = TEST_CLIENT_CONFIG.merge(Config(connect_timeout=5, read_timeout=30))


class Pair(ServerPair):
    def client(self, server: int) -> Any:
        """A new client of server ``server`` (0: A, 1: B); one per thread."""
        return make_client(self.urls[server], CLIENT_CONFIG)

    def logs(self, characters: int = 6000) -> str:
        return super().logs(characters)


@pytest.fixture(scope="module")
def pair(postgres_server: Any) -> Iterator[Pair]:
    with started_pair(postgres_server.new_database(), Pair) as started:
        yield started


class Calls:
    """Requests made by the test's threads; any failure is kept with the
    request (and fails the test with both servers' logs)."""

    def __init__(self, pair: Pair) -> None:
        self.pair = pair
        self.failures: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, client: Any, operation: str, **arguments: Any) -> dict[str, Any] | None:
        try:
            response: dict[str, Any] = getattr(client, operation)(**arguments)
            return response
        except ClientError as error:
            with self._lock:
                status = error.response["ResponseMetadata"]["HTTPStatusCode"]
                self.failures.append(f"{operation} {arguments}: {status} {error.response['Error']}")
            return None

    def check(self) -> None:
        assert not self.failures, "\n".join(self.failures[:20]) + "\n" + self.pair.logs()


def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(work, range(count)))


def new_table(client: Any, provisioned: bool = False) -> str:
    name = f"cas-{uuid.uuid4().hex[:12]}"
    capacity: dict[str, Any] = (
        {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}
        if provisioned else {"BillingMode": "PAY_PER_REQUEST"}
    )
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        **capacity,
    )
    return name


def tags_of(client: Any, arn: str) -> dict[str, str]:
    found: dict[str, str] = {}
    arguments: dict[str, Any] = {"ResourceArn": arn}
    while True:
        page = client.list_tags_of_resource(**arguments)
        found.update({tag["Key"]: tag["Value"] for tag in page.get("Tags", [])})
        if not page.get("NextToken"):
            return found
        arguments["NextToken"] = page["NextToken"]


def test_tags_added_and_removed_through_both_servers_are_all_kept(pair: Pair) -> None:
    """Eight threads, half on each server, tag one table at once: each owns
    five keys it sets again and again (the last value must stay) and a
    scratch key it adds and removes; afterwards every owned key holds its
    thread's last value and no scratch key is left."""
    client = pair.client(0)
    name = new_table(client)
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    calls = Calls(pair)
    rounds = 4
    threads = 2 * THREADS_PER_SERVER

    def work(thread: int) -> None:
        own = pair.client(thread % 2)
        for round_number in range(rounds):
            for k in range(5):
                calls(own, "tag_resource", ResourceArn=arn,
                      Tags=[{"Key": f"t{thread}-k{k}", "Value": f"r{round_number}"}])
            calls(own, "tag_resource", ResourceArn=arn, Tags=[{"Key": f"scratch-{thread}", "Value": "x"}])
            calls(own, "untag_resource", ResourceArn=arn, TagKeys=[f"scratch-{thread}"])

    in_threads(threads, work)
    calls.check()
    expected = {f"t{thread}-k{k}": f"r{rounds - 1}" for thread in range(threads) for k in range(5)}
    for server in (0, 1):
        assert tags_of(pair.client(server), arn) == expected, pair.logs()


def test_ttl_and_insights_on_one_server_and_throughput_on_the_other_are_all_kept(pair: Pair) -> None:
    """On each of four tables: server B raises the read capacity step by
    step while server A enables TTL and switches Contributor Insights on
    and off; afterwards each table has TTL enabled, B's last capacity and
    A's last insights setting."""
    tables = [new_table(pair.client(0), provisioned=True) for _ in range(THREADS_PER_SERVER)]
    calls = Calls(pair)
    steps = 12
    raised_to: dict[str, int] = {}
    insights: dict[str, str] = {}

    def raise_capacity(name: str) -> None:
        own = pair.client(1)
        for units in range(2, steps + 2):
            if calls(own, "update_table", TableName=name,
                     ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": 1}) is not None:
                raised_to[name] = units

    def change_settings(name: str) -> None:
        own = pair.client(0)
        calls(own, "update_time_to_live", TableName=name,
              TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
        for step in range(steps // 2):
            action = "ENABLE" if step % 2 == 0 else "DISABLE"
            if calls(own, "update_contributor_insights", TableName=name,
                     ContributorInsightsAction=action) is not None:
                insights[name] = action

    jobs = [(raise_capacity, name) for name in tables] + [(change_settings, name) for name in tables]
    in_threads(len(jobs), lambda i: jobs[i][0](jobs[i][1]))
    calls.check()
    for server in (0, 1):
        client = pair.client(server)
        for name in tables:
            table = client.describe_table(TableName=name)["Table"]
            assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == raised_to[name] == steps + 1, pair.logs()
            ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            assert (ttl["TimeToLiveStatus"], ttl.get("AttributeName")) == ("ENABLED", "expires"), pair.logs()
            status = client.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"]
            assert status == {"ENABLE": "ENABLED", "DISABLE": "DISABLED"}[insights[name]], pair.logs()


def test_a_gsi_backfill_finishing_keeps_the_other_servers_changes(pair: Pair) -> None:
    """Server A adds three GSIs one after the other to a table of 600
    items (each backfilled in a few batches, the index's state written
    into the definition after the first and the last); meanwhile server B
    raises the table's capacity and tags it. Afterwards every index is
    ACTIVE and complete, and B's capacity and every tag are there."""
    a, b = pair.client(0), pair.client(1)
    name = new_table(a, provisioned=True)
    arn = a.describe_table(TableName=name)["Table"]["TableArn"]
    items = 600
    for start in range(0, items, 25):
        a.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": f"p{i}"}, "g": {"S": f"g{i % 7}"}}}}
            for i in range(start, min(start + 25, items))
        ]})
    calls = Calls(pair)
    done = threading.Event()
    raised_to = [1]
    tagged: list[str] = []

    def change_table() -> None:
        units = 1
        while not done.is_set() and units < 200:
            units += 1
            if calls(b, "update_table", TableName=name,
                     ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": 1}) is not None:
                raised_to[0] = units
            if len(tagged) < 45 and calls(b, "tag_resource", ResourceArn=arn,
                                          Tags=[{"Key": f"k{units}", "Value": "v"}]) is not None:
                tagged.append(f"k{units}")

    changer = threading.Thread(target=change_table)
    changer.start()
    try:
        for number in range(3):
            index = f"gsi{number}"
            created = calls(a, "update_table", TableName=name,
                  AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                  GlobalSecondaryIndexUpdates=[{"Create": {
                      "IndexName": index,
                      "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                      "Projection": {"ProjectionType": "KEYS_ONLY"},
                      "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                  }}])
            assert created is not None, "\n".join(calls.failures)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                table = a.describe_table(TableName=name)["Table"]
                states = {gsi["IndexName"]: gsi["IndexStatus"] for gsi in table.get("GlobalSecondaryIndexes", [])}
                if states.get(index) == "ACTIVE":
                    break
                time.sleep(0.05)
            else:
                pytest.fail(f"{index} not ACTIVE after 60 s: {states}\n{pair.logs()}")
    finally:
        done.set()
        changer.join()
    calls.check()
    for client in (a, b):
        table = client.describe_table(TableName=name)["Table"]
        states = {gsi["IndexName"]: gsi["IndexStatus"] for gsi in table.get("GlobalSecondaryIndexes", [])}
        assert states == {"gsi0": "ACTIVE", "gsi1": "ACTIVE", "gsi2": "ACTIVE"}, pair.logs()
        assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == raised_to[0], pair.logs()
        assert set(tags_of(client, arn)) == set(tagged), pair.logs()
    for index in ("gsi0", "gsi1", "gsi2"):
        count = a.scan(TableName=name, IndexName=index, Select="COUNT")
        total = count["Count"]
        while "LastEvaluatedKey" in count:
            count = a.scan(TableName=name, IndexName=index, Select="COUNT", ExclusiveStartKey=count["LastEvaluatedKey"])
            total += count["Count"]
        assert total == items


def test_streams_switched_on_one_server_while_the_other_tags_leave_no_stray_stream(pair: Pair) -> None:
    """Server A enables and disables the table's stream (each enable makes a
    new stream, its storage and first shard, in the definition's
    transaction) while four threads on server B tag the table: afterwards
    every tag is there, the stream is enabled, and the table has exactly the
    streams A's acknowledged enables made (a refused, redone change leaves
    no stream of its own behind)."""
    a = pair.client(0)
    name = new_table(a)
    arn = a.describe_table(TableName=name)["Table"]["TableArn"]
    calls = Calls(pair)
    done = threading.Event()
    enabled: list[str] = []

    def tag(thread: int) -> list[str]:
        own, keys = pair.client(1), []
        while not done.is_set() and len(keys) < 10:
            key = f"b{thread}-{len(keys)}"
            if calls(own, "tag_resource", ResourceArn=arn, Tags=[{"Key": key, "Value": "v"}]) is not None:
                keys.append(key)
        return keys

    def switch() -> None:
        try:
            for step in range(5):
                if step % 2 == 0:
                    answer = calls(a, "update_table", TableName=name,
                                   StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
                    if answer is not None:
                        enabled.append(answer["TableDescription"]["LatestStreamArn"])
                else:
                    calls(a, "update_table", TableName=name, StreamSpecification={"StreamEnabled": False})
        finally:
            done.set()

    switcher = threading.Thread(target=switch)
    switcher.start()
    tagged = [key for keys in in_threads(THREADS_PER_SERVER, tag) for key in keys]
    switcher.join()
    calls.check()
    assert len(enabled) == 3
    for server in (0, 1):
        client = pair.client(server)
        assert set(tags_of(client, arn)) == set(tagged), pair.logs()
        table = client.describe_table(TableName=name)["Table"]
        assert table["StreamSpecification"]["StreamEnabled"] is True
        assert table["LatestStreamArn"] == enabled[-1]
        streams = make_client(pair.urls[server], CLIENT_CONFIG, "dynamodbstreams").list_streams(
            TableName=name)["Streams"]
        assert sorted(stream["StreamArn"] for stream in streams) == sorted(enabled), pair.logs()
