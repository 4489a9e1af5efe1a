"""The pure half of Streams (dynastore.engine.streams) and the record store's
behaviour around rollbacks and restarts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from dynastore.database import Database
from dynastore.engine import streams
from dynastore.errors import UnknownOperationException
from dynastore.ops import dispatch
from dynastore.streams_api import dispatch_streams


def test_change_events() -> None:
    item = {"pk": {"S": "a"}, "s": {"SS": ["x", "y"]}}
    assert streams.change_event(None, item) == "INSERT"
    assert streams.change_event(item, None) == "REMOVE"
    assert streams.change_event(item, dict(item)) is None
    assert streams.change_event(item, {"pk": {"S": "a"}, "s": {"SS": ["y", "x"]}}) is None
    assert streams.change_event(item, {"pk": {"S": "a"}, "s": {"SS": ["x"]}}) == "MODIFY"
    nested = {"pk": {"S": "a"}, "m": {"M": {"l": {"L": [{"NS": ["1", "2"]}]}}}}
    reordered = {"pk": {"S": "a"}, "m": {"M": {"l": {"L": [{"NS": ["2", "1"]}]}}}}
    assert streams.change_event(nested, reordered) is None
    assert streams.change_event(None, None) is None


@pytest.mark.parametrize("view_type", streams.VIEW_TYPES)
def test_build_record_per_view_type(view_type: str) -> None:
    old = {"pk": {"S": "a"}, "v": {"N": "1"}}
    new = {"pk": {"S": "a"}, "v": {"N": "2"}}
    record = streams.build_record(
        stream="arn", event="MODIFY", keys={"pk": {"S": "a"}}, old_item=old, new_item=new,
        view_type=view_type, sequence=streams.FIRST_SEQUENCE + 7, now=1700000000.9, region="eu-west-1",
    )
    body = record["dynamodb"]
    assert ("NewImage" in body) == (view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"))
    assert ("OldImage" in body) == (view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"))
    assert body["ApproximateCreationDateTime"] == 1700000000
    assert body["SequenceNumber"] == "100000000000000000007"
    assert body["SizeBytes"] == 3 + 6 * (("NewImage" in body) + ("OldImage" in body))
    assert record["awsRegion"] == "eu-west-1" and "userIdentity" not in record
    by_service = streams.build_record(
        stream="arn", event="REMOVE", keys={"pk": {"S": "a"}}, old_item=old, new_item=None,
        view_type=view_type, sequence=1, now=0, region="r", by_service=True,
    )
    assert by_service["userIdentity"] == {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}
    assert record["eventID"] != by_service["eventID"]


def test_sequence_numbers_sort_as_text() -> None:
    numbers = [streams.FIRST_SEQUENCE, streams.FIRST_SEQUENCE + 9, streams.FIRST_SEQUENCE + 10, 10**21 - 1]
    texts = [streams.format_sequence(number) for number in numbers]
    assert sorted(texts) == texts and {len(text) for text in texts} == {21}
    assert [streams.parse_sequence(text) for text in texts] == numbers
    for bad in ("", "12a", None, 5, "١٢٣"):
        assert streams.parse_sequence(bad) is None


def test_iterators_round_trip_and_refuse_garbage() -> None:
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"
    position = streams.IteratorPosition(arn, "shardId-1", streams.FIRST_SEQUENCE + 3, 12.5)
    text = streams.encode_iterator(position)
    assert 1 <= len(text) <= 2048
    assert streams.decode_iterator(text) == position
    for garbage in ("", "x", f"{arn}|1|!!!", f"{arn}|1|" + "e30=", "arn:aws:x|1|W10=", 7):
        assert streams.decode_iterator(garbage) is None


def test_labels_arns_and_shard_ids() -> None:
    assert streams.stream_label(1700000000.25) == "2023-11-14T22:13:20.250"
    arn = streams.stream_arn("arn:aws:dynamodb:r:1:table/orders", "L")
    assert streams.table_name_of_stream_arn(arn) == "orders"
    assert streams.table_name_of_stream_arn("arn:aws:dynamodb:r:1:table/orders") is None
    shard_id = streams.shard_id_for(streams.FIRST_SEQUENCE, None, 1414562045.508)
    assert streams.SHARD_ID_PATTERN.fullmatch(shard_id) and shard_id.startswith("shardId-00000001414562045508-")
    assert streams.shard_id_for(streams.FIRST_SEQUENCE, "a", 1.0) != streams.shard_id_for(streams.FIRST_SEQUENCE, "b", 1.0)
    assert streams.shard_id_for(5, "a", 1.0) != streams.shard_id_for(6, "a", 1.0)


def test_shard_description_and_json() -> None:
    shard = streams.Shard("shardId-x" * 4, "parent-id" * 4, streams.FIRST_SEQUENCE, 10.0)
    assert "EndingSequenceNumber" not in shard.describe()["SequenceNumberRange"]
    assert not streams.Shard.from_json(shard.to_json()).closed
    shard.closed, shard.end = True, streams.FIRST_SEQUENCE + 4
    described = shard.describe()
    assert described["SequenceNumberRange"]["EndingSequenceNumber"] == "100000000000000000004"
    assert described["ParentShardId"] == "parent-id" * 4
    loaded = streams.Shard.from_json(shard.to_json())
    assert (loaded.shard_id, loaded.parent, loaded.start) == (shard.shard_id, shard.parent, shard.start)
    shard.closed_at = 20.0
    loaded = streams.Shard.from_json(shard.to_json())
    assert (loaded.closed, loaded.end, loaded.closed_at) == (True, streams.FIRST_SEQUENCE + 4, 20.0)


def test_stream_description_of_a_table() -> None:
    assert streams.stream_description({}) == {}
    current = {"arn": "A", "label": "L", "view_type": "KEYS_ONLY", "storage_id": 3}
    assert streams.stream_description({"stream": current}) == {
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        "LatestStreamLabel": "L", "LatestStreamArn": "A",
    }
    assert streams.stream_description({"stream_latest": {"arn": "A", "label": "L"}}) == {
        "LatestStreamLabel": "L", "LatestStreamArn": "A"}


# --- the store --------------------------------------------------------------------------


def make_database(path: Any = None) -> Database:
    database = Database.open(path)
    if "events" not in database.tables:
        dispatch(database, "CreateTable", {
            "TableName": "events", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        })
    return database


def records_of(database: Database) -> list[dict[str, Any]]:
    (log,) = database.streams.by_arn.values()
    found: list[dict[str, Any]] = []
    for shard in database.streams.shards(log):
        rows = database.streams.records_after(log, shard, 0, 10_000)
        found += [orjson.loads(row.item) for row in rows]
    return found


def put(database: Database, key: str) -> None:
    dispatch(database, "PutItem", {"TableName": "events", "Item": {"pk": {"S": key}}})


def test_a_rolled_back_write_leaves_no_record_and_a_consistent_shard() -> None:
    database = make_database()
    put(database, "a")

    class Abort(Exception):
        pass

    with pytest.raises(Abort), database.storage.transaction():
        put(database, "b")
        raise Abort
    put(database, "c")
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in records_of(database)] == ["a", "c"]
    dispatch(database, "UpdateTable", {"TableName": "events", "StreamSpecification": {"StreamEnabled": False}})
    (log,) = database.streams.by_arn.values()
    assert database.streams.shards(log)[-1].end == int(records_of(database)[-1]["dynamodb"]["SequenceNumber"])


def test_the_store_reloads_shards_and_the_counter(tmp_path: Any) -> None:
    database = make_database(tmp_path)
    database.streams.shard_max_records = 2
    for key in "abcde":
        put(database, key)
    (log,) = database.streams.by_arn.values()
    before = [(shard.shard_id, shard.parent, shard.start, shard.closed) for shard in database.streams.shards(log)]
    last = database.streams.last_sequence(log)
    database.close()
    reopened = make_database(tmp_path)
    (log,) = reopened.streams.by_arn.values()
    assert [(shard.shard_id, shard.parent, shard.start, shard.closed)
            for shard in reopened.streams.shards(log)] == before
    assert reopened.streams.last_sequence(log) == last
    head = reopened.streams.head(log)
    assert head.open is not None and head.count == 1
    assert "events" in reopened.tables and len(reopened.tables) == 1
    put(reopened, "f")
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in records_of(reopened)] == list("abcdef")
    reopened.close()


def test_deleting_the_table_closes_its_stream() -> None:
    database = make_database()
    put(database, "a")
    dispatch(database, "DeleteTable", {"TableName": "events"})
    (log,) = database.streams.by_arn.values()
    assert log.status == "DISABLED" and database.streams.shards(log)[-1].closed
    assert len(records_of(database)) == 1


def test_unknown_streams_operation() -> None:
    database = Database.open()
    with pytest.raises(UnknownOperationException):
        dispatch_streams(database, "PutRecord", {})


def test_a_shard_opened_by_a_rolled_back_write_goes_with_it(tmp_path: Any) -> None:
    from dynastore.workers.ttl_sweeper import sweep

    database = make_database(tmp_path)
    database.streams.shard_max_records = 2
    put(database, "a")
    put(database, "b")

    class Abort(Exception):
        pass

    with pytest.raises(Abort), database.storage.transaction():
        put(database, "c")  # opens the second shard, then rolls back
        raise Abort
    put(database, "d")  # opens the second shard again: the first opening rolled back with its write
    sweep(database)
    database.close()
    reopened = make_database(tmp_path)
    (log,) = reopened.streams.by_arn.values()
    shards = reopened.streams.shards(log)
    assert len(shards) == 2 and shards[1].parent == shards[0].shard_id
    assert [record["dynamodb"]["Keys"]["pk"]["S"] for record in records_of(reopened)] == ["a", "b", "d"]
    reopened.close()
