"""``GET /_dynastore/backups/imports`` (docs/import.md, docs/admin.md): every
import of the namespace, newest first, with its progress (records and bytes
read, items imported, errors) and its first errors in the data — where a
user reads what DynamoDB would have written to CloudWatch Logs. A sibling of
``GET /_dynastore/backups/jobs``; kept apart so the server's start imports
nothing of the import code until the route is called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_IMPORTS_PATH = "/_dynastore/backups/imports"


def handle_admin_imports(database: Database, method: str, path: str, body: bytes | None) -> tuple[int, Any]:
    """200 ``{"Imports": [{"Kind": "import", "Id", "Arn", "Table", "Status", "Items",
    "ImportedItems", "Errors", "Bytes", "TotalBytes", "ErrorSamples", ...}]}``."""
    if path.rstrip("/") != ADMIN_IMPORTS_PATH:
        return 404, {"message": "Not Found"}
    if method != "GET":
        return 405, {"message": "Method Not Allowed"}
    from dynastore.backups import imports

    imports.ensure_resumed(database)
    return 200, {"Imports": imports.import_progress(database)}
