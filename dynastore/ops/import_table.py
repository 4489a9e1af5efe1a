"""ImportTable (dynastore/backups/imports.py, docs/import.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.backups import imports

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    return imports.import_table(database, request)
