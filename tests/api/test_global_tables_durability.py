"""Replication survives restarts and kill -9 (issue 20): the queue of writes
waiting for the other regions is durable, written in the commit of the
write itself, and a queued write is applied once.

- A server with writes still waiting out the lag is killed with SIGKILL;
  after the restart they arrive once the lag has passed.
- A server replicating continuously (no lag) under write load is killed;
  after the restart every acknowledged write is in the other region, the
  queue is empty, and the replica's stream shows each write once.
"""

from __future__ import annotations

import json
import signal
import threading
import urllib.request
from pathlib import Path
from typing import Any

import boto3

from tests.api.conftest import TEST_CLIENT_CONFIG, start_server, stop_server
from tests.api.helpers import kill_9_under_load
from tests.api.test_durability import write_until_failure

TABLE = "global-durable"


def regional_client(url: str, region: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=url, region_name=region, aws_access_key_id="AKIDTEST",
                        aws_secret_access_key="secret", config=TEST_CLIENT_CONFIG)


def admin(url: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
                                     method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def make_global_table(url: str) -> None:
    east = regional_client(url, "us-east-1")
    east.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                      AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                      BillingMode="PAY_PER_REQUEST")
    east.update_table(TableName=TABLE, ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}])
    west = regional_client(url, "us-west-2")
    for _ in range(500):
        if west.describe_table(TableName=TABLE)["Table"]["TableStatus"] == "ACTIVE":
            return
        threading.Event().wait(0.02)
    raise AssertionError("the replica did not become ACTIVE")


def keys_in(client: Any) -> set[str]:
    found: set[str] = set()
    request: dict[str, Any] = {"TableName": TABLE, "ConsistentRead": True}
    while True:
        page = client.scan(**request)
        found.update(item["pk"]["S"] for item in page["Items"])
        if "LastEvaluatedKey" not in page:
            return found
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_writes_waiting_out_the_lag_survive_kill_9(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    process, url = start_server("--data-dir", data_dir, "--replication-lag-ms", "60000")
    try:
        make_global_table(url)
        east = regional_client(url, "us-east-1")
        for number in range(20):
            east.put_item(TableName=TABLE, Item={"pk": {"S": f"k{number}"}})
        assert keys_in(regional_client(url, "us-west-2")) == set()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        stop_server(process)
    process, url = start_server("--data-dir", data_dir, "--replication-lag-ms", "60000")
    try:
        west = regional_client(url, "us-west-2")
        assert keys_in(west) == set()  # still waiting out the lag
        state = admin(url, "/_dynastore/replication")
        assert [entry["Pending"] for entry in state["Replicas"] if entry["Region"] == "us-west-2"] == [
            {"us-east-1": 20}]
        admin(url, "/_dynastore/clock", {"advance_seconds": 61})
        assert keys_in(west) == {f"k{number}" for number in range(20)}
        replica = next(entry for entry in admin(url, "/_dynastore/replication")["Replicas"]
                       if entry["Region"] == "us-west-2")
        assert replica["Applied"] == 20 and replica["Pending"] == {"us-east-1": 0}
    finally:
        stop_server(process)


def test_kill_9_while_replicating_loses_nothing_and_applies_nothing_twice(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    process, url = start_server("--data-dir", data_dir, "--replication-lag-ms", "0")
    try:
        make_global_table(url)
        port = int(url.rsplit(":", 1)[1])
        acknowledged: list[str] = []
        writers = [threading.Thread(target=write_until_failure, args=(port, TABLE, index, acknowledged))
                   for index in range(2)]
        kill_9_under_load(process, writers, 1.0, lambda: len(acknowledged), 21)
    finally:
        stop_server(process)
    assert len(acknowledged) > 20, "the write load never got going"
    process, url = start_server("--data-dir", data_dir, "--replication-lag-ms", "0")
    try:
        east, west = regional_client(url, "us-east-1"), regional_client(url, "us-west-2")
        written = keys_in(east)
        assert set(acknowledged) <= written
        assert keys_in(west) == written  # every write of us-east-1 arrived
        replica = next(entry for entry in admin(url, "/_dynastore/replication")["Replicas"]
                       if entry["Region"] == "us-west-2")
        assert replica["Pending"] == {"us-east-1": 0}
        streams = boto3.client("dynamodbstreams", endpoint_url=url, region_name="us-west-2",
                               aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                               config=TEST_CLIENT_CONFIG)
        arn = west.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
        inserted: list[str] = []
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                                  ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while iterator:
                page = streams.get_records(ShardIterator=iterator, Limit=1000)
                inserted.extend(record["dynamodb"]["Keys"]["pk"]["S"] for record in page["Records"])
                if not page["Records"]:
                    break
                iterator = page.get("NextShardIterator")
        assert sorted(inserted) == sorted(written)  # each write once in the replica's stream
    finally:
        stop_server(process)


def test_replicated_writes_consume_write_capacity_in_the_receiving_region() -> None:
    process, url = start_server("--in-memory", "--throughput", "observe", "--replication-lag-ms", "0")
    try:
        make_global_table(url)
        east, west = regional_client(url, "us-east-1"), regional_client(url, "us-west-2")
        answer = east.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "payload": {"S": "x" * 1500}},
                               ReturnConsumedCapacity="TOTAL")
        assert answer["ConsumedCapacity"]["CapacityUnits"] == 2.0  # 1.5 KB: two write units
        assert west.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"]["pk"] == {"S": "a"}
        signed_for_west = ("AWS4-HMAC-SHA256 Credential=AKIDTEST/20261129/us-west-2/dynamodb/aws4_request, "
                           "SignedHeaders=host, Signature=" + "0" * 64)
        request = urllib.request.Request(url + "/_dynastore/metrics", headers={"Authorization": signed_for_west})
        with urllib.request.urlopen(request, timeout=10) as response:
            table = json.loads(response.read())["Tables"][TABLE]
        assert table["WriteUnits"] == 2.0  # the replicated write's rWRU
        assert sum(partition["WriteUnits"] for partition in table["Partitions"]) == 2.0
        replica = next(entry for entry in admin(url, "/_dynastore/replication")["Replicas"]
                       if entry["Region"] == "us-west-2")
        assert replica["ReplicatedWriteUnits"] == 2.0
    finally:
        stop_server(process)


