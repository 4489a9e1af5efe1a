"""GetRecords: the records after a shard iterator's position, in commit
order, at most ``Limit`` (1,000) or 1 MB, and the iterator to continue with.

A closed shard read to its end answers without NextShardIterator, which is
how consumers learn to move on to the child shards. The records' JSON is
stored in wire form and spliced into the answer without decoding.

Checks, in order: the iterator is exactly one this server (or another over
the same store) issued, it has not expired, its shard still exists, and
its position has not been trimmed. Records past the 24-hour retention are
trimmed for every reader at once, whether or not the trimmer has removed
them yet (streams_api.store, "retention, as readers see it").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.engine import streams
from dynastore.streams_api.errors import (
    data_trimmed,
    invalid_iterator,
    iterator_expired,
    iterator_shard_not_found,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.storage.base import Row


def handle(database: Database, request: dict[str, Any]) -> bytes:
    iterator = streams.decode_iterator(request["ShardIterator"])
    if iterator is None:
        raise invalid_iterator()
    now = database.now()
    if now - iterator.issued > streams.ITERATOR_LIFETIME_SECONDS:
        raise iterator_expired()
    store = database.streams
    log = store.live(iterator.stream, now)
    shard = None if log is None else store.retained_shard(log, iterator.shard_id, now)
    if log is None or shard is None:  # the stream or the shard is gone (past retention)
        raise iterator_shard_not_found()
    if iterator.after < shard.trimmed:
        raise data_trimmed()
    limit = request.get("Limit") or streams.GET_RECORDS_MAX_LIMIT
    rows = store.records_after(log, shard, iterator.after, limit)
    last = int(rows[-1].sk) if rows else iterator.after
    if rows and streams.may_hold_expired(shard, now):
        rows = retained(rows, iterator.after, now)
    body = b'{"Records":[' + b",".join(row.item for row in rows) + b"]"
    finished = shard.closed and (shard.end is None or last >= shard.end)
    if not finished:
        following = streams.IteratorPosition(iterator.stream, shard.shard_id, last, now)
        body += b',"NextShardIterator":' + orjson.dumps(streams.encode_iterator(following))
    return body + b"}"


def retained(rows: list[Row], after: int, now: float) -> list[Row]:
    """The rows not past retention. The record right after the iterator's
    position being past it means the position is trimmed (the trimmer has not
    run yet); a later one past it (an append numbered after a newer one) is
    left out like the trimmed record it is."""
    if int(rows[0].sk) == after + 1 and streams.record_expired(rows[0].item, now):
        raise data_trimmed()
    return [row for row in rows if not streams.record_expired(row.item, now)]
