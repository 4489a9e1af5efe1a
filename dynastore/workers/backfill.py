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

import asyncio
import logging
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

import orjson

from dynastore import limits
from dynastore.engine.indexes import entry_row
from dynastore.storage.base import (
    HASH_SPACE,
    CatalogueChanged,
    Commit,
    RowChange,
    RowCheck,
    RowKey,
    Storage,
    WriteConflict,
)
from dynastore.storage.errors import StorageUnavailable

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import IndexDefinition, TableSchema

logger = logging.getLogger("dynastore.backfill")

BACKFILL_RETRY_SECONDS = 1.0
"""The pause after a batch failed (PostgreSQL restarting, say) before it is tried again."""
BACKFILL_WATCH_SECONDS = 2.0
"""On a shared store, how often a server looks for indexes still CREATING
that no job of its own runs (BackfillWatch)."""
BACKFILL_BATCH_ROWS = limits.BACKFILL_BATCH_ROWS
"""Items indexed per batch (candidate for dynastore/limits.py)."""


class Backfill:
    """One index's backfill; ``step()`` indexes one batch."""

    def __init__(self, database: Database, table_name: str, index_name: str, storage_id: int) -> None:
        self.database = database
        self.table_name = table_name
        self.index_name = index_name
        self.storage_id = storage_id
        self.position: tuple[int, bytes, bytes] | None = None
        self.resume = True
        """Read the stored position before the next batch (a server may have
        done part of the job before)."""
        self.done = False

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

    def step(self, batch_rows: int = BACKFILL_BATCH_ROWS) -> bool | None:
        """Index the next batch; True once the backfill is finished (or moot),
        None while another server holds the job (try again later: if that
        server dies, this one takes the job over where it stopped)."""
        try:
            return self._step(batch_rows)
        except CatalogueChanged:
            # Another server changed the table meanwhile (its throughput, say):
            # the batch's commit was refused and nothing of it was written.
            # Reload, and redo the batch on the table as it is now (the next
            # step drops the job if the table or the index went).
            reloaded = self.database.refresh_catalogue(check=True)
            self.resume = True
            return False if reloaded else None

    def _step(self, batch_rows: int) -> bool | None:
        target = self._target()
        if target is None:
            self._finish()
            return True
        schema, index = target
        storage = self.database.storage
        if not storage.hold_lock(self.database.storage_name(self.job_name)):
            self.resume = True
            return None
        if self.resume:  # the job was (or may have been) another server's: continue its work
            self.position, self.resume = self.database.job_position(self.job_name), False
        rows = list(
            islice(storage.scan(schema.table_id, 0, HASH_SPACE, exclusive_start=self.position), batch_rows)
        )
        more = len(rows) == batch_rows
        position = (rows[-1].pk_hash, rows[-1].pk, rows[-1].sk) if more else None
        _index_rows(storage, schema, index, [RowKey(schema.table_id, row.pk, row.sk) for row in rows],
                    self.database.job_position_change(self.job_name, position))
        if more:
            self.position = position
            if not index.backfilling:
                self._set_state("CREATING", backfilling=True)
            return False
        self._set_state("ACTIVE", backfilling=False)
        self._finish()
        return True

    def _finish(self) -> None:
        self.done = True
        _RUNNING.pop((id(self.database), self.storage_id), None)

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


_RUNNING: dict[tuple[int, int], Backfill] = {}
"""Backfills in progress, by database and the index's storage id (never reused)."""


def resume_backfills(database: Database, schema: TableSchema) -> None:
    """Restart the backfill of any index still CREATING with no job running
    (after a server restart, the job's progress was lost with the process)."""
    for index in schema.indexes:
        if index.status == "CREATING" and (id(database), index.storage_id) not in _RUNNING:
            start_backfill(database, schema.name, index)


def start_backfill(database: Database, table_name: str, index: IndexDefinition) -> Backfill:
    """Begin indexing the existing items: in the server's background (a batch
    at a time between requests, or on its request threads when it has them),
    else right away, batch after batch."""
    job = Backfill(database, table_name, index.name, index.storage_id)
    _RUNNING[id(database), index.storage_id] = job
    loop = database.background_loop
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
    if loop is None:
        while job.step() is False:  # None: another server holds the job and does it
            pass
        return job

    def tick() -> None:
        try:
            finished = job.step()
        except StorageUnavailable as error:
            logger.warning("backfill of %s.%s waits for the store: %s", job.table_name, job.index_name, error)
            finished = None
        except Exception:  # the catalogue changed, a bug: try again soon
            logger.exception("backfill of %s.%s failed a batch; retrying", job.table_name, job.index_name)
            finished = None
        if finished is None:  # failed, or another server does this job now: try (to take it) later
            schedule(BACKFILL_RETRY_SECONDS)
        elif not finished:
            schedule(0)

    def schedule(delay: float) -> None:
        loop.call_soon_threadsafe(loop.call_later, delay, database.run_in_background, tick)

    schedule(0)
    return job


class BackfillWatch:
    """On a store other servers share: every BACKFILL_WATCH_SECONDS, start a
    job here for every index still CREATING that no job of this server runs.
    The server that added the index may have died half-way; the job's lock
    (``Storage.hold_lock``) lets one server work at a time, so a job started
    while another server still backfills only waits for its turn. Without
    this, the job would move only when a DescribeTable reached another
    server (``resume_backfills``)."""

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = BACKFILL_WATCH_SECONDS) -> None:
        self.database = database
        self.loop = loop
        self.interval = interval
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> BackfillWatch:
        if not self.database.storage.exclusive:
            self._handle = self.loop.call_later(self.interval, self._tick)
        return self

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self.database.run_in_background(self._look)
        if self._handle is not None:
            self._handle = self.loop.call_later(self.interval, self._tick)

    def _look(self) -> None:
        try:
            self.database.refresh_catalogue()
            for schema in list(self.database.tables.values()):
                resume_backfills(self.database, schema)
        except StorageUnavailable as error:
            logger.warning("looking for backfills to take over: %s", error)
        except Exception:
            logger.exception("looking for backfills to take over failed")

