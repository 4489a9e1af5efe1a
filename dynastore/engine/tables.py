"""Control-plane rules: CreateTable/UpdateTable validation, the TableDescription
shape, table ARNs and tags.

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

import unicodedata
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dynastore import limits
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.engine.streams import STREAM_EXTENSION, stream_description
from dynastore.errors import (
    LimitExceededException,
    ResourceNotFoundException,
    ValidationException,
    invalid_parameter,
)

PROVISIONED = "PROVISIONED"
PAY_PER_REQUEST = "PAY_PER_REQUEST"
TABLE_CLASSES = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")

# Candidates for dynastore/limits.py (named in the report to the lead).
THROUGHPUT_VALUE_MAX = 1_000_000_000_000
"""Above this DynamoDB answers "Given value N for ReadCapacityUnits is out of bounds"."""
ON_DEMAND_WARM_READ_UNITS = 12_000
ON_DEMAND_WARM_WRITE_UNITS = 4_000
"""The warm throughput every on-demand table starts with."""
FREE_DECREASES_PER_DAY = 4
DECREASE_INTERVAL_SECONDS = 3600
"""After 4 decreases in a UTC day, one more per hour after the last one."""

ON_DEMAND_WARM_DOCS = (
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "on-demand-capacity-mode.html#on-demand-capacity-mode-initial"
)


def unsupported(feature: str) -> ValidationException:
    """dynastore refuses, rather than ignores, what it cannot do yet."""
    return ValidationException(
        f"dynastore does not support {feature} yet (see docs/compatibility.md)"
    )


# --- small request readers ------------------------------------------------------


def _units(throughput: Mapping[str, Any], name: str) -> int | None:
    value = throughput.get(name)
    return None if value is None else int(value)


def present_throughput(request: Mapping[str, Any]) -> tuple[int, int] | None:
    """(read, write) of a request's ProvisionedThroughput, None when absent."""
    throughput = request.get("ProvisionedThroughput")
    if throughput is None:
        return None
    read = _units(throughput, "ReadCapacityUnits")
    write = _units(throughput, "WriteCapacityUnits")
    return (read or 0, write or 0)


def check_throughput_bounds(request: Mapping[str, Any]) -> None:
    throughput = request.get("ProvisionedThroughput") or {}
    for name in ("ReadCapacityUnits", "WriteCapacityUnits"):
        value = _units(throughput, name)
        if value is not None and value > THROUGHPUT_VALUE_MAX:
            raise ValidationException(f"Given value {value} for {name} is out of bounds")


def non_empty(value: Any) -> bool:
    """DynamoDB treats an empty list or struct like an absent member."""
    return value is not None and value != [] and value != {}


# --- CreateTable ----------------------------------------------------------------


TABLE_KEY_SCHEMA_MAX_ELEMENTS = 2
JAVA_KEY_SCHEMA_ELEMENT = "com.amazonaws.dynamodb.v20120810.KeySchemaElement"


