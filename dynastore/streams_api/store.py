"""Where stream records live: one storage table per stream, written in the
same storage transaction as the item change that produced them.

Layout of a stream's storage table (registered as ``<table>/stream/<label>``,
a name no DynamoDB table can have):

- record rows: pk = shard id, sk = the 21-digit sequence number, item = the
  GetRecords ``Record`` JSON (served to clients without re-encoding);
- shard rows: pk = ``SHARDS_PK``, sk = the shard's first sequence number,
  item = the shard descriptor (id, parent, start, creation time, trim point).
  A shard row is written when the shard opens, inside the transaction of
  the write that needed it. Should that transaction roll back, the shard
  (still open in memory) would lose its row while later records land in
  it, so every sweeper pass -- which runs between operations, outside any
  transaction -- re-writes the rows of shards not yet seen committed
  (``confirm_shards``);
- the storage table's metadata: the stream's own description (table, label,
  view type, key schema, creation time, status, when it was disabled).

The catalogue in memory (``StreamStore``) is rebuilt from these at start-up,
so records, shard lineage and the sequence counter survive a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import orjson

from dynastore.engine import streams
from dynastore.engine.streams import Shard
from dynastore.storage.base import Row, SortKeyRange, TableRecord
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


@dataclass
class StreamLog:
    """One stream (enabled or not) and its shards, oldest first."""

    arn: str
    label: str
    table_name: str
    view_type: str
    key_schema: list[dict[str, str]]
    created: float
    storage_id: int
    status: str = "ENABLED"
    disabled_at: float | None = None
    shards: list[Shard] = field(default_factory=list)

    def metadata(self) -> bytes:
        return orjson.dumps({
            "arn": self.arn, "label": self.label, "table_name": self.table_name,
            "view_type": self.view_type, "key_schema": self.key_schema,
            "created": self.created, "status": self.status, "disabled_at": self.disabled_at,
        })

    @property
    def open_shard(self) -> Shard | None:
        last = self.shards[-1] if self.shards else None
        return last if last is not None and not last.closed else None

    def shard(self, shard_id: str) -> Shard | None:
        for shard in self.shards:
            if shard.shard_id == shard_id:
                return shard
        return None

    def describe_summary(self) -> dict[str, str]:
        return {"StreamArn": self.arn, "TableName": self.table_name, "StreamLabel": self.label}


def _shard_row(shard: Shard) -> Row:
    data = shard.to_json()
    return Row(partition_hash(SHARDS_PK), SHARDS_PK, streams.format_sequence(shard.start).encode(), data, len(data))


class StreamStore:
    """Every stream of a database, by ARN, and the sequence-number counter."""

    def __init__(self, database: Database, records: list[TableRecord]) -> None:
        self.database = database
        self.storage = database.storage
        self.by_arn: dict[str, StreamLog] = {}
        self.next_sequence = streams.FIRST_SEQUENCE
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
        log.shards = [Shard.from_json(row.item) for row in self.storage.query(
            record.table_id, SHARDS_PK, SortKeyRange())]
        for index, shard in enumerate(log.shards):
            last = next(self.storage.query(record.table_id, shard.shard_id.encode(), SortKeyRange(),
                                           forward=False, expected_rows=1), None)
            if last is not None:
                shard.end = int(last.sk)
                self.next_sequence = max(self.next_sequence, shard.end + 1)
            self.next_sequence = max(self.next_sequence, shard.start + 1)
            if index < len(log.shards) - 1:
                shard.closed = True
                shard.closed_at = log.shards[index + 1].created
            elif log.status != "ENABLED":
                shard.closed = True
                shard.closed_at = log.disabled_at
        if log.open_shard is not None:
            log.open_shard.count = sum(1 for _ in self.storage.query(
                record.table_id, log.open_shard.shard_id.encode(), SortKeyRange()))
        self.by_arn[log.arn] = log

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
            storage_id = self.storage.create_table(streams.stream_storage_name(schema.name, label), b"{}")
            log = StreamLog(arn, label, schema.name, view_type, key_schema, now, storage_id)
            self.storage.update_table_metadata(storage_id, log.metadata())
            self._open_new_shard(log, None, now)
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
        log.status = "DISABLED"
        log.disabled_at = now
        shard = log.open_shard
        if shard is not None:
            self._close_shard(log, shard, now)
        self.storage.update_table_metadata(log.storage_id, log.metadata())

    def _close_shard(self, log: StreamLog, shard: Shard, now: float) -> None:
        """Close a shard at its last *stored* record (a write whose transaction
        rolled back advanced ``end`` in memory only)."""
        last = next(self.storage.query(log.storage_id, shard.shard_id.encode(), SortKeyRange(),
                                       forward=False, expected_rows=1), None)
        shard.end = int(last.sk) if last is not None else None
        shard.closed = True
        shard.closed_at = now

    def _open_new_shard(self, log: StreamLog, parent: Shard | None, now: float) -> Shard:
        if parent is not None:
            self._close_shard(log, parent, now)
        start = self.next_sequence
        shard = Shard(streams.shard_id_for(start, parent.shard_id if parent else log.arn),
                      parent.shard_id if parent else None, start, now)
        log.shards.append(shard)
        self.storage.put(log.storage_id, _shard_row(shard))
        return shard

    # --- the write path (called by Database.write_row / delete_row) -------------
    def record_change(
        self,
        schema: TableSchema,
        old_row: Row | None,
        new_row: Row | None,
        by_service: bool = False,
    ) -> None:
        """Append the stream record of one item change, if it changed anything.
        The caller holds a storage transaction around the item write and this."""
        current = schema.extensions[streams.STREAM_EXTENSION]
        log = self.by_arn.get(current["arn"])
        if log is None:
            return
        if old_row is not None and new_row is not None and old_row.item == new_row.item:
            return  # the same bytes: nothing changed
        old_item = orjson.loads(old_row.item) if old_row is not None else None
        new_item = orjson.loads(new_row.item) if new_row is not None else None
        may_hold_sets = old_row is not None and SET_MARKER in old_row.item
        event = streams.change_event(old_item, new_item, may_hold_sets)
        if event is None:
            return
        now = self.database.now()
        shard = log.open_shard
        if shard is None or shard.should_roll_over(now, self.shard_max_records, self.shard_max_age):
            shard = self._open_new_shard(log, shard, now)
        sequence = self.next_sequence
        self.next_sequence += 1
        item = new_item if new_item is not None else old_item
        assert item is not None
        record = streams.build_record(
            stream=log.arn, event=event, keys=schema.key_of(item), old_item=old_item,
            new_item=new_item, view_type=log.view_type, sequence=sequence, now=now,
            region=self.database.region, by_service=by_service,
            old_size=old_row.size if old_row is not None else None,
            new_size=new_row.size if new_row is not None else None,
        )
        data = orjson.dumps(record)
        pk = shard.shard_id.encode()
        self.storage.put(log.storage_id, Row(partition_hash(pk), pk, streams.format_sequence(sequence).encode(), data, len(data)))
        shard.count += 1
        shard.end = sequence

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

    # --- retention --------------------------------------------------------------
    def trim(self, now: float, max_rows: int) -> int:
        """Remove records older than 24 hours (at most ``max_rows`` per call),
        then shards and disabled streams with nothing left; returns rows removed."""
        self.confirm_shards()
        cutoff = now - streams.STREAM_RETENTION_SECONDS
        removed = 0
        for log in list(self.by_arn.values()):
            for shard in list(log.shards):
                if shard.created >= cutoff:
                    break  # this shard's records, and every later shard's, are newer
                if removed >= max_rows:
                    return removed
                if shard.end is not None and shard.trimmed >= shard.end:
                    continue  # nothing left in it
                removed += self._trim_shard(log, shard, cutoff, max_rows - removed)
            self._forget_empty(log, cutoff)
        return removed

    def confirm_shards(self) -> None:
        """Make sure every shard opened since start-up has its stored row.
        Call outside any storage transaction (a read inside one would also see
        rows that may yet be rolled back)."""
        for log in self.by_arn.values():
            for shard in log.shards:
                if shard.confirmed:
                    continue
                if self.storage.get(log.storage_id, SHARDS_PK, streams.format_sequence(shard.start).encode()) is None:
                    self.storage.put(log.storage_id, _shard_row(shard))
                shard.confirmed = True

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
        with self.storage.transaction():
            for row in expired:
                self.storage.delete(log.storage_id, row.pk, row.sk)
            shard.trimmed = int(expired[-1].sk)
            self.storage.put(log.storage_id, _shard_row(shard))
        return len(expired)

    def _forget_empty(self, log: StreamLog, cutoff: float) -> None:
        """Closed shards past retention with no record left leave the listing;
        a disabled stream past retention goes away with its storage."""
        def gone(shard: Shard) -> bool:
            return (shard.closed and shard.closed_at is not None and shard.closed_at < cutoff
                    and (shard.end is None or shard.trimmed >= shard.end))
        if log.status != "ENABLED" and log.disabled_at is not None and log.disabled_at < cutoff \
                and all(gone(shard) for shard in log.shards):
            self.storage.drop_table(log.storage_id)
            del self.by_arn[log.arn]
            return
        keep = [shard for shard in log.shards if not gone(shard) or shard is log.shards[-1]]
        if len(keep) != len(log.shards):
            with self.storage.transaction():
                for shard in log.shards:
                    if shard not in keep:
                        self.storage.delete(log.storage_id, SHARDS_PK, streams.format_sequence(shard.start).encode())
            log.shards = keep

    def streams_of_table(self, table_name: str | None) -> list[StreamLog]:
        logs = [log for log in self.by_arn.values() if table_name is None or log.table_name == table_name]
        return sorted(logs, key=lambda log: (log.table_name, log.created))
