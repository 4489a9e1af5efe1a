"""PITR's cost in write throughput: PutItem at 32 connections, PITR off vs on.

    python bench/pitr.py                        # memory and SQLite, 5 rounds of 5 s
    python bench/pitr.py --stores disk --rounds 3 --duration 3

For each store (``memory``: ``--in-memory``; ``disk``: ``--data-dir``, SQLite)
two servers run side by side, each with loadgen's table ``bench`` preloaded
(``--items``); on one of them the table has PITR on
(UpdateContinuousBackups), so every write also reads the item it replaces
and adds its before-image to the change log in the same commit
(dynastore/backups/pitr.py). loadgen's ``put`` workload then runs against
each in turn, **interleaved round by round** (the order alternates): the
machine is shared, so the per-round ratios on/off are what count. Printed:
a Markdown table of medians (ops/s, ops per server CPU-second, p50 / p99
latency) and the ratio on/off of each round. Numbers: docs/backups.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (bench/run.py: servers and loadgen, as the main benchmark runs them)


def enable_pitr(server: run.Server) -> None:
    client = boto3.client("dynamodb", endpoint_url=server.urls[0], region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")
    client.update_continuous_backups(TableName="bench", PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})


def measure(store: str, rounds: int, duration: float, items: int, scratch: Path) -> dict[str, list[dict[str, Any]]]:
    servers = {mode: run.Server(store, data_dir=scratch / f"{store}-{mode}" if store == "disk" else None)
               for mode in ("off", "on")}
    results: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    try:
        for mode, server in servers.items():
            server.start()
            run.loadgen(server, "--setup-only", "--items", str(items))
            if mode == "on":
                enable_pitr(server)
        order = ["off", "on"]
        for turn in range(rounds):
            for mode in order[turn % 2:] + order[:turn % 2]:
                results[mode].append(run.loadgen(
                    servers[mode], "--no-setup", "--workload", "put", "-c", "32", "-d", str(duration),
                    "--warmup", "1", "--items", str(items)))
    finally:
        for server in servers.values():
            server.stop()
    return results


def median(runs: list[dict[str, Any]], key: str) -> float:
    values = [float(one[key]) for one in runs if isinstance(one.get(key), int | float)]
    return statistics.median(values) if values else float("nan")


def report(store: str, results: dict[str, list[dict[str, Any]]]) -> None:
    label = {"memory": "memory", "disk": "SQLite (data dir)"}[store]
    for mode in ("off", "on"):
        runs = results[mode]
        efficiency = statistics.median(run.cpu_efficiency(one) or 0.0 for one in runs)
        print(f"| {label} | {mode} | {median(runs, 'ops_s'):,.0f} | {efficiency:,.0f} | "
              f"{median(runs, 'p50_ms'):.2f} | {median(runs, 'p99_ms'):.2f} |")
    ratios = [on["ops_s"] / off["ops_s"] for off, on in zip(results["off"], results["on"], strict=True)]
    cpu = [(run.cpu_efficiency(on) or 0) / (run.cpu_efficiency(off) or 1)
           for off, on in zip(results["off"], results["on"], strict=True)]
    print(f"| {label} | on / off | {statistics.median(ratios):.2f} (rounds: "
          f"{', '.join(f'{ratio:.2f}' for ratio in ratios)}) | {statistics.median(cpu):.2f} | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="memory,disk")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--items", type=int, default=20_000, help="items preloaded")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dynastore-bench-pitr-") as scratch:
        measured = {store: measure(store, arguments.rounds, arguments.duration, arguments.items, Path(scratch))
                    for store in arguments.stores.split(",")}
    print("| store | PITR | PutItem ops/s (32 conns) | ops/CPU-s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|")
    for store, results in measured.items():
        report(store, results)


if __name__ == "__main__":
    main()