def check_table_key_schema_length(request: Mapping[str, Any]) -> None:
    """The service model allows longer key schemas (for multi-attribute index
    keys) but a table's has at most two elements; DynamoDB prints the list the
    Java way, one identity hash per element."""
    elements = request.get("KeySchema") or []
    if len(elements) <= TABLE_KEY_SCHEMA_MAX_ELEMENTS:
        return
    rendered = ", ".join(
        f"{JAVA_KEY_SCHEMA_ELEMENT}@{zlib.crc32(repr(sorted(element.items())).encode()):x}"
        for element in elements
    )
    raise ValidationException(
        f"1 validation error detected: Value '[{rendered}]' at 'keySchema' failed to satisfy "
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


def parse_attribute_definitions(request: Mapping[str, Any]) -> tuple[KeyAttribute, ...]:
    definitions: list[KeyAttribute] = []
    seen: set[str] = set()
    for definition in request.get("AttributeDefinitions") or []:
        name = definition.get("AttributeName")
        if name in seen:
            raise ValidationException(f"Attribute Name is duplicated: {name}")
        seen.add(name)
        definitions.append(KeyAttribute(name=name, type=definition.get("AttributeType")))
    return tuple(definitions)


def parse_key_schema(
    request: Mapping[str, Any], definitions: Sequence[KeyAttribute]
) -> tuple[KeyAttribute, KeyAttribute | None]:
    """(partition key, sort key) of a CreateTable request, typed from its definitions."""
    elements = list(request.get("KeySchema") or [])
    if not elements:  # normally refused earlier by the request-shape check
        raise ValidationException(
            "1 validation error detected: Value null at 'keySchema' failed to satisfy "
            "constraint: Member must not be null"
        )
    names = [element.get("AttributeName") for element in elements]
    defined = {definition.name: definition for definition in definitions}
    if len(names) > len(defined):
        raise ValidationException("Invalid KeySchema: Some index key attribute have no definition")
    _check_index_key_schema(elements, definitions)
    partition_key = defined[names[0]]
    sort_key = defined[names[1]] if len(names) == 2 else None
    return partition_key, sort_key


def _check_index_key_schema(
    elements: Sequence[Mapping[str, Any]], definitions: Sequence[KeyAttribute]
) -> None:
    """The rules every one- or two-element key schema follows, the table's and
    each index's: attributes defined, distinct, HASH first, RANGE second."""
    names = [str(element.get("AttributeName")) for element in elements]
    defined = [definition.name for definition in definitions]
    if any(name not in defined for name in names):
        raise invalid_parameter(
            "Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{', '.join(names)}], AttributeDefinitions: [{', '.join(defined)}]"
        )
    if len(names) == 2 and names[0] == names[1]:
        raise ValidationException(
            "Both the Hash Key and the Range Key element in the KeySchema have the same name"
        )
    if elements[0].get("KeyType") != "HASH":
        raise ValidationException(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        )
    if len(elements) == 2 and elements[1].get("KeyType") != "RANGE":
        raise ValidationException(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
        )


def _check_projection(projection: Mapping[str, Any]) -> None:
    projection_type = projection.get("ProjectionType")
    if projection_type is None:
        raise invalid_parameter("Unknown ProjectionType: null")
    non_key = projection.get("NonKeyAttributes")
    if non_key is not None and projection_type != "INCLUDE":
        raise invalid_parameter(
            f"ProjectionType is {projection_type}, but NonKeyAttributes is specified"
        )
    if non_key is None and projection_type == "INCLUDE":
        raise invalid_parameter("ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
    seen: set[str] = set()
    for attribute in non_key or ():
        if attribute in seen:
            raise invalid_parameter(f"Duplicate element in NonKeyAttributes: {attribute}")
        seen.add(attribute)


def _check_local_index(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], partition_key: str
) -> None:
    elements = index.get("KeySchema") or []
    name = index.get("IndexName")
    _check_index_key_schema(elements, definitions)
    if len(elements) != 2:
        raise invalid_parameter(f"Index KeySchema does not have a range key for index: {name}")
    index_hash = elements[0].get("AttributeName")
    if index_hash != partition_key:
        raise invalid_parameter(
            "Index KeySchema does not have the same leading hash key as table KeySchema for "
            f"index: {name}. index hash key: {index_hash}, table hash key: {partition_key}"
        )
    _check_projection(index.get("Projection") or {})


INDEX_KEY_ATTRIBUTES_MAX = 4
"""Multi-attribute GSI keys: up to four partition and four sort attributes."""


def _check_multi_attribute_key_schema(
    elements: Sequence[Mapping[str, Any]], definitions: Sequence[KeyAttribute], name: Any
) -> None:
    """A GSI key schema of more than two elements: HASH elements first (1-4),
    then RANGE elements (0-4), every attribute defined and used once."""
    names = [str(element.get("AttributeName")) for element in elements]
    defined = [definition.name for definition in definitions]
    if any(attribute not in defined for attribute in names):
        raise invalid_parameter(
            "Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{', '.join(names)}], AttributeDefinitions: [{', '.join(defined)}]"
        )
    if len(set(names)) != len(names):
        raise ValidationException("The KeySchema contains multiple key attributes with the same name")
    types = [element.get("KeyType") for element in elements]
    if types[0] != "HASH":
        raise ValidationException(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        )
    hash_count = types.index("RANGE") if "RANGE" in types else len(types)
    if any(key_type != "RANGE" for key_type in types[hash_count:]):
        raise invalid_parameter("All HASH key attributes must precede RANGE key attributes in the KeySchema")
    for kind, count in (("HASH", hash_count), ("RANGE", len(types) - hash_count)):
        if count > INDEX_KEY_ATTRIBUTES_MAX:
            raise invalid_parameter(
                f"The KeySchema exceeds the maximum allowed number of {kind} key attributes"
            )


def _check_global_index(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], billing_mode: str
) -> None:
    elements = index.get("KeySchema") or []
    name = index.get("IndexName")
    if len(elements) > TABLE_KEY_SCHEMA_MAX_ELEMENTS:
        _check_multi_attribute_key_schema(elements, definitions, name)
    else:
        _check_index_key_schema(elements, definitions)
    _check_projection(index.get("Projection") or {})
    check_index_throughput(index, billing_mode)


