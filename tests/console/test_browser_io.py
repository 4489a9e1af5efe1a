"""The Import / Export page in headless Chromium against a real ``dynastore serve
--in-memory --buckets-dir DIR`` process: an export refused while PITR is off,
PITR turned on from the page, the export followed to COMPLETED with its item
count and its files on disk, those files imported into a new table and an item
read back, a CSV import with a bad line showing its logged error, the bounded
in-browser file import, and a backup made and restored from the page.

Needs Playwright and Debian's chromium, like tests/console/test_browser.py.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.console.conftest import Console, ServedProcess, make_console, require_browser

require_browser()  # skips this module without Playwright or chromium

ITEMS = 20_000
"""Enough for an export and an import to be seen half-way."""
JOB_TIMEOUT_MS = 30_000


class BucketsServer(ServedProcess):
    """``dynastore serve --in-memory --buckets-dir DIR`` (or the ``where``
    arguments given) in a subprocess on a free port."""

    def __init__(self, directory: Path, *where: str, environment: dict[str, str] | None = None) -> None:
        self.buckets = directory / "buckets"
        super().__init__(directory, *(where or ("--buckets-dir", str(self.buckets))), environment=environment)


def create_orders(client: Any, name: str, count: int) -> None:
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "N"}],
    )
    for start in range(0, count, 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {
                "PK": {"S": f"CUSTOMER#{n % 37}"}, "SK": {"N": str(n)}, "total": {"N": f"{n}.25"},
                "tags": {"SS": ["a", f"t{n % 3}"]}, "note": {"S": "x" * (n % 50)},
            }}} for n in range(start, min(count, start + 25))
        ]})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BucketsServer]:
    server = BucketsServer(tmp_path_factory.mktemp("io"))
    try:
        create_orders(server.client(), "orders", ITEMS)
        yield server
    finally:
        server.stop()


@pytest.fixture()
def io_ui(browser: Any, served: BucketsServer, request: Any) -> Iterator[Console]:
    yield from make_console(browser, served, request)


def record_statuses(page: Any, element_id: str) -> None:
    """Every text the status line ``element_id`` shows, in order, into window.__statuses."""
    page.evaluate("""(id) => {
      window.__statuses = window.__statuses || {};
      const seen = window.__statuses[id] = [];
      const target = document.getElementById(id);
      new MutationObserver(() => seen.push(target.textContent)).observe(target, { childList: true, characterData: true, subtree: true });
    }""", element_id)


def statuses(page: Any, element_id: str) -> list[str]:
    return list(page.evaluate("(id) => window.__statuses[id]", element_id))


def test_export_needs_pitr_then_completes_and_imports_into_a_new_table(io_ui: Console, served: BucketsServer) -> None:
    client = served.client()
    page = io_ui.open("/t/orders/io")
    page.locator("#pitr-status", has_text="PITR off").wait_for()
    page.click("#export-start")  # DynamoDB refuses an export without PITR
    page.locator("#export-progress-status", has_text="PointInTimeRecoveryUnavailableException").wait_for()
    io_ui.shot("pitr-off")

    page.click("#pitr-enable")
    page.locator("#pitr-status", has_text="PITR on").wait_for()
    pitr = client.describe_continuous_backups(TableName="orders")["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    where = page.inner_text("#export-where")
    assert "s3://dynastore-exports/exports/orders/AWSDynamoDB/" in where and str(served.buckets) in where

    record_statuses(page, "export-progress-status")
    progress_reads: list[int] = []
    page.on("response", lambda response: progress_reads.append(response.status)
            if response.url.endswith("/console/admin/exports/jobs") else None)
    page.click("#export-start")
    page.locator("#export-progress-status", has_text=f"COMPLETED: {ITEMS:,} items").wait_for(timeout=JOB_TIMEOUT_MS)
    shown = statuses(page, "export-progress-status")
    assert shown[0].startswith("IN_PROGRESS"), shown  # progress is shown before the end:
    # items and bytes done of the table's, from GET /_dynastore/exports/jobs (20,000
    # items take several of the export's 1,000-item steps, the page asks every 500 ms)
    assert any(re.match(rf"IN_PROGRESS: [\d,]+ of {ITEMS:,} items, .+ of .+", text) for text in shown), shown
    assert shown[-1].startswith("COMPLETED")
    assert progress_reads and set(progress_reads) == {200}  # items and bytes come from the jobs route
    io_ui.shot("export-completed")

    exports = client.list_exports(TableArn=client.describe_table(TableName="orders")["Table"]["TableArn"])["ExportSummaries"]
    assert len(exports) == 1
    export_id = exports[0]["ExportArn"].split("/export/")[1]
    row = page.locator(f"#exports-grid tr[data-export='{export_id}']")
    row.locator("text=COMPLETED").wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[4] == f"{ITEMS:,}"
    folder = served.buckets / "dynastore-exports" / "exports" / "orders" / "AWSDynamoDB" / export_id
    files_text = page.inner_text(f"#exports-grid tr[data-export-files='{export_id}']")
    assert f"s3://dynastore-exports/exports/orders/AWSDynamoDB/{export_id}/" in files_text
    assert f"on the server: {folder}/" in files_text
    summary = json.loads((folder / "manifest-summary.json").read_text())
    assert summary["itemCount"] == ITEMS

    row.locator("button[data-files]").click()  # the export's files, one download at a time
    data_file = page.locator("#export-files tr", has_text=".json.gz").first
    with page.expect_download() as download:
        data_file.locator("button", has_text="Download").click()
    lines = gzip.decompress(Path(download.value.path()).read_bytes()).decode().splitlines()
    assert len(lines) == ITEMS and json.loads(lines[0])["Item"]["PK"]["S"].startswith("CUSTOMER#")
    page.click(".modal button[data-action='Close']")

    row.locator("button[data-import]").click()
    assert page.input_value("#import-bucket") == "dynastore-exports"
    assert page.input_value("#import-prefix") == f"exports/orders/AWSDynamoDB/{export_id}/data/"
    assert page.input_value("#import-pk") == "PK" and page.input_value("#import-sk") == "SK"
    assert page.input_value("#import-sk-type") == "N"
    page.fill("#import-table", "orders-copy")
    record_statuses(page, "import-s3-progress-status")
    page.click("#import-s3-start")
    page.locator("#import-s3-progress-status", has_text=f"COMPLETED: {ITEMS:,} items imported").wait_for(timeout=JOB_TIMEOUT_MS)
    imported = statuses(page, "import-s3-progress-status")
    assert imported[0].startswith("IN_PROGRESS")
    # bytes read of the objects' total, from GET /_dynastore/backups/imports
    assert any(re.match(r"IN_PROGRESS: [\d,]+ items read, .+ of .+", text) for text in imported), imported
    page.locator("#sidebar a", has_text="orders-copy").wait_for()
    io_ui.shot("import-completed")
    key = {"PK": {"S": "CUSTOMER#5"}, "SK": {"N": "42"}}
    original = client.get_item(TableName="orders", Key=key)["Item"]
    assert client.get_item(TableName="orders-copy", Key=key)["Item"] == original
    page.locator("#imports-grid tr", has_text="orders-copy").locator("text=COMPLETED").wait_for()  # ListImports
    page.click("#import-s3-open")
    page.wait_for_url("**/t/orders-copy/items")


def test_a_csv_import_shows_its_logged_errors(io_ui: Console, served: BucketsServer) -> None:
    rows = served.buckets / "incoming" / "people"
    rows.mkdir(parents=True)
    (rows / "part-1.csv").write_text("id;name\n1;Ada\n;no key here\n2;Grace\n")
    page = io_ui.open("/t/orders/io")
    page.fill("#import-bucket", "incoming")
    page.fill("#import-prefix", "people/")
    page.select_option("#import-format", "CSV")
    page.select_option("#import-compression", "NONE")
    page.fill("#import-delimiter", ";")
    page.fill("#import-table", "people")
    page.fill("#import-pk", "id")
    page.fill("#import-sk", "")
    page.click("#import-s3-start")
    page.locator("#import-s3-progress-status", has_text="COMPLETED: 2 items imported of 3 read, 1 error").wait_for(timeout=JOB_TIMEOUT_MS)
    assert "part-1.csv" in page.inner_text("#import-s3-error-lines")
    io_ui.shot("import-errors")
    assert served.client().get_item(TableName="people", Key={"id": {"S": "2"}})["Item"] == {"id": {"S": "2"}, "name": {"S": "Grace"}}


def test_an_import_from_a_missing_bucket_fails_with_the_reason(io_ui: Console) -> None:
    page = io_ui.open("/t/orders/io")
    page.fill("#import-bucket", "no-such-bucket")
    page.fill("#import-table", "never-made")
    page.click("#import-s3-start")
    page.locator("#import-s3-progress-status", has_text="FAILED").wait_for(timeout=JOB_TIMEOUT_MS)
    assert "NoSuchBucket" in page.inner_text("#import-s3-progress-status")
    page.locator("#imports-grid tr", has_text="never-made").locator("text=FAILED").wait_for()


def test_the_in_browser_file_import_is_bounded(io_ui: Console, served: BucketsServer, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    line = json.dumps({"Item": {"PK": {"S": "BIG"}, "SK": {"N": "1"}, "pad": {"S": "p" * 1000}}}) + "\n"
    big.write_text(line * (5 * 1024))  # 5 MB: over the 4 MB bound
    page = io_ui.open("/t/orders/io")
    page.set_input_files("#import-file", str(big))
    page.click("#import-start")
    page.locator("#import-report", has_text="Nothing was imported: big.json is").wait_for()
    assert "up to 4.0 MB" in page.inner_text("#import-report")
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"Item": {"PK": {"S": "SMALL"}, "SK": {"N": "1"}}}) + "\n")
    page.set_input_files("#import-file", str(small))
    page.click("#import-start")
    page.locator("#import-summary", has_text="1 written, 0 failed").wait_for()
    assert served.client().get_item(TableName="orders", Key={"PK": {"S": "SMALL"}, "SK": {"N": "1"}})["Item"]


def test_a_backup_is_made_and_restored_from_the_page(io_ui: Console, served: BucketsServer) -> None:
    client = served.client()
    page = io_ui.open("/t/orders/io")
    page.fill("#backup-name", "before-migration")
    page.click("#backup-create")
    page.locator("#backups-grid tr[data-backup='before-migration']", has_text="AVAILABLE").wait_for(timeout=JOB_TIMEOUT_MS)
    page.fill("#restore-name", "orders-restored")
    page.click("#backups-grid button[data-restore='before-migration']")
    page.locator("#toasts", has_text="Restoring into orders-restored").wait_for()
    # The target is CREATING while the restore runs (as on DynamoDB), then ACTIVE.
    page.locator("#sidebar a", has_text="orders-restored").wait_for(timeout=JOB_TIMEOUT_MS)
    wait_active(client, "orders-restored")
    key = {"PK": {"S": "CUSTOMER#1"}, "SK": {"N": "1"}}
    assert client.get_item(TableName="orders-restored", Key=key)["Item"] == client.get_item(TableName="orders", Key=key)["Item"]
    io_ui.shot("backups")
    io_ui.assert_fits()


def test_restore_to_the_latest_restorable_time(io_ui: Console, served: BucketsServer) -> None:
    client = served.client()
    client.update_continuous_backups(TableName="orders",
                                     PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    client.put_item(TableName="orders", Item={"PK": {"S": "LATEST"}, "SK": {"N": "1"}, "v": {"S": "kept"}})
    # LatestRestorableDateTime is 5 minutes behind the clock, as DynamoDB's: move it past the write.
    advance = urllib.request.Request(f"{served.endpoint}/_dynastore/clock", method="POST",
                                     data=json.dumps({"advance_seconds": 301}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(advance, timeout=10) as answer:
        assert answer.status == 200
    page = io_ui.open("/t/orders/io")
    page.locator("#restore-window", has_text="PITR on: restorable from").wait_for()
    page.fill("#restore-name", "orders-latest")
    page.click("#restore-to-time")  # no time given: UseLatestRestorableTime
    page.locator("#toasts", has_text="Restoring into orders-latest").wait_for()
    page.locator("#sidebar a", has_text="orders-latest").wait_for(timeout=JOB_TIMEOUT_MS)
    wait_active(client, "orders-latest")
    restored = client.get_item(TableName="orders-latest", Key={"PK": {"S": "LATEST"}, "SK": {"N": "1"}})
    assert restored["Item"]["v"] == {"S": "kept"}
    page.fill("#restore-time", "not a time")
    page.click("#restore-to-time")
    page.locator("#toasts", has_text="not a date and time").wait_for()


def test_an_incremental_export_from_the_page(io_ui: Console, served: BucketsServer) -> None:
    """INCREMENTAL_EXPORT needs a period of 15 minutes or more inside the PITR window:
    the server's clock is moved on 20 minutes (POST /_dynastore/clock) between writes."""
    client = served.client()
    client.create_table(TableName="events", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    client.update_continuous_backups(TableName="events",
                                     PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    window = client.describe_continuous_backups(TableName="events")["ContinuousBackupsDescription"]
    since = window["PointInTimeRecoveryDescription"]["EarliestRestorableDateTime"]
    client.put_item(TableName="events", Item={"id": {"S": "before"}})
    advance = urllib.request.Request(f"{served.endpoint}/_dynastore/clock", method="POST",
                                     data=json.dumps({"advance_seconds": 1200}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(advance, timeout=10) as answer:
        assert answer.status == 200
    client.put_item(TableName="events", Item={"id": {"S": "after"}})
    page = io_ui.open("/t/events/io")
    page.select_option("#export-type", "INCREMENTAL_EXPORT")
    assert page.is_visible("#export-from") and not page.is_visible("#export-time")
    earliest = (since + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")  # rounded up to the second
    assert page.get_attribute("#export-from", "placeholder") in (f"from {earliest}",
                                                               f"from {since.strftime('%Y-%m-%dT%H:%M:%SZ')}")
    # a whole second inside the window (a browser's Date keeps milliseconds only)
    page.fill("#export-from", (since + timedelta(seconds=1)).replace(microsecond=0).isoformat())
    page.select_option("#export-view", "NEW_IMAGE")
    page.click("#export-start")
    page.locator("#export-progress-status", has_text="COMPLETED").wait_for(timeout=JOB_TIMEOUT_MS)
    table_arn = client.describe_table(TableName="events")["Table"]["TableArn"]
    [summary] = client.list_exports(TableArn=table_arn)["ExportSummaries"]
    described = client.describe_export(ExportArn=summary["ExportArn"])["ExportDescription"]
    assert described["ExportType"] == "INCREMENTAL_EXPORT"
    assert described["IncrementalExportSpecification"]["ExportViewType"] == "NEW_IMAGE"
    assert described["ItemCount"] >= 1
    count = described["ItemCount"]
    assert f"COMPLETED: {count:,} item" in page.inner_text("#export-progress-status")
    row = page.locator(f"#exports-grid tr[data-export='{summary['ExportArn'].split('/export/')[1]}']")
    row.locator("text=incremental").wait_for()


# --- an S3-compatible store (moto's server): an export into a missing bucket FAILS -------------------
S3_ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def on_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BucketsServer]:
    from tests.api.conftest import free_port, stop_server, wait_for_port

    executable = Path(sys.executable).with_name("moto_server")
    if not executable.exists():
        pytest.skip("moto[server] is not installed")
    port = free_port()
    moto = subprocess.Popen([str(executable), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, moto)
        server = BucketsServer(tmp_path_factory.mktemp("s3"), "--s3-endpoint", f"http://127.0.0.1:{port}",
                               environment=S3_ENVIRONMENT)
        try:
            client = server.client()
            create_orders(client, "orders", 30)
            client.update_continuous_backups(TableName="orders",
                                             PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
            yield server
        finally:
            server.stop()
    finally:
        stop_server(moto)


def test_an_export_into_a_missing_bucket_fails_with_the_reason(browser: Any, on_s3: BucketsServer, request: Any) -> None:
    for ui in make_console(browser, on_s3, request):
        page = ui.open("/t/orders/io")
        page.locator("#pitr-status", has_text="PITR on").wait_for()
        page.fill("#export-bucket", "no-such-bucket")
        where = page.inner_text("#export-where")
        assert "s3://no-such-bucket/exports/orders/AWSDynamoDB/" in where and "S3 at http://127.0.0.1:" in where
        assert "on the server" not in where  # no folder: the files would go to the S3 store
        page.click("#export-start")
        page.locator("#export-progress-status", has_text="FAILED: S3NoSuchBucket").wait_for(timeout=JOB_TIMEOUT_MS)
        assert "error-text" in (page.get_attribute("#export-progress-status", "class") or "")
        row = page.locator("#exports-grid tbody tr").first
        row.locator("text=FAILED").wait_for()
        assert "S3NoSuchBucket" in row.inner_text()
        assert row.locator("button[data-import], button[data-files]").count() == 0
        ui.shot("export-failed")


def wait_active(client: Any, table: str) -> None:
    """Wait (bounded) for a restore's target to become ACTIVE."""
    deadline = time.monotonic() + JOB_TIMEOUT_MS / 1000
    while client.describe_table(TableName=table)["Table"]["TableStatus"] != "ACTIVE":
        assert time.monotonic() < deadline, f"{table} never became ACTIVE"
        time.sleep(0.05)
