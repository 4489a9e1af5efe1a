"""Where stream records live: one storage table per stream, written in the
same commit as the item change that produced them.

Layout of a stream's storage table (registered as ``<table>/stream/<label>``,
a name no DynamoDB table can have):

- the head row: pk = ``HEAD_PK`` — the next sequence number, the open
  shard and how many records it has. Every append reads it inside the
  commit that writes the records, locked until that commit ends
  (``storage.base.Sequenced``), so on a store several servers share the
  sequence numbers of a stream are issued in commit order with no gap and
  no duplicate, and a reader that has seen number n has seen every number
  below it;
- record rows: pk = shard id, sk = the 21-digit sequence number, item = the
  GetRecords ``Record`` JSON (served to clients without re-encoding);
- shard rows: pk = ``SHARDS_PK``, sk = the shard's first sequence number,
  item = the shard descriptor (id, parent, start, creation time, trim point,
  and once closed its last sequence number and closing time). The open
  shard's descriptor is also in the head row; both change together;
- the storage table's metadata: the stream's own description (table, label,
  view type, key schema, creation time, status, when it was disabled).

Nothing about a stream but its description is kept in memory (``by_arn``,
rebuilt with the catalogue), so several servers over one store share one
stream. Sequence numbers count per stream from ``streams.FIRST_SEQUENCE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.engine import streams
from dynastore.engine.streams import Shard
from dynastore.storage.base import (
    UNCONDITIONAL,
    Commit,
    Row,
    RowChange,
    RowKey,
    Sequenced,
    SortKeyRange,
    TableRecord,
)
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

TRIGGERS_STORAGE_NAME = "_dynastore/stream/triggers"
"""Catalogue name of the triggers' storage table (definitions and checkpoints)."""
SET_MARKER = b'S":['
"""Bytes of every stored SS, NS or BS value: items without them skip the
set-order-insensitive comparison."""
SHARDS_PK = b"\x00shards"
"""Sorts before every ``shardId-...`` key."""
HEAD_PK = b"\x00head"


@dataclass
class StreamLog:
    """One stream (enabled or not): its description. Its shards and records
    are read from storage when asked for."""

    arn: str
    label: str
    table_name: str
    view_type: str
    key_schema: list[dict[str, str]]
    created: float
    storage_id: int
    status: str = "ENABLED"
    disabled_at: float | None = None

    def metadata(self) -> bytes:
        return orjson.dumps({
            "arn": self.arn, "label": self.label, "table_name": self.table_name,
            "view_type": self.view_type, "key_schema": self.key_schema,
            "created": self.created, "status": self.status, "disabled_at": self.disabled_at,
        })

    def describe_summary(self) -> dict[str, str]:
        return {"StreamArn": self.arn, "TableName": self.table_name, "StreamLabel": self.label}

    @property
    def head_key(self) -> RowKey:
        return RowKey(self.storage_id, HEAD_PK, b"")


@dataclass
class Head:
    """A stream's head row: what the next append needs."""

    next_sequence: int
    open: Shard | None
    count: int = 0
    """Records in the open shard (drives rollover)."""

    def to_json(self) -> bytes:
        return orjson.dumps({
            "next": str(self.next_sequence), "count": self.count,
            "open": None if self.open is None else orjson.loads(self.open.to_json()),
        })

    @classmethod
    def from_json(cls, data: bytes) -> Head:
        raw = orjson.loads(data)
        shard = None if raw["open"] is None else Shard.from_json(orjson.dumps(raw["open"]))
        return cls(int(raw["next"]), shard, int(raw["count"]))


def _shard_row(shard: Shard) -> Row:
    data = shard.to_json()
    return Row(partition_hash(SHARDS_PK), SHARDS_PK, streams.format_sequence(shard.start).encode(), data, len(data))


def _shard_change(log: StreamLog, shard: Shard) -> RowChange:
    row = _shard_row(shard)
    return RowChange(log.storage_id, row.pk, row.sk, row)


def _head_change(log: StreamLog, head: Head) -> RowChange:
    data = head.to_json()
    return RowChange(log.storage_id, HEAD_PK, b"", Row(partition_hash(HEAD_PK), HEAD_PK, b"", data, len(data)))


