"""The legacy global-tables API (version 2017.11.29) as DynamoDB answers it
today, and DescribeTableReplicaAutoScaling.

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

DescribeTableReplicaAutoScaling answers for a 2019.11.21 global table: every
replica, this region's included, in name order (DDB-TABLE-265), with its
status and its GSIs; for a regional table, or none, ResourceNotFoundException
"Global table with name: 'T' does not exist." (DDB-TABLE-187). dynastore has
no auto scaling, so no replica carries auto-scaling settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.errors import (
    GlobalTableNotFoundException,
    ResourceNotFoundException,
    ValidationException,
)
from dynastore.replication.replicas import replica_set

if TYPE_CHECKING:
    from dynastore.database import Database

LEGACY_REFUSED = (
    "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not "
    "supported. We recommend using DynamoDB global tables version 2019.11.21, instead of version "
    "2017.11.29 (Legacy)."
)


def _missing(name: Any) -> str:
    return f"Global table with name: '{name}' does not exist."


def create_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    raise ValidationException(LEGACY_REFUSED)


def update_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    updates = request.get("ReplicaUpdates") or []
    if any(isinstance(update, dict) and update.get("Create") is not None for update in updates):
        raise ValidationException(LEGACY_REFUSED)
    if not any(isinstance(update, dict) and update.get("Delete") is not None for update in updates):
        raise ValidationException("One or more parameter values were invalid")
    raise GlobalTableNotFoundException(_missing(request.get("GlobalTableName")))


def describe_global_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    raise GlobalTableNotFoundException(f"Global table not found: {_missing(request.get('GlobalTableName'))}")


def global_table_settings(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    """DescribeGlobalTableSettings and UpdateGlobalTableSettings."""
    raise GlobalTableNotFoundException(_missing(request.get("GlobalTableName")))


def list_global_tables(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    return {"GlobalTables": []}


def describe_table_replica_auto_scaling(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    from dynastore.replication.replica_updates import region_database

    name = request.get("TableName")
    schema = database.tables.get(name) if isinstance(name, str) else None
    replicas = replica_set(schema) if schema is not None else None
    if schema is None or replicas is None:
        raise ResourceNotFoundException(_missing(name))
    described = []
    for replica in sorted(replicas.replicas, key=lambda each: each.region):
        member_database = database if replica.region == database.region else region_database(database, replica.region)
        member = member_database.tables.get(schema.name, schema)
        entry: dict[str, Any] = {"RegionName": replica.region}
        if member.global_indexes:
            entry["GlobalSecondaryIndexes"] = [
                {"IndexName": index.name, "IndexStatus": index.status} for index in member.global_indexes
            ]
        entry["ReplicaStatus"] = replica.status
        described.append(entry)
    status = schema.status if replicas.settled else "UPDATING"
    return {"TableAutoScalingDescription": {"TableName": schema.name, "TableStatus": status, "Replicas": described}}
