"""UpdateTable: billing mode, provisioned throughput, on-demand and warm
throughput, table class and deletion protection, with DynamoDB's rules.

Checks that need only the request run before the table is looked up (DynamoDB
answers a malformed request on a missing table with ValidationException).
Changes apply at once; the answer still says UPDATING where DynamoDB's does
and, for a capacity change, echoes the capacity from before the change.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.engine import (
    global_index_updates,
    table_description,
    table_settings,
    table_updates,
)
from dynastore.engine.schema import TableSchema
from dynastore.errors import DynamoDBError
from dynastore.replication import replica_updates
from dynastore.replication.replicas import describe_replication
from dynastore.storage.base import CatalogueChanged
from dynastore.streams_api import control as streams_control
from dynastore.workers.backfill import start_backfill

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.replication")

#: Members whose change a global table carries to every replica (replication/replica_updates.py).
GROUP_MEMBERS = frozenset({"ProvisionedThroughput", "BillingMode", "OnDemandThroughput", "WarmThroughput"})
#: Members whose change DynamoDB reports with TableStatus UPDATING.
UPDATING_MEMBERS = frozenset({"ProvisionedThroughput", "BillingMode", "TableClass"})


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    global_index_updates.check_index_warm_throughput(request)
    table_settings.check_throughput_bounds(request)
    changes = table_updates.requested_changes(request)
    if not changes and (request.get("WarmThroughput") is not None or request.get("OnDemandThroughput") is not None):
        # Only an empty WarmThroughput / OnDemandThroughput: the service looks
        # the table up first (a missing one is ResourceNotFoundException, live).
        database.table(request.get("TableName", ""))
    table_updates.check_update_has_changes(request, changes)
    replica_updates.check_only_replica_changes(changes)
    table_updates.check_update_combination(request, changes)
    table_updates.check_update_unsupported(request, changes)
    global_index_updates.check_index_updates_shape(request)
    replica_actions = None
    if "ReplicaUpdates" in changes:  # global tables (dynastore/replication/)
        replica_actions = replica_updates.check_replica_updates(database, request)
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    replica_updates.check_stream_change(schema, request)
    creates_strong = False
    if replica_actions:
        creates_strong = replica_updates.check_replica_set_change(database, schema, request, replica_actions)
    now = database.now()
    with database.storage.transaction():
        # The table's lock first (the order of every catalogue change), and
        # what the change makes beside the definition (a stream created or
        # closed, index storage created or dropped) in the same transaction:
        # when the definition's compare-and-set is refused (another server
        # changed the table since this copy was read), none of it stays, and
        # the handler runs again on the table as it is now (ops/__init__.py).
        database.storage.lock_table(schema.table_id)
        updated = apply_changes(database, schema, request, changes, now)
        index_updates = None
        if "GlobalSecondaryIndexUpdates" in changes:
            index_updates = global_index_updates.plan_index_updates(updated, request, updated.billing_mode, now)
            updated = apply_index_updates(database, updated, request, index_updates)
        elif updated != schema and not replica_actions:
            database.update_table(updated)
    deleted_replicas = []
    if replica_actions:
        deleted_replicas = [action.region for action in replica_actions if action.kind == "Delete"]
        updated = replica_updates.apply_replica_updates(
            database, updated, replica_actions, now, request, creates_strong)
    if not replica_actions and changes & GROUP_MEMBERS and "replication" in updated.extensions:
        replica_updates.carry_settings(database, updated)  # capacity changes apply group-wide
    if index_updates is not None and "replication" in updated.extensions:
        carry_index_updates(database, updated, request, now)  # and a GSI is every replica's
    description = answer(database, schema, updated, changes, now)
    if replica_actions:
        describe_replica_changes(description, deleted_replicas)
    if index_updates is not None:
        describe_index_updates(description, updated, index_updates)
        for name in index_updates.created:
            index = updated.index(name)
            assert index is not None
            start_backfill(database, updated.name, index)
    return {"TableDescription": description}


def carry_index_updates(database: Database, schema: TableSchema, request: dict[str, Any], now: float) -> None:
    """A global table's GSI created, updated or deleted in one region is in
    every replica, backfilled there (as DynamoDB's version 2019.11.21 does)."""
    from dynastore.replication.replica_updates import region_database
    from dynastore.replication.replicas import replica_set

    replicas = replica_set(schema)
    for replica in replicas.others(database.region) if replicas is not None else ():
        other = region_database(database, replica.region)
        for attempt in range(1, limits.CATALOGUE_CHANGE_ATTEMPTS + 1):
            other.refresh_catalogue(check=True)  # another server may have changed it
            member = other.tables.get(schema.name)
            if member is None:
                break
            try:
                plan = global_index_updates.plan_index_updates(member, request, member.billing_mode, now)
                changed = apply_index_updates(other, member, request, plan)
            except CatalogueChanged:  # another server changed the member meanwhile: on it as it is now
                if attempt == limits.CATALOGUE_CHANGE_ATTEMPTS:
                    raise
                continue
            except DynamoDBError as error:  # the replica differs (an index it already has): said, not fatal
                logger.warning("the index change of %s did not apply to its replica in %s: %s",
                               schema.name, replica.region, error.message)
                break
            for name in plan.created:
                index = changed.index(name)
                if index is not None:
                    start_backfill(other, changed.name, index)
            break


def describe_replica_changes(description: dict[str, Any], deleted: list[str]) -> None:
    """DynamoDB answers a replica change while it is under way: the table
    UPDATING, a deleted replica still listed as DELETING."""
    description["TableStatus"] = "UPDATING"
    if deleted:
        listed = description.setdefault("Replicas", [])
        listed.extend(replica_updates.deleting_description(region) for region in deleted)
        description.setdefault("GlobalTableVersion", "2019.11.21")


def apply_index_updates(
    database: Database, schema: TableSchema, request: dict[str, Any], plan: global_index_updates.IndexUpdates
) -> TableSchema:
    """Create the new indexes' storage, drop the deleted ones', persist the table."""
    with database.storage.transaction():
        indexes = tuple(
            database.create_index_storage(schema, index) if index.name in plan.created else index
            for index in plan.indexes
        )
        updated = replace(
            schema,
            indexes=indexes,
            attribute_definitions=global_index_updates.definitions_in_use(schema, request, indexes),
        )
        for index in plan.deleted:
            database.storage.drop_table(index.storage_id)
        database.update_table(updated)
    return updated


def describe_index_updates(
    description: dict[str, Any], schema: TableSchema, plan: global_index_updates.IndexUpdates
) -> None:
    """DynamoDB answers while the change is under way: the table UPDATING, a new
    index CREATING (not yet backfilling), a deleted one DELETING, an updated one
    UPDATING."""
    description["TableStatus"] = "UPDATING"
    listed = description.setdefault("GlobalSecondaryIndexes", [])
    for entry in listed:
        if entry["IndexName"] in plan.created:
            entry["IndexStatus"] = "CREATING"
            entry["Backfilling"] = False
        elif entry["IndexName"] in plan.updated:
            entry["IndexStatus"] = "UPDATING"
    for index in plan.deleted:
        entry = table_description.index_description(schema, index, (0, 0))
        entry["IndexStatus"] = "DELETING"
        listed.append(entry)
    if not listed:
        del description["GlobalSecondaryIndexes"]


def apply_changes(
    database: Database,
    schema: TableSchema,
    request: dict[str, Any],
    changes: set[str],
    now: float,
) -> TableSchema:
    table_updates.check_stream_disable(schema, request)
    billing_mode = table_updates.check_billing_update(schema, request)
    updated = apply_capacity(database, schema, request, billing_mode, now)
    if "OnDemandThroughput" in changes:
        members = table_settings.on_demand_limits(request, billing_mode, database.region, creating=False)
        updated = table_updates.apply_on_demand_limits(updated, members)
    if "WarmThroughput" in changes:
        updated = table_updates.apply_warm_throughput(updated, request["WarmThroughput"])
    if "TableClass" in changes:
        updated = table_updates.apply_table_class(updated, request["TableClass"], now)
    if "DeletionProtectionEnabled" in changes:
        updated = replace(updated, deletion_protection=bool(request["DeletionProtectionEnabled"]))
    if "UpdateStreamEnabled" in changes:
        updated = streams_control.apply_update(database, updated, request, now)
    return updated


def apply_capacity(
    database: Database,
    schema: TableSchema,
    request: dict[str, Any],
    billing_mode: str,
    now: float,
) -> TableSchema:
    """Billing-mode switches and provisioned-throughput changes."""
    throughput = table_settings.present_throughput(request)
    if billing_mode == table_settings.PAY_PER_REQUEST:
        if schema.billing_mode == table_settings.PROVISIONED:
            return table_updates.switch_to_on_demand(schema, now)
        return schema  # re-sending PAY_PER_REQUEST is accepted and changes nothing
    if throughput is None:
        return schema
    read, write = throughput
    if schema.billing_mode == table_settings.PROVISIONED:
        table_updates.check_throughput_changes(schema, read, write)
    reserved = table_settings.reserved_capacity(database.tables.values(), excluding=schema.name)
    table_settings.check_capacity_limits(read, write, database.region, reserved)
    if schema.billing_mode == table_settings.PROVISIONED:
        return table_updates.apply_provisioned_throughput(schema, read, write, now)
    return table_updates.switch_to_provisioned(schema, read, write)


def answer(
    database: Database,
    before: TableSchema,
    after: TableSchema,
    changes: set[str],
    now: float,
) -> dict[str, Any]:
    """The TableDescription UpdateTable returns: DynamoDB answers while the change
    is still being applied, so some members still show the old values."""
    item_count, size_bytes = database.table_statistics(after)
    description = table_description.table_description(
        after,
        item_count=item_count,
        size_bytes=size_bytes,
        now=now,
        index_statistics=database.index_statistics(after),
    )
    describe_replication(database, after, description)
    if changes & UPDATING_MEMBERS:
        description["TableStatus"] = "UPDATING"
    switched = before.billing_mode != after.billing_mode
    if switched and "BillingModeSummary" in description:
        description["BillingModeSummary"] = {"BillingMode": after.billing_mode}
    if not switched and "ProvisionedThroughput" in changes:
        throughput = description["ProvisionedThroughput"]
        throughput["ReadCapacityUnits"] = before.read_capacity_units
        throughput["WriteCapacityUnits"] = before.write_capacity_units
        throughput["NumberOfDecreasesToday"] = table_updates.decreases_today(before, now)
    if "WarmThroughput" in changes:
        description["WarmThroughput"] = table_description.warm_throughput_description(before, "UPDATING")
    return description
