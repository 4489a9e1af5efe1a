"""Backfill of a GSI created by UpdateTable: index every existing item.

The job walks the table in scan order, a bounded batch at a time; each batch
runs in one storage transaction. On the server each batch is scheduled on
the event loop between requests (``loop.call_soon``), so creating an index on
a large table never blocks other requests for more than one batch. Without a
running loop (the embedded database, unit tests) the batches run one after
the other before UpdateTable answers.

Racing writes are neither lost nor duplicated: from the moment the index
exists, every write maintains it (the write path), and each batch's commit
is conditional on the items it indexed being unchanged. A batch indexes each item from its
current stored state, and an entry's key is derived from the item, so
indexing an item a write already indexed rewrites the same entry; an item
deleted before the backfill reaches it is simply never seen.

Items whose index key attributes have the wrong type or an empty value are
left out of the index (DynamoDB reports them as violations).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import orjson

from dynastore import limits
from dynastore.engine.indexes import entry_row
from dynastore.storage.base import (
    CatalogueChanged,
    Commit,
    Row,
    RowChange,
    RowCheck,
    RowKey,
    Storage,
    WriteConflict,
)
from dynastore.workers import jobs
from dynastore.workers.jobs import Position, ScanJob, Upkeep

if TYPE_CHECKING:
    import asyncio

    from dynastore.database import Database
    from dynastore.engine.schema import IndexDefinition, TableSchema

logger = logging.getLogger("dynastore.backfill")

BACKFILL_RETRY_SECONDS = jobs.JOB_RETRY_SECONDS
"""The pause after a batch failed (PostgreSQL restarting, say) before it is tried again."""
BACKFILL_WATCH_SECONDS = 2.0
"""On a shared store, how often a server looks for indexes still CREATING
that no job of its own runs (BackfillWatch)."""
BACKFILL_BATCH_ROWS = limits.BACKFILL_BATCH_ROWS
"""Items indexed per batch (candidate for dynastore/limits.py)."""


class Backfill(ScanJob):
    """One index's backfill; ``step()`` indexes one batch (``jobs.ScanJob``)."""

    logger = logger
    batch_rows = BACKFILL_BATCH_ROWS

    def __init__(self, database: Database, table_name: str, index_name: str, storage_id: int) -> None:
        super().__init__(database)
        self.table_name = table_name
        self.index_name = index_name
        self.storage_id = storage_id
        self._found: tuple[TableSchema, IndexDefinition] | None = None

    def _target(self) -> tuple[TableSchema, IndexDefinition] | None:
        """The table and index, unless they were deleted (or re-created) meanwhile."""
        schema = self.database.tables.get(self.table_name)
        index = schema.index(self.index_name) if schema is not None else None
        if schema is None or index is None or index.storage_id != self.storage_id:
            return None
        return schema, index

    @property
    def job_name(self) -> str:
        return f"backfill/{self.storage_id}"

    @property
    def label(self) -> str:
        return f"the backfill of {self.table_name}.{self.index_name}"

    def step(self, batch_rows: int | None = None) -> bool | None:
        try:
            return super().step(batch_rows)
        except CatalogueChanged:
            # Another server changed the table meanwhile (its throughput, say):
            # the batch's commit was refused and nothing of it was written.
            # Reload, and redo the batch on the table as it is now (the next
            # step drops the job if the table or the index went).
            reloaded = self.database.refresh_catalogue(check=True)
            self.resume = True
            return False if reloaded else None

    def before_lock(self) -> bool | None:
        self._found = self._target()
        return self.finish() if self._found is None else None

    def source(self) -> int | bool:
        assert self._found is not None
        return self._found[0].table_id

    def apply(self, rows: list[Row], position: Position | None) -> None:
        assert self._found is not None
        schema, index = self._found
        _index_rows(self.database.storage, schema, index, [RowKey(schema.table_id, row.pk, row.sk) for row in rows],
                    self.database.job_position_change(self.job_name, position))

    def advanced(self) -> None:
        assert self._found is not None
        if not self._found[1].backfilling:
            self._set_state("CREATING", backfilling=True)

    def complete(self) -> bool:
        self._set_state("ACTIVE", backfilling=False)
        return self.finish()

    def _set_state(self, status: str, backfilling: bool) -> None:
        """The index's new state in the table's definition, as the table is
        now: a compare-and-set redone on a reloaded catalogue when another
        server changed the table since this copy was read (its throughput,
        its tags), so their change and this one both stay; nothing when the
        table or the index is gone."""

        def change(schema: TableSchema) -> TableSchema | None:
            index = schema.index(self.index_name)
            if index is None or index.storage_id != self.storage_id:
                return None
            changed = replace(index, status=status, backfilling=backfilling)
            return replace(schema, indexes=tuple(changed if other.name == index.name else other
                                                 for other in schema.indexes))

        self.database.change_table(self.table_name, change)

def _index_rows(
    storage: Storage, schema: TableSchema, index: IndexDefinition, keys: list[RowKey], progress: RowChange
) -> None:
    """Write the index entries of the items at ``keys``, from the items as
    read now, with the job's new position (``progress``), in one commit
    conditional on none of the items changing meanwhile (on a shared store a
    write by another server makes this read again)."""
    for _ in range(limits.WRITE_CONFLICT_ATTEMPTS):
        commit = Commit(changes=[progress], generations={schema.table_id: schema.generation})
        for key, stored in zip(keys, storage.read_for_write(keys), strict=True):
            commit.checks.append(RowCheck(*key, None if stored.row is None else stored.version))
            if stored.row is None:
                continue
            entry = entry_row(schema, index, orjson.loads(stored.row.item), stored.row)
            if entry is not None:
                commit.changes.append(RowChange(index.storage_id, entry.pk, entry.sk, entry))
        try:
            storage.commit(commit)
            return
        except WriteConflict:
            continue



def resume_backfills(database: Database, schema: TableSchema) -> None:
    """Restart the backfill of any index still CREATING with no job running
    (after a server restart, the job's progress was lost with the process)."""
    for index in schema.indexes:
        if index.status == "CREATING" and not jobs.running(database, f"backfill/{index.storage_id}"):
            start_backfill(database, schema.name, index)


def start_backfill(database: Database, table_name: str, index: IndexDefinition) -> Backfill:
    """Begin indexing the existing items: in the server's background (a batch
    at a time between requests, or on its request threads when it has them),
    else right away, batch after batch."""
    job = Backfill(database, table_name, index.name, index.storage_id)
    jobs.start(job)
    return job


class BackfillWatch(Upkeep):
    """On a store other servers share: every BACKFILL_WATCH_SECONDS, start a
    job here for every index still CREATING that no job of this server runs.
    The server that added the index may have died half-way; the job's lock
    (``Storage.hold_lock``) lets one server work at a time, so a job started
    while another server still backfills only waits for its turn. Without
    this, the job would move only when a DescribeTable reached another
    server (``resume_backfills``)."""

    logger = logger
    @property
    def label(self) -> str:
        return "looking for backfills to take over"

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = BACKFILL_WATCH_SECONDS) -> None:
        super().__init__(database, loop, interval, first_delay_seconds=interval)

    def wanted(self) -> bool:
        return not self.database.storage.exclusive  # only on a shared store (and then every interval)

    def look(self) -> None:
        self.database.refresh_catalogue()
        for schema in list(self.database.tables.values()):
            resume_backfills(self.database, schema)
