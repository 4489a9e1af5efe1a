"""UpdateTable's ReplicaUpdates (global tables version 2019.11.21): Create
and Delete of a replica, with DynamoDB's preconditions and messages.

The messages, as DynamoDB answers them live (ack-api-quirks'
DDB-TABLE-203/223/265 catalogue, ScyllaDB's test_global_tables.py run
against DynamoDB):

- an element with no action, or an Update naming only its region: "There
  are no actions specified in the Replica Update Action of the request.";
- an element with two actions: "Update table operation with more than one
  type of replica actions not allowed.";
- two Create or Delete actions in one call (identical ones are taken once):
  "Update table operation with more than one create or delete replica
  actions not allowed";
- the table's own region: "Cannot add or delete the local region through
  ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as
  required.";
- a region that is no AWS region: "Region X is not supported. ..."
  (regions.py);
- a Create of a member, or of a region where a table of that name exists:
  "Failed to create a the new replica of table with name: 'T' because one
  or more replicas already existed as tables." (sic);
- a Delete (or Update) of a region that is no member: "Update global table
  operation failed because one or more replicas were not part of the global
  table. Please retry the request without these replicas: [R].";
- a Create while the table or a replica is still being created or deleted:
  ResourceInUseException.

Making a table global turns its stream on (NEW_AND_OLD_IMAGES) when it has
none; a stream it has stays as it is (DynamoDB keeps even KEYS_ONLY), and
cannot be disabled while the table has replicas ("Disabling Stream is not
allowed for a Global Table replica.").
"""

from __future__ import annotations

