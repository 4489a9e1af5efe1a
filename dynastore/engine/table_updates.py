"""UpdateTable rules: which members ask for a change and which combine, the
stream, billing and throughput checks (decreases per UTC day included), and
the new schema after a throughput, billing-mode, on-demand, warm-throughput
or table-class change. GlobalSecondaryIndexUpdates: engine/global_index_updates.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from dynastore.engine.schema import TableSchema
from dynastore.engine.streams import STREAM_EXTENSION
from dynastore.engine.table_settings import (
    ON_DEMAND_WARM_READ_UNITS,
    ON_DEMAND_WARM_WRITE_UNITS,
    PAY_PER_REQUEST,
    PROVISIONED,
    check_sse_specification,
    check_table_class,
    non_empty,
    unsupported,
)
from dynastore.engine.utc_calendar import SECONDS_PER_DAY, same_utc_day, spoken_time, utc_day
from dynastore.errors import LimitExceededException, ValidationException, invalid_parameter

# Candidates for dynastore/limits.py (named in the report to the lead).
FREE_DECREASES_PER_DAY = 4
DECREASE_INTERVAL_SECONDS = 3600
"""After 4 decreases in a UTC day, one more per hour after the last one."""


def decreases_today(schema: TableSchema, now: float) -> int:
    """NumberOfDecreasesToday resets at 00:00 UTC."""
    last = schema.last_decrease_time
    if last is None or not same_utc_day(last, now):
        return 0
    return schema.decreases_today


UPDATE_MEMBERS = (
    "ProvisionedThroughput",
    "BillingMode",
    "UpdateStreamEnabled",
    "GlobalSecondaryIndexUpdates",
    "SSESpecification",
    "ReplicaUpdates",
    "MultiAccountReplicaReady",
    "ReplicaTransitRoleArn",
    "MultiRegionConsistency",
    "DeletionProtectionEnabled",
    "OnDemandThroughput",
    "WarmThroughput",
    "TableClass",
)
"""The members DynamoDB lists in "At least one of ... is required", in its order."""

NOT_CHANGES = frozenset(
    {"MultiRegionConsistency", "MultiAccountReplicaReady", "ReplicaTransitRoleArn"}
)
"""Members that change nothing on a regional table: alone they are "no change"."""


def requested_changes(request: Mapping[str, Any]) -> set[str]:
    """The UpdateTable members that ask for a change (empty lists/structs do not)."""
    present = {
        name for name in UPDATE_MEMBERS if name not in NOT_CHANGES and non_empty(request.get(name))
    }
    if request.get("StreamSpecification") is not None:
        present.add("UpdateStreamEnabled")
    return present


def check_update_has_changes(request: Mapping[str, Any], changes: set[str]) -> None:
    if changes:
        return
    # DynamoDB's list leaves out the members the request already carried.
    listed = [
        name
        for name in UPDATE_MEMBERS
        if not (name in NOT_CHANGES and request.get(name) is not None)
    ]
    raise ValidationException(
        f"At least one of {', '.join(listed[:-1])} or {listed[-1]} is required"
    )


def _creates_index(request: Mapping[str, Any]) -> bool:
    return any(update.get("Create") is not None for update in request.get("GlobalSecondaryIndexUpdates") or [])


def _creates_or_deletes_index(request: Mapping[str, Any]) -> bool:
    return any(
        update.get("Create") is not None or update.get("Delete") is not None
        for update in request.get("GlobalSecondaryIndexUpdates") or []
    )


SINGLE_CONCERN_MEMBERS = (
    (  # before DeletionProtection: SSE + DP gets this one (live, ack-api-quirks' catalogue)
        "SSESpecification",
        "Server-Side Encryption modification must be the only operation in the request",
    ),
    (
        "DeletionProtectionEnabled",
        "DeletionProtection modification must be the only operation in the request",
    ),
    ("TableClass", "TableClass modification must be the only operation in the request"),
    ("WarmThroughput", "WarmThroughput must be the only operation in the request"),
)
"""Members DynamoDB accepts only alone in an UpdateTable, in the order it checks them."""


def check_update_combination(request: Mapping[str, Any], changes: set[str]) -> None:
    """UpdateTable is single-concern: only BillingMode combines with others."""
    others = changes - {"BillingMode"}
    for member, message in SINGLE_CONCERN_MEMBERS:
        if member in changes and len(changes) > 1:
            raise invalid_parameter(message)
        if member == "TableClass" and "WarmThroughput" in changes and _creates_index(request):
            raise invalid_parameter("Create global secondary index cannot be specified when updating WarmThroughput")
        if member == "TableClass" and "OnDemandThroughput" in others and len(others) > 1:
            # Checked before WarmThroughput's rule: ODT + Warm gets this message.
            raise invalid_parameter(
                "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"
            )
    throughput = "ProvisionedThroughput" in changes
    stream = "UpdateStreamEnabled" in changes
    if throughput and stream:
        raise invalid_parameter("You cannot modify stream status while updating table IOPS")
    if throughput and _creates_or_deletes_index(request):
        raise invalid_parameter("You cannot create or delete index while updating table IOPS")
    if stream and _creates_or_deletes_index(request):
        raise invalid_parameter("You cannot create or delete index while changing stream status")


def check_update_unsupported(request: Mapping[str, Any], changes: set[str]) -> None:
    if "SSESpecification" in changes:
        check_sse_specification(request["SSESpecification"] or {})
        raise unsupported("SSESpecification")
    if "ReplicaUpdates" in changes:
        for update in request["ReplicaUpdates"] or []:
            create = update.get("Create") if isinstance(update, Mapping) else None
            if isinstance(create, Mapping) and create.get("RegionName") is None:
                raise ValidationException("One or more parameter values were invalid")  # bare (live)
    stream = request.get("StreamSpecification")
    if stream is None:
        return
    enabled = bool(stream.get("StreamEnabled"))
    view_type = stream.get("StreamViewType")
    if enabled and view_type is None:
        raise invalid_parameter("If stream is being enabled then UpdateViewType is required")
    if not enabled and view_type is not None:
        raise invalid_parameter(
            "If stream is being disabled, then UpdateViewType must not be specified"
        )


def check_stream_disable(schema: TableSchema, request: Mapping[str, Any]) -> None:
    """Disabling a stream the table does not have, or enabling a second one."""
    stream = request.get("StreamSpecification")
    if stream is None:
        return
    has_stream = STREAM_EXTENSION in schema.extensions
    if not stream.get("StreamEnabled") and not has_stream:
        raise ValidationException(f"Table has no stream to disable: TableName: {schema.name}")
    if stream.get("StreamEnabled") and has_stream:
        raise ValidationException(f"Table already has an enabled stream: TableName: {schema.name}")


def check_billing_update(schema: TableSchema, request: Mapping[str, Any]) -> str:
    """The billing mode the table will have after the update, after DynamoDB's checks."""
    requested = request.get("BillingMode")
    throughput = request.get("ProvisionedThroughput")
    if requested == PAY_PER_REQUEST and throughput is not None:
        if schema.billing_mode == PROVISIONED:
            raise invalid_parameter(
                "ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST"
            )
        raise invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
            "BillingMode is PAY_PER_REQUEST"
        )
    if requested is None and schema.billing_mode == PAY_PER_REQUEST and throughput is not None:
        raise invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
            "BillingMode is PAY_PER_REQUEST"
        )
    if requested == PROVISIONED and throughput is None:
        raise invalid_parameter(
            "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
        )
    return str(requested or schema.billing_mode)


