"""Restores: the new table's definition, built where nobody sees it, then
given its name at once.

What a restore carries over is DynamoDB's rule (RestoreTableFromBackup and
RestoreTableToPointInTime, API reference): the key schema, attribute
definitions, billing mode, provisioned throughput, on-demand limits, the
local and global secondary indexes and the encryption settings, each
overridable (BillingModeOverride, ProvisionedThroughputOverride,
OnDemandThroughputOverride, GlobalSecondaryIndexOverride,
LocalSecondaryIndexOverride, SSESpecificationOverride); not carried over,
to set up again by hand: tags, stream settings, TTL settings, PITR
settings, auto scaling, IAM policies, alarms. dynastore also keeps the table
class and does not carry deletion protection. From a backup these are the
source's settings when the backup was taken; to a point in time, the
source's current settings.

The new definition is validated as CreateTable would validate it (so an
override that CreateTable would refuse is refused with CreateTable's
message). The table and its indexes are created in storage under names of
dynastore's own (``restoring/<id>``: invisible to every API), filled a page
at a time through the one write path (dynastore/write_path.py, so index
entries follow), and only when complete renamed to the table's and its
indexes' names in one transaction: a kill -9 at any moment leaves either no
table or the whole table. Until then the table is CREATING for
DescribeTable and ListTables, with its RestoreSummary, and the data plane
cannot find it (dynastore/backups/visible.py).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.backups.own_tables import own_table_name
from dynastore.engine import table_creation, table_description, table_settings
from dynastore.engine.schema import TableSchema, index_storage_name
from dynastore.engine.table_description import key_schema_description
from dynastore.engine.table_settings import PAY_PER_REQUEST, PROVISIONED
from dynastore.errors import ValidationException, invalid_parameter

if TYPE_CHECKING:
    from dynastore.database import Database


def create_request_of(schema: TableSchema, request: dict[str, Any], target: str) -> dict[str, Any]:
    """The CreateTable request that makes ``target`` as ``schema`` with the
    restore request's overrides."""
    billing = request.get("BillingModeOverride") or schema.billing_mode
    provisioned = billing == PROVISIONED
    created: dict[str, Any] = {
        "TableName": target,
        "KeySchema": key_schema_description(schema),
        "BillingMode": billing,
    }
    if provisioned:
        throughput = request.get("ProvisionedThroughputOverride")
        if throughput is None and schema.billing_mode == PROVISIONED:
            throughput = {"ReadCapacityUnits": schema.read_capacity_units,
                          "WriteCapacityUnits": schema.write_capacity_units}
        if throughput is not None:
            created["ProvisionedThroughput"] = throughput
    elif request.get("ProvisionedThroughputOverride") is not None:
        created["ProvisionedThroughput"] = request["ProvisionedThroughputOverride"]
    on_demand = request.get("OnDemandThroughputOverride")
    if on_demand is None and not provisioned and schema.billing_mode == PAY_PER_REQUEST:
        on_demand = {key: value for key, value in (
            ("MaxReadRequestUnits", schema.on_demand_max_read_units),
            ("MaxWriteRequestUnits", schema.on_demand_max_write_units),
        ) if value is not None} or None
    if on_demand is not None:
        created["OnDemandThroughput"] = on_demand
    local = _indexes(schema, "LOCAL", request.get("LocalSecondaryIndexOverride"), provisioned)
    global_ = _indexes(schema, "GLOBAL", request.get("GlobalSecondaryIndexOverride"), provisioned)
    if local:
        created["LocalSecondaryIndexes"] = local
    if global_:
        created["GlobalSecondaryIndexes"] = global_
    used = {schema.partition_key.name} | ({schema.sort_key.name} if schema.sort_key else set())
    for index in local + global_:
        used |= {element["AttributeName"] for element in index["KeySchema"]}
    created["AttributeDefinitions"] = [
        {"AttributeName": definition.name, "AttributeType": definition.type}
        for definition in schema.attribute_definitions if definition.name in used
    ]
    if schema.table_class_reported:
        created["TableClass"] = schema.table_class
    if request.get("SSESpecificationOverride") is not None:
        created["SSESpecification"] = request["SSESpecificationOverride"]
    return created


