"""The replicator: applies queued writes to the other regions' replicas
once their lag has passed (MREC), last writer wins.

One replicator per store (every namespace's Database points at it once a
table of the store is global). A queue row written at time ``w`` by region
S for region T is due at ``w + lag(S, T)`` on the database clock: the lag
is ``--replication-lag-ms`` (``$DYNASTORE_REPLICATION_LAG_MS``, default
``DEFAULT_LAG_MS``) unless ``/_dynastore/replication`` set one for the pair,
so moving the clock makes a write arrive, and changing a lag applies to
what is already queued. A paused region (a partition) neither sends nor
receives until it is resumed; its writes wait in the queue (a STRONG
table's too: a region without a quorum takes none, strong.py).

Due rows are applied before every request reaches a region that receives
any (``catch_up``, called by ops.dispatch and the Streams API), and by the
server's background pump, so a read after the lag sees the write without
anything sleeping. Each row is applied through the one write path in one
commit with the item, its version and the deletion of the queue row: once,
even across kill -9.

Last writer wins on the write's version (its timestamp on the database
clock, the region breaking ties): an older write arriving after a newer
one is discarded; a newer one replaces the item. A write that replaces a
version its source had not seen (a concurrent write in another region) is
an *overwrite*: one of the two writes silently disappears, as on DynamoDB.
Both are counted per region and table (``GET /_dynastore/replication``), in
a row of the store updated in the commit that applies the write (every
server over a shared store shows the same totals).

A replicated write consumes write capacity in the receiving region (rWCU,
rWRU on demand) when the throughput model is on; TTL deletions replicate
as deletions by the service.
"""

from __future__ import annotations

import logging
import os
import weakref
from dataclasses import dataclass
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.engine.capacity import write_units
from dynastore.replication.queue import (
    TRANSACTION_ITEM_SPACING_SECONDS,
    Replicated,
    parse_queue_row,
    parse_version,
    queue_partition,
    version_key,
    version_row,
)
from dynastore.replication.replicas import ACTIVE, CREATING, STRONG, replica_set
from dynastore.replication.strong import CONFLICT_WINDOW_MS
from dynastore.storage.base import Row, SortKeyRange
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.storage.base import Storage

logger = logging.getLogger("dynastore.replication")

LAG_VARIABLE = "DYNASTORE_REPLICATION_LAG_MS"
DEFAULT_LAG_MS = 1000
"""DynamoDB replicates "typically within a second"."""
BATCH_ROWS = limits.REPLICATION_BATCH_ROWS
"""Queue rows applied per source region and call."""
NEVER = float("inf")
SHARED_POLL_SECONDS = 0.05
SETTINGS_RELOAD_SECONDS = 0.5
"""On a shared store, how often (database time) a server reads the
replication settings again (another server's admin route may have set them)."""
"""On a shared store, how often (database time) a region looks for the
EVENTUAL writes other servers queued for it."""
SETTINGS_JOB = "replication/settings"
"""Where the lags and pauses set through the admin route are kept (the
default namespace's job progress), so they survive a restart."""


_FLAG_LAG_SECONDS: list[float] = []
"""``--replication-lag-ms`` when given (it wins over a lag saved by the admin route)."""


def lag_from_environment() -> float:
    if _FLAG_LAG_SECONDS:
        return _FLAG_LAG_SECONDS[0]
    value = os.environ.get(LAG_VARIABLE)
    return (float(value) if value else DEFAULT_LAG_MS) / 1000


def set_default_lag(seconds: float) -> None:
    """``--replication-lag-ms``: every replicator's lag for pairs without their own."""
    _FLAG_LAG_SECONDS[:] = [seconds]
    for replicator in list(_REPLICATORS.values()):
        replicator.default_lag_seconds = seconds
        replicator.settings_changed()


