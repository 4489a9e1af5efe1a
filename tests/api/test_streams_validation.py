"""DynamoDB Streams validation (issue 17): every malformed or missing
parameter of ListStreams, DescribeStream, GetShardIterator and GetRecords
answers with DynamoDB Streams' error type and whole message; sequence
numbers and shard iterators are accepted back exactly as issued and nothing
else; writes that change nothing leave no record.

Through boto3's ``dynamodbstreams`` client (parameter validation off) on
every transport; the 24-hour retention cases run on a private in-process
database, whose clock can move a day without touching the shared servers'.
Where each message comes from (and which are still unconfirmed against
the service) is in docs/compatibility.md, "Streams".
"""

from __future__ import annotations

import base64
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import dynastore
from dynastore.clock import advance_clock
from dynastore.workers.ttl_sweeper import sweep_all
from tests.api.conftest import alternate_endpoints, make_client
from tests.api.helpers import error_of

STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
UNKNOWN_SHARD = "shardId-00000000000000000000-00000000"
NULL = "failed to satisfy constraint: Member must not be null"


@pytest.fixture
def streams(endpoint: str, second_endpoint: str | None) -> Any:
    """A boto3 dynamodbstreams client (alternating between the two servers of postgres-pair)."""
    streams_client = make_client(endpoint, "dynamodbstreams")
    if second_endpoint is not None:
        alternate_endpoints(streams_client, [endpoint, second_endpoint])
    return streams_client


@pytest.fixture
def stream(client: Any, make_table: Any) -> dict[str, str]:
    """A fresh table with a stream: {"table", "arn", "shard", "start"}."""
    name = make_table(sk=None, StreamSpecification=STREAM)
    arn = client.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    return {"table": name, "arn": arn}


def first_shard(streams: Any, arn: str) -> dict[str, Any]:
    return dict(streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0])


def refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return error_of(excinfo)


def validation(*failures: str) -> tuple[str, str]:
    count = len(failures)
    head = f"{count} validation error{'s' if count > 1 else ''} detected: "
    return "ValidationException", head + "; ".join(failures)


def other_arn(arn: str) -> str:
    """A well-formed ARN of a stream that does not exist (another label)."""
    return arn.rsplit("/", 1)[0] + "/1999-01-01T00:00:00.000"


def all_records(streams: Any, arn: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator)
            records += page["Records"]
            iterator = page.get("NextShardIterator") if page["Records"] else None
    return records


# --- DescribeStream --------------------------------------------------------------------


