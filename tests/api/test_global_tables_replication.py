"""Multi-region eventual consistency (issue 20): a write in one region
reaches the other replicas after the replication lag, on the database
clock (the tests move it: nothing sleeps); concurrent writes resolve by
last writer wins, the loser silently gone; a paused region (a partition)
catches up when resumed; deletes, conditional writes, transactions and TTL
deletions replicate item by item; each replica's stream shows the writes it
received."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import TEST_CLIENT_CONFIG
from tests.api.helpers import error_of
from tests.api.test_global_tables import EAST, WEST, add_replica, global_table, regional

__all__ = ["global_table", "regional"]  # fixtures, shared with test_global_tables.py

pytestmark = pytest.mark.one_server  # lags, pauses and the clock are the first server's
LAG_SECONDS = 60


def admin(endpoint: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        endpoint + path, data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST", headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def advance(endpoint: str, seconds: float) -> None:
    admin(endpoint, "/_dynastore/clock", {"advance_seconds": seconds})


@pytest.fixture
def lagged(endpoint: str) -> Iterator[None]:
    """A replication lag of LAG_SECONDS both ways between us-east-1 and
    us-west-2, nothing paused; the server's settings as they were afterwards."""
    for source, target in ((EAST, WEST), (WEST, EAST)):
        admin(endpoint, "/_dynastore/replication", {"lag_ms": LAG_SECONDS * 1000, "from": source, "to": target})
    admin(endpoint, "/_dynastore/replication", {"resume": WEST})
    yield
    admin(endpoint, "/_dynastore/replication", {"resume": WEST})
    for source, target in ((EAST, WEST), (WEST, EAST)):
        admin(endpoint, "/_dynastore/replication", {"lag_ms": None, "from": source, "to": target})


@pytest.fixture
def streams(endpoint: str, embedded_database: Any) -> Callable[[str], Any]:
    def make(region: str) -> Any:
        if embedded_database is not None:
            return embedded_database.streams_client(region_name=region, config=TEST_CLIENT_CONFIG)
        return boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=region,
                            aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", config=TEST_CLIENT_CONFIG)

    return make


def item(client: Any, name: str, key: str, consistent: bool = True) -> dict[str, Any] | None:
    found = client.get_item(TableName=name, Key={"pk": {"S": key}}, ConsistentRead=consistent).get("Item")
    return None if found is None else dict(found)


def stream_records(streams: Any, client: Any, name: str) -> list[dict[str, Any]]:
    arn = client.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records.extend(streams.get_records(ShardIterator=iterator)["Records"])
    return records


def replica_metrics(endpoint: str, region: str, name: str) -> dict[str, Any]:
    state = admin(endpoint, "/_dynastore/replication")
    return dict(next(entry for entry in state["Replicas"] if entry["Region"] == region and entry["TableName"] == name))


def test_a_write_reaches_the_other_region_after_the_lag(
    transport: str, endpoint: str, lagged: None, regional: Callable[[str], Any], global_table: Callable[..., str],
    streams: Callable[[str], Any],
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    east.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "one"}})
    assert item(east, name, "k") == {"pk": {"S": "k"}, "v": {"S": "one"}}
    assert item(west, name, "k") is None  # a strongly consistent read too: the write is elsewhere
    advance(endpoint, LAG_SECONDS - 5)
    assert item(west, name, "k", consistent=False) is None
    advance(endpoint, 6)
    assert item(west, name, "k") == {"pk": {"S": "k"}, "v": {"S": "one"}}
    east.delete_item(TableName=name, Key={"pk": {"S": "k"}})
    advance(endpoint, LAG_SECONDS + 1)
    assert item(west, name, "k") is None
    # Each replica's stream shows the writes it received, as its own records.
    received = stream_records(streams(WEST), west, name)
    assert [record["eventName"] for record in received] == ["INSERT", "REMOVE"]
    assert all(record["awsRegion"] == WEST and "userIdentity" not in record for record in received)
    assert received[0]["dynamodb"]["NewImage"] == {"pk": {"S": "k"}, "v": {"S": "one"}}
    local = stream_records(streams(EAST), east, name)
    assert [record["eventName"] for record in local] == ["INSERT", "REMOVE"]
    metrics = replica_metrics(endpoint, WEST, name)
    assert metrics["Applied"] == 2 and metrics["Overwrites"] == 0 and metrics["Discarded"] == 0
    assert metrics["ReplicatedWriteUnits"] == 2.0


