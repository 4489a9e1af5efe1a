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


# --- a finished export's files (dynastore/console/exports_download.py) ------------------------------
def _finished_export(embedded: Any, tmp_path: Any, table: str) -> tuple[ConsoleApp, dict[str, Any]]:
    from dynastore.backups import buckets

    local = buckets.LocalBuckets(tmp_path / "buckets")
    buckets.configure(embedded.database.storage, local)
    client = embedded.client()
    client.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    for number in range(30):
        client.put_item(TableName=table, Item={"id": {"S": f"i{number}"}})
    client.update_continuous_backups(TableName=table,
                                     PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    arn = client.describe_table(TableName=table)["Table"]["TableArn"]
    started = client.export_table_to_point_in_time(TableArn=arn, S3Bucket="out", S3Prefix="p")["ExportDescription"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        description = client.describe_export(ExportArn=started["ExportArn"])["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS":
            break
        time.sleep(0.1)
    assert description["ExportStatus"] == "COMPLETED"
    return ConsoleApp(embedded.handle_locked, buckets=local), description


def post_download(app: ConsoleApp, url: bytes, arn: str, **extra: bytes) -> tuple[int, bytes, bytes, bytes]:
    headers = {**API_HEADERS, **{name.encode(): value for name, value in extra.items()}}
    return app.handle(b"POST", url, headers, json.dumps({"ExportArn": arn}).encode())


def test_a_finished_exports_files_are_listed_and_downloaded(embedded: Any, tmp_path: Any) -> None:
    import gzip

    app, description = _finished_export(embedded, tmp_path, "io-download")
    status, _, reply, _ = post_download(app, b"/console/exports/files", description["ExportArn"])
    files = json.loads(reply)["Files"]
    assert status == 200
    names = [entry["Name"] for entry in files]
    assert names[:2] == ["manifest-summary.json", "manifest-files.json"] and len(names) >= 3
    data = next(entry for entry in files if entry["Name"].endswith(".json.gz"))
    url = b"/console/exports/file?key=" + data["Key"].encode()
    status, content_type, content, headers = post_download(app, url, description["ExportArn"])
    assert status == 200 and content_type == b"application/octet-stream"
    assert b"Content-Disposition: attachment" in headers and len(content) == data["Size"]
    lines = gzip.decompress(content).decode().splitlines()
    assert sum(1 for entry in files if entry["Name"].endswith(".json.gz")) == 1 and len(lines) == 30
    status, _, content, _ = post_download(app, b"/console/exports/file?key=" + files[0]["Key"].encode(),
                                          description["ExportArn"])
    assert status == 200 and json.loads(content)["itemCount"] == 30


@pytest.mark.parametrize("key", [
    "../../etc/passwd", "p/AWSDynamoDB/../../secret.txt", "secret.txt", "/etc/passwd", "p/AWSDynamoDB/x/_started",
])
def test_only_the_files_an_exports_manifests_name_can_be_downloaded(embedded: Any, tmp_path: Any, key: str) -> None:
    from urllib.parse import quote

    app, description = _finished_export(embedded, tmp_path, f"io-traversal-{abs(hash(key)) % 10000}")
    (tmp_path / "buckets" / "out" / "secret.txt").write_text("not for download")
    status, _, reply, _ = post_download(app, b"/console/exports/file?key=" + quote(key).encode(),
                                        description["ExportArn"])
    assert status == 404 and json.loads(reply)["__type"].endswith("NoSuchFile")


def test_a_download_needs_a_describable_export_and_the_servers_buckets(embedded: Any, tmp_path: Any) -> None:
    app, description = _finished_export(embedded, tmp_path, "io-refusals")
    unknown = description["ExportArn"].rsplit("/", 1)[0] + "/01700000000000-deadbeef"
    status, _, reply, _ = post_download(app, b"/console/exports/files", unknown)
    assert status == 400 and json.loads(reply)["__type"].endswith("ExportNotFoundException")
    status, _, reply, _ = app.handle(b"POST", b"/console/exports/files", {b"host": b"127.0.0.1:8000"},
                                     json.dumps({"ExportArn": description["ExportArn"]}).encode())
    assert status == 403  # the console header is required, as for every proxied call
    assert app.handle(b"GET", b"/console/exports/files", API_HEADERS, b"")[0] == 405
    without = ConsoleApp(embedded.handle_locked)
    status, _, reply, _ = post_download(without, b"/console/exports/files", description["ExportArn"])
    assert status == 404 and json.loads(reply)["__type"].endswith("NotAvailable")


def test_a_signed_download_is_authorized_by_the_pages_own_signed_describe_export(embedded: Any, tmp_path: Any) -> None:
    """Sign-in mode: the page signs a DescribeExport for ``/``; the console passes that
    signature on unchanged (no cookie, no Origin) and reads the files only after a 200."""
    from dynastore.backups import buckets

    _, description = _finished_export(embedded, tmp_path, "io-signed")
    local = buckets.buckets_for(embedded.database)
    seen: list[tuple[bytes, bytes, dict[bytes, bytes]]] = []

    class Signed:
        region = "us-east-1"

        def __call__(self, operation: str, body: bytes, region: str | None = None) -> tuple[int, bytes]:
            raise AssertionError("a signed download must not make a call of its own")

        def signed(self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes) -> tuple[int, bytes]:
            seen.append((method, path, headers))
            status, _, reply, _ = embedded.handle_locked(method, path, {
                **headers, b"authorization": b"AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, "
                                             b"SignedHeaders=host, Signature=0"}, body)
            return status, reply

    app = ConsoleApp(forwarder=Signed(), require_signature=True, buckets=local)
    signature = {b"authorization": b"AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
                                   b"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=abc",
                 b"x-amz-date": b"20260101T000000Z", b"cookie": b"c=1",
                 b"content-type": b"application/x-amz-json-1.0"}
    status, _, reply, _ = post_download(app, b"/console/exports/files", description["ExportArn"],
                                        **{"x-amz-target": b"DynamoDB_20120810.ListTables"}, **_named(signature))
    assert status == 400 and not seen  # the signed call must be the DescribeExport
    status, _, reply, _ = post_download(app, b"/console/exports/files", description["ExportArn"],
                                        **{"x-amz-target": b"DynamoDB_20120810.DescribeExport"}, **_named(signature))
    assert status == 200 and json.loads(reply)["Files"]
    method, path, headers = seen[0]
    assert (method, path) == (b"POST", b"/")
    assert headers[b"x-amz-target"] == b"DynamoDB_20120810.DescribeExport"
    assert b"cookie" not in headers and b"x-dynastore-console" not in headers


def _named(headers: dict[bytes, bytes]) -> dict[str, bytes]:
    return {name.decode(): value for name, value in headers.items()}
