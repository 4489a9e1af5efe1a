"""DeleteBackup (dynastore/backups/, docs/backups.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import service
from dynastore.engine.table_arns import check_backup_arn

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    check_backup_arn(request.get("BackupArn"))
    return service.delete_backup(database, request)
