"""The replication queue and the items' write timestamps (MREC).

A write to a global table commits, with the item, in the same storage
commit (the one write path, dynastore/write_path.py):

- the item's *version* in this region: the write's timestamp on the
  database clock and the region that made it (``replication-versions``,
  keyed by the table's storage id and the item's key; a delete leaves its
  version as a tombstone, so an older write arriving late cannot bring the
  item back);
- one *queue row* per other replica (``replication-queue`` of the writing
  region's namespace, partition = the receiving region, sorted by the
  write's time): the item as written (or its deletion), its version, the
  version it replaced here (to tell a concurrent write from a later one)
  and whether DynamoDB itself deleted it (TTL).

The replicator (replicator.py) applies each queue row to its region's
replica once the pair's lag has passed, and deletes it in the same commit,
so a row is applied once, even across kill -9. Writes that arrive by
replication commit their version but queue nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from dynastore.replication.replicas import CREATING, STRONG, replica_set
from dynastore.storage.base import Row, RowChange
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema


class Version(NamedTuple):
    """When a write was made and where: last writer wins on (timestamp,
    region), the region breaking a tie of equal timestamps."""

    timestamp: float
    region: str

    def newer_than(self, other: Version | None) -> bool:
        return other is None or (self.timestamp, self.region) > (other.timestamp, other.region)


@dataclass(frozen=True)
class Replicated:
    """A queue row: one write of ``source`` to replicate into ``region``."""

    source: str
    table_name: str
    pk: bytes
    sk: bytes
    item: bytes | None
    size: int
    version: Version
    previous: Version | None
    by_service: bool
    written_at: float


def version_key(table_id: int, pk: bytes) -> bytes:
    return table_id.to_bytes(8, "big") + pk


def version_row(table_id: int, pk: bytes, sk: bytes, version: Version, deleted: bool) -> Row:
    key = version_key(table_id, pk)
    data = orjson.dumps([version.timestamp, version.region, deleted])
    return Row(partition_hash(key), key, sk, data, len(data))


def parse_version(row: Row | None) -> Version | None:
    if row is None:
        return None
    timestamp, region, _ = orjson.loads(row.item)
    return Version(float(timestamp), str(region))


def queue_sort_key(written_at: float) -> bytes:
    """When the write was made (microseconds, big-endian) and 8 random bytes:
    rows of several servers never collide and sort by time."""
    return int(written_at * 1_000_000).to_bytes(8, "big") + os.urandom(8)


TRANSACTION_ITEM_SPACING_SECONDS = 0.001
"""How far apart a transaction's items reach the other regions (database clock)."""
STRONG_PARTITION_PREFIX = "strong/"
"""Queue rows of STRONG tables are in partition ``strong/<region>``: due at once."""


def queue_partition(target_region: str, strong: bool = False) -> bytes:
    return ((STRONG_PARTITION_PREFIX if strong else "") + target_region).encode()


def queue_row(target_region: str, write: Replicated, strong: bool = False) -> Row:
    header = {
        "s": write.source, "t": write.table_name, "k": [write.pk.hex(), write.sk.hex()],
        "z": write.size, "v": list(write.version), "p": None if write.previous is None else list(write.previous),
        "b": write.by_service, "w": write.written_at, "d": write.item is None,
    }
    data = orjson.dumps(header) + b"\n" + (write.item or b"")
    pk = queue_partition(target_region, strong)
    sk = queue_sort_key(write.written_at)
    return Row(partition_hash(pk), pk, sk, data, len(data))


def parse_queue_row(row: Row) -> Replicated:
    header_bytes, _, item = row.item.partition(b"\n")
    header: dict[str, Any] = orjson.loads(header_bytes)
    previous = header["p"]
    return Replicated(
        header["s"], header["t"], bytes.fromhex(header["k"][0]), bytes.fromhex(header["k"][1]),
        None if header["d"] else item, int(header["z"]), Version(float(header["v"][0]), str(header["v"][1])),
        None if previous is None else Version(float(previous[0]), str(previous[1])), bool(header["b"]),
        float(header["w"]),
    )


def replication_changes(
    database: Database,
    schema: TableSchema,
    pk: bytes,
    sk: bytes,
    new_row: Row | None,
    by_service: bool,
    position: int = 0,
) -> list[RowChange]:
    """What a local write to a global table adds to its commit: the item's
    new version and a queue row per other replica (write_path._build). The
    ``position``-th item of a transaction is taken as written
    ``position`` x the spacing (TRANSACTION_ITEM_SPACING_SECONDS, or the
    admin route's ``transaction_item_spacing_ms``) after the first, so the
    other regions receive a transaction item by item, as DynamoDB's do (one
    may see some of its items and not the others yet)."""
    replicas = replica_set(schema)
    if replicas is None:
        return []
    others = [replica.region for replica in replicas.others(database.region)
              if replica.status in ("ACTIVE", CREATING)]
    versions_id = database.replication_versions_id
    key = version_key(schema.table_id, pk)
    # The version this region had (read outside the commit's checks: on a
    # shared store a racing replicated write may change it; it only tells a
    # concurrent write from a later one, for the overwrite counts).
    previous = parse_version(database.storage.get(versions_id, key, sk))
    spacing = database.replication.transaction_item_spacing_seconds if database.replication is not None else (
        TRANSACTION_ITEM_SPACING_SECONDS)
    now = database.now() + position * spacing
    strong = replicas.consistency == STRONG
    if strong:  # no quorum: InternalServerError; a write racing another region's: ReplicatedWriteConflictException
        from dynastore.replication.strong import check_conflict, check_quorum

        check_quorum(database, replicas)
        check_conflict(database, previous, now)
    if previous is not None and previous.timestamp >= now:
        now = previous.timestamp + 0.000001  # a later write of one item is always newer
    version = Version(now, database.region)
    changes = [RowChange(versions_id, key, sk, version_row(schema.table_id, pk, sk, version, new_row is None))]
    write = Replicated(
        database.region, schema.name, pk, sk, None if new_row is None else new_row.item,
        0 if new_row is None else new_row.size, version, previous, by_service, now,
    )
    for region in others:
        row = queue_row(region, write, strong)
        changes.append(RowChange(database.replication_queue_id, row.pk, row.sk, row))
    if others:
        from dynastore.replication.replicator import attach

        attach(database).queued(database.account_id, others, now, database.region, strong)
    return changes
