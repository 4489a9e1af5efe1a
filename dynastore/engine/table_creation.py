"""CreateTable validation: a request into the new table's ``TableSchema``.

Pure: no storage, no clock reads, no randomness. Callers pass ``now`` (epoch
seconds), the new table's id and ARN, and the capacity already reserved by the
other tables of the account. Every message is DynamoDB's own wording, as
captured from the service (dynalite's and dynoxide's conformance tests, and
the ack-api-quirks captures of 2026).

Validation order matters because DynamoDB reports only the first problem; the
order here follows the service's: request shape (ops/shapes.py) first, then
billing mode and throughput, then key schema and definitions, then indexes and
streams, then the attribute count, limits, tags and the remaining members.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from dynastore.engine.index_definitions import (
    TABLE_KEY_SCHEMA_MAX_ELEMENTS,
    check_create_indexes,
    parse_attribute_definitions,
    parse_key_schema,
)
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.engine.table_settings import (
    ON_DEMAND_WARM_READ_UNITS,
    ON_DEMAND_WARM_WRITE_UNITS,
    PAY_PER_REQUEST,
    PROVISIONED,
    check_capacity_limits,
    check_sse_specification,
    check_table_class,
    check_throughput_bounds,
    on_demand_limits,
    present_throughput,
    unsupported,
)
from dynastore.engine.table_tags import validate_tags
from dynastore.errors import ValidationException, invalid_parameter

ON_DEMAND_WARM_DOCS = (
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "on-demand-capacity-mode.html#on-demand-capacity-mode-initial"
)
JAVA_KEY_SCHEMA_ELEMENT = "com.amazonaws.dynamodb.v20120810.KeySchemaElement"


def check_table_key_schema_length(request: Mapping[str, Any]) -> None:
    """The service model allows longer key schemas (for multi-attribute index
    keys) but a table's has at most two elements; DynamoDB prints the list the
    Java way, one identity hash per element."""
    _check_key_schema_length(request.get("KeySchema") or [], "keySchema")
    # An LSI's key schema is a table's (multi-attribute keys are GSI-only);
    # refused the same way (unconfirmed; ScyllaDB's suite, run against the
    # service, shows only that the text names the bound, 2).
    for position, index in enumerate(request.get("LocalSecondaryIndexes") or [], start=1):
        if isinstance(index, Mapping):
            _check_key_schema_length(
                index.get("KeySchema") or [], f"localSecondaryIndexes.{position}.member.keySchema"
            )


def _check_key_schema_length(elements: Any, path: str) -> None:
    if len(elements) <= TABLE_KEY_SCHEMA_MAX_ELEMENTS:
        return
    rendered = ", ".join(
        f"{JAVA_KEY_SCHEMA_ELEMENT}@{zlib.crc32(repr(sorted(element.items())).encode()):x}"
        for element in elements
    )
    raise ValidationException(
        f"1 validation error detected: Value '[{rendered}]' at '{path}' failed to satisfy "
        f"constraint: Member must have length less than or equal to {TABLE_KEY_SCHEMA_MAX_ELEMENTS}"
    )


def check_create_billing(request: Mapping[str, Any]) -> str:
    """The billing mode of a CreateTable request, after DynamoDB's checks on it."""
    billing_mode = request.get("BillingMode") or PROVISIONED
    throughput = request.get("ProvisionedThroughput")
    if billing_mode == PAY_PER_REQUEST and throughput is not None:
        raise invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified "
            "when BillingMode is PAY_PER_REQUEST"
        )
    check_throughput_bounds(request)
    if billing_mode == PROVISIONED and (
        throughput is None
        or throughput.get("ReadCapacityUnits") is None
        or throughput.get("WriteCapacityUnits") is None
    ):
        raise invalid_parameter(
            "ReadCapacityUnits and WriteCapacityUnits must both be specified "
            "when BillingMode is PROVISIONED"
        )
    return str(billing_mode)


def check_create_secondary_features(request: Mapping[str, Any]) -> None:
    """Streams, encryption with a KMS key and resource policies: validate what
    is cheap, then refuse (later issues)."""
    stream = request.get("StreamSpecification")
    if stream is not None:
        enabled = bool(stream.get("StreamEnabled"))
        view_type = stream.get("StreamViewType")
        if not enabled and view_type is not None:
            raise invalid_parameter(
                "Table is being created with a stream disabled, "
                "UpdateViewType should not be specified"
            )
        if enabled and view_type is None:
            raise invalid_parameter(
                "Table is being created with a stream enabled, UpdateViewType is required"
            )
    encryption = request.get("SSESpecification") or {}
    check_sse_specification(encryption)
    # DynamoDB infers Enabled from SSEType: {SSEType: KMS} alone turns KMS on
    # (ack-api-quirks DDB-TABLE-044, live), so it is refused the same way.
    if encryption.get("Enabled") or (encryption.get("Enabled") is None and encryption.get("SSEType")):
        raise unsupported("SSESpecification")
    if request.get("ResourcePolicy") is not None:
        raise unsupported("ResourcePolicy")
    if request.get("GlobalTableSourceArn") is not None:
        raise unsupported("GlobalTableSourceArn")


