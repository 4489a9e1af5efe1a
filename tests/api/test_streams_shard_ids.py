"""Streams shard ids in DynamoDB's form (issue 17): ``shardId-``, the
shard's creation time in milliseconds as 20 digits, ``-`` and 8 hex
characters (the API reference's DescribeStream example
``shardId-00000001414562045508-2bac9cd2``; Lambda's DDBStreamBatchInfo
captures). Shards stored by earlier releases keep their 21-digit ids and go
on working: a 0.1.0 data directory's stream is read, written and described.
"""

from __future__ import annotations

import datetime
import re
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import boto3
import orjson
import pytest
from botocore.config import Config

import dynastore
from tests.api.conftest import alternate_endpoints, make_client, start_server, stop_server

SHARD_ID = re.compile(r"shardId-([0-9]{20})-[0-9a-f]{8}")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LEGACY_SHARD = "shardId-100000000000000000000-b0a9fd02"
"""The one shard of the Legacy table's stream in tests/fixtures/data-dir-0.1.0."""
FIXTURE_WRITTEN = 1796228539.595276
"""When the fixture's table, stream and records were written (2026-12-02T16:22:19.595Z)."""
TIME_FIELDS = ("created", "creation_time", "billing_mode_last_update_time", "ApproximateCreationDateTime")
"""The fixture's stored times: table and stream creation, shard creation, record times."""


def shifted(value: Any, seconds: float) -> Any:
    """``value`` (decoded JSON) with every stored time ``seconds`` later."""
    if isinstance(value, list):
        return [shifted(element, seconds) for element in value]
    if not isinstance(value, dict):
        return value
    moved = {key: shifted(inner, seconds) for key, inner in value.items()}
    for key in TIME_FIELDS:
        if isinstance(moved.get(key), int | float) and not isinstance(moved[key], bool):
            moved[key] = type(moved[key])(moved[key] + seconds)
    return moved


def move_fixture_clock(database: Path, written: float) -> None:
    """Rewrite a copy of the fixture as if it had been written at ``written``
    instead of 2026-12-02: its records stay within the stream's 24-hour
    retention whenever the test runs. Names (the stream's label and ARN, the
    0.1.0 shard id) are left as they were written."""
    seconds = round(written - FIXTURE_WRITTEN)
    with sqlite3.connect(database) as connection:
        for table_id, metadata in connection.execute("SELECT table_id, metadata FROM tables").fetchall():
            connection.execute("UPDATE tables SET metadata = ? WHERE table_id = ?",
                               (orjson.dumps(shifted(orjson.loads(metadata), seconds)), table_id))
        for rowid, item in connection.execute("SELECT rowid, item FROM items").fetchall():
            moved = orjson.dumps(shifted(orjson.loads(item), seconds))
            if moved != orjson.dumps(orjson.loads(item)):  # a stream row: its size is its length
                connection.execute("UPDATE items SET item = ?, size = ? WHERE rowid = ?", (moved, len(moved), rowid))
    connection.close()


@pytest.fixture
def streams(endpoint: str, second_endpoint: str | None) -> Any:
    streams_client = make_client(endpoint, "dynamodbstreams")
    if second_endpoint is not None:
        alternate_endpoints(streams_client, [endpoint, second_endpoint])
    return streams_client


def label_millis(label: str) -> int:
    moment = datetime.datetime.fromisoformat(label).replace(tzinfo=datetime.UTC)
    return round(moment.timestamp() * 1000)