def check_index_throughput(index: Mapping[str, Any], billing_mode: str) -> None:
    name = index.get("IndexName")
    has_throughput = index.get("ProvisionedThroughput") is not None
    if billing_mode == PAY_PER_REQUEST and has_throughput:
        raise invalid_parameter(
            f"ProvisionedThroughput should not be specified for index: {name} when "
            "BillingMode is PAY_PER_REQUEST"
        )
    if billing_mode == PROVISIONED and not has_throughput:
        raise invalid_parameter(f"ProvisionedThroughput is not specified for index: {name}")


def check_create_indexes(
    request: Mapping[str, Any],
    definitions: Sequence[KeyAttribute],
    partition_key: KeyAttribute,
    sort_key: KeyAttribute | None,
    billing_mode: str,
) -> tuple[IndexDefinition, ...]:
    """Validate LocalSecondaryIndexes and GlobalSecondaryIndexes as DynamoDB
    does; return their definitions (LSIs first, then GSIs, each in request order)."""
    local = request.get("LocalSecondaryIndexes")
    global_ = request.get("GlobalSecondaryIndexes")
    for member, indexes in (("LocalSecondaryIndexes", local), ("GlobalSecondaryIndexes", global_)):
        if indexes is not None and len(indexes) == 0:
            raise invalid_parameter(f"List of {member} is empty")
    names: set[str] = set()
    if local:
        if sort_key is None:
            raise invalid_parameter(
                "Table KeySchema does not have a range key, which is required when "
                "specifying a LocalSecondaryIndex"
            )
        for index in local:
            _check_local_index(index, definitions, partition_key.name)
            _claim_index_name(names, index.get("IndexName"))
        if len(local) > limits.LOCAL_SECONDARY_INDEXES_PER_TABLE:
            raise invalid_parameter(
                "Number of LocalSecondaryIndexes exceeds per-table limit of "
                f"{limits.LOCAL_SECONDARY_INDEXES_PER_TABLE}"
            )
    for index in global_ or []:
        _check_global_index(index, definitions, billing_mode)
        _claim_index_name(names, index.get("IndexName"))
    if global_ and len(global_) > limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE:
        raise invalid_parameter(
            "GlobalSecondaryIndex count exceeds the per-table limit of "
            f"{limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE}"
        )
    parsed = [index_definition(index, definitions, "LOCAL") for index in local or []]
    parsed += [index_definition(index, definitions, "GLOBAL") for index in global_ or []]
    check_projected_attribute_count(parsed)
    return tuple(parsed)


def check_projected_attribute_count(indexes: Sequence[IndexDefinition]) -> None:
    """At most 100 INCLUDE'd non-key attributes across a table's indexes."""
    total = sum(len(index.non_key_attributes) for index in indexes)
    if total > limits.PROJECTED_NON_KEY_ATTRIBUTES_PER_TABLE:
        raise invalid_parameter(
            "Number of projected attributes in all indexes exceeds limit of "
            f"{limits.PROJECTED_NON_KEY_ATTRIBUTES_PER_TABLE}"
        )


