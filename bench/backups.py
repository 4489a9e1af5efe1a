"""Backup, restore, export and import of a table of N items of 1 KB: the
time, the rate and the server's memory (issue 19, section 5: "memory stays
bounded by a page, not by the table").

    python bench/backups.py                                  # memory and SQLite, 200,000 items
    python bench/backups.py --stores disk --items 1000000 --steps export,import
    python bench/backups.py --stores postgres --items 100000

For each store (``memory``: ``--in-memory``; ``disk``: ``--data-dir``,
SQLite; ``postgres``: ``--postgres`` on a throwaway cluster) a server is
started and loadgen preloads its table ``bench`` (``--items`` items of
~1 KB, BatchWriteItem). Then the server is restarted on the same store
(``--no-restart``: not), so what the jobs add to its memory is not mixed
with what the preload's own writes left (on SQLite the serving connection's
memory mapping of the file, ADR 0001). Then, through the commands a person
runs (a subprocess each, against the server's endpoint), the steps of
``--steps`` (all by default), in this order:

1. ``backup``: ``dynastore backup bench``, CreateBackup until AVAILABLE;
2. ``restore``: ``dynastore restore <arn> bench-restored`` until ACTIVE;
3. ``pitr``: ``dynastore restore --table bench --latest bench-pitr`` with
   PITR on (the table as of now, read through the change log);
4. ``export``: ``dynastore export bench DIR --endpoint URL`` with PITR on:
   ExportTableToPointInTime into the server's bucket folder;
5. ``import``: ``dynastore import s3://BUCKET/ bench-imported``: ImportTable
   on the server, reading that export's data files back;
6. ``offline`` (``disk`` only): the backup with the server stopped, over
   ``--data-dir`` (the jobs run in the command's process).

For each step: the command's own time and rate (from its summary line) and
the server's memory, sampled every 0.1 s while the step runs and summed
over its process tree (the HTTP front process included): the highest VmRSS,
and the highest RssAnon (the process's own memory) and RssFile (mapped file
pages: on SQLite the serving connection's mapping of the database file,
which is the kernel's page cache) seen. docs/backups.md says what they mean
here; the figures are in bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (bench/run.py: servers and loadgen, as the main benchmark runs them)

STEPS = ("backup", "restore", "pitr", "export", "import", "offline")
EXPORT_BUCKET = "bench-exports"
SECONDS = re.compile(r" in ([\d.]+) s\b")
RATE = re.compile(r"([\d,]+) items/s")
SAMPLE_SECONDS = 0.1


def command(*arguments: str) -> tuple[float, str]:
    """Run ``dynastore ARGUMENTS``; (wall seconds, what it printed)."""
    environment = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", **os.environ}
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "dynastore", *arguments], capture_output=True,
                               text=True, cwd=run.REPOSITORY, timeout=3600, env=environment)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"dynastore {' '.join(arguments)} failed: {completed.stderr[-3000:]}")
    return elapsed, completed.stdout.strip()


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (the HTTP front process, ADR 0003)."""
    found = [pid]
    for member in found:
        for task in Path(f"/proc/{member}/task").glob("*"):
            try:
                found += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def memory_kib(pids: list[int]) -> dict[str, int]:
    """VmRSS, RssAnon and RssFile (kB) summed over the process trees of ``pids``."""
    totals = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0}
    for root in pids:
        for pid in tree(root):
            try:
                lines = Path(f"/proc/{pid}/status").read_text().splitlines()
            except OSError:
                continue
            for line in lines:
                name, _, value = line.partition(":")
                if name in totals:
                    totals[name] += int(value.split()[0])
    return totals


@dataclass
class Peak:
    """The highest memory seen while a step ran (a sampling thread)."""

    pids: list[int]
    rss: int = 0
    anon: int = 0
    file: int = 0

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()

    def _take(self) -> None:
        now = memory_kib(self.pids)
        self.rss = max(self.rss, now["VmRSS"])
        self.anon = max(self.anon, now["RssAnon"])
        self.file = max(self.file, now["RssFile"])

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._take()

    def note(self) -> str:
        return f"{self.rss / 1024:.0f} | {self.anon / 1024:.0f} | {self.file / 1024:.0f}"