@dataclass
class Counters:
    """What one region's replica of one table received. Kept in the store
    (a row of the receiving namespace's job progress, keyed by the table's
    storage id), updated in the commit that applies each replicated write,
    so every server over a shared store shows the same totals and they
    survive a restart."""

    applied: int = 0
    overwrites: int = 0
    discarded: int = 0
    write_units: float = 0.0
    last_applied_at: float | None = None
    last_lag_seconds: float | None = None

    def report(self) -> dict[str, Any]:
        return {
            "Applied": self.applied, "Overwrites": self.overwrites, "Discarded": self.discarded,
            "ReplicatedWriteUnits": self.write_units, "LastAppliedAt": self.last_applied_at,
            "LastLagSeconds": self.last_lag_seconds,
        }

    @classmethod
    def from_row(cls, row: Row | None) -> Counters:
        if row is None:
            return cls()
        applied, overwrites, discarded, units, last_at, last_lag = orjson.loads(row.item)
        return cls(int(applied), int(overwrites), int(discarded), float(units), last_at, last_lag)

    def to_row(self, key: bytes) -> Row:
        data = orjson.dumps([self.applied, self.overwrites, self.discarded, self.write_units,
                             self.last_applied_at, self.last_lag_seconds])
        return Row(partition_hash(key), key, b"", data, len(data))


COUNTERS_JOB = "replication/counters/"


def counters_key(table_id: int) -> bytes:
    return f"{COUNTERS_JOB}{table_id}".encode()