def index_definition(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], kind: str, status: str = "ACTIVE"
) -> IndexDefinition:
    """An already validated index of a request, typed from AttributeDefinitions."""
    defined = {definition.name: definition for definition in definitions}
    elements = index.get("KeySchema") or []
    projection = index.get("Projection") or {}
    read, write = present_throughput(index) or (0, 0)
    on_demand = index.get("OnDemandThroughput") or {}
    return IndexDefinition(
        name=str(index.get("IndexName")),
        kind=kind,
        partition_keys=tuple(
            defined[e["AttributeName"]] for e in elements if e.get("KeyType") == "HASH"
        ),
        sort_keys=tuple(
            defined[e["AttributeName"]] for e in elements if e.get("KeyType") == "RANGE"
        ),
        projection_type=str(projection.get("ProjectionType")),
        non_key_attributes=tuple(projection.get("NonKeyAttributes") or ()),
        status=status,
        read_capacity_units=read,
        write_capacity_units=write,
        on_demand_max_read_units=on_demand.get("MaxReadRequestUnits"),
        on_demand_max_write_units=on_demand.get("MaxWriteRequestUnits"),
    )


def _claim_index_name(names: set[str], name: Any) -> None:
    if name in names:
        raise invalid_parameter(f"Duplicate index name: {name}")
    names.add(name)


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
    if encryption.get("Enabled"):
        raise unsupported("SSESpecification")
    if request.get("ResourcePolicy") is not None:
        raise unsupported("ResourcePolicy")
    if request.get("GlobalTableSourceArn") is not None:
        raise unsupported("GlobalTableSourceArn")


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


def check_capacity_limits(read: int, write: int, region: str, reserved: tuple[int, int]) -> None:
    """Per-table and per-account provisioned capacity quotas (LimitExceededException)."""
    for name, value, table_max in (
        ("ReadCapacityUnits", read, limits.TABLE_MAX_READ_CAPACITY_UNITS),
        ("WriteCapacityUnits", write, limits.TABLE_MAX_WRITE_CAPACITY_UNITS),
    ):
        if value > table_max:
            raise LimitExceededException(
                f"The requested {name}, {value}, is above the per table maximum for the "
                f"account in {region}. Per table maximum: {table_max}."
            )
    for name, value, in_use, account_max in (
        ("ReadCapacityUnits", read, reserved[0], limits.ACCOUNT_MAX_READ_CAPACITY_UNITS),
        ("WriteCapacityUnits", write, reserved[1], limits.ACCOUNT_MAX_WRITE_CAPACITY_UNITS),
    ):
        if in_use + value > account_max:
            raise LimitExceededException(
                f"This request would have caused the {name} limit to be exceeded for the "
                f"account in {region}. Current {name} reserved by the account: {in_use}. "
                f"Limit: {account_max}. Requested: {value}"
            )


def check_table_class(table_class: Any) -> str:
    if table_class not in TABLE_CLASSES:
        raise ValidationException(
            "Invalid table-class parameter provided. Please try again with a valid "
            "table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS]."
        )
    return str(table_class)


