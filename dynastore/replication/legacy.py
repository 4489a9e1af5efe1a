"""The legacy global-tables API (version 2017.11.29), and
DescribeTableReplicaAutoScaling.

By default the legacy calls answer as DynamoDB answers them today.
DynamoDB no longer creates legacy global tables: CreateGlobalTable is
refused in every region (measured live in 2026: ack-api-quirks
DDB-GLOBALTABLE-002; ScyllaDB's test_global_tables.py run against the
service), so no legacy global table can exist, and the calls that name one
answer GlobalTableNotFoundException, also for a 2019.11.21 global table of
that name (DDB-GLOBALTABLE-001/004):

- CreateGlobalTable, and UpdateGlobalTable with a Create: ValidationException
  "One or more parameter values were invalid: DynamoDB global tables version
  2017.11.29 is not supported. ...";
- UpdateGlobalTable with no replica update: ValidationException "One or more
  parameter values were invalid";
- DescribeGlobalTable: "Global table not found: Global table with name: 'T'
  does not exist."; UpdateGlobalTable (Delete), DescribeGlobalTableSettings,
  UpdateGlobalTableSettings: "Global table with name: 'T' does not exist.";
- ListGlobalTables: an empty list (DynamoDB answers a RegionName that is no
  region with HTTP 500; dynastore with the empty list: never a 500).

Opt-in (``dynastore serve --legacy-global-tables``,
``$DYNASTORE_LEGACY_GLOBAL_TABLES=1``, ``dynastore.open(...,
legacy_global_tables=True)``) they work as the API reference documents
version 2017.11.29, on the same machinery as 2019.11.21: the group is the
replica set in every member's definition (version "2017.11.29", kept even
with one member), and writes replicate through the one replicator. The
preconditions (API reference, CreateGlobalTable / UpdateGlobalTable): a
table of the global table's name in every listed region
(TableNotFoundException), with the same key schema, a stream with
NEW_AND_OLD_IMAGES, and no items (for CreateGlobalTable every member, for
UpdateGlobalTable the replica added; it is then filled from the others'
items by the backfill). The exceptions' messages are the API reference's
descriptions; the ValidationExceptions of the preconditions are worded by
dynastore (docs/compatibility.md). DescribeTable of a legacy member shows
no Replicas and no GlobalTableVersion, as the developer guide's way of
telling the versions apart says.

DescribeTableReplicaAutoScaling answers for a 2019.11.21 global table: every
replica, this region's included, in name order (DDB-TABLE-265), with its
status and its GSIs; for a regional table, or none, ResourceNotFoundException
"Global table with name: 'T' does not exist." (DDB-TABLE-187). dynastore
scales nothing; the settings UpdateTableReplicaAutoScaling stored
(auto_scaling.py) are shown.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine.streams import STREAM_EXTENSION
from dynastore.errors import (
    GlobalTableAlreadyExistsException,
    GlobalTableNotFoundException,
    IndexNotFoundException,
    ReplicaAlreadyExistsException,
    ReplicaNotFoundException,
    ResourceNotFoundException,
    TableNotFoundException,
    ValidationException,
    invalid_parameter,
)
from dynastore.replication.replicas import (
    ACTIVE,
    CREATING,
    EVENTUAL,
    LEGACY_VERSION,
    Replica,
    ReplicaSet,
    replica_set,
    with_replica_set,
)

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

LEGACY_REFUSED = (
    "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not "
    "supported. We recommend using DynamoDB global tables version 2019.11.21, instead of version "
    "2017.11.29 (Legacy)."
)
LEGACY_VARIABLE = "DYNASTORE_LEGACY_GLOBAL_TABLES"
TABLE_NOT_FOUND = (
    "A source table with the name {name} does not currently exist within the subscriber's account or "
    "the subscriber is operating in the wrong Amazon Web Services Region."
)
"""TableNotFoundException, as the API reference describes it."""
ALREADY_EXISTS = "The specified global table already exists."
REPLICA_EXISTS = "The specified replica is already part of the global table."
REPLICA_NOT_FOUND = "The specified replica is no longer part of the global table."
INDEX_NOT_FOUND = "The operation tried to access a nonexistent index."
REPLICATED_VIEW = "NEW_AND_OLD_IMAGES"

_ENABLED: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def enable(database: Database) -> None:
    """Turn the working legacy API on for ``database``'s store."""
    _ENABLED[database.storage] = True


