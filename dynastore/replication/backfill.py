"""A new replica is filled from the existing items (CREATING -> ACTIVE).

The job walks the source region's table in scan order, a bounded batch at a
time, and writes each item the replica does not hold yet through the one
write path (an item already there came by replication and is at least as
new). Its position is kept with the replica's database's job progress, so a
restarted server resumes it (``resume_replica_backfills``). When the walk is
done the replica's stream is turned on (with the source's view type) and
every member's replica set says ACTIVE.

On the server the batches run on the event loop between requests; without
one (the embedded database) they run one after the other at once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

from dynastore import limits
from dynastore.replication.replicas import ACTIVE, CREATING, REPLICA_STREAM_VIEW, replica_set
from dynastore.storage.base import HASH_SPACE, Commit, Row
from dynastore.storage.errors import StorageUnavailable
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.replication.replicas import ReplicaSet

logger = logging.getLogger("dynastore.replication")

BATCH_ROWS = limits.BACKFILL_BATCH_ROWS
RETRY_SECONDS = 1.0

_RUNNING: dict[tuple[int, str], ReplicaBackfill] = {}
"""Backfills in progress, by the replica's database and table name."""


class ReplicaBackfill:
    def __init__(self, database: Database, table_name: str) -> None:
        self.database = database
        self.table_name = table_name
        self.position: tuple[int, bytes, bytes] | None = None
        self.resume = True
        self.done = False

    @property
    def job_name(self) -> str:
        return f"replica-backfill/{self.table_name}"

    def step(self, batch_rows: int = BATCH_ROWS) -> bool | None:
        """Copy one batch; True once the replica is ACTIVE (or gone), None
        while another server holds the job (it does it; if it dies, this one
        takes it over where it stopped)."""
        from dynastore.replication.replica_updates import region_database

        database = self.database
        if not database.storage.hold_lock(database.storage_name(self.job_name)):
            self.resume = True
            return None
        schema = database.tables.get(self.table_name)
        replicas = replica_set(schema) if schema is not None else None
        own = replicas.member(database.region) if replicas is not None else None
        if schema is None or replicas is None or own is None or own.status != CREATING or own.source is None:
            return self._finish()
        source = region_database(database, own.source).tables.get(self.table_name)
        if source is None:  # the source was deleted meanwhile: what was copied stays
            return self._activate()
        if self.resume:
            self.position, self.resume = database.job_position(self.job_name), False
        storage = database.storage
        rows = list(islice(storage.scan(source.table_id, 0, HASH_SPACE, exclusive_start=self.position), batch_rows))
        more = len(rows) == batch_rows
        position = (rows[-1].pk_hash, rows[-1].pk, rows[-1].sk) if more else None
        copy_rows(database, region_database(database, own.source), source, rows)
        storage.commit(Commit(changes=[database.job_position_change(self.job_name, position)]))
        if more:
            self.position = position
            return False
        return self._activate()

    def _activate(self) -> bool:
        from dynastore.replication.replica_updates import change_replica_set

        database = self.database
        region = database.region

        def active(schema: TableSchema) -> TableSchema:
            view_type = schema.extensions.get(REPLICA_STREAM_VIEW)
            extensions = {key: value for key, value in schema.extensions.items() if key != REPLICA_STREAM_VIEW}
            schema = replace(schema, status=ACTIVE, extensions=extensions)
            if view_type is not None:
                schema = database.streams.enable(schema, str(view_type), database.now())
            return schema

        def activated(replicas: ReplicaSet) -> ReplicaSet:
            own = replicas.member(region)
            return replicas if own is None else replicas.with_replica(replace(own, status=ACTIVE, source=None))

        change_replica_set(database, self.table_name, activated, own_change=active)
        return self._finish()

    def _finish(self) -> bool:
        self.done = True
        _RUNNING.pop((id(self.database), self.table_name), None)
        return True


def copy_rows(database: Database, source: Database, source_schema: TableSchema, rows: list[Row]) -> None:
    """Write the source's ``rows`` the replica lacks, with their versions,
    through the write path (last writer wins: a newer version there stays)."""
    from dynastore import write_path
    from dynastore.replication.queue import parse_version, version_key

    if not rows:
        return
    schema = database.tables[source_schema.name]
    versions = [
        source.storage.get(source.replication_versions_id, version_key(source_schema.table_id, row.pk), row.sk)
        for row in rows
    ]
    targets: list[write_path.Target] = []
    for row in rows:
        item = write_path.item_target(schema, row.pk, row.sk)
        item.replicated_from = source.region
        targets.append(item)
        targets.append(write_path.Target(database.replication_versions_id, version_key(schema.table_id, row.pk), row.sk))

    def decide(old_rows: list[Row | None], _: frozenset[int]) -> list[write_path.Decision]:
        decisions: list[write_path.Decision] = []
        for position, row in enumerate(rows):
            old_item, old_version = old_rows[2 * position], old_rows[2 * position + 1]
            version = parse_version(versions[position])
            copy = old_item is None and old_version is None
            if not copy and version is not None and old_version is not None:
                copy = version.newer_than(parse_version(old_version))
            decisions.append(row if copy else None)
            decisions.append(_version_copy(versions[position], schema, row) if copy and version else None)
        return decisions

    write_path.write(database, targets, decide, conflicts=write_path.RETRY_ALL, index_lag=False)


def _version_copy(version: Row | None, schema: TableSchema, row: Row) -> Row | None:
    from dynastore.replication.queue import version_key

    if version is None:
        return None
    key = version_key(schema.table_id, row.pk)
    return Row(partition_hash(key), key, row.sk, version.item, version.size)


def resume_replica_backfills(database: Database) -> None:
    """Restart the backfill of any replica of this region still CREATING with no job running."""
    for name, schema in list(database.tables.items()):
        replicas = replica_set(schema)
        own = replicas.member(database.region) if replicas is not None else None
        if own is not None and own.status == CREATING and (id(database), name) not in _RUNNING:
            start_replica_backfill(database, name)


def start_replica_backfill(database: Database, table_name: str) -> ReplicaBackfill:
    """Fill the replica: in the server's background, else right away."""
    job = ReplicaBackfill(database, table_name)
    _RUNNING[id(database), table_name] = job
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
            if finished is None:
                schedule(RETRY_SECONDS)
                return
        except StorageUnavailable as error:
            logger.warning("backfill of replica %s waits for the store: %s", table_name, error)
            schedule(RETRY_SECONDS)
            return
        except Exception:
            logger.exception("backfill of replica %s failed a batch; retrying", table_name)
            schedule(RETRY_SECONDS)
            return
        if not finished:
            schedule(0)

    def schedule(delay: float) -> None:
        loop.call_soon_threadsafe(loop.call_later, delay, database.run_in_background, tick)

    schedule(0)
    return job
