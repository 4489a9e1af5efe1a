"""DynamoDB Streams: StreamSpecification on the control plane (through the real
server) and the Streams API with its records (through an embedded database,
driven by the movable clock).

The Streams API is called through boto3's ``dynamodbstreams`` client once the
``DynamoDBStreams_20120810.*`` target is wired into the protocol layer; until
then ``Streams`` calls ``dispatch_streams`` in-process, with the same
requests and the same answers (errors normalised to (code, message)).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import dynastore
from dynastore.clock import advance_clock
from dynastore.errors import DynamoDBError
from dynastore.ops import dispatch
from dynastore.streams_api import dispatch_streams
from dynastore.workers.ttl_sweeper import sweep_all
from tests.api.helpers import error_of

HASH_ONLY = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


class StreamsError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Streams:
    """Calls the Streams API of an embedded database: boto3's dynamodbstreams
    client when the target is wired, else ``dispatch_streams`` in-process."""

    def __init__(self, embedded: Any) -> None:
        self.embedded = embedded
        self.client: Any = None
        candidate = embedded.streams_client(config=Config(parameter_validation=False))
        try:
            candidate.list_streams()
            self.client = candidate
        except ClientError as error:
            if error.response["Error"]["Code"] != "UnknownOperationException":
                raise

    def __call__(self, operation: str, **request: Any) -> dict[str, Any]:
        if self.client is not None:
            method = getattr(self.client, _snake(operation))
            try:
                answer = dict(method(**request))
            except ClientError as error:
                raise StreamsError(*error_of_client(error)) from error
            answer.pop("ResponseMetadata", None)
            return answer
        try:
            result = dispatch_streams(self.embedded.database, operation, orjson.loads(orjson.dumps(request)))
        except DynamoDBError as error:
            raise StreamsError(error.type_name(), error.message or "") from error
        return orjson.loads(result) if isinstance(result, bytes) else result

    # --- conveniences --------------------------------------------------------------
    def shards(self, arn: str) -> list[dict[str, Any]]:
        shards: list[dict[str, Any]] = []
        request: dict[str, Any] = {"StreamArn": arn}
        while True:
            description = self("DescribeStream", **request)["StreamDescription"]
            shards += description["Shards"]
            if "LastEvaluatedShardId" not in description:
                return shards
            request["ExclusiveStartShardId"] = description["LastEvaluatedShardId"]

    def read_shard(self, arn: str, shard_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Every record of a shard (until an open shard has nothing more)."""
        iterator = self("GetShardIterator", StreamArn=arn, ShardId=shard_id,
                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records: list[dict[str, Any]] = []
        while iterator:
            answer = self("GetRecords", ShardIterator=iterator, **({"Limit": limit} if limit else {}))
            records += answer["Records"]
            if not answer["Records"]:
                break
            iterator = answer.get("NextShardIterator")
        return records

    def read_all(self, arn: str) -> list[dict[str, Any]]:
        """Every record of the stream, parents before children (shard lineage)."""
        records: list[dict[str, Any]] = []
        for shard in self.shards(arn):  # DescribeStream lists parents first
            records += self.read_shard(arn, shard["ShardId"])
        return records


def error_of_client(error: ClientError) -> tuple[str, str]:
    body = error.response["Error"]
    return body["Code"], body.get("Message", "")


def _snake(name: str) -> str:
    return "".join("_" + char.lower() if char.isupper() else char for char in name).lstrip("_")


@pytest.fixture
def embedded() -> Iterator[Any]:
    with dynastore.open() as database:
        yield database


@pytest.fixture
def streams(embedded: Any) -> Streams:
    return Streams(embedded)


def new_table(embedded: Any, name: str = "events", view_type: str = "NEW_AND_OLD_IMAGES", **extra: Any) -> str:
    """Create a table with a stream; returns the stream ARN."""
    answer = embedded.client().create_table(
        TableName=name, **{**HASH_ONLY, **extra},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view_type},
    )
    return str(answer["TableDescription"]["LatestStreamArn"])


def sequence(record: dict[str, Any]) -> int:
    return int(record["dynamodb"]["SequenceNumber"])


# --- control plane, through the real server --------------------------------------------


def test_create_table_with_a_stream_describes_it(client: Any, make_table: Any) -> None:
    name = make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    table = client.describe_table(TableName=name)["Table"]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    label = table["LatestStreamLabel"]
    assert table["LatestStreamArn"] == f"{table['TableArn']}/stream/{label}"
    datetime.strptime(label, "%Y-%m-%dT%H:%M:%S.%f")


