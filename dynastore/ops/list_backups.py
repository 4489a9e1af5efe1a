"""ListBackups (dynastore/backups/, docs/backups.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import service
from dynastore.errors import invalid_parameter

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    lower, upper = request.get("TimeRangeLowerBound"), request.get("TimeRangeUpperBound")
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)) and lower > upper:
        # The service's text (ack-api-quirks' ValidationException catalogue): equal bounds are a range.
        raise invalid_parameter("Time range lower bound must be less than or equal to upper bound")
    return service.list_backups(database, request)