def enabled(database: Database) -> bool:
    if _ENABLED.get(database.storage):
        return True
    return os.environ.get(LEGACY_VARIABLE, "").lower() in ("1", "true", "yes", "on")


def _missing(name: Any) -> str:
    return f"Global table with name: '{name}' does not exist."


def global_table_arn(database: Database, name: str) -> str:
    return f"arn:aws:dynamodb::{database.account_id}:global-table/{name}"


def is_legacy(replicas: ReplicaSet | None) -> bool:
    return replicas is not None and replicas.version == LEGACY_VERSION


# --- finding a legacy global table ----------------------------------------------------
def _member_database(database: Database, region: str) -> Database:
    from dynastore.replication.replica_updates import region_database

    member = database if region == database.region else region_database(database, region)
    member.refresh_catalogue(check=True)  # on a shared store, another server's changes first
    return member


def _legacy_tables(database: Database) -> dict[str, tuple[Database, TableSchema, ReplicaSet]]:
    """Every legacy global table of the account, by name: a member's database, definition and group."""
    from dynastore.namespaces import Namespaces

    registry = Namespaces.of(database)
    registry.open_stored()
    found: dict[str, tuple[Database, TableSchema, ReplicaSet]] = {}
    for namespace in sorted(registry.all(), key=lambda each: each.region):
        if namespace.account_id != database.account_id:
            continue
        if not namespace.storage.exclusive:
            namespace.refresh_catalogue(check=True)
        for name, schema in namespace.tables.items():
            replicas = replica_set(schema)
            if is_legacy(replicas) and name not in found:
                assert replicas is not None
                found[name] = (namespace, schema, replicas)
    return found


def _global_table(database: Database, name: Any) -> tuple[Database, TableSchema, ReplicaSet] | None:
    """The legacy global table ``name``: looked for in this region first, then in every other."""
    if not isinstance(name, str):
        return None
    schema = database.tables.get(name)
    replicas = replica_set(schema) if schema is not None else None
    if schema is not None and is_legacy(replicas):
        assert replicas is not None
        return database, schema, replicas
    return _legacy_tables(database).get(name)


def _require(database: Database, name: Any, message: str | None = None) -> tuple[Database, TableSchema, ReplicaSet]:
    found = _global_table(database, name)
    if found is None:
        raise GlobalTableNotFoundException(message or _missing(name))
    return found


# --- the description --------------------------------------------------------------------
def describe(database: Database, name: str, replicas: ReplicaSet, status: str | None = None) -> dict[str, Any]:
    """A GlobalTableDescription."""
    settled = replicas.settled
    return {
        "ReplicationGroup": [{"RegionName": replica.region, "ReplicaStatus": replica.status}
                             for replica in sorted(replicas.replicas, key=lambda each: each.region)],
        "GlobalTableArn": global_table_arn(database, name),
        "CreationDateTime": replicas.created_at,
        "GlobalTableStatus": status or (ACTIVE if settled else "UPDATING"),
        "GlobalTableName": name,
    }


# --- the preconditions -------------------------------------------------------------------
def _key_schema(schema: TableSchema) -> tuple[Any, ...]:
    return (schema.partition_key, schema.sort_key)


