"""UpdateTable's GlobalSecondaryIndexUpdates: the request-only checks, then
the plan (indexes created, deleted, re-provisioned) against the table, and
the AttributeDefinitions still in use afterwards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dynastore import limits
from dynastore.engine.index_definitions import (
    check_global_index_key_schema,
    check_projected_attribute_count,
    check_projection,
    index_definition,
    parse_attribute_definitions,
)
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.engine.table_settings import PAY_PER_REQUEST, PROVISIONED, units
from dynastore.errors import (
    LimitExceededException,
    ResourceNotFoundException,
    ValidationException,
    invalid_parameter,
)

ONLINE_INDEX_ACTIONS_PER_UPDATE = 1
"""DynamoDB creates or deletes one index per UpdateTable (LimitExceededException)."""


def check_index_warm_throughput(request: Mapping[str, Any]) -> None:
    """An index Update's WarmThroughput names at least one of its units: the
    service checks it first of all, before the single-concern rules and the
    table lookup (live, ack-api-quirks' DDB-TABLE-457)."""
    for update in request.get("GlobalSecondaryIndexUpdates") or []:
        action = update.get("Update") if isinstance(update, Mapping) else None
        if not isinstance(action, Mapping):
            continue
        warm = action.get("WarmThroughput")
        if isinstance(warm, Mapping) and warm.get("ReadUnitsPerSecond") is None and (
            warm.get("WriteUnitsPerSecond") is None
        ):
            raise invalid_parameter(
                "WarmThroughput must have at least one of ReadUnitsPerSecond or WriteUnitsPerSecond "
                f"specified for index: {action.get('IndexName')}"
            )


def check_index_updates_shape(request: Mapping[str, Any]) -> None:
    """The request-only rules of GlobalSecondaryIndexUpdates (before the table is read)."""
    updates = request.get("GlobalSecondaryIndexUpdates")
    if updates is None:
        return
    if len(updates) == 0:
        raise invalid_parameter("List of GlobalSecondaryIndexUpdates is empty")
    names: set[str] = set()
    online = 0
    for update in updates:
        actions = [update.get(kind) for kind in ("Update", "Create", "Delete")]
        present = [action for action in actions if action is not None]
        if not present:
            raise invalid_parameter(
                "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                "GlobalSecondaryIndexUpdate.Delete must not be null"
            )
        if len(present) > 1:
            raise invalid_parameter(
                "Only one global secondary index action is allowed per "
                "GlobalSecondaryIndexUpdate object"
            )
        name = present[0].get("IndexName")
        if name in names:
            raise invalid_parameter(
                "Only one global secondary index update per index is allowed simultaneously. "
                f"Index: {name}"
            )
        names.add(name)
        online += update.get("Create") is not None or update.get("Delete") is not None
    if online > ONLINE_INDEX_ACTIONS_PER_UPDATE:
        raise LimitExceededException(
            "Subscriber limit exceeded: Only 1 online index can be created or deleted "
            "simultaneously per table"
        )


def _merged_definitions(schema: TableSchema, request: Mapping[str, Any]) -> tuple[KeyAttribute, ...]:
    """The table's AttributeDefinitions with the request's added (a type may not change)."""
    merged = {definition.name: definition for definition in schema.attribute_definitions}
    for definition in parse_attribute_definitions(request):
        existing = merged.get(definition.name)
        if existing is not None and existing.type != definition.type:
            raise invalid_parameter(
                "Attributes cannot be redefined. Please check that your attribute has the same "
                "type as previously defined."
            )
        merged[definition.name] = definition
    return tuple(merged.values())


def _created_index(
    schema: TableSchema, create: Mapping[str, Any], billing_mode: str, definitions: Sequence[KeyAttribute]
) -> IndexDefinition:
    name = create.get("IndexName")
    if schema.index(str(name)) is not None:
        raise ValidationException("Attempting to create an index which already exists")
    if not definitions:
        raise invalid_parameter(f"AttributeDefinitions is not specified for index: {name}")
    check_global_index_key_schema(create.get("KeySchema") or [], definitions, name)
    check_projection(create.get("Projection") or {})
    has_throughput = create.get("ProvisionedThroughput") is not None
    if billing_mode == PROVISIONED and not has_throughput:
        raise invalid_parameter(f"ProvisionedThroughput must be specified for index: {name}")
    if billing_mode == PAY_PER_REQUEST and has_throughput:
        raise invalid_parameter(
            f"Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: {name} "
            "when BillingMode is PAY_PER_REQUEST"
        )
    if len(schema.global_indexes) >= limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE:
        raise LimitExceededException(
            "GlobalSecondaryIndex count exceeds the per-table limit of "
            f"{limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE}"
        )
    return index_definition(create, definitions, "GLOBAL", status="CREATING")


def _existing_global_index(schema: TableSchema, name: Any, verb: str) -> IndexDefinition:
    index = schema.index(str(name))
    if index is None:
        raise ResourceNotFoundException(f"Requested resource not found: Index {name} for table {schema.name}")
    if not index.is_global:
        raise ValidationException(f"Cannot {verb} an index that is not a GlobalSecondaryIndex: {name}")
    return index


def _updated_index_throughput(
    schema: TableSchema, index: IndexDefinition, update: Mapping[str, Any], billing_mode: str, now: float
) -> IndexDefinition:
    throughput = update.get("ProvisionedThroughput")
    on_demand = update.get("OnDemandThroughput") or None  # {} is no update (live)
    warm = update.get("WarmThroughput")
    if warm is not None:
        _check_index_warm_rises(schema, index, warm)
    if throughput is None and on_demand is None and warm is None and billing_mode == PAY_PER_REQUEST:
        raise invalid_parameter(
            f"The only Updates for index: {index.name} when TableThroughputMode is "
            "PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
        )
    if throughput is None and on_demand is not None:
        read_max = on_demand.get("MaxReadRequestUnits", index.on_demand_max_read_units)
        write_max = on_demand.get("MaxWriteRequestUnits", index.on_demand_max_write_units)
        return replace(
            index,
            on_demand_max_read_units=None if read_max == -1 else read_max,
            on_demand_max_write_units=None if write_max == -1 else write_max,
        )
    if throughput is None:
        return index
    if billing_mode == PAY_PER_REQUEST:
        raise invalid_parameter(
            f"The only Updates for index: {index.name} when TableThroughputMode is "
            "PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
        )
    read, write = units(throughput, "ReadCapacityUnits"), units(throughput, "WriteCapacityUnits")
    if read is None or write is None:
        raise invalid_parameter(
            f"Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: {index.name}"
        )
    if (read, write) == (index.read_capacity_units, index.write_capacity_units):
        raise ValidationException(
            f"The provisioned throughput for the index {index.name} will not change. The requested "
            "value equals the current value. "
            f"Current ReadCapacityUnits provisioned for the index: {index.read_capacity_units}. "
            f"Requested ReadCapacityUnits: {read}. "
            f"Current WriteCapacityUnits provisioned for the index: {index.write_capacity_units}. "
            f"Requested WriteCapacityUnits: {write}. "
            "Refer to the Amazon DynamoDB Developer Guide for current limits and how to "
            "request higher limits."
        )
    changes: dict[str, Any] = {"read_capacity_units": read, "write_capacity_units": write}
    if read > index.read_capacity_units or write > index.write_capacity_units:
        changes["last_increase_time"] = now
    if read < index.read_capacity_units or write < index.write_capacity_units:
        changes["last_decrease_time"] = now
        changes["decreases_today"] = index.decreases_today + 1
    return replace(index, **changes)


def _check_index_warm_rises(schema: TableSchema, index: IndexDefinition, warm: Mapping[str, Any]) -> None:
    """An index's WarmThroughput only ever rises (live: "... for index gsi1 is
    lower than current WarmThroughput ..."); its current one is what
    DescribeTable shows (engine/table_description.py)."""
    current = {
        "ReadUnitsPerSecond": max(index.read_capacity_units, schema.warm_read_units),
        "WriteUnitsPerSecond": max(index.write_capacity_units, schema.warm_write_units),
    }
    for name, value in current.items():
        requested = warm.get(name)
        if requested is not None and int(requested) < value:
            raise invalid_parameter(
                f"Requested {name} for WarmThroughput for index {index.name} is lower than current "
                "WarmThroughput, decreasing WarmThroughput is not supported"
            )


@dataclass(frozen=True)
class IndexUpdates:
    """What GlobalSecondaryIndexUpdates does: the indexes the table keeps (new
    ones CREATING, without storage yet), and the names created/deleted/updated."""

    indexes: tuple[IndexDefinition, ...]
    created: tuple[str, ...] = ()
    deleted: tuple[IndexDefinition, ...] = ()
    updated: tuple[str, ...] = ()


def plan_index_updates(
    schema: TableSchema, request: Mapping[str, Any], billing_mode: str, now: float
) -> IndexUpdates:
    indexes = list(schema.indexes)
    created: list[str] = []
    deleted: list[IndexDefinition] = []
    updated: list[str] = []
    definitions = _merged_definitions(schema, request) if request.get("AttributeDefinitions") else ()
    for update in request.get("GlobalSecondaryIndexUpdates") or []:
        if update.get("Create") is not None:
            index = _created_index(schema, update["Create"], billing_mode, definitions)
            indexes.append(index)
            created.append(index.name)
        elif update.get("Delete") is not None:
            index = _existing_global_index(schema, update["Delete"].get("IndexName"), "delete")
            indexes = [other for other in indexes if other.name != index.name]
            deleted.append(index)
        else:
            action = update["Update"]
            index = _existing_global_index(schema, action.get("IndexName"), "update")
            changed = _updated_index_throughput(schema, index, action, billing_mode, now)
            indexes = [changed if other.name == index.name else other for other in indexes]
            updated.append(index.name)
    check_projected_attribute_count(indexes)
    return IndexUpdates(tuple(indexes), tuple(created), tuple(deleted), tuple(updated))


def definitions_in_use(
    schema: TableSchema, request: Mapping[str, Any], indexes: Sequence[IndexDefinition]
) -> tuple[KeyAttribute, ...]:
    """AttributeDefinitions after an index change: those the table and its
    indexes still use (DynamoDB drops the definitions of a deleted index)."""
    merged = _merged_definitions(schema, request) if request.get("AttributeDefinitions") else schema.attribute_definitions
    used = set(schema.key_names)
    for index in indexes:
        used.update(index.key_names)
    return tuple(definition for definition in merged if definition.name in used)
