"""ExportTableToPointInTime (dynastore/backups/exports.py, docs/export-import.md).

The request-only checks the service makes before it looks at the table are
here, with its texts (live, ack-api-quirks' DDB-TABLE-457 and 447): an empty
TableArn, an incremental export without ExportFromTime (before the PITR
check); a table that does not exist is "Table not found: " and the ARN sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import exports
from dynastore.errors import TableNotFoundException, ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    table_arn = request.get("TableArn")
    if table_arn is None or table_arn == "":
        raise ValidationException("Invalid TableArn: Invalid Table ARN")
    if request.get("ExportType") == exports.INCREMENTAL_EXPORT and (
        (request.get("IncrementalExportSpecification") or {}).get("ExportFromTime") is None
    ):
        raise ValidationException("Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification")
    try:
        return {"ExportDescription": exports.description(exports.start_export(database, request))}
    except TableNotFoundException:
        raise TableNotFoundException(f"Table not found: {table_arn}") from None