def check_throughput_changes(schema: TableSchema, read: int, write: int) -> None:
    if (read, write) == (schema.read_capacity_units, schema.write_capacity_units):
        raise ValidationException(
            "The provisioned throughput for the table will not change. The requested value "
            "equals the current value. "
            f"Current ReadCapacityUnits provisioned for the table: {schema.read_capacity_units}. "
            f"Requested ReadCapacityUnits: {read}. "
            f"Current WriteCapacityUnits provisioned for the table: {schema.write_capacity_units}. "
            f"Requested WriteCapacityUnits: {write}. "
            "Refer to the Amazon DynamoDB Developer Guide for current limits and how to "
            "request higher limits."
        )


def check_decrease_allowed(schema: TableSchema, now: float) -> None:
    """Four decreases per UTC day, then one per hour after the last one."""
    count = decreases_today(schema, now)
    last = schema.last_decrease_time
    if count < FREE_DECREASES_PER_DAY or last is None:
        return
    if now - last >= DECREASE_INTERVAL_SECONDS:
        return
    next_midnight = (utc_day(last) + 1) * SECONDS_PER_DAY
    next_allowed = min(last + DECREASE_INTERVAL_SECONDS, next_midnight)
    raise LimitExceededException(
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
        f"given UTC day. After the first {FREE_DECREASES_PER_DAY} decreases, each subsequent "
        "decrease in the same UTC day can be performed at most once every "
        f"{DECREASE_INTERVAL_SECONDS} seconds. Number of decreases today: {count}. "
        f"Last decrease at {spoken_time(last)}. "
        f"Next decrease can be made at {spoken_time(next_allowed)}."
    )


