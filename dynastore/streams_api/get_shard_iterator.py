"""GetShardIterator: a position in a shard (TRIM_HORIZON, LATEST,
AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER), valid for 15 minutes.

Checks, in order: SequenceNumber given exactly when the type needs one,
the ARN's form, the stream, the shard, then the sequence number (exactly
as DynamoDB issued it, within the shard's range, not yet trimmed). A
shard (or stream) wholly past the 24-hour retention is not found."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import streams
from dynastore.streams_api.errors import (
    data_trimmed,
    invalid_sequence_number,
    invalid_stream_arn,
    sequence_number_not_allowed,
    sequence_number_required,
    shard_not_found,
    stream_not_found,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.streams import Shard
    from dynastore.streams_api.store import StreamLog, StreamStore

NEEDS_SEQUENCE_NUMBER = ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER")


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request["StreamArn"]
    kind = request["ShardIteratorType"]
    sequence_text = request.get("SequenceNumber")
    if kind in NEEDS_SEQUENCE_NUMBER and sequence_text is None:
        raise sequence_number_required(kind)
    if kind not in NEEDS_SEQUENCE_NUMBER and sequence_text is not None:
        raise sequence_number_not_allowed(kind)
    if not streams.is_stream_arn(arn):
        raise invalid_stream_arn()
    store = database.streams
    now = database.now()
    log = store.live(arn, now)
    if log is None:
        raise stream_not_found(arn)
    shard = store.retained_shard(log, request["ShardId"], now)
    if shard is None:
        raise shard_not_found()
    after = position(store, log, shard, kind, sequence_text, now)
    iterator = streams.IteratorPosition(arn, shard.shard_id, after, now)
    return {"ShardIterator": streams.encode_iterator(iterator)}


def position(store: StreamStore, log: StreamLog, shard: Shard, kind: str, sequence_text: Any, now: float) -> int:
    """The iterator's position: records with a greater sequence number follow
    it. Records past the 24-hour retention count as trimmed, whether or not
    the trimmer has removed them yet."""
    if kind == "TRIM_HORIZON":
        return store.horizon(log, shard, now)
    if kind == "LATEST":
        if shard.closed:
            return shard.end if shard.end is not None else shard.start - 1
        return store.last_sequence(log)
    number = streams.exact_sequence(sequence_text)
    if number is None or not in_range(shard, number):
        raise invalid_sequence_number()
    after = number - 1 if kind == "AT_SEQUENCE_NUMBER" else number
    if store.trimmed_after(log, shard, after, now):
        raise data_trimmed()
    return after


def in_range(shard: Shard, number: int) -> bool:
    """Within the shard's SequenceNumberRange as DescribeStream shows it (an
    open shard has no end yet)."""
    if number < shard.start:
        return False
    if not shard.closed:
        return True
    return number <= (shard.end if shard.end is not None else shard.start)
