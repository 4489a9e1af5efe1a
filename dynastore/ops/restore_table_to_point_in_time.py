"""RestoreTableToPointInTime (dynastore/backups/, docs/backups.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import service
from dynastore.errors import TableNotFoundException, ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    check_request(request)
    try:
        return service.restore_to_point_in_time(database, request)
    except TableNotFoundException:
        if request.get("SourceTableArn") is not None:
            raise TableNotFoundException("Table not found") from None  # the ARN form: bare (captured)
        raise


def check_request(request: dict[str, Any]) -> None:
    """The request-only rules, in the service's words (ack-api-quirks'
    ValidationException and TableNotFoundException catalogues, 2026, whose
    lists drop the "Invalid Request: " these texts begin with): exactly one
    source, and one of the two times."""
    if (request.get("SourceTableName") is None) == (request.get("SourceTableArn") is None):
        raise ValidationException("Invalid Request: Must provide exactly one of: sourceTableArn, sourceTableName")
    if not request.get("UseLatestRestorableTime") and request.get("RestoreDateTime") is None:
        raise ValidationException(
            "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be specified, "
            "but not both"
        )
