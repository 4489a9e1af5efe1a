"""DynamoDB Streams' 24-hour retention as readers see it: a record older than
24 hours is gone (trimmed) the moment it is, not when dynastore's trimmer
(the background sweeper) next runs. GetRecords never returns it, TRIM_HORIZON
starts after it, AT_SEQUENCE_NUMBER on it and an iterator that would read it
are TrimmedDataAccessException, a closed shard whose records are all past
retention leaves DescribeStream, and a stream disabled more than 24 hours ago
is not found.

Through boto3's ``dynamodbstreams`` client over HTTP to a real server
(``db.serve()``) on a private database of each store (memory, SQLite,
PostgreSQL): its clock moves a day without touching the shared servers', and
no background sweeper runs, so every answer is checked once before the
trimmer ran and once after (``db.sweep_ttl()``) -- they must be the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

import dynastore
from tests.api.conftest import make_client
from tests.api.helpers import error_of

HOUR = 3600
DAY = 24 * HOUR
STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
TRIMMED = ("TrimmedDataAccessException", "The data you are trying to access has been trimmed")
SHARD_GONE = ("ResourceNotFoundException", "Requested resource not found: Shard does not exist")
ITERATOR_SHARD_GONE = ("ResourceNotFoundException", "Invalid ShardId in ShardIterator")


class Private:
    """A private database served over HTTP, with boto3 clients on it."""

    def __init__(self, database: Any) -> None:
        self.database = database
        endpoint = database.serve().endpoint_url
        self.client = make_client(endpoint)
        self.streams = make_client(endpoint, "dynamodbstreams")

    def advance(self, seconds: float) -> None:
        self.database.advance_clock(seconds)

    def new_stream(self, name: str = "retained") -> str:
        answer = self.client.create_table(
            TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST", StreamSpecification=STREAM)
        return str(answer["TableDescription"]["LatestStreamArn"])

    def put(self, name: str, key: str) -> None:
        self.client.put_item(TableName=name, Item={"pk": {"S": key}})

    def shard_ids(self, arn: str) -> list[str]:
        shards = self.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        return [shard["ShardId"] for shard in shards]

    def iterator(self, arn: str, shard_id: str, kind: str = "TRIM_HORIZON", number: str | None = None) -> str:
        extra = {} if number is None else {"SequenceNumber": number}
        return str(self.streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind,
                                                   **extra)["ShardIterator"])

    def keys(self, iterator: str) -> list[str]:
        """The keys of every record from ``iterator`` on (until nothing more)."""
        keys: list[str] = []
        current: str | None = iterator
        while current:
            page = self.streams.get_records(ShardIterator=current)
            keys += [record["dynamodb"]["Keys"]["pk"]["S"] for record in page["Records"]]
            current = page.get("NextShardIterator") if page["Records"] else None
        return keys

    def numbers(self, arn: str, shard_id: str) -> dict[str, str]:
        """Key -> SequenceNumber of the shard's records (read while they are retained)."""
        page = self.streams.get_records(ShardIterator=self.iterator(arn, shard_id))
        return {record["dynamodb"]["Keys"]["pk"]["S"]: record["dynamodb"]["SequenceNumber"]
                for record in page["Records"]}


def refused(call: Callable[..., Any], **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return error_of(excinfo)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def private(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Private]:
    location: str | None = None
    if request.param == "sqlite":
        location = str(tmp_path / "data")
    elif request.param == "postgres":
        location = str(request.getfixturevalue("postgres_server").new_database())
    with dynastore.open(location) as database:
        yield Private(database)


def before_and_after_the_trimmer(private: Private, check: Callable[[], None]) -> None:
    """``check`` holds while the records past retention are still stored, and
    once the trimmer has removed them."""
    check()
    private.database.sweep_ttl()
    check()


def test_records_past_retention_are_never_returned(private: Private) -> None:
    arn = private.new_stream()
    private.put("retained", "old")
    private.advance(3 * HOUR)  # (younger than a shard lives: one shard)
    private.put("retained", "new")
    (shard_id,) = private.shard_ids(arn)
    numbers = private.numbers(arn, shard_id)
    private.advance(21 * HOUR - 60)
    early = private.iterator(arn, shard_id)  # points at "old", a minute before it is past retention
    assert private.keys(private.iterator(arn, shard_id)) == ["old", "new"]
    private.advance(120)  # "old" is 24 hours and a minute old, "new" 21 hours and a minute

    def check() -> None:
        assert private.keys(private.iterator(arn, shard_id)) == ["new"]
        assert refused(private.streams.get_records, ShardIterator=early) == TRIMMED
        assert refused(private.streams.get_shard_iterator, StreamArn=arn, ShardId=shard_id,
                       ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=numbers["old"]) == TRIMMED
        assert private.keys(private.iterator(arn, shard_id, "AFTER_SEQUENCE_NUMBER", numbers["old"])) == ["new"]
        assert private.keys(private.iterator(arn, shard_id, "AT_SEQUENCE_NUMBER", numbers["new"])) == ["new"]

    before_and_after_the_trimmer(private, check)


def test_a_closed_shard_past_retention_leaves_the_stream(private: Private) -> None:
    arn = private.new_stream()
    private.put("retained", "a")
    private.advance(5 * HOUR)  # older than a shard lives: the next write opens a child
    private.put("retained", "b")
    parent, child = private.shard_ids(arn)
    number_a = private.numbers(arn, parent)["a"]
    private.advance(19 * HOUR + 60)  # "a" is past retention; its shard closed 19 hours ago

    def emptied() -> None:
        assert private.shard_ids(arn) == [parent, child]
        page = private.streams.get_records(ShardIterator=private.iterator(arn, parent))
        assert page["Records"] == [] and "NextShardIterator" not in page  # read to its end
        assert refused(private.streams.get_shard_iterator, StreamArn=arn, ShardId=parent,
                       ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=number_a) == TRIMMED
        assert private.keys(private.iterator(arn, child)) == ["b"]

    before_and_after_the_trimmer(private, emptied)
    private.advance(5 * HOUR - 120)
    early = private.iterator(arn, parent)
    private.advance(120)  # the parent closed 24 hours and a minute ago; "b" is past retention too

    def gone() -> None:
        (shard,) = private.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        assert shard["ShardId"] == child and shard["ParentShardId"] == parent
        assert refused(private.streams.get_shard_iterator, StreamArn=arn, ShardId=parent,
                       ShardIteratorType="TRIM_HORIZON") == SHARD_GONE
        assert refused(private.streams.get_records, ShardIterator=early) == ITERATOR_SHARD_GONE
        assert private.keys(private.iterator(arn, child)) == []

    before_and_after_the_trimmer(private, gone)


def test_a_stream_disabled_more_than_24_hours_ago_is_gone(private: Private) -> None:
    arn = private.new_stream()
    private.put("retained", "a")
    private.client.update_table(TableName="retained", StreamSpecification={"StreamEnabled": False})
    private.advance(DAY - 60)
    listed = private.streams.list_streams(TableName="retained")["Streams"]
    assert [stream["StreamArn"] for stream in listed] == [arn]
    assert private.streams.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"] == "DISABLED"
    private.advance(120)

    def check() -> None:
        assert private.streams.list_streams(TableName="retained")["Streams"] == []
        assert refused(private.streams.describe_stream, StreamArn=arn) == (
            "ResourceNotFoundException", f"Requested resource not found: Stream: {arn} not found")

    before_and_after_the_trimmer(private, check)
