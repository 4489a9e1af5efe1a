"""Background jobs keep the server's memory bounded by a page (issue 19,
section 5; docs/backups.md "Memory: what RSS means here").

On a data directory the requests read the SQLite file through a memory
mapping, whose touched pages count in the server's RSS (RssFile). An
export and DescribeTable's statistics read the whole table
through a connection of their own that maps none of the file, so they leave
RssFile where it was; a Scan of the whole table through the API maps it
(the check that this test can tell). bench/backups.py measures the same at
1,000,000 items.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import dynastore
from tests.api.conftest import make_client, start_server, stop_server

ITEMS = 20_000
PAD = "x" * 1000
TABLE = "memory"
WAIT_SECONDS = 120

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssFile from /proc")


def rss_file_mb(pid: int) -> float:
    found = re.search(r"^RssFile:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.MULTILINE)
    assert found is not None
    return int(found.group(1)) / 1024


def fill(data_dir: Path) -> None:
    """The table, written in-process (faster than over HTTP) before the server starts."""
    with dynastore.open(data_dir) as database:
        client = database.client()
        client.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
        for start in range(0, ITEMS, 25):
            client.batch_write_item(RequestItems={TABLE: [
                {"PutRequest": {"Item": {"pk": {"S": f"k{n:06d}"}, "pad": {"S": PAD}}}}
                for n in range(start, start + 25)]})


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen in {WAIT_SECONDS} s"
        time.sleep(0.2)


class PeakRssFile:
    """The highest RssFile of ``pid`` while the block runs (sampled every 20 ms:
    SQLite maps the file anew when it grows, which drops what was mapped, so
    the value at the end is not enough)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = rss_file_mb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRssFile:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_file_mb(self.pid))


def test_an_export_and_the_statistics_map_none_of_the_table(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    fill(data_dir)
    process, url = start_server("--data-dir", str(data_dir), "--buckets-dir", str(tmp_path / "buckets"),
                                "--single-process")
    try:
        client = make_client(url)
        client.update_continuous_backups(TableName=TABLE, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        before = rss_file_mb(process.pid)
        with PeakRssFile(process.pid) as jobs:
            table = client.describe_table(TableName=TABLE)["Table"]  # ItemCount: reads every item
            assert table["ItemCount"] == ITEMS
            export = client.export_table_to_point_in_time(TableArn=table["TableArn"], S3Bucket="memory-exports")
            export_arn = export["ExportDescription"]["ExportArn"]
            wait_for(lambda: client.describe_export(ExportArn=export_arn)["ExportDescription"]
                     ["ExportStatus"] == "COMPLETED", "the export")
        with PeakRssFile(process.pid) as scan:
            scanned = 0
            pages: dict[str, Any] = {}
            while True:
                page = client.scan(TableName=TABLE, **pages)
                scanned += len(page["Items"])
                if "LastEvaluatedKey" not in page:
                    break
                pages = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
        assert scanned == ITEMS
    finally:
        stop_server(process)
    table_mb = ITEMS * len(PAD) / 1e6
    figures = (before, jobs.peak, scan.peak)
    assert scan.peak - before > table_mb / 2, figures  # the requests' mapping shows: the test can tell
    assert jobs.peak - before < table_mb / 4, figures
