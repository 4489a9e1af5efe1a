"""Export speed and memory: ExportTableToPointInTime of a table of N items of
~1 KB on a running server (issue 19, section 5: memory bounded by a page).

    python bench/export_import.py [--items 100000] [--store disk|memory] [--format DYNAMODB_JSON|ION]

Starts ``dynastore serve`` (``--data-dir`` in a scratch directory, or
``--in-memory``), loads the table with BatchWriteItem from a few threads,
turns PITR on, then times one export from the call to COMPLETED (DescribeExport
every 50 ms) while sampling the server's RSS (the process tree's VmRSS every
50 ms; VmHWM at the end). Prints items/s, MB/s of item data, the data files'
compressed size and the RSS before, during (highest) and after, and the
anonymous part of it (RssAnon: the SQLite store memory-maps its file, whose
pages count in RSS as RssFile).

The import half (ImportTable) belongs to bench/import.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.api.conftest import start_server, stop_server  # noqa: E402
from tests.api.helpers import children_of  # noqa: E402

PAD = "x" * 1000
LOADERS = 4


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """The process tree's ``field`` (kB) from /proc."""
    total = 0
    for member in [pid, *children_of(pid)]:
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def load(client: Any, table: str, items: int) -> None:
    def batch(start: int) -> None:
        requests = [{"PutRequest": {"Item": {"pk": {"S": f"item{n:08d}"}, "pad": {"S": PAD}}}}
                    for n in range(start, min(start + 25, items))]
        while requests:
            answer = client.batch_write_item(RequestItems={table: requests})
            requests = answer.get("UnprocessedItems", {}).get(table, [])

    with ThreadPoolExecutor(LOADERS) as pool:
        list(pool.map(batch, range(0, items, 25)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--store", choices=("disk", "memory"), default="disk")
    parser.add_argument("--format", choices=("DYNAMODB_JSON", "ION"), default="DYNAMODB_JSON")
    arguments = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dynastore-bench-export-"))
    where = ["--data-dir", str(scratch / "data")] if arguments.store == "disk" else ["--in-memory"]
    buckets = scratch / "buckets"
    process, url = start_server(*where, "--buckets-dir", str(buckets))
    try:
        client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id="bench",
                              aws_secret_access_key="bench",
                              config=Config(max_pool_connections=LOADERS * 2, retries={"mode": "standard"}))
        client.create_table(TableName="bench", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
        began = time.monotonic()
        load(client, "bench", arguments.items)
        load_seconds = time.monotonic() - began
        client.update_continuous_backups(TableName="bench", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        arn = client.describe_table(TableName="bench")["Table"]["TableArn"]
        rss_before = rss_kb(process.pid)
        anon_before = rss_kb(process.pid, "RssAnon")
        peak = [rss_before, anon_before]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_kb(process.pid))
                peak[1] = max(peak[1], rss_kb(process.pid, "RssAnon"))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.monotonic()
        export_arn = client.export_table_to_point_in_time(TableArn=arn, S3Bucket="bench",
                                                          ExportFormat=arguments.format)["ExportDescription"][
            "ExportArn"]
        while True:
            description = client.describe_export(ExportArn=export_arn)["ExportDescription"]
            if description["ExportStatus"] != "IN_PROGRESS":
                break
            time.sleep(0.05)
        seconds = time.monotonic() - began
        done.set()
        sampler.join()
        if description["ExportStatus"] != "COMPLETED":
            print(f"export failed: {description}", file=sys.stderr)
            return 1
        compressed = sum(path.stat().st_size for path in (buckets / "bench").rglob("*.gz"))
        files = len(list((buckets / "bench").rglob("*.gz")))
        size = description["BilledSizeBytes"]
        result = {
            "store": arguments.store, "format": arguments.format, "items": description["ItemCount"],
            "load_seconds": round(load_seconds, 1), "export_seconds": round(seconds, 2),
            "items_per_second": round(description["ItemCount"] / seconds),
            "item_mb_per_second": round(size / seconds / 1e6, 1), "item_bytes": size,
            "data_files": files, "compressed_bytes": compressed,
            "rss_before_mb": round(rss_before / 1024), "rss_peak_mb": round(peak[0] / 1024),
            "rss_after_mb": round(rss_kb(process.pid) / 1024),
            "hwm_mb": round(rss_kb(process.pid, "VmHWM") / 1024),
            "anon_before_mb": round(anon_before / 1024), "anon_peak_mb": round(peak[1] / 1024),
        }
        print(json.dumps(result))
        print(f"| {result['store']} | {result['format']} | {result['items']:,} | {result['export_seconds']} s | "
              f"{result['items_per_second']:,} items/s | {result['item_mb_per_second']} MB/s | "
              f"RSS {result['rss_before_mb']} -> peak {result['rss_peak_mb']} MB (HWM {result['hwm_mb']} MB), "
              f"anonymous {result['anon_before_mb']} -> peak {result['anon_peak_mb']} MB |")
        return 0
    finally:
        stop_server(process)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
