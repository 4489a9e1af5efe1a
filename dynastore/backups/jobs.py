"""The background work of backups and restores, a page per step.

A backup copies its table as of its creation time (``pitr.read_page`` over
the view it holds) into its own storage table; a restore writes the
backup's rows, or the source table as of the restore time, into the hidden
table it builds (dynastore/backups/restore.py), through the write path.
Each step copies one page and moves the job's record on in the same
transaction, so after a kill -9 the job resumes exactly where it stopped:
``resume`` (at a server's start, and on the first backup call of a
process) finds the records still CREATING / IN_PROGRESS and runs them to
the end. A job whose source went away (its table deleted before the copy
was done) ends: the backup is removed, the restore FAILED with the reason.

On the server the steps run on the event loop between requests (or in a
greenlet of their own on a shared store), one page at a time, so a large
backup never blocks requests for longer than a page; without a running
loop (the embedded database, a command over a data directory) a job runs to
the end before the call that started it answers. On a store several
servers share, a job runs where its lock is held; another server takes it
over if that one dies (``BackupJobs``, every few seconds).

``BackupJobs`` also prunes the PITR change logs past their windows and
drops the logs of deleted tables.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from dynastore.backups import pitr, registry, visible
from dynastore.backups.registry import (
    AVAILABLE,
    CREATING,
    FAILED,
    IN_PROGRESS,
    BackupRecord,
    RestoreRecord,
)
from dynastore.backups.restore import drop_hidden, publish
from dynastore.backups.runner import JobKind, JobRunner, Upkeep
from dynastore.engine.schema import TableSchema
from dynastore.storage.base import HASH_SPACE, Row

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.backups")

# Candidates for dynastore/limits.py.
PAGE_ROWS_VARIABLE = "DYNASTORE_BACKUP_PAGE_ROWS"
STEP_DELAY_VARIABLE = "DYNASTORE_BACKUP_STEP_DELAY_MS"
"""Test and demo knobs (docs/backups.md): smaller pages and a pause between a
server's steps make a job last long enough to watch it, or kill -9 it midway."""
JOB_PAGE_ROWS = int(os.environ.get(PAGE_ROWS_VARIABLE) or 1000)
"""Items one step copies."""
STEP_DELAY_SECONDS = float(os.environ.get(STEP_DELAY_VARIABLE) or 0) / 1000
"""The pause between two steps of a server's jobs (0: none)."""
WATCH_SECONDS = 2.0
"""How often ``BackupJobs`` looks for jobs to take over and logs to prune."""
PRUNE_EVERY_SECONDS = 60.0


# --- one step of a backup --------------------------------------------------------------


def _source_of_backup(database: Database, record: BackupRecord) -> TableSchema | None:
    schema = database.tables.get(record.table_name)
    if schema is None or schema.table_uuid != record.table_id or record.holder not in pitr.holders(schema):
        return None
    return schema


def backup_step(database: Database, record: BackupRecord, max_rows: int = JOB_PAGE_ROWS) -> BackupRecord | None:
    """Copy one page; returns the record as it is now (None: the backup is gone)."""
    storage = database.storage
    source = _source_of_backup(database, record)
    if source is None and not database.storage.exclusive:
        database.reload_catalogue()  # giving a backup up is for good: read the table as it is now
        source = _source_of_backup(database, record)
    if source is None:
        _abandon_backup(database, record)
        return None
    with storage.bulk_reads():  # the job's own connection on SQLite: no mapped pages in RSS
        page = pitr.read_page(database, source, record.created, pitr.position_from_json(record.position),
                              max_rows)
    record = replace(record, position=pitr.position_to_json(page.position),
                     item_count=record.item_count + len(page.rows),
                     size_bytes=record.size_bytes + sum(row.size for row in page.rows))
    if page.position is None:
        record = replace(record, status=AVAILABLE)
    with storage.transaction():
        # On a shared store another server may have deleted the table while
        # the page was read (a dropped table reads as empty: as if the copy
        # were done). Under the table's lock, which DeleteTable takes first,
        # the table is either still there (the page is whole) or gone.
        storage.lock_table(source.table_id)
        if not storage.exclusive and storage.table_generation(source.table_id) is None:
            gone = True
        else:
            gone = False
            for row in page.rows:
                storage.put(record.items_storage_id, row)
            registry.apply(database, registry.backup_change(database, record, record.backup_id))
    if gone:
        _abandon_backup(database, record)
        return None
    if page.position is None:
        pitr.release(database, record.table_name, record.holder)
    return record


def _abandon_backup(database: Database, record: BackupRecord) -> None:
    logger.warning("backup %s of %s abandoned: its table was deleted before the copy was done",
                   record.arn, record.table_name)
    _forget_backup(database, record)


