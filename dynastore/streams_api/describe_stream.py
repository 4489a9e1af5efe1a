"""DescribeStream: a stream's status, view type, key schema and shards (with
their sequence-number ranges and parents), a page of shards at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.streams import DESCRIBE_STREAM_MAX_LIMIT
from dynastore.streams_api.errors import stream_not_found

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request["StreamArn"]
    log = database.streams.by_arn.get(arn)
    if log is None:
        raise stream_not_found(arn)
    shards = database.streams.shards(log)
    shard_filter = request.get("ShardFilter") or {}
    if shard_filter.get("Type") == "CHILD_SHARDS":
        shards = [shard for shard in shards if shard.parent == shard_filter.get("ShardId")]
    start = request.get("ExclusiveStartShardId")
    if start is not None:
        ids = [shard.shard_id for shard in shards]
        shards = shards[ids.index(start) + 1:] if start in ids else [
            shard for shard in shards if shard.shard_id > start
        ]
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
