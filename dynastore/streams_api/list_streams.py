"""ListStreams: the streams of the account (or of one table), a page at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.streams import LIST_STREAMS_MAX_LIMIT, is_stream_arn
from dynastore.errors import table_not_found
from dynastore.streams_api.errors import invalid_stream_arn

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    start = request.get("ExclusiveStartStreamArn")
    if start is not None and not is_stream_arn(start):
        raise invalid_stream_arn()
    table_name = request.get("TableName")
    if table_name is not None and table_name not in database.tables:
        raise table_not_found(table_name)
    logs = database.streams.streams_of_table(table_name, database.now())
    if start is not None:
        arns = [log.arn for log in logs]
        logs = logs[arns.index(start) + 1:] if start in arns else [
            log for log in logs if log.arn > start
        ]
    limit = request.get("Limit") or LIST_STREAMS_MAX_LIMIT
    page = logs[:limit]
    answer: dict[str, Any] = {"Streams": [log.describe_summary() for log in page]}
    if len(logs) > limit:
        answer["LastEvaluatedStreamArn"] = page[-1].arn
    return answer
