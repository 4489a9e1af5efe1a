"""RestoreTableFromBackup (dynastore/backups/, docs/backups.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import service
from dynastore.engine.table_arns import check_backup_arn
from dynastore.errors import ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    check_backup_arn(request.get("BackupArn"))
    check_on_demand_override(request.get("OnDemandThroughputOverride"))
    return service.restore_from_backup(database, request)


def check_on_demand_override(override: Any) -> None:
    """The restored table is created, so its on-demand maximums are at least
    1, in the restore's own wording (live, ack-api-quirks DDB-TABLE-457:
    {0, 0} -> "Invalid Request: Requested MaxReadRequestUnits for
    OnDemandThroughput is outside of valid range")."""
    if not isinstance(override, dict):
        return
    for name in ("MaxReadRequestUnits", "MaxWriteRequestUnits"):
        value = override.get(name)
        if isinstance(value, int) and value < 1:
            raise ValidationException(f"Invalid Request: Requested {name} for OnDemandThroughput is outside of valid range")