def _check_candidate(database: Database, name: str, region: str, model: TableSchema | None,
                     must_be_empty: bool = True) -> TableSchema:
    """The table ``name`` in ``region`` may join a legacy global table whose
    members look like ``model``."""
    from dynastore.replication.regions import check_region

    check_region(region)
    member_database = _member_database(database, region)
    schema = member_database.tables.get(name)
    if schema is None or schema.status != ACTIVE:
        raise TableNotFoundException(TABLE_NOT_FOUND.format(name=name))
    if replica_set(schema) is not None:
        raise (ReplicaAlreadyExistsException(REPLICA_EXISTS) if is_legacy(replica_set(schema))
               else GlobalTableAlreadyExistsException(ALREADY_EXISTS))
    stream = schema.extensions.get(STREAM_EXTENSION)
    if stream is None or stream.get("view_type") != REPLICATED_VIEW:
        raise invalid_parameter(
            f"Table: {name} in region {region} must have DynamoDB Streams enabled with "
            f"StreamViewType {REPLICATED_VIEW} to be part of a global table"
        )
    if model is not None and _key_schema(schema) != _key_schema(model):
        raise invalid_parameter(
            f"Table: {name} in region {region} must have the same key schema as the other replicas"
        )
    if model is not None and _index_keys(schema) != _index_keys(model):
        raise invalid_parameter(
            f"Table: {name} in region {region} must have the same secondary indexes (names and keys) as "
            "the other replicas"
        )
    if must_be_empty and _has_items(member_database, schema):
        raise invalid_parameter(f"Table: {name} in region {region} must be empty to be part of a global table")
    return schema


def _index_keys(schema: TableSchema) -> set[tuple[Any, ...]]:
    return {(index.name, index.kind, index.partition_keys, index.sort_keys) for index in schema.indexes}


def _has_items(database: Database, schema: TableSchema) -> bool:
    from dynastore.storage.base import HASH_SPACE

    return next(iter(database.storage.scan(schema.table_id, 0, HASH_SPACE)), None) is not None


def _regions(group: Any) -> list[str]:
    regions: list[str] = []
    for element in group or ():
        region = element.get("RegionName") if isinstance(element, dict) else None
        if not isinstance(region, str):
            raise ValidationException("One or more parameter values were invalid")
        if region in regions:
            raise invalid_parameter(f"Duplicate region {region} in the replication group")
        regions.append(region)
    return regions


def _publish(database: Database, name: str, before: ReplicaSet | None, after: ReplicaSet | None) -> None:
    """Write the group into every member's definition (a region that left gets none)."""
    regions = {*(before.regions if before is not None else ()), *(after.regions if after is not None else ())}
    for region in sorted(regions):
        member_database = _member_database(database, region)
        member = member_database.tables.get(name)
        if member is None:
            continue
        group = after if after is not None and after.member(region) is not None else None
        member_database.update_table(with_replica_set(member, group))


# --- the calls --------------------------------------------------------------------------
def create_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    if not enabled(database):
        raise ValidationException(LEGACY_REFUSED)
    from dynastore.replication.replica_updates import replica_set_lock
    from dynastore.replication.replicator import attach_all

    name = str(request.get("GlobalTableName"))
    regions = _regions(request.get("ReplicationGroup"))
    if not regions:
        raise ValidationException("One or more parameter values were invalid")
    with replica_set_lock(database):
        if _global_table(database, name) is not None:
            raise GlobalTableAlreadyExistsException(ALREADY_EXISTS)
        model: TableSchema | None = None
        for region in regions:
            schema = _check_candidate(database, name, region, model)
            model = model or schema
        replicas = ReplicaSet(tuple(Replica(region) for region in regions), version=LEGACY_VERSION,
                              consistency=EVENTUAL, created_at=database.now())
        attach_all(database)  # from now on every write of the table is replicated
        _publish(database, name, None, replicas)
    return {"GlobalTableDescription": describe(database, name, replicas, status=CREATING)}


def describe_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    name = request.get("GlobalTableName")
    message = f"Global table not found: {_missing(name)}"
    if not enabled(database):
        raise GlobalTableNotFoundException(message)
    member_database, _, replicas = _require(database, name, message)
    return {"GlobalTableDescription": describe(member_database, str(name), replicas)}


