"""ImportTable's time, rate and memory (issue 19, docs/import.md).

    python bench/import.py [--items 100000] [--item-bytes 1000] [--files 10]
                           [--store disk|memory] [--format dynamodb-json|csv|ion] [--compression gzip|none|zstd]

Writes ``--items`` items of about ``--item-bytes`` bytes (as DynamoDB JSON
lines, CSV or Ion) into ``--files`` objects of a bucket folder, starts one
``dynastore serve`` on it (a scratch data directory, or ``--in-memory``),
calls ImportTable and polls DescribeImport until it is COMPLETED, sampling
the server's RSS (VmRSS of the process tree) every 0.2 s. Prints the time,
the rate in items/s and MB/s of the source, the server's RSS before, at its
highest during the import, and after; and checks the table's item count.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """``field`` of /proc/PID/status (VmRSS; RssAnon: the private memory, without
    the pages of the SQLite file mapped in, which count in VmRSS but are the
    page cache's) of ``pid`` and its children (the HTTP front process), in kB."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids.extend(int(child) for child in children)
    except OSError:
        pass
    for one in pids:
        try:
            for line in Path(f"/proc/{one}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


raw_total = [0]
"""The source's bytes before compression."""


def write_source(folder: Path, items: int, item_bytes: int, files: int, input_format: str,
                 compression: str) -> int:
    folder.mkdir(parents=True)
    padding = "x" * max(0, item_bytes - 60)
    per_file = -(-items // files)
    suffix = {"gzip": ".gz", "zstd": ".zst", "none": ""}[compression]
    for part in range(files):
        lines = []
        if input_format == "csv":
            lines.append("pk,sk,n,data\n")
        for i in range(part * per_file, min(items, (part + 1) * per_file)):
            if input_format == "dynamodb-json":
                lines.append(json.dumps({"Item": {"pk": {"S": f"p{i % 1000:04d}"}, "sk": {"S": f"s{i:08d}"},
                                                  "n": {"N": str(i)}, "data": {"S": padding}}}) + "\n")
            elif input_format == "csv":
                lines.append(f"p{i % 1000:04d},s{i:08d},{i},{padding}\n")
            else:
                lines.append(f'{{Item:{{pk:"p{i % 1000:04d}",sk:"s{i:08d}",n:{i},data:"{padding}"}}}}\n')
        data = "".join(lines).encode()
        raw_total[0] += len(data)
        if compression == "gzip":
            data = gzip.compress(data, compresslevel=1)
        elif compression == "zstd":
            import zstandard

            data = zstandard.ZstdCompressor().compress(data)
        (folder / f"part-{part:04d}{suffix}").write_bytes(data)
    return sum(path.stat().st_size for path in folder.iterdir())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--item-bytes", type=int, default=1000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--store", choices=("disk", "memory"), default="disk")
    parser.add_argument("--format", choices=("dynamodb-json", "csv", "ion"), default="dynamodb-json")
    parser.add_argument("--compression", choices=("gzip", "none", "zstd"), default="gzip")
    arguments = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dynastore-bench-import-"))
    try:
        return run(arguments, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(arguments: argparse.Namespace, scratch: Path) -> int:
    started = time.monotonic()
    source_bytes = write_source(scratch / "buckets" / "bench" / "in", arguments.items, arguments.item_bytes,
                                arguments.files, arguments.format, arguments.compression)
    print(f"source: {arguments.items:,} items, {arguments.files} {arguments.format} files "
          f"({arguments.compression}), {source_bytes / 1e6:.1f} MB ({raw_total[0] / 1e6:.1f} MB uncompressed), written in {time.monotonic() - started:.1f} s")
    port = free_port()
    store = ["--data-dir", str(scratch / "data")] if arguments.store == "disk" else ["--in-memory"]
    log = (scratch / "server.log").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", "--port", str(port), *store,
                               "--buckets-dir", str(scratch / "buckets"), "--log-level", "warning"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        client = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                              aws_access_key_id="bench", aws_secret_access_key="bench",
                              config=Config(retries={"max_attempts": 20}))
        deadline = time.monotonic() + 30
        while True:
            try:
                client.list_tables()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        before = rss_kb(server.pid)
        before_anon = rss_kb(server.pid, "RssAnon")
        peak = [before, before_anon]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.2):
                peak[0] = max(peak[0], rss_kb(server.pid))
                peak[1] = max(peak[1], rss_kb(server.pid, "RssAnon"))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        input_format = {"dynamodb-json": "DYNAMODB_JSON", "csv": "CSV", "ion": "ION"}[arguments.format]
        key = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        begun = time.monotonic()
        arn = client.import_table(
            S3BucketSource={"S3Bucket": "bench", "S3KeyPrefix": "in/"}, InputFormat=input_format,
            InputCompressionType=arguments.compression.upper(),
            TableCreationParameters={"TableName": "imported", "KeySchema": key, "BillingMode": "PAY_PER_REQUEST",
                                     "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                                              {"AttributeName": "sk", "AttributeType": "S"}]},
        )["ImportTableDescription"]["ImportArn"]
        while True:
            described: dict[str, Any] = client.describe_import(ImportArn=arn)["ImportTableDescription"]
            if described["ImportStatus"] != "IN_PROGRESS":
                break
            time.sleep(0.2)
        seconds = time.monotonic() - begun
        stop.set()
        sampler.join()
        after = rss_kb(server.pid)
        after_anon = rss_kb(server.pid, "RssAnon")
        count = client.describe_table(TableName="imported")["Table"]["ItemCount"]
        print(f"import: {described['ImportStatus']}, {described['ImportedItemCount']:,} items "
              f"({described['ErrorCount']} errors) in {seconds:.1f} s: "
              f"{described['ImportedItemCount'] / seconds:,.0f} items/s, {raw_total[0] / 1e6 / seconds:.2f} MB/s "
              "of uncompressed source")
        print(f"server RSS: {before / 1024:.0f} MB before, {peak[0] / 1024:.0f} MB at most during, "
              f"{after / 1024:.0f} MB after (store: {arguments.store}); of it private (RssAnon): "
              f"{before_anon / 1024:.0f} / {peak[1] / 1024:.0f} / {after_anon / 1024:.0f} MB")
        print(f"table ItemCount: {count:,}")
        return 0 if described["ImportStatus"] == "COMPLETED" and count == arguments.items else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        if os.environ.get("BENCH_IMPORT_LOG"):
            print((scratch / "server.log").read_text()[-4000:])


if __name__ == "__main__":
    raise SystemExit(main())