class Replicator:
    def __init__(self, storage: Storage) -> None:
        self.exclusive = storage.exclusive
        self.default_lag_seconds = lag_from_environment()
        self.pair_lag_seconds: dict[tuple[str, str], float] = {}
        self.paused: set[str] = set()
        self.next_check: dict[tuple[str, str], float] = {}
        """(account, receiving region) -> when due rows may next exist
        (missing: look now). Not used on a shared store, where other
        servers queue rows too."""
        self.conflict_window_seconds = CONFLICT_WINDOW_MS / 1000
        """STRONG tables: a write to an item another region wrote less than this ago conflicts."""
        self.transaction_item_spacing_seconds = TRANSACTION_ITEM_SPACING_SECONDS
        """How far apart a transaction's items reach the other regions."""
        self._applying: set[int] = set()
        self._settings_loaded = False
        self._settings_due = 0.0
        self._changes = 0
        """Bumped when rows are queued or the settings change: a pass of
        ``_catch_up`` that saw a bump while it ran (a request's, the pump's:
        greenlets on a shared store) must not replace ``next_check`` with
        what it found before."""
        self._settings_generation = 0
        """Of the settings held here: a reload that read an older row (it was
        parked on the store while the admin route changed and saved them)
        must not put the old lags and pauses back."""

    # --- settings ------------------------------------------------------------------
    def lag(self, source: str, target: str) -> float:
        return self.pair_lag_seconds.get((source, target), self.default_lag_seconds)

    def settings_changed(self) -> None:
        self.next_check.clear()
        self._changes += 1

    def queued(self, account_id: str, regions: list[str], written_at: float, source: str, strong: bool = False) -> None:
        """A write queued rows for ``regions``: they are due after the lag (at once for a STRONG table)."""
        self._changes += 1
        for region in regions:
            key = (account_id, region)
            due = written_at if strong else written_at + self.lag(source, region)
            self.next_check[key] = min(self.next_check.get(key, NEVER), due)

    def load_settings(self, database: Database, again: bool = False) -> None:
        """The lags, pauses and windows the admin route saved (``again``: even
        if read before: on a shared store another server may have changed them)."""
        if self._settings_loaded and not again:
            return
        self._settings_loaded = True
        generation = self._settings_generation
        row = database.storage.get(database.jobs_id, SETTINGS_JOB.encode(), b"")
        if row is None:
            return
        settings = orjson.loads(row.item)
        stored = int(settings.get("generation", 0))
        if stored < self._settings_generation or generation != self._settings_generation:
            return  # changed here meanwhile (admin route): what this read found is older
        self._settings_generation = stored
        if settings.get("default_lag_seconds") is not None and not _FLAG_LAG_SECONDS:
            self.default_lag_seconds = float(settings["default_lag_seconds"])
        self.pair_lag_seconds = {
            (source, target): float(seconds) for source, target, seconds in settings.get("pairs", ())
        }
        self.paused = set(settings.get("paused", ()))
        if settings.get("conflict_window_seconds") is not None:
            self.conflict_window_seconds = float(settings["conflict_window_seconds"])
        if settings.get("transaction_item_spacing_seconds") is not None:
            self.transaction_item_spacing_seconds = float(settings["transaction_item_spacing_seconds"])

    def save_settings(self, database: Database) -> None:
        from dynastore.storage.base import Commit, RowChange

        self._settings_generation += 1  # before anything parks: a reload in flight is older
        key = SETTINGS_JOB.encode()
        saved = database.storage.get(database.jobs_id, key, b"")  # another server's may be newer
        if saved is not None:
            self._settings_generation = max(self._settings_generation,
                                            int(orjson.loads(saved.item).get("generation", 0)) + 1)
        data = orjson.dumps({
            "generation": self._settings_generation,
            "default_lag_seconds": self.default_lag_seconds,
            "pairs": [[source, target, seconds] for (source, target), seconds in sorted(self.pair_lag_seconds.items())],
            "paused": sorted(self.paused),
            "conflict_window_seconds": self.conflict_window_seconds,
            "transaction_item_spacing_seconds": self.transaction_item_spacing_seconds,
        })
        row = Row(partition_hash(key), key, b"", data, len(data))
        database.storage.commit(Commit(changes=[RowChange(database.jobs_id, key, b"", row)]))
        self.settings_changed()

    @staticmethod
    def counter(database: Database, table_name: str) -> Counters:
        """What ``database``'s replica of ``table_name`` received (the store's row)."""
        schema = database.tables.get(table_name)
        if schema is None:
            return Counters()
        return Counters.from_row(database.storage.get(database.jobs_id, counters_key(schema.table_id), b""))

    # --- applying ----------------------------------------------------------------
    def catch_up(self, database: Database) -> int:
        """Apply every queued write due in ``database``'s region; returns how many.

        On an exclusive store this process queued every row, so nothing is
        read before ``next_check``. On a shared store other servers queue
        rows too: a STRONG table's are looked for on every request (they are
        due at once), an EVENTUAL table's at most every SHARED_POLL_SECONDS
        of database time (and at once after this server queued some)."""
        key = (database.account_id, database.region)
        now = database.now()
        if database.namespaces is not None and (
            not self._settings_loaded or (not self.exclusive and now >= self._settings_due)
        ):
            self._settings_due = now + SETTINGS_RELOAD_SECONDS
            self.load_settings(database.namespaces.default, again=True)
        eventual = now >= self.next_check.get(key, 0.0)
        if not eventual and (self.exclusive or not self._has_strong(database)):
            return 0
        from dynastore.replication.replica_updates import current_owner

        me = current_owner()  # a request and the pump may apply at once (greenlets): each applies a row once
        if me in self._applying:
            return 0
        self._applying.add(me)
        try:
            return self._catch_up(database, key, eventual or self.exclusive)
        finally:
            self._applying.discard(me)

    @staticmethod
    def _has_strong(database: Database) -> bool:
        return any((replicas := replica_set(schema)) is not None and replicas.consistency == STRONG
                   for schema in database.tables.values())

    def _catch_up(self, database: Database, key: tuple[str, str], eventual: bool) -> int:
        from dynastore.replication.replica_updates import region_database

        now = database.now()
        region = database.region
        changes = self._changes
        sources = sorted({
            replica.region
            for schema in database.tables.values() if (replicas := replica_set(schema)) is not None
            for replica in replicas.others(region)
        })
        applied, earliest = 0, NEVER
        for source in sources:
            source_database = region_database(database, source)
            if source in self.paused or region in self.paused:
                continue  # a partition (STRONG tables' writes too): looked at again once resumed
            count, next_due = self._apply_due(source_database, database, NEVER, strong=True)
            applied += count
            earliest = min(earliest, next_due)
            if not eventual:
                continue
            lag = self.lag(source, region)
            count, next_due = self._apply_due(source_database, database, now - lag)
            applied += count
            earliest = min(earliest, next_due + lag)
        if not self.exclusive:  # other servers' rows: looked for again soon
            earliest = min(earliest, now + SHARED_POLL_SECONDS)
        if changes == self._changes:
            if eventual or earliest < self.next_check.get(key, NEVER):
                self.next_check[key] = earliest
        elif key in self.next_check:  # rows queued meanwhile: the earlier of the two (absent: look at once)
            self.next_check[key] = min(self.next_check[key], earliest)
        return applied

    def _apply_due(self, source: Database, target: Database, cutoff: float, strong: bool = False) -> tuple[int, float]:
        """Apply ``source``'s queued writes for ``target`` made before
        ``cutoff`` (every one: NEVER); returns how many, and when the first
        one left was made."""
        storage = source.storage
        partition = queue_partition(target.region, strong)
        if cutoff == NEVER:
            bounds = SortKeyRange()
        else:
            high = int(cutoff * 1_000_000 + 1).to_bytes(8, "big") if cutoff > 0 else b"\x00" * 8
            bounds = SortKeyRange(high=high, high_inclusive=False)
        rows = list(islice(storage.query(source.replication_queue_id, partition, bounds), BATCH_ROWS))
        for row in rows:
            self.apply(source, target, row)
        if len(rows) == BATCH_ROWS:
            return len(rows), 0.0  # more are due: look again at once
        first = next(iter(storage.query(source.replication_queue_id, partition, SortKeyRange(), expected_rows=1)), None)
        return len(rows), NEVER if first is None else int.from_bytes(first.sk[:8], "big") / 1_000_000

    def apply(self, source: Database, target: Database, queue_row: Row) -> str:
        """Apply one queued write; returns applied, overwrote, discarded or gone."""
        from dynastore import write_path

        write = parse_queue_row(queue_row)
        queue_target = write_path.Target(source.replication_queue_id, queue_row.pk, queue_row.sk)
        schema, member = self._member(target, write.table_name)
        if (schema is None or member is None) and target.refresh_catalogue(check=True):
            schema, member = self._member(target, write.table_name)  # another server changed the catalogue
        if schema is None or member is None or member.status not in (ACTIVE, CREATING):
            write_path.write(target, [queue_target], lambda rows, _: [write_path.DELETE if rows[0] else None],
                             conflicts=write_path.RETRY_ALL)
            return "gone"
        item_target = write_path.item_target(schema, write.pk, write.sk, by_service=write.by_service)
        item_target.replicated_from = write.source
        version_target = write_path.Target(target.replication_versions_id, version_key(schema.table_id, write.pk), write.sk)
        counter_key = counters_key(schema.table_id)
        counter_target = write_path.Target(target.jobs_id, counter_key, b"")
        outcome = ["gone"]
        units = [0.0]
        now = target.now()

        def decide(old_rows: list[Row | None], _: frozenset[int]) -> list[write_path.Decision]:
            if old_rows[2] is None:
                outcome[0] = "gone"  # applied meanwhile (another server)
                return [None, None, None, None]
            current = parse_version(old_rows[1])
            counters = Counters.from_row(old_rows[3])
            if not write.version.newer_than(current):
                outcome[0] = "discarded"
                counters.discarded += 1
                return [None, None, write_path.DELETE, counters.to_row(counter_key)]
            outcome[0] = "overwrote" if current is not None and current != write.previous else "applied"
            item: write_path.Decision = write_path.DELETE
            if write.item is not None:
                item = Row(partition_hash(write.pk), write.pk, write.sk, write.item, write.size)
            version = version_row(schema.table_id, write.pk, write.sk, write.version, write.item is None)
            sizes = [size for size in (old_rows[0].size if old_rows[0] is not None else None,
                                       write.size if write.item is not None else None) if size is not None]
            units[0] = write_units(max(sizes)) if sizes else 1.0
            counters.applied += 1
            counters.overwrites += outcome[0] == "overwrote"
            counters.write_units += units[0]
            counters.last_applied_at = now
            counters.last_lag_seconds = max(0.0, now - write.written_at)
            return [item, version, write_path.DELETE, counters.to_row(counter_key)]

        write_path.write(
            target, [item_target, version_target, queue_target, counter_target], decide,
            conflicts=write_path.RETRY_ALL,
        )
        self._count(target, schema, write, units[0], outcome[0], now)
        return outcome[0]

    @staticmethod
    def _member(target: Database, table_name: str) -> tuple[TableSchema | None, Any]:
        """The receiving region's table and its entry in the replica set (None, None: not a replica there)."""
        schema = target.tables.get(table_name)
        replicas = replica_set(schema) if schema is not None else None
        return schema, (replicas.member(target.region) if replicas is not None else None)

    @staticmethod
    def _count(target: Database, schema: TableSchema, write: Replicated, units: float, outcome: str,
               now: float) -> None:
        """Log an overwrite or a discarded write; charge the receiving region's capacity."""
        if outcome == "gone":
            return
        if outcome == "discarded":
            logger.info("replication: %s's write of an item of %s lost to a newer one in %s (last writer wins)",
                        write.source, schema.name, target.region)
            return
        if outcome == "overwrote":
            logger.info("replication: %s's write overwrote a concurrent write of an item of %s in %s",
                        write.source, schema.name, target.region)
        throughput = target.throughput
        if throughput is not None:  # rWCU / rWRU in the receiving region, its table and partition
            state = throughput.state(schema, now)
            state.table.charge(0.0, units, now)
            state.partition(partition_hash(write.pk), now).charge(0.0, units, now)

    # --- what the admin route shows ---------------------------------------------------
    def pending(self, source: Database, target_region: str) -> tuple[int, float | None]:
        """How many writes of ``source`` wait for ``target_region``, and when the oldest was made."""
        rows = chain(*(source.storage.query(source.replication_queue_id, queue_partition(target_region, strong),
                                            SortKeyRange()) for strong in (False, True)))
        count, oldest = 0, None
        for row in islice(rows, limits.REPLICATION_PENDING_COUNT_MAX):
            made = int.from_bytes(row.sk[:8], "big") / 1_000_000
            oldest = made if oldest is None else min(oldest, made)
            count += 1
        return count, oldest


