"""How long a backup and a restore of 200,000 items of 1 KB take.

    python bench/backups.py                        # memory and SQLite, 200,000 items
    python bench/backups.py --stores disk --items 50000

For each store (``memory``: ``--in-memory``; ``disk``: ``--data-dir``,
SQLite) a server is started and loadgen preloads its table ``bench``
(``--items`` items of ~1 KB, BatchWriteItem). Then, through the commands a
person runs (a subprocess each, against the server's endpoint):

1. ``dynastore backup bench``: CreateBackup until AVAILABLE;
2. ``dynastore restore <arn> bench-restored``: RestoreTableFromBackup until ACTIVE;
3. ``dynastore restore --table bench --latest bench-pitr`` with PITR on
   (the table as of now, read through the change log);
4. (``disk`` only) the same backup with the server stopped, over
   ``--data-dir`` (the jobs run in the command's process).

Each command's own summary line (items, bytes, seconds, rates) is printed,
and the server's memory after each step (anonymous RSS, and peak RSS: on
SQLite the peak includes the mapped database file's pages). Numbers: docs/backups.md.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (bench/run.py: servers and loadgen, as the main benchmark runs them)

SUMMARY = re.compile(r"in ([\d.]+) s \(([\d,]+) items/s, ([\d.]+ \w+/s)\)")


def command(*arguments: str) -> tuple[float, str]:
    """Run ``dynastore ARGUMENTS``; (wall seconds, its summary line)."""
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "dynastore", *arguments], capture_output=True,
                               text=True, cwd=run.REPOSITORY, timeout=3600)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"dynastore {' '.join(arguments)} failed: {completed.stderr}")
    return elapsed, completed.stdout.strip().splitlines()[-1]


def row(store: str, step: str, elapsed: float, summary: str, memory: str = "") -> str:
    found = SUMMARY.search(summary)
    job_seconds, item_rate, byte_rate = (found.group(1), found.group(2), found.group(3)) if found else ("?",) * 3
    return f"| {store} | {step} | {job_seconds} | {elapsed:.1f} | {item_rate} | {byte_rate} | {memory} |"


def memory_mb(server: run.Server, field: str) -> float:
    """``field`` of /proc/PID/status (VmHWM: peak RSS; RssAnon: RSS without
    file pages, such as SQLite's mapped file) over the server's processes."""
    total = 0.0
    for pid in server.pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                total += int(line.split()[1]) / 1024
    return total


def memory_note(server: run.Server) -> str:
    return f"anon {memory_mb(server, 'RssAnon'):.0f} MB, peak RSS {memory_mb(server, 'VmHWM'):.0f} MB"


def measure(store: str, items: int, scratch: Path) -> list[str]:
    data_dir = scratch / store if store == "disk" else None
    server = run.Server(store, data_dir=data_dir)
    rows: list[str] = []
    try:
        server.start()
        started = time.perf_counter()
        run.loadgen(server, "--setup-only", "--items", str(items))
        print(f"{store}: preloaded {items:,} items in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows.append(f"| {store} | after the preload | | | | | {memory_note(server)} |")
        endpoint = ["--endpoint", server.urls[0].rstrip("/")]
        elapsed, summary = command("backup", "bench", "--name", "bench", *endpoint)
        rows.append(row(store, "backup", elapsed, summary, memory_note(server)))
        arn = summary.split()[1]
        elapsed, summary = command("restore", arn, "bench-restored", *endpoint)
        rows.append(row(store, "restore from the backup", elapsed, summary, memory_note(server)))
        client = boto3.client("dynamodb", endpoint_url=server.urls[0], region_name="us-east-1",
                              aws_access_key_id="bench", aws_secret_access_key="bench")
        client.update_continuous_backups(TableName="bench", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        elapsed, summary = command("restore", "--table", "bench", "--latest", "bench-pitr", *endpoint)
        rows.append(row(store, "PITR restore (latest)", elapsed, summary, memory_note(server)))
    finally:
        server.stop()
    if data_dir is not None:
        elapsed, summary = command("backup", "bench", "--name", "offline", "--data-dir", str(data_dir))
        rows.append(row(store, "backup over --data-dir (no server)", elapsed, summary))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="memory,disk")
    parser.add_argument("--items", type=int, default=200_000)
    arguments = parser.parse_args()
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dynastore-bench-backups-") as scratch:
        for store in arguments.stores.split(","):
            rows += measure(store, arguments.items, Path(scratch))
    print(f"| store ({arguments.items:,} items of 1 KB) | step | job s | command wall s | items/s | bytes/s "
          "| server memory after |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
