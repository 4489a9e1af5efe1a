"""The TableDescription shape: what DescribeTable, CreateTable and
DeleteTable answer (indexes, throughput, summaries), in DynamoDB's member
order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynastore import limits
from dynastore.engine.schema import IndexDefinition, TableSchema
from dynastore.engine.streams import stream_description
from dynastore.engine.table_settings import PROVISIONED, non_empty
from dynastore.engine.table_updates import decreases_today


def throughput_description(schema: TableSchema, now: float) -> dict[str, Any]:
    description: dict[str, Any] = {}
    if schema.last_increase_time is not None:
        description["LastIncreaseDateTime"] = schema.last_increase_time
    if schema.last_decrease_time is not None:
        description["LastDecreaseDateTime"] = schema.last_decrease_time
    description["NumberOfDecreasesToday"] = decreases_today(schema, now)
    provisioned = schema.billing_mode == PROVISIONED
    description["ReadCapacityUnits"] = schema.read_capacity_units if provisioned else 0
    description["WriteCapacityUnits"] = schema.write_capacity_units if provisioned else 0
    return description


def key_schema_description(schema: TableSchema) -> list[dict[str, str]]:
    elements = [{"AttributeName": schema.partition_key.name, "KeyType": "HASH"}]
    if schema.sort_key is not None:
        elements.append({"AttributeName": schema.sort_key.name, "KeyType": "RANGE"})
    return elements


def _optional_summaries(schema: TableSchema, description: dict[str, Any]) -> None:
    if schema.billing_mode_last_update_time is not None:
        description["BillingModeSummary"] = {
            "BillingMode": schema.billing_mode,
            "LastUpdateToPayPerRequestDateTime": schema.billing_mode_last_update_time,
        }
    if schema.table_class_reported:
        summary: dict[str, Any] = {"TableClass": schema.table_class}
        if schema.table_class_update_time is not None:
            summary["LastUpdateDateTime"] = schema.table_class_update_time
        description["TableClassSummary"] = summary
    on_demand: dict[str, int] = {}
    if schema.on_demand_max_read_units is not None:
        on_demand["MaxReadRequestUnits"] = schema.on_demand_max_read_units
    if schema.on_demand_max_write_units is not None:
        on_demand["MaxWriteRequestUnits"] = schema.on_demand_max_write_units
    if on_demand:
        description["OnDemandThroughput"] = on_demand


def warm_throughput_description(schema: TableSchema, status: str = "ACTIVE") -> dict[str, Any]:
    return {
        "ReadUnitsPerSecond": schema.warm_read_units,
        "WriteUnitsPerSecond": schema.warm_write_units,
        "Status": status,
    }


def index_arn(schema: TableSchema, index: IndexDefinition) -> str:
    return f"{schema.arn}/index/{index.name}"


def index_description(
    schema: TableSchema, index: IndexDefinition, statistics: tuple[int, int]
) -> dict[str, Any]:
    """One entry of LocalSecondaryIndexes/GlobalSecondaryIndexes, as DynamoDB shows it."""
    key_schema = [{"AttributeName": key.name, "KeyType": "HASH"} for key in index.partition_keys]
    key_schema += [{"AttributeName": key.name, "KeyType": "RANGE"} for key in index.sort_keys]
    projection: dict[str, Any] = {"ProjectionType": index.projection_type}
    if index.projection_type == "INCLUDE":
        projection["NonKeyAttributes"] = list(index.non_key_attributes)
    description: dict[str, Any] = {
        "IndexName": index.name,
        "KeySchema": key_schema,
        "Projection": projection,
    }
    if index.is_global:
        description["IndexStatus"] = index.status
        if index.status == "CREATING":
            description["Backfilling"] = index.backfilling
        provisioned = schema.billing_mode == PROVISIONED
        description["ProvisionedThroughput"] = {
            "NumberOfDecreasesToday": index.decreases_today,
            "ReadCapacityUnits": index.read_capacity_units if provisioned else 0,
            "WriteCapacityUnits": index.write_capacity_units if provisioned else 0,
        }
    # DynamoDB counts each index entry's key and projected attributes plus a
    # fixed per-entry overhead.
    description["IndexSizeBytes"] = statistics[1] + limits.INDEX_ENTRY_OVERHEAD_BYTES * statistics[0]
    description["ItemCount"] = statistics[0]
    description["IndexArn"] = index_arn(schema, index)
    if index.is_global:
        on_demand = {}
        if index.on_demand_max_read_units is not None:
            on_demand["MaxReadRequestUnits"] = index.on_demand_max_read_units
        if index.on_demand_max_write_units is not None:
            on_demand["MaxWriteRequestUnits"] = index.on_demand_max_write_units
        if on_demand:
            description["OnDemandThroughput"] = on_demand
        description["WarmThroughput"] = {
            "ReadUnitsPerSecond": max(index.read_capacity_units, schema.warm_read_units),
            "WriteUnitsPerSecond": max(index.write_capacity_units, schema.warm_write_units),
            "Status": "ACTIVE" if index.status == "ACTIVE" else index.status,
        }
    return description


def add_index_descriptions(
    schema: TableSchema,
    description: dict[str, Any],
    index_statistics: Mapping[str, tuple[int, int]] | None,
) -> None:
    statistics = index_statistics or {}
    for member, indexes in (
        ("LocalSecondaryIndexes", schema.local_indexes),
        ("GlobalSecondaryIndexes", schema.global_indexes),
    ):
        if indexes:
            description[member] = [
                index_description(schema, index, statistics.get(index.name, (0, 0)))
                for index in indexes
            ]


def table_description(
    schema: TableSchema,
    *,
    item_count: int,
    size_bytes: int,
    now: float,
    index_statistics: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """The TableDescription DescribeTable returns, in DynamoDB's member order."""
    description: dict[str, Any] = {
        "AttributeDefinitions": [
            {"AttributeName": definition.name, "AttributeType": definition.type}
            for definition in schema.attribute_definitions
        ],
        "TableName": schema.name,
        "KeySchema": key_schema_description(schema),
        "TableStatus": schema.status,
        "CreationDateTime": schema.creation_time,
        "ProvisionedThroughput": throughput_description(schema, now),
        "TableSizeBytes": size_bytes,
        "ItemCount": item_count,
        "TableArn": schema.arn,
        "TableId": schema.table_uuid,
    }
    _optional_summaries(schema, description)
    add_index_descriptions(schema, description, index_statistics)
    if schema.extensions:
        description.update(stream_description(schema.extensions))
    description["DeletionProtectionEnabled"] = schema.deletion_protection
    description["WarmThroughput"] = warm_throughput_description(schema)
    return description


