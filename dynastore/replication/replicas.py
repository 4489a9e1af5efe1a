"""The replica set in a table's definition, and what DescribeTable says of it.

Every member of a global table keeps the whole set in
``TableSchema.extensions["replication"]``::

    {"version": "2019.11.21", "consistency": "EVENTUAL",
     "replicas": [{"region": "us-east-1", "status": "ACTIVE"},
                  {"region": "us-west-2", "status": "CREATING", "source": "us-east-1",
                   "overrides": {...}}]}

in the order the replicas joined. ``source`` names the region a CREATING
replica is being filled from (``backfill``); ``overrides`` holds the
request's ProvisionedThroughputOverride, OnDemandThroughputOverride,
GlobalSecondaryIndexes and TableClassOverride, as DescribeTable echoes them.

DescribeTable in one region lists the *other* replicas (as measured live:
ack-api-quirks DDB-TABLE-265, each region lists the others in the order
they joined as seen from it), with ``GlobalTableVersion``; a table left
alone in its set is a regional table again (its stream stays on).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

REPLICATION_EXTENSION = "replication"
GLOBAL_TABLE_VERSION = "2019.11.21"
LEGACY_VERSION = "2017.11.29"
"""A group made by the legacy API (opt-in: legacy.py): DescribeTable shows
no Replicas for it, and it stays a global table with one member."""
REPLICA_STREAM_VIEW = "replica_stream_view"
"""Extension of a CREATING replica: the view type its stream gets once ACTIVE."""
EVENTUAL = "EVENTUAL"
STRONG = "STRONG"

CREATING = "CREATING"
ACTIVE = "ACTIVE"
DELETING = "DELETING"
UPDATING = "UPDATING"


@dataclass(frozen=True)
class Replica:
    region: str
    status: str = ACTIVE
    source: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    added_from: str | None = None
    """The region the replica was created from, and when (the source may not
    be deleted for 24 hours while the replica exists: replica_updates.py)."""
    added_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"region": self.region, "status": self.status}
        if self.source is not None:
            entry["source"] = self.source
        if self.overrides:
            entry["overrides"] = self.overrides
        if self.added_from is not None:
            entry["added_from"], entry["added_at"] = self.added_from, self.added_at
        return entry

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> Replica:
        return cls(entry["region"], entry.get("status", ACTIVE), entry.get("source"),
                   dict(entry.get("overrides") or {}), entry.get("added_from"), entry.get("added_at"))


@dataclass(frozen=True)
class ReplicaSet:
    replicas: tuple[Replica, ...]
    version: str = GLOBAL_TABLE_VERSION
    consistency: str = EVENTUAL
    witnesses: tuple[str, ...] = ()
    """The regions of a STRONG table's witness (no table there: dynastore/replication/strong.py)."""
    created_at: float | None = None
    """A legacy global table's CreationDateTime."""

    def to_extension(self) -> dict[str, Any]:
        extension: dict[str, Any] = {
            "version": self.version,
            "consistency": self.consistency,
            "replicas": [replica.to_json() for replica in self.replicas],
        }
        if self.witnesses:
            extension["witnesses"] = list(self.witnesses)
        if self.created_at is not None:
            extension["created_at"] = self.created_at
        return extension

    @classmethod
    def from_extension(cls, extension: dict[str, Any]) -> ReplicaSet:
        return cls(
            tuple(Replica.from_json(entry) for entry in extension.get("replicas", ())),
            extension.get("version", GLOBAL_TABLE_VERSION),
            extension.get("consistency", EVENTUAL),
            tuple(extension.get("witnesses", ())),
            extension.get("created_at"),
        )

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(replica.region for replica in self.replicas)

    def member(self, region: str) -> Replica | None:
        return next((replica for replica in self.replicas if replica.region == region), None)

    def others(self, region: str) -> tuple[Replica, ...]:
        return tuple(replica for replica in self.replicas if replica.region != region)

    def with_replica(self, replica: Replica) -> ReplicaSet:
        """The set with ``replica`` added, or replacing the member of its region."""
        if self.member(replica.region) is None:
            return replace(self, replicas=(*self.replicas, replica))
        return replace(self, replicas=tuple(
            replica if other.region == replica.region else other for other in self.replicas
        ))

    def without(self, region: str) -> ReplicaSet:
        return replace(self, replicas=self.others(region))

    @property
    def settled(self) -> bool:
        """No replica is being created or deleted."""
        return all(replica.status == ACTIVE for replica in self.replicas)