def test_update_table_enables_disables_and_re_enables_a_new_stream(client: Any, make_table: Any) -> None:
    name = make_table()
    assert "LatestStreamArn" not in client.describe_table(TableName=name)["Table"]
    enabled = client.update_table(TableName=name, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    first = enabled["LatestStreamArn"]
    assert enabled["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    disabled = client.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    description = disabled["TableDescription"]
    assert "StreamSpecification" not in description
    assert description["LatestStreamArn"] == first  # still named after disabling
    again = client.update_table(TableName=name, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]
    assert again["LatestStreamArn"] != first
    assert again["LatestStreamLabel"] != description["LatestStreamLabel"]


def test_enabling_a_second_stream_is_refused(client: Any, make_table: Any) -> None:
    name = make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    with pytest.raises(ClientError) as excinfo:
        client.update_table(TableName=name, StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    assert error_of(excinfo) == (
        "ValidationException", f"Table already has an enabled stream: TableName: {name}"
    )


def test_disabling_twice_is_refused(client: Any, make_table: Any) -> None:
    name = make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    client.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    with pytest.raises(ClientError) as excinfo:
        client.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert error_of(excinfo) == (
        "ValidationException", f"Table has no stream to disable: TableName: {name}"
    )


def test_stream_storage_is_not_a_table(client: Any, make_table: Any) -> None:
    name = make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    names = client.list_tables()["TableNames"]
    assert name in names
    assert not [listed for listed in names if "/" in listed]


# --- the Streams API and its records --------------------------------------------------


def test_list_streams_and_describe_stream(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded, "orders")
    new_table(embedded, "other")
    listed = streams("ListStreams", TableName="orders")["Streams"]
    assert listed == [{"StreamArn": arn, "TableName": "orders", "StreamLabel": arn.rsplit("/", 1)[1]}]
    assert len(streams("ListStreams")["Streams"]) == 2
    page = streams("ListStreams", Limit=1)
    assert len(page["Streams"]) == 1 and "LastEvaluatedStreamArn" in page
    rest = streams("ListStreams", ExclusiveStartStreamArn=page["LastEvaluatedStreamArn"])
    assert len(rest["Streams"]) == 1 and "LastEvaluatedStreamArn" not in rest
    description = streams("DescribeStream", StreamArn=arn)["StreamDescription"]
    assert description["StreamStatus"] == "ENABLED"
    assert description["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert description["TableName"] == "orders"
    assert description["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    (shard,) = description["Shards"]
    assert shard["ShardId"].startswith("shardId-")
    assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    assert "ParentShardId" not in shard


def test_insert_modify_remove_with_both_images(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    client.update_item(TableName="events", Key={"pk": {"S": "a"}}, UpdateExpression="SET n = :two",
                       ExpressionAttributeValues={":two": {"N": "2"}})
    client.delete_item(TableName="events", Key={"pk": {"S": "a"}})
    records = streams.read_all(arn)
    assert [record["eventName"] for record in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = (record["dynamodb"] for record in records)
    assert insert["Keys"] == {"pk": {"S": "a"}}
    assert insert["NewImage"] == {"pk": {"S": "a"}, "n": {"N": "1"}} and "OldImage" not in insert
    assert modify["OldImage"]["n"] == {"N": "1"} and modify["NewImage"]["n"] == {"N": "2"}
    assert remove["OldImage"]["n"] == {"N": "2"} and "NewImage" not in remove
    assert all(body["StreamViewType"] == "NEW_AND_OLD_IMAGES" for body in (insert, modify, remove))
    assert all(body["SizeBytes"] > 0 for body in (insert, modify, remove))
    assert sequence(records[0]) < sequence(records[1]) < sequence(records[2])
    for record in records:
        assert record["eventSource"] == "aws:dynamodb" and record["eventVersion"] == "1.1"
        assert record["awsRegion"] == "us-east-1" and len(record["eventID"]) == 32
        assert "userIdentity" not in record
        assert len(record["dynamodb"]["SequenceNumber"]) >= 21


@pytest.mark.parametrize(
    ("view_type", "new", "old"),
    [("KEYS_ONLY", False, False), ("NEW_IMAGE", True, False),
     ("OLD_IMAGE", False, True), ("NEW_AND_OLD_IMAGES", True, True)],
)
def test_images_follow_the_view_type(embedded: Any, streams: Streams, view_type: str, new: bool, old: bool) -> None:
    arn = new_table(embedded, view_type=view_type)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "a"}, "v": {"S": "1"}})
    client.put_item(TableName="events", Item={"pk": {"S": "a"}, "v": {"S": "2"}})
    _, modify = streams.read_all(arn)
    body = modify["dynamodb"]
    assert body["Keys"] == {"pk": {"S": "a"}}
    assert ("NewImage" in body) is new and ("OldImage" in body) is old
    assert body["StreamViewType"] == view_type


def test_a_write_that_changes_nothing_makes_no_record(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    item = {"pk": {"S": "a"}, "tags": {"SS": ["x", "y"]}}
    client.put_item(TableName="events", Item=item)
    client.put_item(TableName="events", Item=item)
    client.put_item(TableName="events", Item={"pk": {"S": "a"}, "tags": {"SS": ["y", "x"]}})
    client.update_item(TableName="events", Key={"pk": {"S": "a"}}, UpdateExpression="REMOVE absent_attr")
    client.delete_item(TableName="events", Key={"pk": {"S": "nothing-here"}})
    assert [record["eventName"] for record in streams.read_all(arn)] == ["INSERT"]


def test_batch_and_transaction_writes_are_recorded_together(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.batch_write_item(RequestItems={"events": [
        {"PutRequest": {"Item": {"pk": {"S": f"b{index}"}}}} for index in range(3)
    ]})
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": "events", "Item": {"pk": {"S": "t1"}}}},
        {"Delete": {"TableName": "events", "Key": {"pk": {"S": "b0"}}}},
        {"Update": {"TableName": "events", "Key": {"pk": {"S": "b1"}},
                    "UpdateExpression": "SET x = :x", "ExpressionAttributeValues": {":x": {"N": "1"}}}},
    ])
    records = streams.read_all(arn)
    assert [record["eventName"] for record in records] == ["INSERT"] * 3 + ["INSERT", "REMOVE", "MODIFY"]
    numbers = [sequence(record) for record in records[3:]]
    assert numbers == list(range(numbers[0], numbers[0] + 3))  # adjacent: nothing in between


def test_a_cancelled_transaction_leaves_no_record(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    with pytest.raises(ClientError):
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": "events", "Item": {"pk": {"S": "x"}}}},
            {"ConditionCheck": {"TableName": "events", "Key": {"pk": {"S": "missing"}},
                                "ConditionExpression": "attribute_exists(pk)"}},
        ])
    assert streams.read_all(arn) == []


def test_iterator_types_and_limit(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    for index in range(5):
        client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
    (shard,) = streams.shards(arn)
    shard_id = shard["ShardId"]
    everything = streams.read_shard(arn, shard_id)
    numbers = [record["dynamodb"]["SequenceNumber"] for record in everything]

    def first_after(kind: str, number: str | None = None) -> list[str]:
        request = {"StreamArn": arn, "ShardId": shard_id, "ShardIteratorType": kind}
        if number is not None:
            request["SequenceNumber"] = number
        iterator = streams("GetShardIterator", **request)["ShardIterator"]
        answer = streams("GetRecords", ShardIterator=iterator, Limit=2)
        assert "NextShardIterator" in answer  # the shard is open
        return [record["dynamodb"]["SequenceNumber"] for record in answer["Records"]]

    assert first_after("TRIM_HORIZON") == numbers[:2]
    assert first_after("AT_SEQUENCE_NUMBER", numbers[2]) == numbers[2:4]
    assert first_after("AFTER_SEQUENCE_NUMBER", numbers[2]) == numbers[3:5]
    assert first_after("LATEST") == []
    latest = streams("GetShardIterator", StreamArn=arn, ShardId=shard_id,
                     ShardIteratorType="LATEST")["ShardIterator"]
    client.put_item(TableName="events", Item={"pk": {"S": "after-latest"}})
    (record,) = streams("GetRecords", ShardIterator=latest)["Records"]
    assert record["dynamodb"]["Keys"] == {"pk": {"S": "after-latest"}}


def test_shards_roll_over_with_parent_links(embedded: Any, streams: Streams) -> None:
    embedded.database.streams.shard_max_records = 10
    arn = new_table(embedded)
    client = embedded.client()
    for index in range(35):
        client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
    shards = streams.shards(arn)
    assert len(shards) == 4
    assert "ParentShardId" not in shards[0]
    for parent, child in zip(shards, shards[1:], strict=False):
        assert child["ParentShardId"] == parent["ShardId"]
        assert "EndingSequenceNumber" in parent["SequenceNumberRange"]
    assert "EndingSequenceNumber" not in shards[-1]["SequenceNumberRange"]
    # A closed shard read to its end has no NextShardIterator; the open one does.
    iterator = streams("GetShardIterator", StreamArn=arn, ShardId=shards[0]["ShardId"],
                       ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    closed = streams("GetRecords", ShardIterator=iterator)
    assert len(closed["Records"]) == 10 and "NextShardIterator" not in closed
    records = streams.read_all(arn)
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in records] == [f"k{index}" for index in range(35)]
    page = streams("DescribeStream", StreamArn=arn, Limit=3)["StreamDescription"]
    assert len(page["Shards"]) == 3 and page["LastEvaluatedShardId"] == shards[2]["ShardId"]
    children = streams("DescribeStream", StreamArn=arn, ShardFilter={
        "Type": "CHILD_SHARDS", "ShardId": shards[0]["ShardId"]})["StreamDescription"]["Shards"]
    assert [shard["ShardId"] for shard in children] == [shards[1]["ShardId"]]


def test_shards_roll_over_with_database_time(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "before"}})
    advance_clock(embedded.database, 5 * 3600)
    client.put_item(TableName="events", Item={"pk": {"S": "after"}})
    first, second = streams.shards(arn)
    assert second["ParentShardId"] == first["ShardId"]


def test_disabling_closes_the_stream_and_it_stays_readable(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "a"}})
    client.update_table(TableName="events", StreamSpecification={"StreamEnabled": False})
    client.put_item(TableName="events", Item={"pk": {"S": "b"}})  # not recorded
    description = streams("DescribeStream", StreamArn=arn)["StreamDescription"]
    assert description["StreamStatus"] == "DISABLED"
    (shard,) = description["Shards"]
    assert "EndingSequenceNumber" in shard["SequenceNumberRange"]
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in streams.read_all(arn)] == ["a"]
    client.update_table(TableName="events", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert len(streams("ListStreams", TableName="events")["Streams"]) == 2


def test_expired_iterator(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    (shard,) = streams.shards(arn)
    iterator = streams("GetShardIterator", StreamArn=arn, ShardId=shard["ShardId"],
                       ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    advance_clock(embedded.database, 16 * 60)
    with pytest.raises(StreamsError) as excinfo:
        streams("GetRecords", ShardIterator=iterator)
    assert excinfo.value.code == "ExpiredIteratorException"


def test_records_are_trimmed_after_24_hours(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "old"}})
    (shard,) = streams.shards(arn)
    old = streams.read_shard(arn, shard["ShardId"])[0]["dynamodb"]["SequenceNumber"]
    advance_clock(embedded.database, 20 * 3600)
    stale = streams("GetShardIterator", StreamArn=arn, ShardId=shard["ShardId"],
                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    client.put_item(TableName="events", Item={"pk": {"S": "new"}})
    advance_clock(embedded.database, 5 * 3600)
    sweep_all(embedded.database)
    records = streams.read_all(arn)
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in records] == ["new"]
    with pytest.raises(StreamsError) as excinfo:
        streams("GetShardIterator", StreamArn=arn, ShardId=shard["ShardId"],
                ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=old)
    assert excinfo.value.code == "TrimmedDataAccessException"
    del stale  # (an iterator this old has expired anyway)


def test_ttl_deletions_carry_the_service_identity(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    client = embedded.client()
    client.update_time_to_live(TableName="events", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"})
    now = int(embedded.database.now())
    client.put_item(TableName="events", Item={"pk": {"S": "a"}, "expires": {"N": str(now + 60)}})
    client.delete_item(TableName="events", Key={"pk": {"S": "b"}})
    advance_clock(embedded.database, 120)
    assert sweep_all(embedded.database) == 1
    insert, remove = streams.read_all(arn)
    assert "userIdentity" not in insert
    assert remove["eventName"] == "REMOVE"
    assert remove["userIdentity"] == {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def test_streams_validation_and_missing_resources(embedded: Any, streams: Streams) -> None:
    arn = new_table(embedded)
    (shard,) = streams.shards(arn)
    cases = [
        (("DescribeStream", {"StreamArn": arn, "Limit": 0}), "ValidationException",
         "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"),
        (("GetRecords", {"ShardIterator": "x", "Limit": 1001}), "ValidationException",
         "Member must have value less than or equal to 1000"),
        (("GetShardIterator", {"StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "NEWEST"}),
         "ValidationException", "Member must satisfy enum value set"),
        (("DescribeStream", {"StreamArn": arn + "x"}), "ResourceNotFoundException",
         f"Requested resource not found: Stream: {arn}x not found"),
        (("GetShardIterator", {"StreamArn": arn, "ShardId": "shardId-000000000000000000000-00000000",
                               "ShardIteratorType": "LATEST"}), "ResourceNotFoundException", "not found"),
        (("GetRecords", {"ShardIterator": "not-an-iterator"}), "ValidationException", "Invalid ShardIterator"),
        (("GetShardIterator", {"StreamArn": arn, "ShardId": shard["ShardId"],
                               "ShardIteratorType": "AT_SEQUENCE_NUMBER"}), "ValidationException", "SequenceNumber"),
    ]
    cases.append((("DescribeStream", {}), "ValidationException",
                  "Value null at 'streamArn' failed to satisfy constraint: Member must not be null"))
    for (operation, request), code, text in cases:
        with pytest.raises(StreamsError) as excinfo:
            streams(operation, **request)
        assert excinfo.value.code == code, (operation, request)
        assert text in excinfo.value.message, (operation, request, excinfo.value.message)


def test_ten_thousand_mixed_writes_replay_to_the_final_table(embedded: Any, streams: Streams) -> None:
    embedded.database.streams.shard_max_records = 1000
    arn = new_table(embedded, "replay")
    client = embedded.client()
    database = embedded.database
    generator = random.Random(5)
    # In-process dispatch (the server's own entry point) keeps 10,000 writes fast.
    for step in range(10_000):
        key = {"pk": {"S": f"k{generator.randrange(300)}"}}
        choice = generator.random()
        if choice < 0.5:
            dispatch(database, "PutItem", {"TableName": "replay", "Item": {
                **key, "v": {"N": str(generator.randrange(5))}}})
        elif choice < 0.8:
            dispatch(database, "UpdateItem", {
                "TableName": "replay", "Key": key, "UpdateExpression": "ADD c :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}})
        else:
            dispatch(database, "DeleteItem", {"TableName": "replay", "Key": key})
        if step == 5000:
            advance_clock(embedded.database, 60)
    replayed: dict[str, dict[str, Any]] = {}
    records = streams.read_all(arn)
    assert len(streams.shards(arn)) > 5
    numbers = [sequence(record) for record in records]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    for record in records:
        pk = record["dynamodb"]["Keys"]["pk"]["S"]
        if record["eventName"] == "REMOVE":
            assert pk in replayed
            del replayed[pk]
        else:
            assert (record["eventName"] == "INSERT") == (pk not in replayed)
            replayed[pk] = record["dynamodb"]["NewImage"]
    table = {
        item["pk"]["S"]: item
        for page in client.get_paginator("scan").paginate(TableName="replay")
        for item in page["Items"]
    }
    assert replayed == table


def test_records_and_positions_survive_a_restart(tmp_path: Path) -> None:
    """A consumer checkpoints the last sequence number it processed; across a
    restart it resumes AFTER_SEQUENCE_NUMBER and sees every record exactly once."""
    path = tmp_path / "store"
    with dynastore.open(path) as first:
        first.database.streams.shard_max_records = 4
        arn = new_table(first)
        client = first.client()
        for index in range(6):
            client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
        streams = Streams(first)
        shards = streams.shards(arn)
        seen = [record["dynamodb"]["Keys"]["pk"]["S"] for record in streams.read_shard(arn, shards[0]["ShardId"], limit=3)]
        checkpoint_shard = shards[0]["ShardId"]
        iterator = streams("GetShardIterator", StreamArn=arn, ShardId=checkpoint_shard,
                           ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        batch = streams("GetRecords", ShardIterator=iterator, Limit=3)["Records"]
        checkpoint = batch[-1]["dynamodb"]["SequenceNumber"]
        seen = [record["dynamodb"]["Keys"]["pk"]["S"] for record in batch]
    with dynastore.open(path) as second:
        client = second.client()
        for index in range(6, 9):
            client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
        streams = Streams(second)
        shards_after = streams.shards(arn)
        assert [shard["ShardId"] for shard in shards_after[: len(shards)]] == [shard["ShardId"] for shard in shards]
        iterator = streams("GetShardIterator", StreamArn=arn, ShardId=checkpoint_shard,
                           ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=checkpoint)["ShardIterator"]
        while iterator:
            answer = streams("GetRecords", ShardIterator=iterator)
            seen += [record["dynamodb"]["Keys"]["pk"]["S"] for record in answer["Records"]]
            iterator = answer.get("NextShardIterator") if answer["Records"] else None
        for shard in shards_after[1:]:
            seen += [record["dynamodb"]["Keys"]["pk"]["S"] for record in streams.read_shard(arn, shard["ShardId"])]
        assert seen == [f"k{index}" for index in range(9)]
        numbers = [sequence(record) for record in streams.read_all(arn)]
        assert numbers == sorted(numbers) and len(set(numbers)) == 9


# --- over HTTP, once the protocol layer routes the Streams target and admin paths ----


@pytest.fixture
def server_streams(endpoint: str) -> Any:
    from tests.api.conftest import make_client

    streams_client = make_client(endpoint, "dynamodbstreams")
    try:
        streams_client.list_streams(Limit=1)
    except ClientError as error:
        if error.response["Error"]["Code"] == "UnknownOperationException":
            pytest.skip("the DynamoDBStreams_20120810 target is not routed yet")
        raise
    return streams_client


def test_boto3_streams_client_over_http(client: Any, make_table: Any, server_streams: Any) -> None:
    name = make_table(sk=None, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    arn = client.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    assert {"StreamArn": arn, "TableName": name, "StreamLabel": arn.rsplit("/", 1)[1]} in (
        server_streams.list_streams(TableName=name)["Streams"])
    (shard,) = server_streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    iterator = server_streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    answer = server_streams.get_records(ShardIterator=iterator)
    (record,) = answer["Records"]
    assert record["eventName"] == "INSERT"
    assert record["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "n": {"N": "1"}}
    assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], datetime)
    assert answer["NextShardIterator"]


def test_admin_clock_over_http(endpoint: str) -> None:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{endpoint}/_dynastore/clock", timeout=5) as reply:
            before = orjson.loads(reply.read())
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 404:
            pytest.skip("the /_dynastore/clock admin route is not routed yet")
        raise
    request = urllib.request.Request(
        f"{endpoint}/_dynastore/clock", data=b'{"advance_seconds": 1}', method="POST",
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        after = orjson.loads(reply.read())
    assert after["OffsetSeconds"] == before["OffsetSeconds"] + 1


# --- triggers: the stream delivered to a local HTTP consumer, Lambda-style ----------------


class Consumer:
    """A local HTTP endpoint that records the Lambda events it receives and
    answers with the statuses it is told to (then 200)."""

    def __init__(self, failures: list[int] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.failures = list(failures or [])
        self.url = ""
        self._server: Any = None

    async def __aenter__(self) -> Consumer:
        import asyncio

        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/events"
        return self

    async def __aexit__(self, *_: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: Any, writer: Any) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        body = await reader.readexactly(length)
        status = self.failures.pop(0) if self.failures else 200
        if status == 200:
            self.events.append(orjson.loads(body))
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    def keys(self) -> list[str]:
        return [record["dynamodb"]["Keys"]["pk"]["S"] for event in self.events for record in event["Records"]]


async def deliver_all(runner: Any, rounds: int = 200) -> None:
    import asyncio

    idle = 0
    for _ in range(rounds):
        if await runner.run_once():
            idle = 0
            continue
        idle += 1  # nothing delivered: caught up, or a retry is waiting
        if idle > 20:
            return
        await asyncio.sleep(0.005)


def test_a_trigger_delivers_lambda_batches_in_order_with_retries(embedded: Any) -> None:
    import asyncio

    from dynastore.streams_api.triggers import TriggerRunner, handle_admin_triggers

    embedded.database.streams.shard_max_records = 4
    arn = new_table(embedded)
    client = embedded.client()
    client.put_item(TableName="events", Item={"pk": {"S": "before"}})

    async def scenario() -> Consumer:
        async with Consumer(failures=[500, 503]) as consumer:
            status, answer = handle_admin_triggers(embedded.database, "POST", "/_dynastore/triggers", {
                "TableName": "events", "Url": consumer.url, "BatchSize": 3, "Name": "audit"})
            assert status == 200, answer
            for index in range(10):
                client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
            runner = TriggerRunner(embedded.database, retry_delay=0.001)
            await deliver_all(runner)
            return consumer

    consumer = asyncio.run(scenario())
    assert consumer.keys() == [f"k{index}" for index in range(10)]  # LATEST: "before" is not sent
    assert all(len(event["Records"]) <= 3 for event in consumer.events)
    record = consumer.events[0]["Records"][0]
    assert record["eventSourceARN"] == arn and record["eventSource"] == "aws:dynamodb"
    (listed,) = handle_admin_triggers(embedded.database, "GET", "/_dynastore/triggers", None)[1]["Triggers"]
    assert listed["FailedAttempts"] == 2 and listed["DeliveredRecords"] == 10
    assert listed["SkippedBatches"] == 0 and listed["LastError"] == "HTTP 503"
    assert handle_admin_triggers(embedded.database, "DELETE", "/_dynastore/triggers/audit", None)[0] == 200
    assert handle_admin_triggers(embedded.database, "DELETE", "/_dynastore/triggers/audit", None)[0] == 404


def test_trigger_definitions_are_checked(embedded: Any) -> None:
    from dynastore.streams_api.triggers import handle_admin_triggers

    new_table(embedded)
    embedded.client().create_table(TableName="plain", **HASH_ONLY)
    cases = [
        {"TableName": "missing", "Url": "http://127.0.0.1:1/"},
        {"TableName": "plain", "Url": "http://127.0.0.1:1/"},
        {"TableName": "events", "Url": "ftp://x/"},
        {"TableName": "events", "Url": "http://127.0.0.1:1/", "BatchSize": 0},
        {"TableName": "events", "Url": "http://127.0.0.1:1/", "StartingPosition": "AT"},
    ]
    for definition in cases:
        assert handle_admin_triggers(embedded.database, "POST", "/_dynastore/triggers", definition)[0] == 400


def test_a_skipped_batch_after_its_retries(embedded: Any) -> None:
    import asyncio

    from dynastore.streams_api.triggers import TriggerRunner, handle_admin_triggers

    new_table(embedded)
    client = embedded.client()
    for index in range(3):
        client.put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})

    async def scenario() -> Consumer:
        async with Consumer(failures=[500, 500]) as consumer:
            handle_admin_triggers(embedded.database, "POST", "/_dynastore/triggers", {
                "TableName": "events", "Url": consumer.url, "BatchSize": 2, "MaxRetries": 1,
                "StartingPosition": "TRIM_HORIZON"})
            await deliver_all(TriggerRunner(embedded.database, retry_delay=0.001))
            return consumer

    consumer = asyncio.run(scenario())
    assert consumer.keys() == ["k2"]  # the first batch failed twice and was skipped


def test_a_trigger_resumes_after_a_restart_without_loss_or_duplicates(tmp_path: Path) -> None:
    import asyncio

    from dynastore.streams_api.triggers import TriggerRunner, handle_admin_triggers

    path = tmp_path / "store"
    received: list[str] = []

    async def deliver(embedded: Any, setup: bool, rounds: int) -> None:
        async with Consumer() as consumer:
            if setup:
                handle_admin_triggers(embedded.database, "POST", "/_dynastore/triggers", {
                    "TableName": "events", "Url": consumer.url, "BatchSize": 2,
                    "StartingPosition": "TRIM_HORIZON", "Name": "t"})
            else:  # the consumer listens on a new port after the restart
                from dynastore.streams_api.triggers import trigger_book

                trigger = trigger_book(embedded.database).triggers["t"]
                trigger.url = consumer.url
            runner = TriggerRunner(embedded.database)
            if rounds:
                for _ in range(rounds):
                    await runner.run_once()
            else:
                await deliver_all(runner)
            received.extend(consumer.keys())

    with dynastore.open(path) as first:
        first.database.streams.shard_max_records = 3
        new_table(first)
        for index in range(7):
            first.client().put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
        asyncio.run(deliver(first, setup=True, rounds=2))  # two batches, then "crash"
    assert received == ["k0", "k1", "k2"]  # (a batch never spans two shards)
    with dynastore.open(path) as second:
        for index in range(7, 9):
            second.client().put_item(TableName="events", Item={"pk": {"S": f"k{index}"}})
        asyncio.run(deliver(second, setup=False, rounds=0))
    assert received == [f"k{index}" for index in range(9)]
