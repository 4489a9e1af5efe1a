"""DynamoDB's errors of backups and point-in-time recovery (wire type = class
name, namespace com.amazonaws.dynamodb.v20120810, HTTP 400). They live here
rather than in dynastore/errors.py while this package is young; messages
are DynamoDB's wording (docs/backups.md says where each was checked)."""

from __future__ import annotations

from dynastore.errors import DynamoDBError


class BackupNotFoundException(DynamoDBError):
    pass


class BackupInUseException(DynamoDBError):
    pass


class TableAlreadyExistsException(DynamoDBError):
    pass


class TableInUseException(DynamoDBError):
    pass


class ContinuousBackupsUnavailableException(DynamoDBError):
    pass


class PointInTimeRecoveryUnavailableException(DynamoDBError):
    pass


class InvalidRestoreTimeException(DynamoDBError):
    pass


def backup_not_found(arn: str) -> BackupNotFoundException:
    return BackupNotFoundException(f"Backup not found: {arn}")


def pitr_not_enabled(table_name: str) -> PointInTimeRecoveryUnavailableException:
    """Restoring (or exporting) a table whose PITR is off."""
    return PointInTimeRecoveryUnavailableException(
        f"Point in time recovery is not enabled for table '{table_name}'"
    )


RESTORE_TIME_OUTSIDE_WINDOW_MESSAGE = (
    "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime"
)
"""The exception's documented description (API reference,
InvalidRestoreTimeException); the service's exact text is unconfirmed
(docs/compatibility.md)."""


def restore_time_outside_window() -> InvalidRestoreTimeException:
    return InvalidRestoreTimeException(RESTORE_TIME_OUTSIDE_WINDOW_MESSAGE)