def test_concurrent_writes_resolve_by_last_writer_wins(
    endpoint: str, second_endpoint: str | None, lagged: None, regional: Callable[[str], Any], global_table: Callable[..., str],
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    east.put_item(TableName=name, Item={"pk": {"S": "balance"}, "n": {"N": "100"}})
    advance(endpoint, LAG_SECONDS + 1)
    assert item(west, name, "balance") == {"pk": {"S": "balance"}, "n": {"N": "100"}}
    # Both regions take 30 from the balance they see, each with a condition that holds there.
    for client, take in ((east, "30"), (west, "50")):
        client.update_item(
            TableName=name, Key={"pk": {"S": "balance"}}, UpdateExpression="SET n = n - :take",
            ConditionExpression="n = :seen", ExpressionAttributeValues={":take": {"N": take}, ":seen": {"N": "100"}},
        )
        advance(endpoint, 0.01)
    assert item(east, name, "balance")["n"] == {"N": "70"}  # type: ignore[index]
    assert item(west, name, "balance")["n"] == {"N": "50"}  # type: ignore[index]
    advance(endpoint, LAG_SECONDS + 1)
    # The later write (us-west-2's) wins everywhere: us-east-1's update is lost.
    assert item(east, name, "balance")["n"] == {"N": "50"}  # type: ignore[index]
    assert item(west, name, "balance")["n"] == {"N": "50"}  # type: ignore[index]
    # The counts are the store's: on postgres-pair either server shows the same totals,
    # whichever server's pump or request applied the writes.
    for server in (endpoint,) if second_endpoint is None else (endpoint, second_endpoint):
        assert replica_metrics(server, EAST, name)["Overwrites"] == 1
        assert replica_metrics(server, EAST, name)["Applied"] == replica_metrics(server, WEST, name)["Applied"] == 1
        assert replica_metrics(server, WEST, name)["Discarded"] == 1
        # The metrics show it too (us-east-1's, the namespace of an unsigned admin request).
        assert admin(server, "/_dynastore/metrics")["Replication"][name]["Overwrites"] == 1
        with urllib.request.urlopen(server + "/_dynastore/metrics?format=prometheus", timeout=10) as response:
            text = response.read().decode()
        assert f'dynastore_replication_overwrites_total{{table="{name}",region="{EAST}"}} 1' in text


def test_a_paused_region_catches_up_when_resumed(
    endpoint: str, lagged: None, regional: Callable[[str], Any], global_table: Callable[..., str],
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    admin(endpoint, "/_dynastore/replication", {"pause": WEST})
    east.put_item(TableName=name, Item={"pk": {"S": "from-east"}})
    west.put_item(TableName=name, Item={"pk": {"S": "from-west"}})
    advance(endpoint, 3 * LAG_SECONDS)
    assert item(west, name, "from-east") is None and item(east, name, "from-west") is None
    state = admin(endpoint, "/_dynastore/replication")
    assert state["Paused"] == [WEST]
    assert replica_metrics(endpoint, WEST, name)["Pending"] == {EAST: 1}
    admin(endpoint, "/_dynastore/replication", {"resume": WEST})
    assert item(west, name, "from-east") == {"pk": {"S": "from-east"}}
    assert item(east, name, "from-west") == {"pk": {"S": "from-west"}}
    assert replica_metrics(endpoint, WEST, name)["Pending"] == {EAST: 0}


def test_a_transaction_reaches_the_other_region_item_by_item(
    request: pytest.FixtureRequest, transport: str, endpoint: str, lagged: None, regional: Callable[[str], Any], global_table: Callable[..., str],
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    admin(endpoint, "/_dynastore/replication", {"transaction_item_spacing_ms": 10_000})
    request.addfinalizer(lambda: admin(endpoint, "/_dynastore/replication", {"transaction_item_spacing_ms": 1}))
    east.transact_write_items(TransactItems=[
        {"Put": {"TableName": name, "Item": {"pk": {"S": "from"}, "n": {"N": "-10"}}}},
        {"Put": {"TableName": name, "Item": {"pk": {"S": "to"}, "n": {"N": "10"}}}},
    ])
    advance(endpoint, LAG_SECONDS + 5)
    # Half the transaction is in us-west-2: its items arrive one after the other (here 10 s apart).
    assert item(west, name, "from") == {"pk": {"S": "from"}, "n": {"N": "-10"}}
    assert item(west, name, "to") is None
    advance(endpoint, 10)
    assert item(west, name, "to") == {"pk": {"S": "to"}, "n": {"N": "10"}}
    assert replica_metrics(endpoint, WEST, name)["Applied"] == 2  # two replicated writes, not one


def test_a_ttl_deletion_replicates_as_the_services(
    endpoint: str, lagged: None, regional: Callable[[str], Any], global_table: Callable[..., str],
    streams: Callable[[str], Any],
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    east.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    now = admin(endpoint, "/_dynastore/clock")["Now"]
    east.put_item(TableName=name, Item={"pk": {"S": "old"}, "expires": {"N": str(int(now) + 5)}})
    advance(endpoint, LAG_SECONDS + 1)
    assert item(west, name, "old") is not None
    admin(endpoint, "/_dynastore/ttl/sweep", {"all": True})  # us-east-1 (an unsigned admin request)
    assert item(east, name, "old") is None
    advance(endpoint, LAG_SECONDS + 1)
    assert item(west, name, "old") is None
    removed = [record for record in stream_records(streams(WEST), west, name) if record["eventName"] == "REMOVE"]
    assert removed[-1]["userIdentity"] == {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def test_a_replicas_source_stays_for_24_hours(
    endpoint: str, regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    held = ("ValidationException", (
        "Replica cannot be deleted because it has acted as a source region for new replica(s) being added to "
        "the table in the last 24 hours."))
    with pytest.raises(ClientError) as excinfo:
        east.delete_table(TableName=name)
    assert error_of(excinfo) == held
    with pytest.raises(ClientError) as excinfo:
        west.update_table(TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": EAST}}])
    assert error_of(excinfo) == held
    advance(endpoint, 24 * 3600 + 1)
    west.update_table(TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": EAST}}])
    assert "Replicas" not in west.describe_table(TableName=name)["Table"]