def update_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    updates = request.get("ReplicaUpdates") or []
    if not enabled(database):
        if any(isinstance(update, dict) and update.get("Create") is not None for update in updates):
            raise ValidationException(LEGACY_REFUSED)
        if not any(isinstance(update, dict) and update.get("Delete") is not None for update in updates):
            raise ValidationException("One or more parameter values were invalid")
        raise GlobalTableNotFoundException(_missing(request.get("GlobalTableName")))
    from dynastore.replication.backfill import start_replica_backfill
    from dynastore.replication.replica_updates import replica_set_lock

    name = str(request.get("GlobalTableName"))
    actions: list[tuple[str, str]] = []
    for update in updates:
        present = [kind for kind in ("Create", "Delete") if isinstance(update, dict)
                   and isinstance(update.get(kind), dict)]
        if len(present) != 1:
            raise ValidationException("One or more parameter values were invalid")
        region = update[present[0]].get("RegionName")
        if not isinstance(region, str) or (present[0], region) in actions:
            raise ValidationException("One or more parameter values were invalid")
        actions.append((present[0], region))
    if not actions:
        raise ValidationException("One or more parameter values were invalid")
    with replica_set_lock(database):
        member_database, model, before = _require(database, name)
        after = before
        created: list[str] = []
        for kind, region in actions:
            if kind == "Create":
                if after.member(region) is not None:
                    raise ReplicaAlreadyExistsException(REPLICA_EXISTS)
                _check_candidate(database, name, region, model)
                source = next((replica.region for replica in after.replicas if replica.status == ACTIVE), None)
                after = after.with_replica(Replica(region, CREATING if source else ACTIVE, source))
                created.append(region)
            else:
                if after.member(region) is None:
                    raise ReplicaNotFoundException(REPLICA_NOT_FOUND)
                after = after.without(region)
        _publish(member_database, name, before, after if after.replicas else None)
        for region in created:
            if after.member(region) is not None and after.member(region).status == CREATING:  # type: ignore[union-attr]
                start_replica_backfill(_member_database(database, region), name)
    final = _global_table(database, name)
    answered = final[2] if final is not None else replace(after, replicas=())
    return {"GlobalTableDescription": describe(member_database, name, answered)}


