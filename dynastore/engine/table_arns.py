"""Table names given as ARNs: DescribeTable/UpdateTable/DeleteTable's
TableName, CreateTable's, and the ResourceArn of the tagging operations."""

from __future__ import annotations

from typing import Any

from dynastore import limits
from dynastore.errors import ResourceNotFoundException, ValidationException, invalid_parameter


def table_name_from_identifier(identifier: str) -> str:
    """DescribeTable/UpdateTable/DeleteTable accept a table ARN as TableName."""
    if identifier.startswith("arn:") and ":table/" in identifier:
        return identifier.split(":table/", 1)[1].split("/", 1)[0]
    return identifier


ARN_PARTITION = "aws"
"""The partition of the ARNs dynastore issues (Database.table_arn)."""


def table_name_in_namespace(identifier: str, region: str, account_id: str) -> str | None:
    """The table a TableName given as an ARN names in this (account, region)
    namespace, or None when it names none here. An ARN of another region or
    partition is refused as the service refuses it on DescribeTable
    ("1 validation error detected: Invalid AWS region in '<ARN>'": ack-api-quirks'
    live catalogue, also naming DescribeTimeToLive, DescribeContinuousBackups
    and DescribeContributorInsights); one of another account names no table here."""
    parts = identifier.split(":", 5)
    if len(parts) < 6 or ":table/" not in identifier:
        return None
    _, partition, _, arn_region, arn_account, _ = parts
    if partition != ARN_PARTITION:
        raise ValidationException(f"1 validation error detected: Invalid AWS partition in '{identifier}'")
    if arn_region != region:
        raise ValidationException(f"1 validation error detected: Invalid AWS region in '{identifier}'")
    if arn_account != account_id:
        return None
    return table_name_from_identifier(identifier)


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


def check_backup_arn(arn: Any) -> None:
    """A BackupArn must have a backup ARN's form
    (``arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME/backup/ID``), else
    "Invalid Backup ARN" (live, DescribeBackup / DeleteBackup /
    RestoreTableFromBackup: ack-api-quirks' DDB-TABLE-457 and 442); one of
    that form naming no backup is BackupNotFoundException."""
    parts = arn.split(":", 5) if isinstance(arn, str) else []
    if len(parts) < 6 or parts[0] != "arn" or parts[2] != "dynamodb" or not all(parts[1:5]):
        raise ValidationException("Invalid Backup ARN")
    segments = parts[5].split("/")
    if len(segments) != 4 or segments[0] != "table" or segments[2] != "backup" or not segments[1] or not segments[3]:
        raise ValidationException("Invalid Backup ARN")
