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

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from dynastore import limits
from dynastore.replication.replicas import ACTIVE, CREATING, REPLICA_STREAM_VIEW, replica_set
from dynastore.storage.base import Commit, Row
from dynastore.types.keys import partition_hash
from dynastore.workers import jobs
from dynastore.workers.jobs import Position, ScanJob

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.replication.replicas import ReplicaSet

logger = logging.getLogger("dynastore.replication")

BATCH_ROWS = limits.BACKFILL_BATCH_ROWS
RETRY_SECONDS = jobs.JOB_RETRY_SECONDS


class ReplicaBackfill(ScanJob):
    """One replica's backfill; ``step()`` copies one batch (``jobs.ScanJob``)."""

    logger = logger
    batch_rows = BATCH_ROWS

    def __init__(self, database: Database, table_name: str) -> None:
        super().__init__(database)
        self.table_name = table_name
        self._source: tuple[Database, TableSchema] | None = None

    @property
    def job_name(self) -> str:
        return f"replica-backfill/{self.table_name}"

    @property
    def label(self) -> str:
        return f"the backfill of replica {self.table_name}"

    def source(self) -> int | bool:
        """The source region's table, unless the replica is ACTIVE (or gone)
        or the source was deleted meanwhile (what was copied stays)."""
        from dynastore.replication.replica_updates import region_database

        database = self.database
        schema = database.tables.get(self.table_name)
        replicas = replica_set(schema) if schema is not None else None
        own = replicas.member(database.region) if replicas is not None else None
        if schema is None or replicas is None or own is None or own.status != CREATING or own.source is None:
            return self.finish()
        source_database = region_database(database, own.source)
        source = source_database.tables.get(self.table_name)
        if source is None:
            return self._activate()
        self._source = source_database, source
        return source.table_id

    def apply(self, rows: list[Row], position: Position | None) -> None:
        assert self._source is not None
        copy_rows(self.database, *self._source, rows)
        self.database.storage.commit(Commit(changes=[self.database.job_position_change(self.job_name, position)]))

    def complete(self) -> bool:
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
        return self.finish()


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
        if own is not None and own.status == CREATING and not jobs.running(database, f"replica-backfill/{name}"):
            start_replica_backfill(database, name)


def start_replica_backfill(database: Database, table_name: str) -> ReplicaBackfill:
    """Fill the replica: in the server's background, else right away."""
    job = ReplicaBackfill(database, table_name)
    jobs.start(job)
    return job