def _forget_backup(database: Database, record: BackupRecord) -> None:
    storage = database.storage
    with storage.transaction():
        registry.apply(database, registry.backup_change(database, None, record.backup_id))
        try:
            storage.drop_table(record.items_storage_id)
        except KeyError:
            pass
    pitr.release(database, record.table_name, record.holder)


# --- one step of a restore ---------------------------------------------------------------


def _source_rows(database: Database, record: RestoreRecord, max_rows: int) -> tuple[list[Row], pitr.Position | None] | str:
    """The next page of what the restore copies, or why it cannot go on."""
    position = pitr.position_from_json(record.position)
    if record.backup_items_storage_id is not None:
        try:
            with database.storage.bulk_reads():
                rows = list(islice(database.storage.scan(
                    record.backup_items_storage_id, 0, HASH_SPACE, exclusive_start=position), max_rows))
        except KeyError:
            return f"the backup {record.source_backup_arn} was deleted"
        more = len(rows) == max_rows
        return rows, ((rows[-1].pk_hash, rows[-1].pk, rows[-1].sk) if more else None)
    source = database.tables.get(record.source_table_name)
    if source is None or source.table_uuid != record.source_table_id or record.holder not in pitr.holders(source):
        return f"the source table {record.source_table_name} was deleted during the restore"
    with database.storage.bulk_reads():
        page = pitr.read_page(database, source, record.restore_time, position, max_rows)
    return page.rows, page.position


def restore_step(database: Database, record: RestoreRecord, max_rows: int = JOB_PAGE_ROWS) -> RestoreRecord | None:
    """Write one page into the hidden table (publishing it after the last);
    returns the record (None once the table is published)."""
    from dynastore import write_path

    schema = replace(TableSchema.from_metadata(_metadata(record.schema)), generation=record.generation)
    table_id = _table_id(record)
    schema = replace(schema, table_id=table_id)
    source = _source_rows(database, record, max_rows)
    if isinstance(source, str):
        return fail_restore(database, record, schema, source)
    rows, position = source
    record = replace(record, position=pitr.position_to_json(position),
                     item_count=record.item_count + len(rows),
                     size_bytes=record.size_bytes + sum(row.size for row in rows))
    targets = [write_path.Target(table_id, row.pk, row.sk, schema, reads_old=False) for row in rows]
    record_row = registry.restore_row(database, record)
    targets.append(write_path.Target(registry.restores_id(database), record_row.pk, record_row.sk, None, reads_old=False))
    decisions: list[Any] = [*rows, record_row]
    try:
        write_path.write(database, targets, lambda _rows, _conflicted: decisions,
                         conflicts=write_path.RETRY_ALL, index_lag=False)
    except write_path.InvalidChange as refused:
        return fail_restore(database, record, schema, f"an item cannot be written: {refused.error.message}")
    if position is not None:
        return record
    if record.target in database.tables:
        return fail_restore(database, record, schema, f"a table named {record.target} was created meanwhile")
    summary = visible.restore_summary(record, in_progress=False)  # kept once ACTIVE, as DynamoDB does
    schema = replace(schema, extensions={**schema.extensions, visible.RESTORE_SUMMARY_EXTENSION: summary})
    publish(database, schema, [registry.restore_change(database, None, record.restore_id)])
    if record.backup_items_storage_id is None:
        pitr.release(database, record.source_table_name, record.holder)
    logger.info("restore of %s into %s done: %d items", record.source_backup_arn or record.source_table_name,
                record.target, record.item_count)
    return None


def _metadata(raw: dict[str, Any]) -> bytes:
    import orjson

    return orjson.dumps(raw)


def _table_id(record: RestoreRecord) -> int:
    return int(record.schema["table_id"])


def fail_restore(database: Database, record: RestoreRecord, schema: TableSchema, reason: str) -> RestoreRecord:
    """End a restore FAILED with ``reason``: its hidden table goes."""
    logger.warning("restore into %s failed: %s", record.target, reason)
    record = replace(record, status=FAILED, reason=reason)
    drop_hidden(database, schema)
    registry.apply(database, registry.restore_change(database, record, record.restore_id))
    if record.backup_items_storage_id is None:
        pitr.release(database, record.source_table_name, record.holder)
    return record


# --- running the jobs (dynastore/backups/runner.py) ---------------------------------------


def _load_backup(database: Database, backup_id: str) -> BackupRecord | None:
    record = registry.get_backup(database, backup_id)
    return record if record is not None and record.status == CREATING else None


def _advance_backup(database: Database, record: BackupRecord) -> bool:
    after = backup_step(database, record, JOB_PAGE_ROWS)  # read now: tests make pages small
    return after is not None and after.status == CREATING


def _load_restore(database: Database, restore_id: str) -> RestoreRecord | None:
    record = registry.get_restore(database, restore_id)
    return record if record is not None and record.status == IN_PROGRESS else None