def _indexes(schema: TableSchema, kind: str, override: list[dict[str, Any]] | None,
             provisioned: bool) -> list[dict[str, Any]]:
    existing: dict[str, dict[str, Any]] = {}
    for index in schema.indexes:
        if index.kind != kind:
            continue
        described = table_description.index_description(schema, index, (0, 0))
        entry: dict[str, Any] = {"IndexName": index.name, "KeySchema": described["KeySchema"],
                                 "Projection": described["Projection"]}
        if kind == "GLOBAL":
            if provisioned:
                entry["ProvisionedThroughput"] = {
                    "ReadCapacityUnits": index.read_capacity_units or schema.read_capacity_units or 1,
                    "WriteCapacityUnits": index.write_capacity_units or schema.write_capacity_units or 1,
                }
            if not provisioned and "OnDemandThroughput" in described:
                entry["OnDemandThroughput"] = described["OnDemandThroughput"]
        existing[index.name] = entry
    if override is None:
        return list(existing.values())
    member = "LocalSecondaryIndexOverride" if kind == "LOCAL" else "GlobalSecondaryIndexOverride"
    chosen = []
    for asked in override:
        name = asked.get("IndexName")
        known = existing.get(name) if isinstance(name, str) else None
        if known is None or asked.get("KeySchema") != known["KeySchema"]:
            raise invalid_parameter(
                f"{member} must name indexes of the source table with their key schema: {name}"
            )
        chosen.append({**known, **asked})
    return chosen


def build_schema(database: Database, source: TableSchema, request: dict[str, Any], target: str) -> TableSchema:
    """The restored table's definition, validated as CreateTable does."""
    created = create_request_of(source, request, target)
    try:
        return table_creation.build_table_schema(
            created,
            table_uuid=str(uuid.uuid4()),
            arn=database.table_arn(target),
            region=database.region,
            now=database.now(),
            reserved=table_settings.reserved_capacity(database.tables.values()),
        )
    except ValidationException:
        raise
    except (KeyError, TypeError) as error:  # an override CreateTable's checks did not expect
        raise invalid_parameter(f"Invalid restore override: {error}") from None


def hidden_kind(restore_id: str) -> str:
    return f"restoring/{restore_id}"


def create_hidden(database: Database, schema: TableSchema, restore_id: str) -> TableSchema:
    """Storage for the restored table and its indexes under names of dynastore's own."""
    storage = database.storage
    base = hidden_kind(restore_id)
    with storage.transaction():
        table_id = storage.create_table(database.storage_name(own_table_name(base)), b"{}")
        indexes = tuple(
            replace(index, storage_id=storage.create_table(
                database.storage_name(own_table_name(f"{base}/i/{index.name}")), b"{}"))
            for index in schema.indexes
        )
        hidden = replace(schema, table_id=table_id, indexes=indexes, status="CREATING")
        generation = storage.update_table_metadata(table_id, hidden.to_metadata())
    return replace(hidden, generation=generation)


def drop_hidden(database: Database, schema: TableSchema) -> None:
    storage = database.storage
    with storage.transaction():
        for index in schema.indexes:
            _drop_quietly(database, index.storage_id)
        _drop_quietly(database, schema.table_id)


def _drop_quietly(database: Database, storage_id: int) -> None:
    try:
        database.storage.drop_table(storage_id)
    except KeyError:
        pass


def publish(database: Database, hidden: TableSchema, extra_changes: list[Any]) -> TableSchema:
    """Give the built table its name (and its indexes theirs), ACTIVE, in
    one transaction with ``extra_changes`` (the restore's record going)."""
    from dynastore.backups.registry import apply

    storage = database.storage
    final = replace(hidden, status="ACTIVE")
    with storage.transaction():
        for index in final.indexes:
            storage.rename_table(index.storage_id, database.storage_name(index_storage_name(final.name, index.name)))
        storage.update_table_metadata(final.table_id, final.to_metadata())
        generation = storage.rename_table(final.table_id, database.storage_name(final.name))
        for change in extra_changes:
            apply(database, change)
    final = replace(final, generation=generation)
    database.adopt_table(final)
    return final