def list_global_tables(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    if not enabled(database):
        return {"GlobalTables": []}
    region = request.get("RegionName")
    start = request.get("ExclusiveStartGlobalTableName")
    limit = request.get("Limit")
    limit = limit if isinstance(limit, int) and limit > 0 else 100
    tables = sorted(
        (name, replicas) for name, (_, _, replicas) in _legacy_tables(database).items()
        if region is None or replicas.member(str(region)) is not None
    )
    if isinstance(start, str):
        tables = [(name, replicas) for name, replicas in tables if name > start]
    page = tables[:limit]
    answer: dict[str, Any] = {"GlobalTables": [
        {"GlobalTableName": name,
         "ReplicationGroup": [{"RegionName": replica.region} for replica in sorted(
             replicas.replicas, key=lambda each: each.region)]}
        for name, replicas in page
    ]}
    if len(tables) > limit:
        answer["LastEvaluatedGlobalTableName"] = page[-1][0]
    return answer


# --- settings ---------------------------------------------------------------------------
def _replica_settings(database: Database, name: str, replicas: ReplicaSet) -> list[dict[str, Any]]:
    described = []
    for replica in sorted(replicas.replicas, key=lambda each: each.region):
        member = _member_database(database, replica.region).tables.get(name)
        entry: dict[str, Any] = {"RegionName": replica.region, "ReplicaStatus": replica.status}
        if member is not None:
            summary: dict[str, Any] = {"BillingMode": member.billing_mode}
            if member.billing_mode_last_update_time is not None:
                summary["LastUpdateToPayPerRequestDateTime"] = member.billing_mode_last_update_time
            entry["ReplicaBillingModeSummary"] = summary
            entry["ReplicaProvisionedReadCapacityUnits"] = member.read_capacity_units
            entry["ReplicaProvisionedWriteCapacityUnits"] = member.write_capacity_units
            if member.global_indexes:
                entry["ReplicaGlobalSecondaryIndexSettings"] = [
                    {"IndexName": index.name, "IndexStatus": index.status,
                     "ProvisionedReadCapacityUnits": index.read_capacity_units,
                     "ProvisionedWriteCapacityUnits": index.write_capacity_units}
                    for index in member.global_indexes
                ]
            if member.table_class_reported:
                entry["ReplicaTableClassSummary"] = {"TableClass": member.table_class}
        described.append(entry)
    return described


def describe_global_table_settings(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    name = request.get("GlobalTableName")
    if not enabled(database):
        raise GlobalTableNotFoundException(_missing(name))
    member_database, _, replicas = _require(database, name)
    return {"GlobalTableName": name, "ReplicaSettings": _replica_settings(member_database, str(name), replicas)}


AUTO_SCALING_UPDATES = (
    "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate",
)


def _units(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationException(
            f"One or more parameter values were invalid: {what} must be a number greater than or equal to 1"
        )
    return value


def update_global_table_settings(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    """UpdateGlobalTableSettings: the billing mode and write capacity of
    every replica (and of each GSI), each replica's read capacity and table
    class."""
    from dynastore.engine.table_settings import PAY_PER_REQUEST, check_table_class, unsupported
    from dynastore.replication.replica_updates import replica_set_lock

    name = request.get("GlobalTableName")
    if not enabled(database):
        raise GlobalTableNotFoundException(_missing(name))
    for member_name in AUTO_SCALING_UPDATES:
        if request.get(member_name) is not None:
            raise unsupported(member_name)
    with replica_set_lock(database):
        member_database, model, replicas = _require(database, name)
        billing = request.get("GlobalTableBillingMode") or model.billing_mode
        write = request.get("GlobalTableProvisionedWriteCapacityUnits")
        index_writes = {
            entry.get("IndexName"): entry for entry in request.get("GlobalTableGlobalSecondaryIndexSettingsUpdate") or ()
            if isinstance(entry, dict)
        }
        replica_updates = {
            entry.get("RegionName"): entry for entry in request.get("ReplicaSettingsUpdate") or ()
            if isinstance(entry, dict)
        }
        for entry in [*index_writes.values(), *replica_updates.values()]:
            if any(key.endswith("AutoScalingSettingsUpdate") and entry.get(key) is not None for key in entry):
                raise unsupported("auto scaling settings")
        for region in replica_updates:
            if not isinstance(region, str) or replicas.member(region) is None:
                raise ReplicaNotFoundException(REPLICA_NOT_FOUND)
        index_names = {index.name for index in model.global_indexes}
        for index_name in [*index_writes, *(entry.get("IndexName") for update in replica_updates.values()
                                              for entry in update.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or ()
                                              if isinstance(entry, dict))]:
            if index_name not in index_names:
                raise IndexNotFoundException(INDEX_NOT_FOUND)
        provisioned_given = write is not None or any(
            entry.get("ProvisionedWriteCapacityUnits") is not None for entry in index_writes.values()
        ) or any(update.get("ReplicaProvisionedReadCapacityUnits") is not None
                 or any(isinstance(entry, dict) and entry.get("ProvisionedReadCapacityUnits") is not None
                        for entry in update.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or ())
                 for update in replica_updates.values())
        if billing == PAY_PER_REQUEST and provisioned_given:
            raise ValidationException(
                "One or more parameter values were invalid: Provisioned throughput cannot be specified when "
                "BillingMode is PAY_PER_REQUEST"
            )
        if billing not in (PAY_PER_REQUEST, "PROVISIONED"):
            raise ValidationException("One or more parameter values were invalid")
        if billing == "PROVISIONED" and model.billing_mode == PAY_PER_REQUEST and write is None:
            raise ValidationException(
                "One or more parameter values were invalid: GlobalTableProvisionedWriteCapacityUnits must be "
                "specified when GlobalTableBillingMode is PROVISIONED"
            )
        new_write = _units(write, "GlobalTableProvisionedWriteCapacityUnits") if write is not None else None
        for replica_update in replica_updates.values():
            if replica_update.get("ReplicaTableClass") is not None:
                check_table_class(replica_update["ReplicaTableClass"])
        now = database.now()
        for replica in replicas.replicas:
            region_db = _member_database(member_database, replica.region)
            member = region_db.tables.get(str(name))
            if member is None:
                continue
            changed = _settings_changed(member, billing, new_write, index_writes,
                                        replica_updates.get(replica.region) or {}, now)
            if changed != member:
                region_db.update_table(changed)
    return {"GlobalTableName": name,
            "ReplicaSettings": _replica_settings(member_database, str(name), replicas)}


def _settings_changed(member: TableSchema, billing: str, write: int | None, index_writes: dict[Any, Any],
                      update: dict[str, Any], now: float) -> TableSchema:
    from dynastore.engine.table_settings import PAY_PER_REQUEST

    changed = member
    if billing != member.billing_mode:
        changed = replace(changed, billing_mode=billing,
                          billing_mode_last_update_time=now if billing == PAY_PER_REQUEST
                          else changed.billing_mode_last_update_time)
        if billing == PAY_PER_REQUEST:
            changed = replace(changed, read_capacity_units=0, write_capacity_units=0, indexes=tuple(
                replace(index, read_capacity_units=0, write_capacity_units=0) for index in changed.indexes))
        else:  # every replica's read capacity starts at its write capacity unless the request says otherwise
            assert write is not None
            changed = replace(changed, read_capacity_units=write, indexes=tuple(
                replace(index, read_capacity_units=write, write_capacity_units=write) if index.is_global else index
                for index in changed.indexes))
    if write is not None:
        changed = replace(changed, write_capacity_units=write, warm_write_units=max(changed.warm_write_units, write))
    read = update.get("ReplicaProvisionedReadCapacityUnits")
    if read is not None:
        read = _units(read, "ReplicaProvisionedReadCapacityUnits")
        changed = replace(changed, read_capacity_units=read, warm_read_units=max(changed.warm_read_units, read))
    index_reads = {entry.get("IndexName"): entry for entry in update.get("ReplicaGlobalSecondaryIndexSettingsUpdate") or ()
                   if isinstance(entry, dict)}
    indexes = []
    for index in changed.indexes:
        if index.is_global:
            index_write = (index_writes.get(index.name) or {}).get("ProvisionedWriteCapacityUnits")
            if index_write is not None:
                index = replace(index, write_capacity_units=_units(index_write, "ProvisionedWriteCapacityUnits"))
            index_read = (index_reads.get(index.name) or {}).get("ProvisionedReadCapacityUnits")
            if index_read is not None:
                index = replace(index, read_capacity_units=_units(index_read, "ProvisionedReadCapacityUnits"))
        indexes.append(index)
    changed = replace(changed, indexes=tuple(indexes))
    if update.get("ReplicaTableClass") is not None:
        changed = replace(changed, table_class=str(update["ReplicaTableClass"]), table_class_reported=True,
                          table_class_update_time=now)
    return changed


def describe_table_replica_auto_scaling(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    from dynastore.replication.auto_scaling import describe_settings
    from dynastore.replication.replica_updates import region_database

    name = request.get("TableName")
    schema = database.tables.get(name) if isinstance(name, str) else None
    replicas = replica_set(schema) if schema is not None else None
    if schema is None or replicas is None:
        raise ResourceNotFoundException(_missing(name))
    described = []
    for replica in sorted(replicas.replicas, key=lambda each: each.region):
        member_database = database if replica.region == database.region else region_database(database, replica.region)
        if not member_database.storage.exclusive and member_database is not database:
            member_database.refresh_catalogue(check=True)  # another server may have changed it
        member = member_database.tables.get(schema.name, schema)
        entry: dict[str, Any] = {"RegionName": replica.region}
        if member.global_indexes:
            entry["GlobalSecondaryIndexes"] = [
                {"IndexName": index.name, "IndexStatus": index.status} for index in member.global_indexes
            ]
        entry["ReplicaStatus"] = replica.status
        describe_settings(member_database.tables.get(schema.name), entry)
        described.append(entry)
    status = schema.status if replicas.settled else "UPDATING"
    return {"TableAutoScalingDescription": {"TableName": schema.name, "TableStatus": status, "Replicas": described}}
