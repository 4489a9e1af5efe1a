"""DescribeStream: a stream's status, view type, key schema and shards (with
their sequence-number ranges and parents), a page of shards at a time;
``ShardFilter`` ``CHILD_SHARDS`` lists only the children of one shard.
A closed shard whose records are all past the 24-hour retention is no
longer listed, nor is a stream disabled more than 24 hours ago known."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.streams import DESCRIBE_STREAM_MAX_LIMIT, is_stream_arn
from dynastore.streams_api.errors import (
    invalid_stream_arn,
    shard_filter_member_missing,
    stream_not_found,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.streams import Shard


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request["StreamArn"]
    if not is_stream_arn(arn):
        raise invalid_stream_arn()
    shard_filter = request.get("ShardFilter")
    parent = None if shard_filter is None else child_shards_of(shard_filter)
    log = database.streams.live(arn, database.now())
    if log is None:
        raise stream_not_found(arn)
    shards = database.streams.retained_shards(log, database.now())
    if parent is not None:
        shards = [shard for shard in shards if shard.parent == parent]
    start = request.get("ExclusiveStartShardId")
    if start is not None:
        shards = after_shard(shards, start)
    limit = request.get("Limit") or DESCRIBE_STREAM_MAX_LIMIT
    page = shards[:limit]
    description: dict[str, Any] = {
        "StreamArn": log.arn,
        "StreamLabel": log.label,
        "StreamStatus": log.status,
        "StreamViewType": log.view_type,
        "CreationRequestDateTime": log.created,
        "TableName": log.table_name,
        "KeySchema": log.key_schema,
        "Shards": [shard.describe() for shard in page],
    }
    if len(shards) > limit:
        description["LastEvaluatedShardId"] = page[-1].shard_id
    return {"StreamDescription": description}


def child_shards_of(shard_filter: dict[str, Any]) -> str:
    """The parent shard id a ShardFilter asks the children of (its Type can
    only be CHILD_SHARDS: the shape's enum has refused anything else)."""
    if shard_filter.get("Type") is None:
        raise shard_filter_member_missing("type")
    parent = shard_filter.get("ShardId")
    if parent is None:
        raise shard_filter_member_missing("shardId")
    return str(parent)


def after_shard(shards: list[Shard], start: str) -> list[Shard]:
    """The shards after ``start``: after its place in the list when it is one
    of them, else those whose id sorts after it (an unknown or trimmed-away
    id is not an error)."""
    ids = [shard.shard_id for shard in shards]
    if start in ids:
        return shards[ids.index(start) + 1:]
    return [shard for shard in shards if shard.shard_id > start]
