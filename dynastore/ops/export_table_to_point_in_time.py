"""ExportTableToPointInTime (dynastore/backups/exports.py, docs/export-import.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import exports

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    return {"ExportDescription": exports.description(exports.start_export(database, request))}