@dataclass(slots=True)
class _Pending:
    """A record waiting for its sequence number (everything else is known)."""

    event: str
    old_item: dict[str, Any] | None
    new_item: dict[str, Any] | None
    old_size: int | None
    new_size: int | None
    by_service: bool


class StreamStore:
    """Every stream of a database, by ARN."""

    def __init__(self, database: Database, records: list[TableRecord]) -> None:
        self.database = database
        self.storage = database.storage
        self.by_arn: dict[str, StreamLog] = {}
        self.shard_max_records = streams.SHARD_MAX_RECORDS
        self.shard_max_age = float(streams.SHARD_MAX_AGE_SECONDS)
        self.triggers_storage_id: int | None = None
        """Storage of the stream triggers (streams_api.triggers), once one exists."""
        for record in records:
            self._load(record)

    # --- start-up -------------------------------------------------------------
    def _load(self, record: TableRecord) -> None:
        if record.name == TRIGGERS_STORAGE_NAME:
            self.triggers_storage_id = record.table_id
            return
        raw = orjson.loads(record.metadata) if record.metadata else {}
        if "arn" not in raw:
            return  # registered, but the enabling transaction never finished
        log = StreamLog(
            raw["arn"], raw["label"], raw["table_name"], raw["view_type"], raw["key_schema"],
            raw["created"], record.table_id, raw["status"], raw.get("disabled_at"),
        )
        self.by_arn[log.arn] = log

    # --- shards, as stored -------------------------------------------------------
    def head(self, log: StreamLog) -> Head:
        """The stream's head (read committed, no lock: for readers)."""
        return self._head(log, self.storage.get(*log.head_key))

    def _head(self, log: StreamLog, row: Row | None) -> Head:
        """The head from its row; a stream written before heads existed gets
        one rebuilt from its shards and last record."""
        if row is not None:
            return Head.from_json(row.item)
        shards = self._stored_shards(log)
        if not shards:
            return Head(streams.FIRST_SEQUENCE, None)
        next_sequence = max(shard.start for shard in shards)
        for shard in shards:
            last = self._last_record(log, shard)
            if last is not None:
                next_sequence = max(next_sequence, last + 1)
        open_shard = shards[-1] if log.status == "ENABLED" and shards[-1].closed_at is None else None
        count = 0
        if open_shard is not None:
            count = sum(1 for _ in self.storage.query(log.storage_id, open_shard.shard_id.encode(), SortKeyRange()))
        return Head(next_sequence, open_shard, count)

    def _stored_shards(self, log: StreamLog) -> list[Shard]:
        return [Shard.from_json(row.item) for row in self.storage.query(log.storage_id, SHARDS_PK, SortKeyRange())]

    def _last_record(self, log: StreamLog, shard: Shard) -> int | None:
        last = next(self.storage.query(log.storage_id, shard.shard_id.encode(), SortKeyRange(),
                                       forward=False, expected_rows=1), None)
        return None if last is None else int(last.sk)

    def shards(self, log: StreamLog) -> list[Shard]:
        """The stream's shards, oldest first, each marked closed or open. A
        shard closed before closing times were stored is closed by its
        successor (or by the stream being disabled) at its last record."""
        shards = self._stored_shards(log)
        for index, shard in enumerate(shards):
            if shard.closed_at is not None:
                shard.closed = True
                continue
            if index < len(shards) - 1:
                shard.closed, shard.closed_at = True, shards[index + 1].created
            elif log.status != "ENABLED":
                shard.closed, shard.closed_at = True, log.disabled_at
            if shard.closed and shard.end is None:
                shard.end = self._last_record(log, shard)
        return shards

    def shard(self, log: StreamLog, shard_id: str) -> Shard | None:
        for shard in self.shards(log):
            if shard.shard_id == shard_id:
                return shard
        return None

    def last_sequence(self, log: StreamLog) -> int:
        """The last sequence number issued on the stream (FIRST_SEQUENCE - 1 before any)."""
        return self.head(log).next_sequence - 1

    # --- control plane --------------------------------------------------------
    def enable(self, schema: TableSchema, view_type: str, now: float) -> TableSchema:
        """Create a new stream for the table; returns the schema carrying it.
        Runs inside the caller's storage transaction when there is one."""
        label = streams.stream_label(now)
        arn = streams.stream_arn(schema.arn, label)
        while arn in self.by_arn:  # two streams in one millisecond
            now += 0.001
            label = streams.stream_label(now)
            arn = streams.stream_arn(schema.arn, label)
        key_schema = [{"AttributeName": schema.partition_key.name, "KeyType": "HASH"}]
        if schema.sort_key is not None:
            key_schema.append({"AttributeName": schema.sort_key.name, "KeyType": "RANGE"})
        with self.storage.transaction():
            storage_id = self.storage.create_table(
                self.database.storage_name(streams.stream_storage_name(schema.name, label)), b"{}"
            )
            log = StreamLog(arn, label, schema.name, view_type, key_schema, now, storage_id)
            self.storage.update_table_metadata(storage_id, log.metadata())
            start = streams.FIRST_SEQUENCE
            shard = Shard(streams.shard_id_for(start, log.arn, now), None, start, now)
            self.storage.commit(Commit(changes=[_shard_change(log, shard), _head_change(log, Head(start, shard))]))
        self.by_arn[arn] = log
        extensions = {key: value for key, value in schema.extensions.items() if key != streams.LATEST_STREAM_EXTENSION}
        extensions[streams.STREAM_EXTENSION] = {
            "arn": arn, "label": label, "view_type": view_type, "storage_id": storage_id,
        }
        return replace(schema, extensions=extensions)

    def disable(self, schema: TableSchema, now: float) -> TableSchema:
        """Close the table's stream (it stays readable for 24 hours)."""
        current = schema.extensions.get(streams.STREAM_EXTENSION)
        extensions = {key: value for key, value in schema.extensions.items() if key != streams.STREAM_EXTENSION}
        if current is not None:
            extensions[streams.LATEST_STREAM_EXTENSION] = {"arn": current["arn"], "label": current["label"]}
            log = self.by_arn.get(current["arn"])
            if log is not None:
                self._close_stream(log, now)
        return replace(schema, extensions=extensions)

    def table_dropped(self, schema: TableSchema, now: float) -> None:
        current = schema.extensions.get(streams.STREAM_EXTENSION)
        log = self.by_arn.get(current["arn"]) if current is not None else None
        if log is not None:
            self._close_stream(log, now)

    def _close_stream(self, log: StreamLog, now: float) -> None:
        def close(row: Row | None) -> list[RowChange]:
            head = self._head(log, row)
            changes = []
            if head.open is not None:
                changes.append(_shard_change(log, self._closed(head, now)))
                head.open, head.count = None, 0
            changes.append(_head_change(log, head))
            return changes

        self.storage.commit(Commit(sequenced=[Sequenced(log.head_key, close)]))
        log.status = "DISABLED"
        log.disabled_at = now
        self.storage.update_table_metadata(log.storage_id, log.metadata())

    @staticmethod
    def _closed(head: Head, now: float) -> Shard:
        """The head's open shard, closed at the last record it was given."""
        shard = head.open
        assert shard is not None
        last = head.next_sequence - 1
        return replace(shard, closed=True, closed_at=now,
                       end=last if head.count > 0 and last >= shard.start else None)

    # --- the write path (write_path._build) ----------------------------------------
    def appends(
        self, schema: TableSchema, changes: list[tuple[Row | None, Row | None, bool]]
    ) -> Sequenced | None:
        """The stream records of a commit's item changes to one table, as a
        ``Sequenced`` (numbered under the stream's head lock); None when no
        change changed anything. ``changes``: (old row, new row, by the service)."""
        current = schema.extensions[streams.STREAM_EXTENSION]
        log = self.by_arn.get(current["arn"])
        if log is None:
            return None
        pending = [entry for entry in map(self._pending, changes) if entry is not None]
        if not pending:
            return None
        key_of = schema.key_of
        now = self.database.now()
        region = self.database.region

        def build(row: Row | None) -> list[RowChange]:
            head = self._head(log, row)
            out: list[RowChange] = []
            for record in pending:
                shard = head.open
                if shard is None or self._rolls_over(head, now):
                    shard = self._roll_over(log, head, now, out)
                sequence = head.next_sequence
                head.next_sequence += 1
                head.count += 1
                item = record.new_item if record.new_item is not None else record.old_item
                assert item is not None
                built = streams.build_record(
                    stream=log.arn, event=record.event, keys=key_of(item), old_item=record.old_item,
                    new_item=record.new_item, view_type=log.view_type, sequence=sequence, now=now,
                    region=region, by_service=record.by_service,
                    old_size=record.old_size, new_size=record.new_size,
                )
                data = orjson.dumps(built)
                pk = shard.shard_id.encode()
                sk = streams.format_sequence(sequence).encode()
                out.append(RowChange(log.storage_id, pk, sk, Row(partition_hash(pk), pk, sk, data, len(data)), UNCONDITIONAL))
            out.append(_head_change(log, head))
            return out

        return Sequenced(log.head_key, build)

    @staticmethod
    def _pending(change: tuple[Row | None, Row | None, bool]) -> _Pending | None:
        old_row, new_row, by_service = change
        if old_row is not None and new_row is not None and old_row.item == new_row.item:
            return None  # the same bytes: nothing changed
        old_item = orjson.loads(old_row.item) if old_row is not None else None
        new_item = orjson.loads(new_row.item) if new_row is not None else None
        may_hold_sets = old_row is not None and SET_MARKER in old_row.item
        event = streams.change_event(old_item, new_item, may_hold_sets)
        if event is None:
            return None
        return _Pending(event, old_item, new_item,
                        old_row.size if old_row is not None else None,
                        new_row.size if new_row is not None else None, by_service)

    def _rolls_over(self, head: Head, now: float) -> bool:
        shard = head.open
        assert shard is not None
        return head.count >= self.shard_max_records or now - shard.created >= self.shard_max_age

    def _roll_over(self, log: StreamLog, head: Head, now: float, out: list[RowChange]) -> Shard:
        """Close the open shard (if any) and open its child at the next sequence number."""
        parent = head.open
        if parent is not None:
            out.append(_shard_change(log, self._closed(head, now)))
        start = head.next_sequence
        shard = Shard(streams.shard_id_for(start, parent.shard_id if parent else log.arn, now),
                      parent.shard_id if parent else None, start, now)
        out.append(_shard_change(log, shard))
        head.open, head.count = shard, 0
        return shard

    # --- reading ----------------------------------------------------------------
    def records_after(self, log: StreamLog, shard: Shard, after: int, limit: int) -> list[Row]:
        """Up to ``limit`` record rows of a shard with sequence > ``after``, in
        order, stopping at 1 MB."""
        rows: list[Row] = []
        total = 0
        low = streams.format_sequence(after).encode()
        for row in self.storage.query(log.storage_id, shard.shard_id.encode(), SortKeyRange(low=low, low_inclusive=False)):
            if rows and total + row.size > streams.GET_RECORDS_MAX_BYTES:
                break
            rows.append(row)
            total += row.size
            if len(rows) >= limit:
                break
        return rows

    # --- retention, as readers see it -------------------------------------------------
    # Records past the 24-hour retention are gone for every reader at once,
    # whether or not the trimmer (``trim``, run by the background sweeper) has
    # removed them yet: a read never depends on when it last ran.
    def live(self, arn: str, now: float) -> StreamLog | None:
        """The stream of ``arn``, unless there is none or it is past retention."""
        log = self.by_arn.get(arn)
        if log is None or streams.stream_expired(log.status, log.disabled_at, now):
            return None
        return log

    def retained_shards(self, log: StreamLog, now: float) -> list[Shard]:
        """The stream's shards without those wholly past retention, oldest first."""
        return [shard for shard in self.shards(log) if not streams.shard_expired(shard, now)]

    def retained_shard(self, log: StreamLog, shard_id: str, now: float) -> Shard | None:
        for shard in self.retained_shards(log, now):
            if shard.shard_id == shard_id:
                return shard
        return None

    def horizon(self, log: StreamLog, shard: Shard, now: float) -> int:
        """TRIM_HORIZON: the position just before the shard's oldest record
        still retained (reads the records past retention the trimmer has not
        removed yet: at most a shard's worth)."""
        after = max(shard.start - 1, shard.trimmed)
        if not streams.may_hold_expired(shard, now):
            return after
        low = streams.format_sequence(after).encode()
        for row in self.storage.query(log.storage_id, shard.shard_id.encode(),
                                      SortKeyRange(low=low, low_inclusive=False)):
            if not streams.record_expired(row.item, now):
                break
            after = int(row.sk)
        return after

    def trimmed_after(self, log: StreamLog, shard: Shard, after: int, now: float) -> bool:
        """Whether the record following position ``after`` is gone: removed by
        the trimmer, or stored but past retention."""
        if after < shard.trimmed:
            return True
        if not streams.may_hold_expired(shard, now):
            return False
        row = self.storage.get(log.storage_id, shard.shard_id.encode(), streams.format_sequence(after + 1).encode())
        return row is not None and streams.record_expired(row.item, now)

    # --- retention --------------------------------------------------------------
    def trim(self, now: float, max_rows: int) -> int:
        """Remove records older than 24 hours (at most ``max_rows`` per call),
        then shards and disabled streams with nothing left; returns rows removed."""
        cutoff = now - streams.STREAM_RETENTION_SECONDS
        removed = 0
        for log in list(self.by_arn.values()):
            for shard in self.shards(log):
                if shard.created >= cutoff:
                    break  # this shard's records, and every later shard's, are newer
                if removed >= max_rows:
                    return removed
                if shard.end is not None and shard.trimmed >= shard.end:
                    continue  # nothing left in it
                removed += self._trim_shard(log, shard, cutoff, max_rows - removed)
            self._forget_empty(log, cutoff)
        return removed

    def _trim_shard(self, log: StreamLog, shard: Shard, cutoff: float, budget: int) -> int:
        expired: list[Row] = []
        for row in self.storage.query(log.storage_id, shard.shard_id.encode(), SortKeyRange()):
            if len(expired) >= budget:
                break
            if orjson.loads(row.item)["dynamodb"]["ApproximateCreationDateTime"] >= cutoff:
                break
            expired.append(row)
        if not expired:
            return 0
        trimmed = int(expired[-1].sk)
        deletions = [RowChange(log.storage_id, row.pk, row.sk, None) for row in expired]
        self._update_shard(log, shard.start, lambda stored: replace(stored, trimmed=max(stored.trimmed, trimmed)),
                           deletions)
        return len(expired)

    def _update_shard(
        self, log: StreamLog, start: int, change: Callable[[Shard], Shard], more: list[RowChange]
    ) -> None:
        """Rewrite one shard row (and the head, when it is the open shard)
        under the head lock, with ``more`` changes in the same commit."""
        def build(row: Row | None) -> list[RowChange]:
            head = self._head(log, row)
            out = list(more)
            if head.open is not None and head.open.start == start:
                head.open = change(head.open)
                out += [_shard_change(log, head.open), _head_change(log, head)]
                return out
            stored = self.storage.get(log.storage_id, SHARDS_PK, streams.format_sequence(start).encode())
            if stored is not None:
                out.append(_shard_change(log, change(Shard.from_json(stored.item))))
            return out

        self.storage.commit(Commit(sequenced=[Sequenced(log.head_key, build)]))

    def _forget_empty(self, log: StreamLog, cutoff: float) -> None:
        """Closed shards past retention with no record left leave the listing;
        a disabled stream past retention goes away with its storage."""
        def gone(shard: Shard) -> bool:
            return (shard.closed and shard.closed_at is not None and shard.closed_at < cutoff
                    and (shard.end is None or shard.trimmed >= shard.end))
        shards = self.shards(log)
        if log.status != "ENABLED" and log.disabled_at is not None and log.disabled_at < cutoff \
                and all(gone(shard) for shard in shards):
            self.storage.drop_table(log.storage_id)
            del self.by_arn[log.arn]
            return
        doomed = [shard for shard in shards[:-1] if gone(shard)]
        if doomed:
            self.storage.commit(Commit(changes=[
                RowChange(log.storage_id, SHARDS_PK, streams.format_sequence(shard.start).encode(), None)
                for shard in doomed
            ]))

    def streams_of_table(self, table_name: str | None, now: float) -> list[StreamLog]:
        """The streams of one table (or of all), without those past retention."""
        logs = [log for log in self.by_arn.values() if (table_name is None or log.table_name == table_name)
                and not streams.stream_expired(log.status, log.disabled_at, now)]
        return sorted(logs, key=lambda log: (log.table_name, log.created))