def row(store: str, step: str, elapsed: float, summary: str, peak: Peak | None) -> str:
    seconds, rate = SECONDS.search(summary), RATE.search(summary)
    memory = peak.note() if peak is not None else " | | "
    return (f"| {store} | {step} | {seconds.group(1) if seconds else '?'} | {elapsed:.1f} "
            f"| {rate.group(1) if rate else '?'} | {memory} |")


def memory_row(store: str, what: str, pids: list[int]) -> str:
    now = memory_kib(pids)
    return (f"| {store} | {what} | | | | {now['VmRSS'] / 1024:.0f} | {now['RssAnon'] / 1024:.0f} "
            f"| {now['RssFile'] / 1024:.0f} |")


def run_steps(store: str, server: run.Server, steps: list[str], scratch: Path) -> list[str]:
    rows: list[str] = []
    endpoint = ["--endpoint", server.urls[0].rstrip("/")]
    client = boto3.client("dynamodb", endpoint_url=server.urls[0], region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")

    def step(name: str, *arguments: str) -> str:
        with Peak(server.pids) as peak:
            elapsed, printed = command(*arguments)
        rows.append(row(store, name, elapsed, printed, peak))
        print(f"{store} {name}: {printed.splitlines()[0]}", file=sys.stderr, flush=True)
        return printed

    arn = None
    if "backup" in steps or "restore" in steps:
        arn = step("backup", "backup", "bench", "--name", "bench", *endpoint).splitlines()[-1].split()[1]
    if "restore" in steps:
        step("restore from the backup", "restore", arn, "bench-restored", *endpoint)
    if {"pitr", "export"} & set(steps):
        client.update_continuous_backups(TableName="bench", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
    if "pitr" in steps:
        step("PITR restore (latest)", "restore", "--table", "bench", "--latest", "bench-pitr", *endpoint)
    if "export" in steps:
        step("export (DYNAMODB_JSON, gzip)", "export", "bench", str(scratch / "exported"),
             "--bucket", EXPORT_BUCKET, *endpoint)
    if "import" in steps and "export" in steps:
        step("import of that export", "import", f"s3://{EXPORT_BUCKET}/", "bench-imported",
             "--format", "dynamodb-json", "--compression", "gzip", "--key", "pk:S,sk:S", "--no-progress", *endpoint)
    return rows


def measure(store: str, items: int, steps: list[str], restart: bool, scratch: Path,
            postgres: object | None) -> list[str]:
    data_dir = scratch / store if store == "disk" else None
    server = run.Server(store, data_dir=data_dir, postgres=postgres,  # type: ignore[arg-type]
                        extra_args=["--buckets-dir", str(scratch / f"{store}-buckets")])
    server.fresh_store()
    rows: list[str] = []
    try:
        server.start()
        started = time.perf_counter()
        run.loadgen(server, "--setup-only", "--items", str(items))
        print(f"{store}: preloaded {items:,} items in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        rows.append(memory_row(store, "after the preload", server.pids))
        if restart and store != "memory":
            server.stop()
            server.start()
            rows.append(memory_row(store, "restarted on that store", server.pids))
        rows += run_steps(store, server, steps, scratch)
    finally:
        server.stop()
    if data_dir is not None and "offline" in steps:
        elapsed, printed = command("backup", "bench", "--name", "offline", "--data-dir", str(data_dir))
        rows.append(row(store, "backup over --data-dir (no server)", elapsed, printed, None))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="memory,disk", help="memory, disk, postgres (comma list)")
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--steps", default=",".join(STEPS), help=f"of {', '.join(STEPS)} (comma list)")
    parser.add_argument("--no-restart", dest="restart", action="store_false",
                        help="run the steps on the server that preloaded the table")
    arguments = parser.parse_args()
    steps = arguments.steps.split(",")
    unknown = set(steps) - set(STEPS)
    if unknown:
        parser.error(f"unknown steps: {', '.join(sorted(unknown))}")
    stores = arguments.stores.split(",")
    postgres = run.start_postgres() if "postgres" in stores else None
    rows: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="dynastore-bench-backups-"))
    try:
        for store in stores:
            if store == "postgres" and postgres is None:
                continue
            rows += measure(store, arguments.items, steps, arguments.restart, scratch, postgres)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if postgres is not None:
            postgres.stop()  # type: ignore[attr-defined]
            postgres.remove()  # type: ignore[attr-defined]
    print(f"| store ({arguments.items:,} items of 1 KB) | step | job s | command wall s | items/s "
          "| server peak RSS MB | peak RssAnon MB | peak RssFile MB |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
