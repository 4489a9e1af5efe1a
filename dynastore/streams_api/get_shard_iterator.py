"""GetShardIterator: a position in a shard (TRIM_HORIZON, LATEST,
AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER), valid for 15 minutes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import streams
from dynastore.errors import ValidationException
from dynastore.streams_api.errors import (
    TrimmedDataAccessException,
    shard_not_found,
    stream_not_found,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.streams import Shard
    from dynastore.streams_api.store import StreamLog, StreamStore


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request["StreamArn"]
    store = database.streams
    log = store.by_arn.get(arn)
    if log is None:
        raise stream_not_found(arn)
    shard = store.shard(log, request["ShardId"])
    if shard is None:
        raise shard_not_found(arn, request["ShardId"])
    after = position(store, log, shard, request["ShardIteratorType"], request.get("SequenceNumber"))
    iterator = streams.IteratorPosition(arn, shard.shard_id, after, database.now())
    return {"ShardIterator": streams.encode_iterator(iterator)}


def position(store: StreamStore, log: StreamLog, shard: Shard, kind: str, sequence_text: Any) -> int:
    """The iterator's position: records with a greater sequence number follow it."""
    if kind == "TRIM_HORIZON":
        return max(shard.start - 1, shard.trimmed)
    if kind == "LATEST":
        if shard.closed:
            return shard.end if shard.end is not None else shard.start - 1
        return store.last_sequence(log)
    if sequence_text is None:
        raise ValidationException(f"SequenceNumber must be specified for ShardIteratorType {kind}")
    number = streams.parse_sequence(sequence_text)
    last = shard.end if shard.closed else store.last_sequence(log)
    if number is None or number < shard.start or (last is not None and number > last) or (
        shard.closed and last is None
    ):
        raise ValidationException(
            f"Invalid SequenceNumber {sequence_text} for shard {shard.shard_id}"
        )
    if number <= shard.trimmed:
        raise TrimmedDataAccessException()
    return number - 1 if kind == "AT_SEQUENCE_NUMBER" else number