def replica_set(schema: TableSchema) -> ReplicaSet | None:
    """The table's replica set, None for a regional table."""
    extension = schema.extensions.get(REPLICATION_EXTENSION)
    return None if extension is None else ReplicaSet.from_extension(extension)


def with_replica_set(schema: TableSchema, replicas: ReplicaSet | None) -> TableSchema:
    """The definition carrying ``replicas`` (None, or a set of one: a regional
    table; a legacy global table keeps its group of one)."""
    extensions = {key: value for key, value in schema.extensions.items() if key != REPLICATION_EXTENSION}
    if replicas is not None and (len(replicas.replicas) > 1 or (replicas.version == LEGACY_VERSION
                                                                and replicas.replicas)):
        extensions[REPLICATION_EXTENSION] = replicas.to_extension()
    return replace(schema, extensions=extensions)


SETTINGS_REPLICATION_MODE = "ENABLED_WITH_OVERRIDES"
"""GlobalTableSettingsReplicationMode of a table with replicas (ack-api-quirks DDB-TABLE-320)."""


def replica_description(replica: Replica, member: TableSchema | None = None) -> dict[str, Any]:
    """One entry of DescribeTable's ``Replicas`` (ReplicaDescription): what
    the replica does not inherit, its WarmThroughput (its table's, when it
    exists yet) and the settings replication mode (DDB-TABLE-201/229)."""
    entry: dict[str, Any] = {"RegionName": replica.region, "ReplicaStatus": replica.status}
    if replica.status == CREATING:
        entry["ReplicaStatusPercentProgress"] = "0"
    overrides = replica.overrides
    for name in ("KMSMasterKeyId", "ProvisionedThroughputOverride", "OnDemandThroughputOverride", "GlobalSecondaryIndexes"):
        if overrides.get(name):
            entry[name] = overrides[name]
    if member is not None:
        entry["WarmThroughput"] = {"ReadUnitsPerSecond": member.warm_read_units,
                                   "WriteUnitsPerSecond": member.warm_write_units, "Status": "ACTIVE"}
    if overrides.get("TableClassOverride"):
        entry["ReplicaTableClassSummary"] = {"TableClass": overrides["TableClassOverride"]}
    entry["GlobalTableSettingsReplicationMode"] = SETTINGS_REPLICATION_MODE
    return entry


def describe_replication(database: Database, schema: TableSchema, description: dict[str, Any]) -> None:
    """Add a global table's members to its TableDescription: the other
    replicas, GlobalTableVersion, and UPDATING while a replica is being
    created or deleted (the table being created itself says CREATING)."""
    from dynastore.replication.replica_updates import region_database

    replicas = replica_set(schema)
    if replicas is None or replicas.version == LEGACY_VERSION:  # a legacy group: DescribeGlobalTable shows it
        return
    description["GlobalTableVersion"] = replicas.version
    description["Replicas"] = [
        replica_description(replica, region_database(database, replica.region).tables.get(schema.name))
        for replica in replicas.others(database.region)
    ]
    description["GlobalTableSettingsReplicationMode"] = SETTINGS_REPLICATION_MODE
    if replicas.witnesses:
        description["GlobalTableWitnesses"] = [
            {"RegionName": region, "WitnessStatus": ACTIVE} for region in replicas.witnesses
        ]
    if replicas.consistency == STRONG:
        description["MultiRegionConsistency"] = STRONG
    own = replicas.member(database.region)
    if own is not None and own.status == CREATING:
        description["TableStatus"] = CREATING
    elif not replicas.settled and description.get("TableStatus") == ACTIVE:
        description["TableStatus"] = UPDATING