def test_a_new_streams_shard_id_is_its_creation_time_in_dynamodbs_form(
    client: Any, streams: Any, make_table: Any
) -> None:
    name = make_table(sk=None, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    table = client.describe_table(TableName=name)["Table"]
    client.put_item(TableName=name, Item={"pk": {"S": "a"}})
    description = streams.describe_stream(StreamArn=table["LatestStreamArn"])["StreamDescription"]
    (shard,) = description["Shards"]
    match = SHARD_ID.fullmatch(shard["ShardId"])
    assert match is not None, shard["ShardId"]
    # The first shard opens with the stream, whose label is its creation time to the millisecond.
    assert int(match.group(1)) == label_millis(table["LatestStreamLabel"])
    iterator = streams.get_shard_iterator(StreamArn=table["LatestStreamArn"], ShardId=shard["ShardId"],
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    (record,) = streams.get_records(ShardIterator=iterator)["Records"]
    assert record["dynamodb"]["Keys"] == {"pk": {"S": "a"}}


def test_rolled_over_shards_have_distinct_ids_in_dynamodbs_form() -> None:
    with dynastore.open() as database:
        database.database.streams.shard_max_records = 2
        client = database.client()
        arn = client.create_table(
            TableName="events", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        )["TableDescription"]["LatestStreamArn"]
        for index in range(9):  # several shards, most opened within one millisecond
            client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
        shards = database.streams_client(config=Config(parameter_validation=False)).describe_stream(
            StreamArn=arn)["StreamDescription"]["Shards"]
    ids = [shard["ShardId"] for shard in shards]
    assert len(ids) == 5 and len(set(ids)) == 5
    assert all(SHARD_ID.fullmatch(shard_id) for shard_id in ids), ids
    assert [int(shard_id[8:28]) for shard_id in ids] == sorted(int(shard_id[8:28]) for shard_id in ids)
    assert [shard.get("ParentShardId") for shard in shards] == [None, *ids[:-1]]


def test_a_shard_stored_by_0_1_0_keeps_its_id_and_its_records(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "data-dir-0.1.0", data)
    # Written five hours ago: older than a shard lives, well within the stream's retention.
    move_fixture_clock(data / "dynastore.db", time.time() - 5 * 3600)
    process, url = start_server("--data-dir", str(data))
    try:
        settings = {"endpoint_url": url, "region_name": "us-east-1", "aws_access_key_id": "k",
                    "aws_secret_access_key": "s", "config": Config(parameter_validation=False)}
        client = boto3.client("dynamodb", **settings)
        streams = boto3.client("dynamodbstreams", **settings)
        arn = client.describe_table(TableName="Legacy")["Table"]["LatestStreamArn"]
        client.put_item(TableName="Legacy", Item={"pk": {"S": "c"}, "g": {"S": "x"}})
        # The fixture's shard is older than a shard lives, so the write opened a child in DynamoDB's form.
        legacy, child = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        assert legacy == {"ShardId": LEGACY_SHARD, "SequenceNumberRange": {
            "StartingSequenceNumber": "100000000000000000000", "EndingSequenceNumber": "100000000000000000001"}}
        assert SHARD_ID.fullmatch(child["ShardId"]) and child["ParentShardId"] == LEGACY_SHARD
        assert child["SequenceNumberRange"] == {"StartingSequenceNumber": "100000000000000000002"}

        def keys_in(shard_id: str) -> list[str]:
            iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                                                  ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            return [record["dynamodb"]["Keys"]["pk"]["S"] for record in streams.get_records(ShardIterator=iterator)["Records"]]

        assert keys_in(LEGACY_SHARD) == ["a", "b"]
        assert keys_in(child["ShardId"]) == ["c"]
        # A stream enabled now, on the same server, gets an id in DynamoDB's form.
        client.update_table(TableName="Legacy", StreamSpecification={"StreamEnabled": False})
        client.update_table(TableName="Legacy",
                            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        fresh = client.describe_table(TableName="Legacy")["Table"]["LatestStreamArn"]
        (new_shard,) = streams.describe_stream(StreamArn=fresh)["StreamDescription"]["Shards"]
        assert SHARD_ID.fullmatch(new_shard["ShardId"]), new_shard
        old = streams.describe_stream(StreamArn=arn)["StreamDescription"]
        assert old["StreamStatus"] == "DISABLED" and old["Shards"][0]["ShardId"] == LEGACY_SHARD
    finally:
        stop_server(process)
