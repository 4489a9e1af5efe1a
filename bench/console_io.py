"""The console's Import / Export page exporting a large table: the browser's
JavaScript heap stays flat (issue 19, part 4; docs/console.md).

    python bench/console_io.py [--items 100000] [--item-bytes 1000]

Starts ``dynastore serve --in-memory --buckets-dir TMP``, loads ``--items``
items of about ``--item-bytes`` bytes with ImportTable (from a gzip DynamoDB
JSON file written here), turns PITR on, then in headless Chromium opens the
table's Import / Export page and clicks "Export table", sampling the page's
JS heap (Chrome DevTools' JSHeapUsedSize, after a forced GC at the start)
every 0.2 s until the page shows COMPLETED. Prints the time, the rate, and
the heap before, at its highest during the export, and after. The old page
(Scan pages gathered in the tab, then one Blob) held every item: its heap
grew by about the table's size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.console.test_browser_io import BucketsServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def write_source(folder: Path, items: int, item_bytes: int) -> None:
    folder.mkdir(parents=True)
    pad = "x" * max(0, item_bytes - 40)
    with gzip.open(folder / "part-0.json.gz", "wt", compresslevel=1) as out:
        for number in range(items):
            out.write(json.dumps({"Item": {"pk": {"S": f"item#{number:09d}"}, "pad": {"S": pad}}}) + "\n")


def wait(client: object, describe: str, arn_key: str, arn: str, status_key: str) -> dict[str, object]:
    while True:
        answer = getattr(client, describe)(**{arn_key: arn})
        description = next(iter(answer.values()))
        if description[status_key] != "IN_PROGRESS":
            return dict(description)
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--item-bytes", type=int, default=1000)
    arguments = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch:
        server = BucketsServer(Path(scratch))
        try:
            write_source(server.buckets / "seed" / "rows", arguments.items, arguments.item_bytes)
            client = server.client()
            started = client.import_table(
                S3BucketSource={"S3Bucket": "seed", "S3KeyPrefix": "rows/"}, InputFormat="DYNAMODB_JSON",
                InputCompressionType="GZIP", TableCreationParameters={
                    "TableName": "big", "BillingMode": "PAY_PER_REQUEST",
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})
            loaded = wait(client, "describe_import", "ImportArn", started["ImportTableDescription"]["ImportArn"], "ImportStatus")
            assert loaded["ImportStatus"] == "COMPLETED", loaded
            client.update_continuous_backups(TableName="big",
                                             PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
                page = browser.new_page()
                page.goto(server.url + "#/t/big/io")
                page.locator("#pitr-status", has_text="PITR on").wait_for()
                cdp = page.context.new_cdp_session(page)
                cdp.send("Performance.enable")
                cdp.send("HeapProfiler.collectGarbage")

                def heap() -> float:
                    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
                    return float(metrics["JSHeapUsedSize"]) / (1024 * 1024)

                before = heap()
                peak = before
                begun = time.monotonic()
                page.click("#export-start")
                status = page.locator("#export-progress-status")
                while not status.inner_text().startswith(("COMPLETED", "FAILED")):
                    peak = max(peak, heap())
                    page.wait_for_timeout(200)
                elapsed = time.monotonic() - begun
                shown = status.inner_text()
                after = heap()
                # For comparison, what the old page did: every Scan page kept in the tab.
                old_begun = time.monotonic()
                page.evaluate("""async () => {
                  window.__kept = [];
                  let start;
                  do {
                    const page = await window.dynastoreConsole.call("Scan", start ? { TableName: "big", ExclusiveStartKey: start } : { TableName: "big" });
                    window.__kept.push(...page.Items);
                    start = page.LastEvaluatedKey;
                  } while (start);
                }""")
                old_elapsed = time.monotonic() - old_begun
                old_heap = heap()
                browser.close()
        finally:
            server.stop()
    print(f"{arguments.items:,} items of ~{arguments.item_bytes} B exported from the page in {elapsed:.1f} s "
          f"({arguments.items / elapsed:,.0f} items/s): {shown}")
    print(f"page JS heap: {before:.1f} MB before, {peak:.1f} MB at most during, {after:.1f} MB after")
    print(f"the old way (every Scan page kept in the tab): {old_elapsed:.1f} s, JS heap {old_heap:.1f} MB")


if __name__ == "__main__":
    main()