def check_unused_definitions(
    request: Mapping[str, Any], key_names: Sequence[str], definitions: Sequence[KeyAttribute]
) -> None:
    """A definition no key uses, with indexes in the request, is refused
    before any rule of the indexes themselves (live, ack-api-quirks: "an
    extra attribute masks other errors"): the keys used are read off the
    indexes' KeySchemas as sent."""
    indexes = [*(request.get("LocalSecondaryIndexes") or []), *(request.get("GlobalSecondaryIndexes") or [])]
    if not indexes:
        return
    used = set(key_names)
    for index in indexes:
        for element in (index.get("KeySchema") or []) if isinstance(index, Mapping) else []:
            if isinstance(element, Mapping) and isinstance(element.get("AttributeName"), str):
                used.add(element["AttributeName"])
    if len(definitions) > len(used):
        raise invalid_parameter(
            "Some AttributeDefinitions are not used. AttributeDefinitions: "
            f"[{', '.join(sorted(d.name for d in definitions))}], "
            f"keys used: [{', '.join(sorted(used))}]"
        )


def check_attribute_count(
    key_names: Sequence[str],
    definitions: Sequence[KeyAttribute],
    indexes: Sequence[IndexDefinition] = (),
) -> None:
    used = set(key_names)
    for index in indexes:
        used.update(index.key_names)
    if indexes and len(definitions) > len(used):
        raise invalid_parameter(
            "Some AttributeDefinitions are not used. AttributeDefinitions: "
            f"[{', '.join(sorted(d.name for d in definitions))}], "
            f"keys used: [{', '.join(sorted(used))}]"
        )
    if len(definitions) != len(used):
        raise invalid_parameter(
            "Number of attributes in KeySchema does not exactly match number of "
            "attributes defined in AttributeDefinitions"
        )


def initial_warm_throughput(
    request: Mapping[str, Any], billing_mode: str, read: int, write: int
) -> tuple[int, int]:
    """WarmThroughput of a new table: the on-demand default or the provisioned
    capacity, raised to what the request asks (never below either)."""
    if billing_mode == PAY_PER_REQUEST:
        base = (ON_DEMAND_WARM_READ_UNITS, ON_DEMAND_WARM_WRITE_UNITS)
    else:
        base = (read, write)
    warm = request.get("WarmThroughput") or {}
    result = list(base)
    for position, name in enumerate(("ReadUnitsPerSecond", "WriteUnitsPerSecond")):
        if warm.get(name) is None:
            continue
        value = int(warm[name])
        if value < base[position]:
            if billing_mode == PAY_PER_REQUEST:
                raise invalid_parameter(
                    f"Requested {name} for WarmThroughput for table is lower than initial "
                    f"throughput for OnDemand. See: {ON_DEMAND_WARM_DOCS}"
                )
            capacity = "ReadCapacityUnits" if position == 0 else "WriteCapacityUnits"
            raise invalid_parameter(
                f"Requested {name} for WarmThroughput for table is lower than "
                f"{capacity} of ProvisionedThroughput"
            )
        result[position] = value
    return result[0], result[1]


def build_table_schema(
    request: Mapping[str, Any],
    *,
    table_uuid: str,
    arn: str,
    region: str,
    now: float,
    reserved: tuple[int, int] = (0, 0),
) -> TableSchema:
    """Validate a CreateTable request into the new table's schema.

    ``reserved`` is the provisioned (read, write) capacity of the account's other
    tables, for the account quota. Existence is the caller's check, made last.
    """
    check_table_key_schema_length(request)
    billing_mode = check_create_billing(request)
    definitions = parse_attribute_definitions(request)
    partition_key, sort_key = parse_key_schema(request, definitions)
    key_names = [partition_key.name] + ([sort_key.name] if sort_key else [])
    check_unused_definitions(request, key_names, definitions)
    indexes = check_create_indexes(request, definitions, partition_key, sort_key, billing_mode)
    check_create_secondary_features(request)
    check_attribute_count(key_names, definitions, indexes)
    read, write = present_throughput(request) or (0, 0)
    if billing_mode == PROVISIONED:
        check_capacity_limits(read, write, region, reserved)
    tags = validate_tags(request.get("Tags") or [], required=False)
    table_class = request.get("TableClass")
    if table_class is not None:
        check_table_class(table_class)
    on_demand = on_demand_limits(request, billing_mode, region, creating=True)
    warm_read, warm_write = initial_warm_throughput(request, billing_mode, read, write)
    return TableSchema(
        name=request["TableName"],
        table_id=0,
        table_uuid=table_uuid,
        arn=arn,
        partition_key=partition_key,
        sort_key=sort_key,
        attribute_definitions=definitions,
        creation_time=now,
        billing_mode=billing_mode,
        read_capacity_units=read,
        write_capacity_units=write,
        billing_mode_last_update_time=now if billing_mode == PAY_PER_REQUEST else None,
        table_class=table_class or "STANDARD",
        table_class_reported=table_class is not None,
        deletion_protection=bool(request.get("DeletionProtectionEnabled", False)),
        tags=tags,
        warm_read_units=warm_read,
        warm_write_units=warm_write,
        on_demand_max_read_units=on_demand.get("MaxReadRequestUnits"),
        on_demand_max_write_units=on_demand.get("MaxWriteRequestUnits"),
        indexes=indexes,
    )
