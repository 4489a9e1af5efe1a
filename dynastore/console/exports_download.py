"""The files of a finished export, for the Import / Export page's download links.

``POST /console/exports/files`` and ``POST /console/exports/file?key=KEY`` take
the body of a DescribeExport call (``{"ExportArn": ...}``), sent exactly as the
page sends any API call — with its region header, or signed by the page with
the user's key (``X-Amz-Target: DynamoDB_20120810.DescribeExport``). The
console forwards that call to the server first: the server's answer is the
authorization (a key that may not describe the export gets its error back,
and nothing is read) and says where the files are. Then:

- ``files`` answers ``{"Files": [{"Key", "Name", "Size"}]}``: the export's two
  manifests and the data files manifest-files.json names;
- ``file`` answers one of those files as an attachment.

Only those keys can be named — the request's key must be one the export's own
manifests list — so no path a request sends reaches anything else in the
buckets dir (the local buckets refuse ``..`` besides). A file is read whole
into one answer, so files over ``limits.CONSOLE_EXPORT_DOWNLOAD_MAX_BYTES``
are refused (the page shows their place on the server instead); the browser
saves one file at a time, never the whole export.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dynastore import limits

MAX_DOWNLOAD_BYTES = limits.CONSOLE_EXPORT_DOWNLOAD_MAX_BYTES
MANIFEST_SUMMARY = "manifest-summary.json"
MANIFEST_FILES = "manifest-files.json"

Reply = tuple[int, bytes, bytes, bytes]
DescribeCall = Callable[[bytes], tuple[int, bytes]]
"""Forwards a DescribeExport request body (as the page sent it) and returns the server's answer."""

JSON = b"application/json"
NO_STORE = (
    b"Cache-Control: no-store\r\n"
    b"X-Content-Type-Options: nosniff\r\n"
    b"Referrer-Policy: no-referrer\r\n"
    b"X-Frame-Options: DENY\r\n"
)


class DownloadRefused(Exception):
    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message

    def reply(self) -> Reply:
        body = json.dumps({"__type": self.error_type, "message": self.message}).encode()
        return (self.status, JSON, body, NO_STORE)


def _described(describe: DescribeCall, body: bytes) -> dict[str, Any]:
    status, answer = describe(body)
    if status != 200:  # the server's own refusal (signature, access, no such export) goes back as is
        raise _PassedOn(status, answer)
    description = json.loads(answer).get("ExportDescription") or {}
    if description.get("ExportStatus") != "COMPLETED" or not description.get("ExportManifest"):
        raise DownloadRefused(409, "com.dynastore.console#ExportNotCompleted",
                              "Only a COMPLETED export's files can be downloaded")
    return dict(description)


class _PassedOn(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _read_bounded(buckets: Any, bucket: str, key: str) -> bytes:
    from dynastore.backups.buckets import BucketError

    try:
        with buckets.open_read(bucket, key) as stream:
            content = bytes(stream.read(MAX_DOWNLOAD_BYTES + 1))
    except BucketError as error:
        raise DownloadRefused(404, f"com.dynastore.console#{error.code}", error.message) from None
    if len(content) > MAX_DOWNLOAD_BYTES:
        raise DownloadRefused(
            413, "com.dynastore.console#FileTooLarge",
            f"{key} is larger than the {MAX_DOWNLOAD_BYTES // (1024 * 1024)} MB the console downloads; "
            "copy it from the bucket instead",
        )
    return content


def export_files(buckets: Any, description: dict[str, Any]) -> list[dict[str, Any]]:
    """The files of a COMPLETED export a download may name: its two manifests
    and every data file manifest-files.json lists, with their sizes."""
    bucket = str(description["S3Bucket"])
    summary_key = str(description["ExportManifest"])
    base = summary_key.rsplit("/", 1)[0] if "/" in summary_key else ""
    files_key = f"{base}/{MANIFEST_FILES}" if base else MANIFEST_FILES
    keys = [summary_key, files_key]
    for line in _read_bounded(buckets, bucket, files_key).decode("utf-8").splitlines():
        if line.strip():
            data_key = json.loads(line).get("dataFileS3Key")
            if isinstance(data_key, str):
                keys.append(data_key)
    sizes = {info.key: info.size for info in buckets.list_objects(bucket, f"{base}/" if base else "")}
    return [{"Key": key, "Name": key.rsplit("/", 1)[-1], "Size": sizes.get(key)} for key in keys]


def handle_export_download(
    buckets: Any | None, describe: DescribeCall, body: bytes, key: str | None
) -> Reply:
    """``key`` None: the export's file list; else that file as an attachment."""
    if buckets is None:
        return DownloadRefused(404, "com.dynastore.console#NotAvailable",
                               "this console does not see the server's buckets "
                               "(only the console of `dynastore serve` does)").reply()
    try:
        description = _described(describe, body)
        files = export_files(buckets, description)
        if key is None:
            return (200, JSON, json.dumps({"Files": files}).encode(), NO_STORE)
        if key not in {entry["Key"] for entry in files}:
            raise DownloadRefused(404, "com.dynastore.console#NoSuchFile",
                                  "not a file of this export (its manifests list the files that are)")
        content = _read_bounded(buckets, str(description["S3Bucket"]), key)
    except _PassedOn as refused:
        return (refused.status, JSON, refused.body, NO_STORE)
    except DownloadRefused as refused:
        return refused.reply()
    name = key.rsplit("/", 1)[-1]
    content_type = b"application/json" if name.endswith(".json") else b"application/octet-stream"
    safe_name = "".join(char for char in name if char.isalnum() or char in "._-") or "export-file"
    headers = NO_STORE + f'Content-Disposition: attachment; filename="{safe_name}"\r\n'.encode()
    return (200, content_type, content, headers)