def _advance_restore(database: Database, record: RestoreRecord) -> bool:
    after = restore_step(database, record, JOB_PAGE_ROWS)
    return after is not None and after.status == IN_PROGRESS


RUNNER = JobRunner("backup jobs", [
    JobKind("backup", lambda database: [record.backup_id for record in registry.backups(database)
                                        if record.status == CREATING], _load_backup, _advance_backup),
    JobKind("restore", lambda database: [record.restore_id for record in registry.restores(database)
                                         if record.status == IN_PROGRESS], _load_restore, _advance_restore),
], logger, step_delay_seconds=lambda: STEP_DELAY_SECONDS)
"""Backups first, then restores; a server pauses STEP_DELAY_SECONDS between steps."""


def step(database: Database) -> bool | None:
    """One step of one unfinished job (``JobRunner.step``)."""
    return RUNNER.step(database)


def resume(database: Database) -> None:
    """Find the unfinished jobs the store holds (after a restart) and run them."""
    RUNNER.resume(database)


def ensure_resumed(database: Database) -> None:
    """Resume once per process (every backup operation calls this first)."""
    RUNNER.ensure_resumed(database)


def add_backup(database: Database, backup_id: str) -> None:
    RUNNER.add(database, "backup", backup_id)


def add_restore(database: Database, restore_id: str) -> None:
    RUNNER.add(database, "restore", restore_id)


def run_to_end(database: Database) -> None:
    """Every unfinished job of the namespace, to its end (no loop)."""
    RUNNER.run_to_end(database)


# --- upkeep ------------------------------------------------------------------------------


_SUSPECTS: dict[int, set[tuple[str, str]]] = {}
"""What the previous ``cleanup`` of a namespace found unowned: it is only
removed when a second pass finds it unowned still (another server may be
between a job's first steps)."""


def cleanup(database: Database) -> int:
    """What a kill -9 between a job's first steps can leave: a hold without
    its job, a backup's storage without its record, a restore's hidden
    tables without theirs; and the change logs of deleted tables. Nothing of
    it is visible; this gives the space back. Returns how much went."""
    from dynastore.backups.own_tables import own_tables_with_prefix

    known_backups = {record.backup_id for record in registry.backups(database)}
    known_restores = {record.restore_id for record in registry.restores(database)
                      if record.status == IN_PROGRESS}
    previous = _SUSPECTS.get(id(database), set())
    suspects: set[tuple[str, str]] = set()
    removed = 0
    for schema in list(database.tables.values()):
        for holder in pitr.holders(schema):
            kind, _, job_id = holder.partition("/")
            if (kind == "backup" and job_id not in known_backups) or (
                    kind == "restore" and job_id not in known_restores):
                suspects.add((schema.name, holder))
                if (schema.name, holder) in previous:
                    pitr.release(database, schema.name, holder)
                    removed += 1
    for prefix, known in (("backup/", known_backups), ("restoring/", known_restores)):
        for kind, storage_id in own_tables_with_prefix(database, prefix):
            if kind.split("/")[1] in known:
                continue
            suspects.add(("", kind))
            if ("", kind) in previous:
                database.storage.drop_table(storage_id)
                removed += 1
    _SUSPECTS[id(database)] = suspects - {key for key in previous if key in suspects}
    return removed + pitr.drop_orphan_logs(database)


_PRUNE_POSITIONS: dict[tuple[int, str], pitr.Position] = {}
PRUNE_BATCHES_PER_LOOK = 10


def prune_logs(database: Database, batches: int = PRUNE_BATCHES_PER_LOOK) -> None:
    """Prune the change logs of the namespace past their windows, at most
    ``batches`` batches this call (it goes on where it stopped next time)."""
    for schema in list(database.tables.values()):
        if pitr.change_log(schema) is None:
            continue
        key = (id(database), schema.name)
        for _ in range(batches):
            position = pitr.prune(database, schema, _PRUNE_POSITIONS.get(key))
            if position is None:
                _PRUNE_POSITIONS.pop(key, None)
                break
            _PRUNE_POSITIONS[key] = position


class BackupJobs(Upkeep):
    """A server's upkeep for one namespace: at start resume its unfinished
    jobs and clean up; every WATCH_SECONDS look again (a shared store:
    another server's jobs, if it died); prune PITR logs now and then."""

    logger = logger

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = WATCH_SECONDS) -> None:
        super().__init__(database, loop, interval, repeat=True)
        self._last_prune = 0.0

    def look(self) -> None:
        database = self.database
        database.refresh_catalogue()
        first = not RUNNER.pending(database).resumed
        if first or not database.storage.exclusive:
            resume(database)
        now = self.loop.time()
        if first or now - self._last_prune >= PRUNE_EVERY_SECONDS:
            self._last_prune = now
            if database.storage.hold_lock(database.storage_name("backups-upkeep")):
                cleanup(database)
                prune_logs(database)
