"""What CreateTable and UpdateTable share: the billing modes, provisioned and
on-demand throughput members and their quotas, the table class, and small
readers of request members.

Pure: no storage, no clock reads, no randomness. Every message is DynamoDB's
own wording, as captured from the service (dynalite's and dynoxide's
conformance tests, and the ack-api-quirks captures of 2026).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dynastore import limits
from dynastore.engine.schema import TableSchema
from dynastore.errors import LimitExceededException, ValidationException, invalid_parameter

PROVISIONED = "PROVISIONED"
PAY_PER_REQUEST = "PAY_PER_REQUEST"
TABLE_CLASSES = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")

# Candidates for dynastore/limits.py (named in the report to the lead).
THROUGHPUT_VALUE_MAX = 1_000_000_000_000
"""Above this DynamoDB answers "Given value N for ReadCapacityUnits is out of bounds"."""
ON_DEMAND_WARM_READ_UNITS = 12_000
ON_DEMAND_WARM_WRITE_UNITS = 4_000
"""The warm throughput every on-demand table starts with."""


def check_sse_specification(encryption: Mapping[str, Any]) -> None:
    """SSESpecification's own rules (CreateTable and UpdateTable; the
    service's texts, ack-api-quirks' ValidationException catalogue): with
    Enabled false neither SSEType nor KMSMasterKeyId; a KMSMasterKeyId needs
    SSEType KMS; AES256 is not offered."""
    sse_type = encryption.get("SSEType")
    if encryption.get("Enabled") is False:
        if sse_type is not None:
            raise invalid_parameter("SSEType can not be specified if Enabled is false")
        if encryption.get("KMSMasterKeyId") is not None:
            raise invalid_parameter("KMSMasterKeyId can not be specified if Enabled is false")
    if sse_type == "AES256":
        raise invalid_parameter("SSEType AES256 is not supported")
    if encryption.get("KMSMasterKeyId") is not None and sse_type != "KMS":
        raise invalid_parameter("SSEType KMS is required if KMSMasterKeyId is specified")


def unsupported(feature: str) -> ValidationException:
    """dynastore refuses, rather than ignores, what it cannot do yet."""
    return ValidationException(
        f"dynastore does not support {feature} yet (see docs/compatibility.md)"
    )


def units(throughput: Mapping[str, Any], name: str) -> int | None:
    value = throughput.get(name)
    return None if value is None else int(value)


def present_throughput(request: Mapping[str, Any]) -> tuple[int, int] | None:
    """(read, write) of a request's ProvisionedThroughput, None when absent."""
    throughput = request.get("ProvisionedThroughput")
    if throughput is None:
        return None
    read = units(throughput, "ReadCapacityUnits")
    write = units(throughput, "WriteCapacityUnits")
    return (read or 0, write or 0)


def check_throughput_bounds(request: Mapping[str, Any]) -> None:
    throughput = request.get("ProvisionedThroughput") or {}
    for name in ("ReadCapacityUnits", "WriteCapacityUnits"):
        value = units(throughput, name)
        if value is not None and value > THROUGHPUT_VALUE_MAX:
            raise ValidationException(f"Given value {value} for {name} is out of bounds")


def non_empty(value: Any) -> bool:
    """DynamoDB treats an empty list or struct like an absent member."""
    return value is not None and value != [] and value != {}


REFER_TO_THE_GUIDE = (
    "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
)
"""How the service's quota texts end (ack-api-quirks' LimitExceededException catalogue, 2026)."""


def check_capacity_limits(read: int, write: int, region: str, reserved: tuple[int, int]) -> None:
    """Per-table and per-account provisioned capacity quotas (LimitExceededException)."""
    for name, value, table_max in (
        ("ReadCapacityUnits", read, limits.TABLE_MAX_READ_CAPACITY_UNITS),
        ("WriteCapacityUnits", write, limits.TABLE_MAX_WRITE_CAPACITY_UNITS),
    ):
        if value > table_max:
            raise LimitExceededException(
                f"The requested {name}, {value}, is above the per table maximum for the "
                f"account in {region}. Per table maximum: {table_max}. {REFER_TO_THE_GUIDE}"
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