def on_demand_limits(
    request: Mapping[str, Any], billing_mode: str, region: str, creating: bool
) -> dict[str, int]:
    """The OnDemandThroughput members of a request, validated (-1 clears on update)."""
    throughput = request.get("OnDemandThroughput") or {}
    members = {
        name: int(throughput[name])
        for name in ("MaxReadRequestUnits", "MaxWriteRequestUnits")
        if throughput.get(name) is not None
    }
    if members and billing_mode == PROVISIONED:
        first = next(iter(members))
        if creating:
            raise invalid_parameter(
                f"{first} for OnDemandThroughput cannot be specified when table "
                "BillingMode is PROVISIONED."
            )
        raise invalid_parameter(
            f"{first} for OnDemandThroughput cannot be specified when the table "
            "BillingMode is PROVISIONED"
        )
    for name, value in members.items():
        if value == 0 or value < -1 or (creating and value < 1):
            raise invalid_parameter(
                f"Requested {name} for OnDemandThroughput for table is outside of valid range"
            )
        table_max = limits.TABLE_MAX_READ_CAPACITY_UNITS
        if name == "MaxWriteRequestUnits":
            table_max = limits.TABLE_MAX_WRITE_CAPACITY_UNITS
        if value > table_max:
            kind = "Read" if name == "MaxReadRequestUnits" else "Write"
            raise LimitExceededException(
                f"Subscriber limit exceeded: Requested {name} for OnDemandThroughput for "
                f"table exceeds TableMax{kind}CapacityUnits of the account in region {region}"
            )
    return members


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
    indexes = check_create_indexes(request, definitions, partition_key, sort_key, billing_mode)
    check_create_secondary_features(request)
    key_names = [partition_key.name] + ([sort_key.name] if sort_key else [])
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


def reserved_capacity(
    tables: Iterable[TableSchema], excluding: str | None = None
) -> tuple[int, int]:
    """Provisioned (read, write) capacity held by the given tables."""
    read = write = 0
    for schema in tables:
        if schema.name == excluding or schema.billing_mode != PROVISIONED:
            continue
        read += schema.read_capacity_units
        write += schema.write_capacity_units
    return read, write


# --- TableDescription -------------------------------------------------------------


