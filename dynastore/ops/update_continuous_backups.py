"""UpdateContinuousBackups (dynastore/backups/, docs/backups.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import service
from dynastore.errors import ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    specification = request.get("PointInTimeRecoverySpecification") or {}
    if not specification.get("PointInTimeRecoveryEnabled") and specification.get("RecoveryPeriodInDays") is not None:
        # The service's text (ack-api-quirks' ValidationException catalogue).
        raise ValidationException("Invalid Request: Cannot specify RecoveryPeriodInDays when disabling "
                                  "point-in-time recovery.")
    return service.update_continuous_backups(database, request)