import functools
import importlib
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dynastore.engine.streams import STREAM_EXTENSION
from dynastore.engine.ttl import TTL_EXTENSION
from dynastore.errors import ResourceInUseException, ValidationException, invalid_parameter
from dynastore.replication import replicas as replica_sets
from dynastore.replication.regions import check_region
from dynastore.replication.replicas import (
    ACTIVE,
    CREATING,
    DELETING,
    Replica,
    ReplicaSet,
    replica_set,
    with_replica_set,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

ACTIONS = ("Create", "Update", "Delete")
CREATE_OVERRIDES = (
    "ProvisionedThroughputOverride", "OnDemandThroughputOverride", "GlobalSecondaryIndexes",
    "TableClassOverride",
)
"""What a Create (or Update) may set for its replica, echoed by DescribeTable."""
REPLICATED_STREAM_VIEW = "NEW_AND_OLD_IMAGES"


@dataclass(frozen=True)
class ReplicaAction:
    kind: str  # Create | Update | Delete
    region: str
    settings: dict[str, Any]


def region_database(database: Database, region: str) -> Database:
    """The Database of the same account in ``region`` (opened if new)."""
    from dynastore.namespaces import Namespaces

    return Namespaces.of(database).get(database.account_id, region)


def _single_region(database: Database) -> bool:
    registry = getattr(database, "namespaces", None)
    return bool(registry is not None and registry.single_region)


def check_replica_updates(database: Database, request: dict[str, Any]) -> list[ReplicaAction]:
    """The request's replica actions, after the checks that need no table."""
    actions: list[ReplicaAction] = []
    for element in request.get("ReplicaUpdates") or ():
        present = [kind for kind in ACTIONS if isinstance(element, dict) and element.get(kind) is not None]
        if not present:
            raise ValidationException("There are no actions specified in the Replica Update Action of the request.")
        if len(present) > 1:
            raise ValidationException("Update table operation with more than one type of replica actions not allowed.")
        kind = present[0]
        settings = element[kind] if isinstance(element[kind], dict) else {}
        if kind == "Update" and not any(settings.get(name) is not None for name in CREATE_OVERRIDES):
            raise ValidationException("There are no actions specified in the Replica Update Action of the request.")
        if settings.get("KMSMasterKeyId") is not None:
            from dynastore.engine.table_settings import unsupported

            raise unsupported("KMSMasterKeyId")
        action = ReplicaAction(kind, str(settings.get("RegionName")), settings)
        if action not in actions:  # identical actions are taken once
            actions.append(action)
    for action in actions:
        if action.kind != "Update" and action.region == database.region:
            raise ValidationException(
                "Cannot add or delete the local region through ReplicaUpdates. "
                "Use CreateTable, DeleteTable, or UpdateTable as required."
            )
        check_region(action.region)
    if actions and _single_region(database):
        raise ValidationException(
            "dynastore --single-region keeps one namespace for every region, so a table cannot "
            "have replicas in other regions (see docs/global-tables.md)"
        )
    return actions


def check_replica_set_change(
    database: Database, schema: TableSchema, request: dict[str, Any], actions: list[ReplicaAction]
) -> bool:
    """The rules that need the table: STRONG's (strong.py), and one Create or
    Delete per call otherwise. True when the request creates a STRONG table."""
    from dynastore.replication import strong

    current = replica_set(schema)
    if current is not None and current.version == replica_sets.LEGACY_VERSION:
        raise ValidationException(
            "One or more parameter values were invalid: the table is a replica of a global table version "
            "2017.11.29; its replicas change with UpdateGlobalTable"
        )
    creates_strong = strong.check_request(database, schema, request, actions)
    if not creates_strong and not strong.is_strong(schema) and sum(action.kind != "Update" for action in actions) > 1:
        raise ValidationException(
            "Update table operation with more than one create or delete replica actions not allowed"
        )
    return creates_strong


def check_only_replica_changes(changes: set[str]) -> None:
    """ReplicaUpdates combine with no other change (DDB-TABLE-257)."""
    if "ReplicaUpdates" in changes and len(changes) > 1:
        raise ValidationException("Requests that modify replicas or witnesses must not also modify other fields")


def check_stream_change(schema: TableSchema, request: dict[str, Any]) -> None:
    """A global table's stream stays on."""
    stream = request.get("StreamSpecification")
    if stream is not None and not stream.get("StreamEnabled") and replica_set(schema) is not None:
        raise invalid_parameter("Disabling Stream is not allowed for a Global Table replica.")


def apply_replica_updates(
    database: Database, schema: TableSchema, actions: list[ReplicaAction], now: float,
    request: dict[str, Any] | None = None, creates_strong: bool = False,
) -> TableSchema:
    """Carry out the actions (one Create or Delete at most, but for a STRONG
    table's creation or dissolution); returns the table's new definition as
    it was persisted (a new replica's backfill may have finished since,
    without a server's background loop)."""
    from dynastore.replication import strong

    with replica_set_lock(database):
        if creates_strong:
            return _create_strong(database, schema, actions, strong.witness_actions(request or {}), now)
        if strong.is_strong(schema):
            return _dissolve_strong(database, schema, actions)
        for action in actions:
            if action.kind == "Create":
                schema = create_replica(database, schema, action, now)
            elif action.kind == "Delete":
                schema = delete_replica(database, schema, action.region)
            else:
                schema = update_replica(database, schema, action, now)
        return schema


def update_replica(database: Database, schema: TableSchema, action: ReplicaAction, now: float) -> TableSchema:
    """ReplicaUpdates Update: the replica's own throughput, on-demand limits,
    GSI settings and table class (its entry in the set echoes them)."""
    from dynastore.engine.table_settings import PAY_PER_REQUEST, check_table_class

    current = replica_set(schema)
    replica = current.member(action.region) if current is not None else None
    if current is None or replica is None:
        raise _not_members(action.region)
    settings = action.settings
    if settings.get("ProvisionedThroughputOverride") and schema.billing_mode == PAY_PER_REQUEST:
        raise ValidationException(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
        )
    if settings.get("TableClassOverride") is not None:
        check_table_class(settings["TableClassOverride"])
    member_database = database if action.region == database.region else region_database(database, action.region)
    member_database.change_table(schema.name, lambda member: _with_overrides(member, settings))
    overrides = {**replica.overrides, **{name: settings[name] for name in CREATE_OVERRIDES if settings.get(name)}}
    replicas = current.with_replica(replace(replica, overrides=overrides))
    publish_replica_set(database, schema.name, replicas)
    return database.tables[schema.name]


def _with_overrides(schema: TableSchema, settings: dict[str, Any]) -> TableSchema:
    """A replica's definition with an Update's (or a Create's) overrides applied."""
    read = (settings.get("ProvisionedThroughputOverride") or {}).get("ReadCapacityUnits")
    if read is not None and schema.billing_mode == "PROVISIONED":
        schema = replace(schema, read_capacity_units=int(read), warm_read_units=max(schema.warm_read_units, int(read)))
    on_demand = (settings.get("OnDemandThroughputOverride") or {}).get("MaxReadRequestUnits")
    if on_demand is not None:
        schema = replace(schema, on_demand_max_read_units=None if int(on_demand) == -1 else int(on_demand))
    if settings.get("TableClassOverride"):
        schema = replace(schema, table_class=str(settings["TableClassOverride"]), table_class_reported=True)
    index_settings = {entry.get("IndexName"): entry for entry in settings.get("GlobalSecondaryIndexes") or ()
                      if isinstance(entry, dict)}
    if index_settings:
        indexes = []
        for index in schema.indexes:
            entry = index_settings.get(index.name)
            if entry is not None and index.is_global:
                index_read = (entry.get("ProvisionedThroughputOverride") or {}).get("ReadCapacityUnits")
                if index_read is not None:
                    index = replace(index, read_capacity_units=int(index_read))
                index_on_demand = (entry.get("OnDemandThroughputOverride") or {}).get("MaxReadRequestUnits")
                if index_on_demand is not None:
                    index = replace(index, on_demand_max_read_units=int(index_on_demand))
            indexes.append(index)
        schema = replace(schema, indexes=tuple(indexes))
    return schema


def _not_members(region: str) -> ValidationException:
    return ValidationException(
        "Update global table operation failed because one or more replicas were not part of the "
        f"global table. Please retry the request without these replicas: [{region}]."
    )


def _create_strong(
    database: Database, schema: TableSchema, actions: list[ReplicaAction], witnesses: list[tuple[str, str]],
    now: float,
) -> TableSchema:
    """A STRONG table: every replica created in this one call, the witness recorded."""
    from dynastore.replication.replicas import STRONG

    for action in actions:
        target = region_database(database, action.region)
        if schema.name in target.tables:
            raise _already_exists(schema.name)
    answered = schema
    for action in actions:
        answered = create_replica(database, database.tables[schema.name], action, now, strong=True)
    witness_regions = tuple(region for kind, region in witnesses if kind == "Create")
    change_replica_set(database, schema.name,
                       lambda current: replace(current, consistency=STRONG, witnesses=witness_regions))
    answered_set = replica_set(answered)
    assert answered_set is not None
    return replace(answered, extensions={
        **answered.extensions,
        replica_sets.REPLICATION_EXTENSION: replace(
            answered_set, consistency=STRONG, witnesses=witness_regions).to_extension(),
    })


def _dissolve_strong(database: Database, schema: TableSchema, actions: list[ReplicaAction]) -> TableSchema:
    """A STRONG table's every other replica and its witness deleted at once
    (strong.py checked that the request names them all)."""
    current = replica_set(schema)
    assert current is not None
    for action in actions:
        if action.kind == "Delete":
            target = region_database(database, action.region)
            if schema.name in target.tables:
                target.drop_table(schema.name)
    return _publish(database, schema, ReplicaSet((Replica(database.region),)))


def _already_exists(name: str) -> ValidationException:
    return ValidationException(
        f"Failed to create a the new replica of table with name: '{name}' because one or "
        "more replicas already existed as tables."
    )


def create_replica(
    database: Database, schema: TableSchema, action: ReplicaAction, now: float, strong: bool = False
) -> TableSchema:
    current = replica_set(schema) or ReplicaSet((Replica(database.region),))
    target = region_database(database, action.region)
    if current.member(action.region) is not None or schema.name in target.tables:
        raise _already_exists(schema.name)
    if schema.status != ACTIVE or (not current.settled and not strong):
        raise ResourceInUseException(
            f"Attempt to change a resource which is still in use: Table is being updated: {schema.name}"
        )
    overrides = {name: action.settings[name] for name in CREATE_OVERRIDES if action.settings.get(name)}
    replicas = current.with_replica(Replica(action.region, CREATING, database.region, overrides,
                                            added_from=database.region, added_at=now))
    if STREAM_EXTENSION not in schema.extensions:
        schema = database.streams.enable(schema, REPLICATED_STREAM_VIEW, now)
    from dynastore.replication.replicator import attach_all

    attach_all(database)  # from now on every write of the table is replicated
    target.create_table(_replica_schema(target, schema, replicas, overrides, now))
    schema = _publish(database, schema, replicas)
    from dynastore.replication.backfill import start_replica_backfill

    start_replica_backfill(target, schema.name)
    return schema  # as UpdateTable answers: the new replica CREATING


def _replica_schema(
    target: Database, source: TableSchema, replicas: ReplicaSet, overrides: dict[str, Any], now: float
) -> TableSchema:
    """The new replica's definition in its region: the source's keys,
    indexes, billing and TTL setting (the overrides applied), its own ARN,
    TableId and storage; CREATING until the backfill is done."""
    extensions: dict[str, Any] = {replica_sets.REPLICATION_EXTENSION: replicas.to_extension()}
    if TTL_EXTENSION in source.extensions:
        extensions[TTL_EXTENSION] = dict(source.extensions[TTL_EXTENSION])
    if STREAM_EXTENSION in source.extensions:  # the view type the stream gets when the replica is ACTIVE
        extensions[replica_sets.REPLICA_STREAM_VIEW] = source.extensions[STREAM_EXTENSION]["view_type"]
    created = replace(
        source,
        table_id=0,
        table_uuid=str(uuid.uuid4()),
        arn=target.table_arn(source.name),
        creation_time=now,
        status=CREATING,
        tags=(),
        deletion_protection=False,
        indexes=tuple(replace(index, storage_id=0, status=ACTIVE, backfilling=False) for index in source.indexes),
        extensions=extensions,
        generation=0,
    )
    return _with_overrides(created, overrides)


def _publish(database: Database, schema: TableSchema, replicas: ReplicaSet) -> TableSchema:
    """Write ``replicas`` into every member's definition (this one's
    ``schema`` as given, the others' as stored); returns this one's."""
    schema = database.update_table(with_replica_set(schema, replicas))
    for replica in replicas.others(database.region):
        other = region_database(database, replica.region)
        member = other.tables.get(schema.name)
        if member is not None and member.extensions.get(replica_sets.REPLICATION_EXTENSION) != (
            replicas.to_extension() if len(replicas.replicas) > 1 else None
        ):
            other.change_table(schema.name, lambda member: with_replica_set(member, replicas))
    return schema


def publish_replica_set(database: Database, table_name: str, replicas: ReplicaSet) -> None:
    """Write ``replicas`` into the definition of every member still holding the table."""
    for region in {database.region, *replicas.regions}:
        member_database = database if region == database.region else region_database(database, region)
        member_database.refresh_catalogue(check=True)  # on a shared store, another server's changes first
        member_database.change_table(table_name, lambda member: with_replica_set(member, replicas))


class _SetLock:
    """One change of a store's replica sets at a time. Requests run in
    greenlets on a shared store, so the lock is waited for (the store's
    pause parks the greenlet), never blocked on, and its holder (a greenlet,
    or a thread) may take it again."""

    def __init__(self) -> None:
        self.owner: int | None = None
        self.depth = 0

    @contextmanager
    def held(self, database: Database) -> Iterator[None]:
        me = current_owner()
        for _ in range(SET_LOCK_WAIT_STEPS):  # bounded: a holder that never lets go is passed by
            if self.owner is None or self.owner == me:
                break
            database.storage.pause(SET_LOCK_WAIT_SECONDS)
        if self.owner != me:
            self.owner, self.depth = me, 0
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth <= 0 and self.owner == me:
                self.owner, self.depth = None, 0


def current_owner() -> int:
    """The running greenlet (a request on a shared store), else the thread."""
    try:
        greenlet: Any = importlib.import_module("greenlet")
    except ImportError:
        return threading.get_ident()
    return id(greenlet.getcurrent())


_SET_LOCKS: weakref.WeakKeyDictionary[Any, _SetLock] = weakref.WeakKeyDictionary()
SET_LOCK_WAIT_SECONDS = 0.001
SET_LOCK_WAIT_STEPS = 10_000


def replica_set_lock(database: Database) -> AbstractContextManager[None]:
    lock = _SET_LOCKS.get(database.storage)
    if lock is None:
        lock = _SET_LOCKS[database.storage] = _SetLock()
    return lock.held(database)


def change_replica_set(
    database: Database, table_name: str, change: Callable[[ReplicaSet], ReplicaSet],
    own_change: Callable[[TableSchema], TableSchema] | None = None,
) -> None:
    """Apply ``change`` to the replica set as this region's member holds it
    now and write the result into every member (with ``own_change``, this
    member's definition changed first), under the store's replica-set lock:
    two replicas' backfills finishing together must not each write back a
    set missing the other's news."""
    with replica_set_lock(database):
        schema = database.tables.get(table_name)
        if schema is not None and own_change is not None:
            schema = database.change_table(table_name, own_change)
        current = replica_set(schema) if schema is not None else None
        if current is not None:
            publish_replica_set(database, table_name, change(current))


SOURCE_HOLD_SECONDS = 24 * 3600
"""A region a replica was created from cannot go for 24 hours while that replica exists."""


def check_source_hold(replicas: ReplicaSet, region: str, now: float) -> None:
    """DeleteTable in ``region``, or its Delete from another region: refused
    while a replica created from it in the last 24 hours is still a member
    (measured live: ack-api-quirks; the developer guide)."""
    for replica in replicas.others(region):
        if replica.added_from == region and replica.added_at is not None and now - replica.added_at < SOURCE_HOLD_SECONDS:
            raise ValidationException(
                "Replica cannot be deleted because it has acted as a source region for new replica(s) being "
                "added to the table in the last 24 hours."
            )


def delete_replica(database: Database, schema: TableSchema, region: str) -> TableSchema:
    current = replica_set(schema)
    if current is None or current.member(region) is None:
        raise _not_members(region)
    check_source_hold(current, region, database.now())
    target = region_database(database, region)
    if schema.name in target.tables:
        target.drop_table(schema.name)
    remaining = current.without(region)
    schema = _publish(database, schema, remaining)
    return schema


def deleting_description(region: str) -> dict[str, Any]:
    return {"RegionName": region, "ReplicaStatus": DELETING}


def table_deleted(database: Database, schema: TableSchema) -> None:
    """DeleteTable of a member: the others forget it (a replica set of one
    is a regional table again)."""
    current = replica_set(schema)
    if current is None:
        return
    remaining = current.without(database.region)
    for replica in remaining.replicas:
        other = region_database(database, replica.region)
        other.change_table(schema.name, lambda member: with_replica_set(member, remaining))


GROUP_SETTINGS = (
    "billing_mode", "read_capacity_units", "write_capacity_units", "billing_mode_last_update_time",
    "on_demand_max_read_units", "on_demand_max_write_units", "warm_read_units", "warm_write_units",
)
"""What a change in one region carries to every replica: its capacity mode
and throughput (a manual ProvisionedThroughput change in any region applies
group-wide: ack-api-quirks DDB-TABLE-251), and the TTL setting. Deletion
protection, tags and the table class stay per region."""


def carry_settings(database: Database, schema: TableSchema, ttl: bool = False) -> None:
    """Carry this member's group-wide settings (or, with ``ttl``, its TTL
    setting) to the other replicas of its global table."""
    current = replica_set(schema)
    if current is None:
        return
    with replica_set_lock(database):
        for replica in current.others(database.region):
            other = region_database(database, replica.region)
            other.refresh_catalogue(check=True)
            other.change_table(schema.name, functools.partial(_carried, schema, replica.overrides, ttl))


def _carried(schema: TableSchema, overrides: dict[str, Any], ttl: bool, member: TableSchema) -> TableSchema:
    """``member`` with ``schema``'s group-wide settings (or its TTL setting)."""
    if ttl:
        extensions = {key: value for key, value in member.extensions.items() if key != TTL_EXTENSION}
        if TTL_EXTENSION in schema.extensions:
            extensions[TTL_EXTENSION] = dict(schema.extensions[TTL_EXTENSION])
        return replace(member, extensions=extensions)
    changed = replace(member, **{name: getattr(schema, name) for name in GROUP_SETTINGS})
    return _with_overrides(changed, overrides)  # its own read capacity stays