def apply_provisioned_throughput(
    schema: TableSchema, read: int, write: int, now: float
) -> TableSchema:
    """New capacity on a table that stays PROVISIONED, with its bookkeeping."""
    increase = read > schema.read_capacity_units or write > schema.write_capacity_units
    decrease = read < schema.read_capacity_units or write < schema.write_capacity_units
    if decrease:
        check_decrease_allowed(schema, now)
    changes: dict[str, Any] = {
        "read_capacity_units": read,
        "write_capacity_units": write,
        "warm_read_units": max(schema.warm_read_units, read),
        "warm_write_units": max(schema.warm_write_units, write),
    }
    if increase:
        changes["last_increase_time"] = now
    if decrease:
        changes["decreases_today"] = decreases_today(schema, now) + 1
        changes["last_decrease_time"] = now
    return replace(schema, **changes)


def switch_to_on_demand(schema: TableSchema, now: float) -> TableSchema:
    return replace(
        schema,
        billing_mode=PAY_PER_REQUEST,
        read_capacity_units=0,
        write_capacity_units=0,
        billing_mode_last_update_time=now,
        warm_read_units=max(schema.warm_read_units, ON_DEMAND_WARM_READ_UNITS),
        warm_write_units=max(schema.warm_write_units, ON_DEMAND_WARM_WRITE_UNITS),
    )


def switch_to_provisioned(schema: TableSchema, read: int, write: int) -> TableSchema:
    return replace(
        schema,
        billing_mode=PROVISIONED,
        read_capacity_units=read,
        write_capacity_units=write,
        on_demand_max_read_units=None,
        on_demand_max_write_units=None,
        warm_read_units=max(schema.warm_read_units, read),
        warm_write_units=max(schema.warm_write_units, write),
    )


def apply_on_demand_limits(schema: TableSchema, members: Mapping[str, int]) -> TableSchema:
    """OnDemandThroughput merges member by member; -1 removes a member."""
    read = members.get("MaxReadRequestUnits", schema.on_demand_max_read_units)
    write = members.get("MaxWriteRequestUnits", schema.on_demand_max_write_units)
    return replace(
        schema,
        on_demand_max_read_units=None if read == -1 else read,
        on_demand_max_write_units=None if write == -1 else write,
    )


def apply_warm_throughput(schema: TableSchema, warm: Mapping[str, Any]) -> TableSchema:
    """WarmThroughput only ever rises."""
    current = {
        "ReadUnitsPerSecond": schema.warm_read_units,
        "WriteUnitsPerSecond": schema.warm_write_units,
    }
    for name, value in current.items():
        requested = warm.get(name)
        if requested is not None and int(requested) < value:
            raise invalid_parameter(
                f"Requested {name} for WarmThroughput for table is lower than current "
                "WarmThroughput, decreasing WarmThroughput is not supported"
            )
    return replace(
        schema,
        warm_read_units=int(warm.get("ReadUnitsPerSecond") or schema.warm_read_units),
        warm_write_units=int(warm.get("WriteUnitsPerSecond") or schema.warm_write_units),
    )


TABLE_CLASS_CHANGES_PER_PERIOD = 2
TABLE_CLASS_CHANGE_PERIOD_DAYS = 30


def apply_table_class(schema: TableSchema, table_class: Any, now: float) -> TableSchema:
    """A new table class; DynamoDB allows two changes in any 30 days.
    Re-sending the current class changes nothing, and is refused too once the
    two changes are spent (ack-api-quirks' LimitExceededException catalogue,
    live 2026: "Subscriber limit exceeded: Updates to TableClass ...")."""
    table_class = check_table_class(table_class)
    window_start = now - TABLE_CLASS_CHANGE_PERIOD_DAYS * SECONDS_PER_DAY
    recent = tuple(moment for moment in schema.table_class_changes if moment > window_start)
    if len(recent) >= TABLE_CLASS_CHANGES_PER_PERIOD:
        raise LimitExceededException(
            f"Subscriber limit exceeded: Updates to TableClass are limited to {TABLE_CLASS_CHANGES_PER_PERIOD} "
            f"times in {TABLE_CLASS_CHANGE_PERIOD_DAYS} day(s)."
        )
    if table_class == schema.table_class:
        return replace(schema, table_class_reported=True)
    return replace(
        schema,
        table_class=table_class,
        table_class_reported=True,
        table_class_update_time=now,
        table_class_changes=(*recent, now)[-TABLE_CLASS_CHANGES_PER_PERIOD:],
    )