_REPLICATORS: weakref.WeakKeyDictionary[Any, Replicator] = weakref.WeakKeyDictionary()


def attach(database: Database) -> Replicator:
    """The store's replicator, made on first use, set on ``database``."""
    replicator: Replicator | None = database.replication
    if replicator is None:
        replicator = _REPLICATORS.get(database.storage)
        if replicator is None:
            replicator = _REPLICATORS[database.storage] = Replicator(database.storage)
        database.replication = replicator
    return replicator


def attach_all(database: Database) -> Replicator:
    """The replicator set on every open namespace of ``database``'s store."""
    from dynastore.namespaces import Namespaces

    replicator = attach(database)
    for other in Namespaces.of(database).all():
        other.replication = replicator
    return replicator


REPLICATION_METRICS = (
    ("applied", "dynastore_replication_applied_writes_total"),
    ("overwrites", "dynastore_replication_overwrites_total"),
    ("discarded", "dynastore_replication_discarded_writes_total"),
    ("write_units", "dynastore_replication_write_units_total"),
)
"""The replication counters in Prometheus' text format, per table of a namespace."""


def replication_metrics(database: Database) -> dict[str, Any]:
    """What each global table of ``database``'s region received
    (``GET /_dynastore/metrics``' ``Replication``)."""
    if not database.storage.exclusive:  # another server may have made the table global
        database.refresh_catalogue(check=True)
    return {
        name: Replicator.counter(database, name).report()
        for name, schema in sorted(database.tables.items()) if replica_set(schema) is not None
    }


def replication_samples(database: Database) -> list[str]:
    """The replication counters as Prometheus samples (counters, per table)."""
    if not database.storage.exclusive:  # another server may have made the table global
        database.refresh_catalogue(check=True)
    if not any(replica_set(schema) is not None for schema in database.tables.values()):
        return []
    lines = [f"# TYPE {metric} counter" for _, metric in REPLICATION_METRICS]
    for name, schema in sorted(database.tables.items()):
        if replica_set(schema) is None:
            continue
        counters = Replicator.counter(database, name)
        for attribute, metric in REPLICATION_METRICS:
            lines.append(f'{metric}{{table="{name}",region="{database.region}"}} {getattr(counters, attribute):g}')
    return lines