def created_table_description(schema: TableSchema, request: Mapping[str, Any]) -> dict[str, Any]:
    """CreateTable's answer: CREATING, and without what DynamoDB only adds later
    (LastUpdateToPayPerRequestDateTime; WarmThroughput unless the request set it)."""
    description = table_description(schema, item_count=0, size_bytes=0, now=schema.creation_time)
    description["TableStatus"] = "CREATING"
    for index in description.get("GlobalSecondaryIndexes", ()):
        index["IndexStatus"] = "CREATING"
    if "BillingModeSummary" in description:
        description["BillingModeSummary"] = {"BillingMode": schema.billing_mode}
    if non_empty(request.get("WarmThroughput")):
        description["WarmThroughput"]["Status"] = "UPDATING"
    else:
        del description["WarmThroughput"]
    return description


def deleted_table_description(
    schema: TableSchema,
    *,
    item_count: int,
    size_bytes: int,
    now: float,
    index_statistics: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """DeleteTable's answer: DELETING, without key schema, definitions,
    CreationDateTime and WarmThroughput (as DynamoDB answers)."""
    description = table_description(
        schema,
        item_count=item_count,
        size_bytes=size_bytes,
        now=now,
        index_statistics=index_statistics,
    )
    for member in ("AttributeDefinitions", "KeySchema", "CreationDateTime", "WarmThroughput"):
        del description[member]
    description["TableStatus"] = "DELETING"
    return description
