"""DynamoDB's errors of ExportTableToPointInTime / DescribeExport / ListExports
(wire type = class name). Texts DynamoDB's documentation does not give are
marked unconfirmed in docs/compatibility.md."""

from __future__ import annotations

from dynastore.errors import DynamoDBError


class ExportNotFoundException(DynamoDBError):
    pass


class InvalidExportTimeException(DynamoDBError):
    pass


class ExportConflictException(DynamoDBError):
    pass


def export_not_found(arn: str) -> ExportNotFoundException:
    return ExportNotFoundException(f"Export not found: {arn}")


def export_time_outside_window() -> InvalidExportTimeException:
    return InvalidExportTimeException(
        "Export time is outside the point in time recovery window: it must lie between "
        "EarliestRestorableDateTime and LatestRestorableDateTime"
    )


def export_time_in_future() -> InvalidExportTimeException:
    return InvalidExportTimeException("Export time cannot be in the future")


def client_token_conflict(token: str) -> ExportConflictException:
    return ExportConflictException(
        f"An export with client token {token} was already requested with different parameters"
    )