def test_describe_stream_refusals(streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    describe = streams.describe_stream
    assert refused(describe) == validation(f"Value null at 'streamArn' {NULL}")
    assert refused(describe, StreamArn="x" * 10, ExclusiveStartShardId="y") == validation(
        "Value 'xxxxxxxxxx' at 'streamArn' failed to satisfy constraint: "
        "Member must have length greater than or equal to 37",
        "Value 'y' at 'exclusiveStartShardId' failed to satisfy constraint: "
        "Member must have length greater than or equal to 28",
    )
    assert refused(describe, StreamArn=arn, Limit=0) == validation(
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
    assert refused(describe, StreamArn="x" * 50) == ("ValidationException", "Invalid StreamArn")
    assert refused(describe, StreamArn=other_arn(arn)) == (
        "ResourceNotFoundException", f"Requested resource not found: Stream: {other_arn(arn)} not found")


def test_describe_stream_shard_filter_refusals(streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    shard_id = first_shard(streams, arn)["ShardId"]
    describe = streams.describe_stream
    assert refused(describe, StreamArn=arn, ShardFilter={"Type": "PARENT_SHARDS", "ShardId": shard_id}) == validation(
        "Value 'PARENT_SHARDS' at 'shardFilter.type' failed to satisfy constraint: "
        "Member must satisfy enum value set: [CHILD_SHARDS]")
    assert refused(describe, StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": "x"}) == validation(
        "Value 'x' at 'shardFilter.shardId' failed to satisfy constraint: "
        "Member must have length greater than or equal to 28")
    assert refused(describe, StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS"}) == validation(
        f"Value null at 'shardFilter.shardId' {NULL}")
    assert refused(describe, StreamArn=arn, ShardFilter={"ShardId": shard_id}) == validation(
        f"Value null at 'shardFilter.type' {NULL}")


def test_describe_stream_filters_and_pages_without_error(streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    shard_id = first_shard(streams, arn)["ShardId"]
    children = streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": shard_id})
    assert children["StreamDescription"]["Shards"] == []  # an open shard has no children yet
    unknown = streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": UNKNOWN_SHARD})
    assert unknown["StreamDescription"]["Shards"] == []
    past_the_end = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId="z" * 56)
    assert past_the_end["StreamDescription"]["Shards"] == []


# --- ListStreams -----------------------------------------------------------------------


def test_list_streams_refusals(streams: Any, stream: dict[str, str]) -> None:
    assert refused(streams.list_streams, TableName="ab", Limit=0) == validation(
        "Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3",
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    )
    assert refused(streams.list_streams, ExclusiveStartStreamArn="k" * 50) == ("ValidationException",
                                                                               "Invalid StreamArn")
    listed = streams.list_streams(TableName=stream["table"], ExclusiveStartStreamArn=other_arn(stream["arn"]))
    assert [entry["StreamArn"] for entry in listed["Streams"]] == [stream["arn"]]  # an unknown start is no error


# --- GetShardIterator ------------------------------------------------------------------


def test_get_shard_iterator_refusals(streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    shard = first_shard(streams, arn)
    shard_id, start = shard["ShardId"], shard["SequenceNumberRange"]["StartingSequenceNumber"]
    get = streams.get_shard_iterator
    assert refused(get) == validation(f"Value null at 'streamArn' {NULL}", f"Value null at 'shardId' {NULL}",
                                      f"Value null at 'shardIteratorType' {NULL}")
    assert refused(get, StreamArn=arn, ShardId=shard_id, ShardIteratorType="NEWEST") == validation(
        "Value 'NEWEST' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: "
        "[TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]")
    assert refused(get, StreamArn=arn, ShardId=shard_id, ShardIteratorType="AT_SEQUENCE_NUMBER",
                   SequenceNumber="123") == validation(
        "Value '123' at 'sequenceNumber' failed to satisfy constraint: "
        "Member must have length greater than or equal to 21")
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        assert refused(get, StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind) == (
            "ValidationException",
            f"One or more parameter values were invalid: SequenceNumber must be specified for ShardIteratorType {kind}")
    for kind in ("TRIM_HORIZON", "LATEST"):
        assert refused(get, StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind, SequenceNumber=start) == (
            "ValidationException", "One or more parameter values were invalid: "
            f"SequenceNumber must not be specified for ShardIteratorType {kind}")
    assert refused(get, StreamArn="s" * 50, ShardId=shard_id, ShardIteratorType="LATEST") == (
        "ValidationException", "Invalid StreamArn")
    assert refused(get, StreamArn=other_arn(arn), ShardId=shard_id, ShardIteratorType="LATEST") == (
        "ResourceNotFoundException", f"Requested resource not found: Stream: {other_arn(arn)} not found")
    for unknown in (UNKNOWN_SHARD, "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv"):
        assert refused(get, StreamArn=arn, ShardId=unknown, ShardIteratorType="LATEST") == (
            "ResourceNotFoundException", "Requested resource not found: Shard does not exist")


def test_sequence_numbers_are_accepted_exactly_as_issued(client: Any, streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    for index in range(3):
        client.put_item(TableName=stream["table"], Item={"pk": {"S": f"k{index}"}})
    shard = first_shard(streams, arn)
    shard_id = shard["ShardId"]
    assert re.fullmatch(r"shardId-[0-9]{20}-[0-9a-f]{8}", shard_id), shard_id
    records = all_records(streams, arn)
    numbers = [record["dynamodb"]["SequenceNumber"] for record in records]
    assert all(re.fullmatch(r"[0-9]{21,40}", number) for number in numbers)
    assert [int(number) for number in numbers] == sorted(int(number) for number in numbers)
    assert shard["SequenceNumberRange"]["StartingSequenceNumber"] <= numbers[0]

    def keys_from(kind: str, number: str) -> list[str]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind,
                                              SequenceNumber=number)["ShardIterator"]
        return [record["dynamodb"]["Keys"]["pk"]["S"] for record in streams.get_records(ShardIterator=iterator)["Records"]]

    assert keys_from("AT_SEQUENCE_NUMBER", numbers[1]) == ["k1", "k2"]
    assert keys_from("AFTER_SEQUENCE_NUMBER", numbers[1]) == ["k2"]
    bad_numbers = ["0" + numbers[1], "x" * 21, numbers[1][:-1] + "a", "0" * 21, "٠" * 21]
    for bad in bad_numbers:
        assert refused(streams.get_shard_iterator, StreamArn=arn, ShardId=shard_id,
                       ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=bad) == (
            "ValidationException", "Invalid SequenceNumber for the shard"), bad


def test_an_empty_open_shard_accepts_its_starting_sequence_number(streams: Any, stream: dict[str, str]) -> None:
    """(DynamoDB answers an iterator for a new shard's StartingSequenceNumber
    even before any record has it.)"""
    arn = stream["arn"]
    shard = first_shard(streams, arn)
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                              SequenceNumber=start)["ShardIterator"]
        assert streams.get_records(ShardIterator=iterator)["Records"] == []


# --- GetRecords ------------------------------------------------------------------------


def tampered(iterator: str) -> list[str]:
    """Iterators that are not the one issued: edited, cut short, padded, re-encoded."""
    prefix, _, token = iterator.rpartition("|")
    flipped = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    raw = base64.b64decode(token)
    variants = [
        f"{prefix}|{flipped}",
        iterator[:-4],
        iterator + "A",
        iterator + " ",
        f"{prefix}|{base64.urlsafe_b64encode(raw).decode().replace('=', '')}",
        f"{prefix}|{base64.b64encode(raw[:-1] + bytes([raw[-1] ^ 1])).decode()}",
        prefix.replace("|1", "|2") + "|" + token,
    ]
    return [variant for variant in variants if variant != iterator]  # (URL-safe base64 can be the same)


def test_get_records_refusals(streams: Any, stream: dict[str, str]) -> None:
    assert refused(streams.get_records) == validation(f"Value null at 'shardIterator' {NULL}")
    assert refused(streams.get_records, ShardIterator="") == validation(
        "Value '' at 'shardIterator' failed to satisfy constraint: Member must have length greater than or equal to 1")
    assert refused(streams.get_records, ShardIterator=5) == ("SerializationException",
                                                             "NUMBER_VALUE cannot be converted to String")
    arn = stream["arn"]
    shard_id = first_shard(streams, arn)["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert refused(streams.get_records, ShardIterator=iterator, Limit=0) == validation(
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
    kinesis_style = "AAAAAAAAAAHAB/7nooId/YHFtbxkG8nWQeVQYrjLG5oyn1c0uNYGDV7+NLkViy7Tzw5Yj0nXwTrbEHtKIeGRQNZnxGbV"
    for bad in ["not-an-iterator", kinesis_style, f"{arn}|1|{kinesis_style}", *tampered(iterator)]:
        assert refused(streams.get_records, ShardIterator=bad) == ("ValidationException", "Invalid ShardIterator"), bad
    assert streams.get_records(ShardIterator=iterator)["Records"] == []  # the one issued still works


def test_an_iterator_of_another_stream_is_refused(client: Any, make_table: Any, streams: Any,
                                                  stream: dict[str, str]) -> None:
    other = make_table(sk=None, StreamSpecification=STREAM)
    other_arn_ = client.describe_table(TableName=other)["Table"]["LatestStreamArn"]
    shard_id = first_shard(streams, stream["arn"])["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=stream["arn"], ShardId=shard_id,
                                          ShardIteratorType="LATEST")["ShardIterator"]
    swapped = other_arn_ + iterator[len(stream["arn"]):]
    assert refused(streams.get_records, ShardIterator=swapped) == ("ValidationException", "Invalid ShardIterator")
    assert refused(streams.get_shard_iterator, StreamArn=other_arn_, ShardId=shard_id,
                   ShardIteratorType="LATEST") == (
        "ResourceNotFoundException", "Requested resource not found: Shard does not exist")


def test_iterators_have_dynamodbs_form_and_chain(client: Any, streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    shard_id = first_shard(streams, arn)["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert iterator.startswith(f"{arn}|1|") and len(iterator) <= 2048
    assert re.fullmatch(r"[A-Za-z0-9+/]+=*", iterator[len(arn) + 3:])
    client.put_item(TableName=stream["table"], Item={"pk": {"S": "a"}})
    page = streams.get_records(ShardIterator=iterator)
    assert [record["eventName"] for record in page["Records"]] == ["INSERT"]
    following = page["NextShardIterator"]
    assert following.startswith(f"{arn}|1|")
    client.put_item(TableName=stream["table"], Item={"pk": {"S": "b"}})
    assert [record["dynamodb"]["Keys"] for record in streams.get_records(ShardIterator=following)["Records"]] == [
        {"pk": {"S": "b"}}]
    assert streams.get_records(ShardIterator=iterator)["Records"][0]["dynamodb"]["Keys"] == {"pk": {"S": "a"}}


def advance_server_clock(endpoint: str, seconds: int) -> None:
    request = urllib.request.Request(f"{endpoint}/_dynastore/clock", method="POST",
                                     data=orjson.dumps({"advance_seconds": seconds}),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            reply.read()
    except urllib.error.HTTPError as error:
        error.close()
        pytest.skip("this endpoint has no movable clock")


@pytest.mark.one_server  # moves one server's clock; the other hears of it a moment later
def test_an_expired_iterator(endpoint: str, streams: Any, stream: dict[str, str]) -> None:
    arn = stream["arn"]
    shard_id = first_shard(streams, arn)["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                                          ShardIteratorType="LATEST")["ShardIterator"]
    advance_server_clock(endpoint, 15 * 60 + 5)
    assert refused(streams.get_records, ShardIterator=iterator) == ("ExpiredIteratorException",
                                                                    "Shard iterator has expired")
    fresh = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType="LATEST")["ShardIterator"]
    assert streams.get_records(ShardIterator=fresh)["Records"] == []


# --- the 24-hour retention (a private database: its clock moves a day) -------------------


@pytest.fixture
def private() -> Iterator[Any]:
    with dynastore.open() as database:
        yield database


def test_trimmed_positions_and_shards(private: Any) -> None:
    private.database.streams.shard_max_records = 1
    client = private.client()
    streams = private.streams_client(config=Config(parameter_validation=False))
    arn = client.create_table(
        TableName="retained", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        StreamSpecification=STREAM)["TableDescription"]["LatestStreamArn"]
    client.put_item(TableName="retained", Item={"pk": {"S": "old"}})
    client.put_item(TableName="retained", Item={"pk": {"S": "older-shard-closed"}})
    closed, open_shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    old_number = all_records(streams, arn)[-1]["dynamodb"]["SequenceNumber"]
    advance_clock(private.database, 24 * 3600 - 60)

    def horizon(shard: dict[str, Any]) -> str:
        return str(streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"])

    early = {"closed": horizon(closed), "open": horizon(open_shard)}  # a minute before the records expire
    advance_clock(private.database, 120)

    def check() -> None:
        assert refused(streams.get_records, ShardIterator=early["open"]) == (
            "TrimmedDataAccessException", "The data you are trying to access has been trimmed")
        assert refused(streams.get_shard_iterator, StreamArn=arn, ShardId=open_shard["ShardId"],
                       ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=old_number) == (
            "TrimmedDataAccessException", "The data you are trying to access has been trimmed")
        assert streams.get_records(ShardIterator=horizon(open_shard))["Records"] == []  # the horizon moved on
        # The closed shard, past retention, is gone from the stream.
        assert [shard["ShardId"] for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]] == [
            open_shard["ShardId"]]
        assert refused(streams.get_records, ShardIterator=early["closed"]) == (
            "ResourceNotFoundException", "Invalid ShardId in ShardIterator")
        assert refused(streams.get_shard_iterator, StreamArn=arn, ShardId=closed["ShardId"],
                       ShardIteratorType="TRIM_HORIZON") == (
            "ResourceNotFoundException", "Requested resource not found: Shard does not exist")

    check()  # past retention is trimmed at once, before the trimmer ran...
    sweep_all(private.database)
    check()  # ...and the same once it has


# --- writes that change nothing ------------------------------------------------------------


def test_writes_that_change_nothing_leave_no_record(client: Any, streams: Any, stream: dict[str, str]) -> None:
    table = stream["table"]

    def key(name: str) -> dict[str, Any]:
        return {"pk": {"S": name}}

    item = {**key("a"), "n": {"N": "1"}, "tags": {"SS": ["x", "y"]}}
    client.put_item(TableName=table, Item=item)  # INSERT
    client.put_item(TableName=table, Item=item)  # the same item again
    client.put_item(TableName=table, Item={**item, "tags": {"SS": ["y", "x"]}, "n": {"N": "1.0"}})  # equal values
    client.update_item(TableName=table, Key=key("a"), UpdateExpression="SET n = :one",
                       ExpressionAttributeValues={":one": {"N": "1"}})  # rewrites the same value
    client.update_item(TableName=table, Key=key("a"), UpdateExpression="REMOVE absent")  # removes nothing
    client.update_item(TableName=table, Key=key("a"), UpdateExpression="ADD tags :x",
                       ExpressionAttributeValues={":x": {"SS": ["x"]}})  # adds an element already there
    client.update_item(TableName=table, Key=key("b"), UpdateExpression="REMOVE absent")  # creates nothing
    assert "Item" not in client.get_item(TableName=table, Key=key("b"))
    client.delete_item(TableName=table, Key=key("c"))  # deletes a missing item
    with pytest.raises(ClientError):
        client.put_item(TableName=table, Item=key("a"), ConditionExpression="attribute_not_exists(pk)")
    client.update_item(TableName=table, Key=key("d"))  # creates an item of just its key: INSERT
    client.delete_item(TableName=table, Key=key("a"))  # REMOVE
    records = all_records(streams, stream["arn"])
    assert [(record["eventName"], record["dynamodb"]["Keys"]) for record in records] == [
        ("INSERT", key("a")), ("INSERT", key("d")), ("REMOVE", key("a"))]
    assert records[1]["dynamodb"]["NewImage"] == key("d") and "OldImage" not in records[1]["dynamodb"]
    old_image = records[2]["dynamodb"]["OldImage"]
    assert sorted(old_image.pop("tags")["SS"]) == ["x", "y"]  # (a set: its order is not kept)
    assert old_image == {**key("a"), "n": {"N": "1"}}
