"""``GET /_dynastore/backups/jobs`` (docs/admin.md, docs/backups.md): the
backups still being made and the restores in progress or failed, with their
progress. Kept apart from the rest of the package so the server's start
imports nothing of it until the route is called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_JOBS_PATH = "/_dynastore/backups/jobs"


def handle_admin_jobs(database: Database, method: str, path: str, body: bytes | None) -> tuple[int, Any]:
    """200 ``{"Jobs": [{"Kind": "backup"|"restore", "Id", "Table", "Status",
    "Items", "Bytes", "TotalItems", "TotalBytes", ...}]}``."""
    if path.rstrip("/") != ADMIN_JOBS_PATH:
        return 404, {"message": "Not Found"}
    if method != "GET":
        return 405, {"message": "Method Not Allowed"}
    from dynastore.backups import jobs, service

    jobs.ensure_resumed(database)
    return 200, {"Jobs": service.job_progress(database)}