def test_a_replica_being_filled_when_the_server_dies_is_filled_after_the_restart(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    process, url = start_server("--data-dir", data_dir)
    try:
        east = regional_client(url, "us-east-1")
        east.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                          BillingMode="PAY_PER_REQUEST")
        for start in range(0, 2000, 25):
            east.batch_write_item(RequestItems={TABLE: [
                {"PutRequest": {"Item": {"pk": {"S": f"k{number}"}, "payload": {"S": "x" * 100}}}}
                for number in range(start, start + 25)]})
        east.update_table(TableName=TABLE, ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}])
        process.send_signal(signal.SIGKILL)  # the backfill runs in the background, a batch at a time
        process.wait(timeout=10)
    finally:
        stop_server(process)
    process, url = start_server("--data-dir", data_dir)
    try:
        west, east = regional_client(url, "us-west-2"), regional_client(url, "us-east-1")
        for _ in range(500):  # the pump resumes it: only us-east-1 is asked here
            replicas = east.describe_table(TableName=TABLE)["Table"]["Replicas"]
            if [replica["ReplicaStatus"] for replica in replicas] == ["ACTIVE"]:
                break
            threading.Event().wait(0.05)
        assert [replica["ReplicaStatus"] for replica in replicas] == ["ACTIVE"]
        assert west.describe_table(TableName=TABLE)["Table"]["TableStatus"] == "ACTIVE"
        assert keys_in(west) == {f"k{number}" for number in range(2000)}
    finally:
        stop_server(process)


def test_single_region_mode_has_no_replicas() -> None:
    process, url = start_server("--in-memory", "--single-region")
    try:
        east = regional_client(url, "us-east-1")
        east.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                          BillingMode="PAY_PER_REQUEST")
        try:
            east.update_table(TableName=TABLE, ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}])
        except east.exceptions.ClientError as error:
            assert error.response["Error"]["Code"] == "ValidationException"
            assert "--single-region" in error.response["Error"]["Message"]
        else:
            raise AssertionError("a replica was created in --single-region mode")
        assert "Replicas" not in east.describe_table(TableName=TABLE)["Table"]
    finally:
        stop_server(process)
