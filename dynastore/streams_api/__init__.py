"""The DynamoDB Streams API (``X-Amz-Target: DynamoDBStreams_20120810.<Operation>``).

``dispatch_streams(database, operation, request)`` is the one entry point, the
Streams counterpart of ``dynastore.ops.dispatch``: it validates the request's
shape (streams_api.shapes) and runs the operation's module
``dynastore/streams_api/<snake_name>.py`` (``handle(database, request)``).
Records are kept by dynastore.streams_api.store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynastore.errors import UnknownOperationException

if TYPE_CHECKING:
    from dynastore.database import Database

STREAMS_TARGET_PREFIX = "DynamoDBStreams_20120810."
STREAMS_OPERATIONS = ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords")


Handler = Callable[["Database", dict[str, Any]], "dict[str, Any] | bytes"]
_handlers: dict[str, Handler] = {}


def _load_handlers() -> dict[str, Handler]:
    """Imported on first use: dynastore.database imports this package (for
    the record store), and the handlers import the request validator, which
    lives beside DynamoDB's operations."""
    from dynastore.streams_api import describe_stream, get_records, get_shard_iterator, list_streams

    _handlers.update({
        "ListStreams": list_streams.handle,
        "DescribeStream": describe_stream.handle,
        "GetShardIterator": get_shard_iterator.handle,
        "GetRecords": get_records.handle,
    })
    return _handlers


def dispatch_streams(database: Database, operation: str, request: dict[str, Any]) -> dict[str, Any] | bytes:
    """Run one Streams operation. Raises a DynamoDBError for anything refused."""
    handler = (_handlers or _load_handlers()).get(operation)
    if handler is None:
        raise UnknownOperationException()
    from dynastore.streams_api.shapes import validate_streams_request

    validate_streams_request(operation, request)
    database.refresh_catalogue(check=operation in ("ListStreams", "DescribeStream"))
    if database.replication is not None:  # global tables: replicated writes now due arrive first
        database.replication.catch_up(database)
    return handler(database, request)
