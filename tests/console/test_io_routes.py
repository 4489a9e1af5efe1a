"""The console's side of the Import / Export page: the admin routes it reads
progress from (exports in progress, imports with their errors, backup jobs),
passed on to a real dynastore server, and what config.json tells the page
about the server's buckets and the largest file it imports itself."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from dynastore import limits
from dynastore.console import ConsoleApp, with_console

API_HEADERS = {b"x-dynastore-console": b"1", b"content-type": b"application/json", b"host": b"127.0.0.1:8000"}


@pytest.fixture()
def app(embedded: Any) -> ConsoleApp:
    return ConsoleApp(embedded.handle_locked)


def get(app: ConsoleApp, url: bytes, headers: dict[bytes, bytes] = API_HEADERS) -> tuple[int, Any]:
    status, content_type, reply, _ = app.handle(b"GET", url, headers, b"")
    assert content_type == b"application/json"
    return status, json.loads(reply)


@pytest.mark.parametrize(("url", "key"), [
    (b"/console/admin/exports/jobs", "Jobs"),
    (b"/console/admin/backups/imports", "Imports"),
    (b"/console/admin/backups/jobs", "Jobs"),
])
def test_progress_routes_reach_the_servers_admin_routes(app: ConsoleApp, url: bytes, key: str) -> None:
    status, answer = get(app, url)
    assert status == 200 and isinstance(answer[key], list)


@pytest.mark.parametrize("url", [b"/console/admin/exports/jobs", b"/console/admin/backups/imports"])
def test_progress_routes_keep_the_cross_site_guard_and_take_get_only(app: ConsoleApp, url: bytes) -> None:
    status, answer = get(app, url, {b"host": b"127.0.0.1:8000"})
    assert status == 403 and answer["__type"].endswith("Forbidden")
    status, answer = get(app, url, {**API_HEADERS, b"origin": b"http://evil.example"})
    assert status == 403
    status, _, _, _ = app.handle(b"POST", url, API_HEADERS, b"{}")
    assert status == 405


def test_an_import_and_its_errors_are_listed(app: ConsoleApp, embedded: Any, tmp_path: Any) -> None:
    from dynastore.backups import buckets

    buckets.configure(embedded.database.storage, buckets.LocalBuckets(tmp_path))
    folder = tmp_path / "in-bucket" / "rows"
    folder.mkdir(parents=True)
    (folder / "a.csv").write_text("id,name\n1,one\n,no key\n2,two\n")
    client = embedded.client()
    started = client.import_table(
        S3BucketSource={"S3Bucket": "in-bucket", "S3KeyPrefix": "rows/"}, InputFormat="CSV",
        InputCompressionType="NONE",
        TableCreationParameters={
            "TableName": "io-route-import", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        },
    )["ImportTableDescription"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        description = client.describe_import(ImportArn=started["ImportArn"])["ImportTableDescription"]
        if description["ImportStatus"] != "IN_PROGRESS":
            break
        time.sleep(0.1)
    assert description["ImportStatus"] == "COMPLETED" and description["ErrorCount"] == 1
    status, answer = get(app, b"/console/admin/backups/imports")
    entry = next(entry for entry in answer["Imports"] if entry["Arn"] == started["ImportArn"])
    assert entry["Errors"] == 1 and len(entry["ErrorSamples"]) == 1


def test_config_says_where_the_buckets_are_and_the_file_import_limit(embedded: Any) -> None:
    mounted = with_console(_Handler(embedded),
                           files_location="folders under /srv/buckets")
    status, _, reply, _ = mounted.handle(b"GET", b"/console/config.json", {}, b"")
    config = json.loads(reply)
    assert status == 200
    assert config["buckets"] == "folders under /srv/buckets"
    assert config["fileImportMaxBytes"] == limits.CONSOLE_FILE_IMPORT_MAX_BYTES


class _Handler:
    def __init__(self, embedded: Any) -> None:
        self.embedded = embedded

    def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Any:
        return self.embedded.handle_locked(method, url, headers, body)
