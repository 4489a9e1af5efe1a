"""``GET /_dynastore/exports/jobs`` (docs/admin.md, docs/export-import.md): the
exports in progress, with items and bytes done, for progress bars. Kept
apart so the server's start imports nothing of the export code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_EXPORT_JOBS_PATH = "/_dynastore/exports/jobs"


def handle_admin_export_jobs(database: Database, method: str, path: str, body: bytes | None) -> tuple[int, Any]:
    """200 ``{"Jobs": [{"Kind": "export", "Id", "Arn", "Table", "Status",
    "Items", "Bytes", "TotalItems", "TotalBytes", "Files"}], "Buckets":
    {"Folder": PATH} | {"S3": ENDPOINT}}``."""
    if path.rstrip("/") != ADMIN_EXPORT_JOBS_PATH:
        return 404, {"message": "Not Found"}
    if method != "GET":
        return 405, {"message": "Method Not Allowed"}
    from dynastore.backups import exports
    from dynastore.backups.buckets import LocalBuckets, buckets_for

    exports.ensure_resumed(database)
    buckets = buckets_for(database)
    # Where the buckets are, so ``dynastore export --endpoint`` on the same
    # machine can copy a finished export's folder.
    where = ({"Folder": str(buckets.root)} if isinstance(buckets, LocalBuckets)
             else {"S3": str(getattr(buckets, "endpoint_url", ""))})
    return 200, {"Jobs": exports.job_progress(database), "Buckets": where}