SECONDS_PER_DAY = 86_400
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def _utc_day(moment: float) -> int:
    """Days since 1970-01-01 (UTC) of an epoch time: calendar arithmetic without
    the datetime module, which the pure packages keep out (no clock here)."""
    return int(moment // SECONDS_PER_DAY)


def _civil_date(day: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number (H. Hinnant's days-to-civil algorithm)."""
    shifted = day + 719_468
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day_of_year - (153 * month_index + 2) // 5 + 1


def _same_utc_day(first: float, second: float) -> bool:
    return _utc_day(first) == _utc_day(second)


def decreases_today(schema: TableSchema, now: float) -> int:
    """NumberOfDecreasesToday resets at 00:00 UTC."""
    last = schema.last_decrease_time
    if last is None or not _same_utc_day(last, now):
        return 0
    return schema.decreases_today


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


# --- UpdateTable ------------------------------------------------------------------

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


def _creates_or_deletes_index(request: Mapping[str, Any]) -> bool:
    return any(
        update.get("Create") is not None or update.get("Delete") is not None
        for update in request.get("GlobalSecondaryIndexUpdates") or []
    )


SINGLE_CONCERN_MEMBERS = (
    (
        "DeletionProtectionEnabled",
        "DeletionProtection modification must be the only operation in the request",
    ),
    (
        "SSESpecification",
        "Server-Side Encryption modification must be the only operation in the request",
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
        raise unsupported("SSESpecification")
    if "ReplicaUpdates" in changes:
        raise unsupported("ReplicaUpdates")
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


def _spoken_time(moment: float) -> str:
    """DynamoDB's human form: 'Friday, October 9, 2026 at 1:21:34 AM Coordinated Universal Time'."""
    day = _utc_day(moment)
    year, month, day_of_month = _civil_date(day)
    seconds = int(moment - day * SECONDS_PER_DAY)
    hour, minute, second = seconds // 3600, seconds // 60 % 60, seconds % 60
    weekday = WEEKDAYS[(day + 3) % 7]  # 1970-01-01 was a Thursday
    meridiem = "AM" if hour < 12 else "PM"
    return (
        f"{weekday}, {MONTHS[month - 1]} {day_of_month}, {year} at "
        f"{hour % 12 or 12}:{minute:02}:{second:02} {meridiem} Coordinated Universal Time"
    )


def check_decrease_allowed(schema: TableSchema, now: float) -> None:
    """Four decreases per UTC day, then one per hour after the last one."""
    count = decreases_today(schema, now)
    last = schema.last_decrease_time
    if count < FREE_DECREASES_PER_DAY or last is None:
        return
    if now - last >= DECREASE_INTERVAL_SECONDS:
        return
    next_midnight = (_utc_day(last) + 1) * SECONDS_PER_DAY
    next_allowed = min(last + DECREASE_INTERVAL_SECONDS, next_midnight)
    raise LimitExceededException(
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
        f"given UTC day. After the first {FREE_DECREASES_PER_DAY} decreases, each subsequent "
        "decrease in the same UTC day can be performed at most once every "
        f"{DECREASE_INTERVAL_SECONDS} seconds. Number of decreases today: {count}. "
        f"Last decrease at {_spoken_time(last)}. "
        f"Next decrease can be made at {_spoken_time(next_allowed)}."
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
    """A new table class; DynamoDB allows two changes in any 30 days. Re-sending
    the current class is accepted and changes nothing."""
    table_class = check_table_class(table_class)
    if table_class == schema.table_class:
        return replace(schema, table_class_reported=True)
    window_start = now - TABLE_CLASS_CHANGE_PERIOD_DAYS * SECONDS_PER_DAY
    recent = tuple(moment for moment in schema.table_class_changes if moment > window_start)
    if len(recent) >= TABLE_CLASS_CHANGES_PER_PERIOD:
        raise LimitExceededException(
            f"Updates to TableClass are limited to {TABLE_CLASS_CHANGES_PER_PERIOD} times in "
            f"{TABLE_CLASS_CHANGE_PERIOD_DAYS} day(s)."
        )
    return replace(
        schema,
        table_class=table_class,
        table_class_reported=True,
        table_class_update_time=now,
        table_class_changes=(*recent, now)[-TABLE_CLASS_CHANGES_PER_PERIOD:],
    )


# --- table ARNs -------------------------------------------------------------------


def table_name_from_identifier(identifier: str) -> str:
    """DescribeTable/UpdateTable/DeleteTable accept a table ARN as TableName."""
    if identifier.startswith("arn:") and ":table/" in identifier:
        return identifier.split(":table/", 1)[1].split("/", 1)[0]
    return identifier


def new_table_name(identifier: str) -> str:
    """CreateTable's TableName, which may be given as the table's ARN."""
    name = table_name_from_identifier(identifier)
    if name != identifier and not _valid_table_name(name):
        raise ValidationException(
            f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy "
            "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
        )
    return name


def _invalid_table_arn(arn: str) -> ValidationException:
    return ValidationException(f"Invalid TableArn: Invalid ResourceArn provided as input {arn}")


def _valid_table_name(name: str) -> bool:
    if not limits.TABLE_NAME_MIN_LENGTH <= len(name) <= limits.TABLE_NAME_MAX_LENGTH:
        return False
    return all(
        character.isascii() and (character.isalnum() or character in "_.-") for character in name
    )


def table_name_from_arn(arn: Any, region: str, account_id: str) -> str:
    """The table a tagging request's ResourceArn names, with DynamoDB's refusals."""
    if arn is None:
        raise ValidationException("Invalid TableArn")
    if not arn.startswith("arn:"):
        raise invalid_parameter(f"ARNs must start with 'arn:': {arn}")
    parts = arn.split(":", 5)
    if len(parts) < 6 or parts[2] != "dynamodb":
        raise invalid_parameter(f"Provided Arn is not a DynamoDB resource arn: {arn}")
    _, _, _, arn_region, arn_account, resource = parts
    if arn_region != region or arn_account != account_id:
        raise _invalid_table_arn(arn)
    segments = resource.split("/")
    if segments[0] != "table" or len(segments) < 2:
        raise _invalid_table_arn(arn)
    if len(segments) > 2 and segments[2] != "stream":
        raise invalid_parameter(
            "Invalid resource arn provided, only table or stream is accepted. "
            f"Provided resource arn: {arn}"
        )
    if not _valid_table_name(segments[1]):
        raise _invalid_table_arn(arn)
    if len(segments) > 2:  # a stream: dynastore has none yet
        raise resource_arn_not_found(arn)
    return str(segments[1])


def resource_arn_not_found(arn: Any) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: ResourceArn: {arn} not found")


# --- tags -------------------------------------------------------------------------

TAG_PUNCTUATION = frozenset("_.:/=+-@")


def _valid_tag_text(text: str) -> bool:
    """AWS's tag pattern ^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$: letters, separators,
    numbers and a little punctuation, of any script."""
    return all(
        character in TAG_PUNCTUATION or unicodedata.category(character)[0] in "LZN"
        for character in text
    )


def check_tag_key(key: Any) -> str:
    if key is None:
        raise ValidationException("The Tag Key provided is invalid, Key: null")
    if not 1 <= len(key) <= limits.TAG_KEY_MAX_LENGTH or not _valid_tag_text(key):
        raise ValidationException(f"The Tag Key provided is invalid, Key: {key}")
    if key.lower().startswith("aws:"):
        raise ValidationException(f"Tag Key cannot be prefixed with aws:, Key: {key}")
    return str(key)


def check_tag_value(value: Any) -> str:
    if value is None:
        raise ValidationException("The Tag Value provided is invalid, Value: null")
    if len(value) > limits.TAG_VALUE_MAX_LENGTH or not _valid_tag_text(value):
        raise ValidationException(f"The Tag Value provided is invalid, Value: {value}")
    return str(value)


def too_many_tags() -> ValidationException:
    return ValidationException(
        "Number of Tags exceed the current limit for the provided ResourceArn"
    )


def validate_tags(
    tags: Sequence[Mapping[str, Any]], *, required: bool = True
) -> tuple[tuple[str, str], ...]:
    """A Tags list as (key, value) pairs, checked as DynamoDB checks it (all or nothing)."""
    if not tags and required:
        raise ValidationException("Atleast one Tag needs to be provided as Input.")
    pairs: dict[str, str] = {}
    for tag in tags:
        key = check_tag_key(tag.get("Key"))
        value = check_tag_value(tag.get("Value"))
        if key in pairs:
            raise ValidationException(
                f"Duplicate Tag Keys provided as input: Duplicate Tag Key found {key}"
            )
        pairs[key] = value
    if len(pairs) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return tuple(pairs.items())


def merge_tags(
    current: Sequence[tuple[str, str]], added: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """TagResource upserts; the 50-tag limit applies to the merged set."""
    merged = dict(current)
    merged.update(added)
    if len(merged) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return tuple(merged.items())


def validate_tag_keys(keys: Sequence[Any]) -> list[str]:
    if not keys:
        raise ValidationException("Atleast one Tag Key needs to be provided as Input.")
    checked = [check_tag_key(key) for key in keys]
    if len(checked) > limits.TAGS_PER_RESOURCE:
        raise too_many_tags()
    return checked


def tags_description(tags: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"Key": key, "Value": value} for key, value in tags]


# --- UpdateTable: GlobalSecondaryIndexUpdates ---------------------------------------

ONLINE_INDEX_ACTIONS_PER_UPDATE = 1
"""DynamoDB creates or deletes one index per UpdateTable (LimitExceededException)."""


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
    elements = create.get("KeySchema") or []
    if len(elements) > TABLE_KEY_SCHEMA_MAX_ELEMENTS:
        _check_multi_attribute_key_schema(elements, definitions, name)
    else:
        _check_index_key_schema(elements, definitions)
    _check_projection(create.get("Projection") or {})
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
        raise ResourceNotFoundException(
            f"Requested resource not found: Table: {schema.name} Index: {name} not found"
        )
    if not index.is_global:
        raise ValidationException(f"Cannot {verb} an index that is not a GlobalSecondaryIndex: {name}")
    return index


def _updated_index_throughput(
    schema: TableSchema, index: IndexDefinition, update: Mapping[str, Any], billing_mode: str, now: float
) -> IndexDefinition:
    throughput = update.get("ProvisionedThroughput")
    on_demand = update.get("OnDemandThroughput")
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
    read, write = _units(throughput, "ReadCapacityUnits"), _units(throughput, "WriteCapacityUnits")
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
