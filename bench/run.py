#!/usr/bin/env python3
"""dynastore's benchmark: dynastore (in memory and on a data dir) against dynalite.

    python bench/run.py                      # everything, 5 s per run
    python bench/run.py --duration 2 --servers memory,dynalite --workloads get,put

For each server it measures the time from process start to the first answered
request, preloads --items items (bench/loadgen.py --setup-only), then runs
every workload at every connection count, alternating the servers run by run
(the machines are shared and noisy: ratios measured side by side are what
count). It prints a table of ops/s, p50/p99 latency and peak RSS per server,
and with --out writes every raw loadgen result as JSON lines.

dynalite is installed into bench/node_modules from bench/package.json on
first use (``npm ci``); without node/npm the dynalite column is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPOSITORY = BENCH_DIR.parent
LOADGEN = BENCH_DIR / "loadgen.py"
DYNALITE_CLI = BENCH_DIR / "node_modules" / "dynalite" / "cli.js"
WORKLOADS = ("get", "put", "query", "update", "mixed")
SERVER_KINDS = ("memory", "disk", "dynalite")
STARTUP_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """One server under test: how to start it, and what was measured."""

    kind: str
    data_dir: Path | None = None
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    startup_ms: list[float] = field(default_factory=list)
    preload_s: float | None = None
    rss_after_preload_mb: float | None = None
    """Peak RSS once the items are loaded: what the issue's memory target is about."""
    peak_rss_mb: float = 0.0
    """Peak RSS over the whole run (the put workloads add items, so a store
    that keeps them in memory grows past the preload figure)."""
    peak_anon_mb: float = 0.0
    """The largest anonymous RSS seen at the end of a run: RSS without the
    file pages a process maps (dynastore maps its SQLite file, ADR 0001)."""

    @property
    def label(self) -> str:
        return {"memory": "dynastore (memory)", "disk": "dynastore (data dir)"}.get(
            self.kind, self.kind
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def command(self) -> list[str]:
        if self.kind == "dynalite":
            return ["node", str(DYNALITE_CLI), "--port", str(self.port), "--createTableMs", "0"]
        storage = ["--in-memory"] if self.data_dir is None else ["--data-dir", str(self.data_dir)]
        return [sys.executable, "-m", "dynastore", "serve", "--port", str(self.port), *storage,
                "--log-level", "warning"]

    def start(self) -> float:
        """Start the process; returns milliseconds until it answered a request."""
        self.port = free_port()
        started = time.perf_counter()
        self.process = subprocess.Popen(
            self.command(), cwd=REPOSITORY, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_until_answering(self.port, self.process)
        elapsed_ms = (time.perf_counter() - started) * 1000
        self.startup_ms.append(elapsed_ms)
        return elapsed_ms

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


LIST_TABLES = (
    b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
    b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nX-Amz-Date: 20260101T000000Z\r\n"
    b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + b"0" * 64 + b"\r\n"
    b"Content-Length: 2\r\n\r\n{}"
)
"""A real API call (not the health check), so the measured start includes
everything a first client request needs to be served."""


def wait_until_answering(port: int, process: subprocess.Popen[bytes]) -> None:
    """Poll with ListTables until it is answered with 200."""
    deadline = time.perf_counter() + STARTUP_TIMEOUT_S
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} during start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(LIST_TABLES)
                if sock.recv(16).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.002)
    raise RuntimeError("server did not answer in time")


def ensure_dynalite() -> bool:
    if DYNALITE_CLI.exists():
        return True
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("node/npm not found: skipping dynalite", file=sys.stderr)
        return False
    print("installing dynalite into bench/node_modules ...", flush=True)
    completed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=BENCH_DIR, capture_output=True, text=True
    )
    if completed.returncode != 0 or not DYNALITE_CLI.exists():
        print(f"npm ci failed, skipping dynalite:\n{completed.stderr}", file=sys.stderr)
        return False
    return True


def loadgen(server: Server, *arguments: str) -> dict[str, object]:
    assert server.process is not None
    completed = subprocess.run(
        [sys.executable, str(LOADGEN), "--url", server.url, "--server-pid",
         str(server.process.pid), "--json-only", *arguments],
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"loadgen failed against {server.label}: {completed.stderr[-2000:]}")
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    for key in ("server_hwm_mb", "server_hwm_mb_after_setup"):
        value = result.get(key)
        if isinstance(value, int | float):
            server.peak_rss_mb = max(server.peak_rss_mb, float(value))
    for key in ("server_anon_mb", "server_anon_mb_after_setup"):
        value = result.get(key)
        if isinstance(value, int | float):
            server.peak_anon_mb = max(server.peak_anon_mb, float(value))
    return result


def measure_startup(server: Server, trials: int) -> None:
    """Cold starts on an empty store; the median is reported."""
    for _ in range(trials):
        server.start()
        server.stop()
        if server.data_dir is not None:
            shutil.rmtree(server.data_dir, ignore_errors=True)


def run_matrix(servers: list[Server], arguments: argparse.Namespace) -> list[dict[str, object]]:
    results: list[dict[str, object]] = []
    turn = 0
    for workload in arguments.workloads:
        for connections in arguments.connections:
            for _ in range(arguments.rounds):
                order = servers[turn % len(servers):] + servers[: turn % len(servers)]
                turn += 1
                for server in order:
                    result = loadgen(
                        server, "--no-setup", "--workload", workload, "-c", str(connections),
                        "-d", str(arguments.duration), "--warmup", str(arguments.warmup),
                        "--items", str(arguments.items), "--label", server.kind,
                    )
                    results.append(result)
                    print(
                        f"  {workload:6s} c={connections:<3d} {server.label:22s} "
                        f"{result['ops_s']:>10,.0f} ops/s  p50 {result['p50_ms']} ms  "
                        f"p99 {result['p99_ms']} ms  errors {result['errors']}",
                        flush=True,
                    )
    return results


def cpu_efficiency(result: dict[str, object]) -> float | None:
    """Operations per second of server CPU: less sensitive than ops/s to the
    other processes sharing the machine (it does not count time the server
    spent waiting for a core)."""
    server_cpu_pct = result.get("server_cpu_pct")
    if not isinstance(server_cpu_pct, int | float) or server_cpu_pct <= 0:
        return None
    return float(result["ops_s"]) / (server_cpu_pct / 100)  # type: ignore[arg-type]


def median_cell(runs: list[dict[str, object]], key: str, digits: int) -> str:
    values = [float(run[key]) for run in runs if run.get(key) is not None]  # type: ignore[arg-type]
    if not values:
        return "-"
    value = statistics.median(values)
    return f"{value:,.0f}" if digits == 0 else f"{value:.{digits}f}"


def summary_table(servers: list[Server], results: list[dict[str, object]]) -> str:
    """Markdown: one row per workload and connection count, one column group per server."""
    columns = ("ops/s", "ops/CPU-s", "p50 ms", "p99 ms")
    header = "| workload | conns | " + " | ".join(
        f"{server.label} {column}" if column == "ops/s" else column
        for server in servers
        for column in columns
    ) + " |"
    lines = [header, "|" + "---|" * (2 + len(columns) * len(servers))]
    cells: dict[tuple[str, int, str], list[dict[str, object]]] = {}
    for result in results:
        result["ops_per_cpu_s"] = cpu_efficiency(result)
        key = (str(result["workload"]), int(result["connections"]), str(result["label"]))  # type: ignore[call-overload]
        cells.setdefault(key, []).append(result)
    for workload, connections in dict.fromkeys((k[0], k[1]) for k in cells):
        row = [workload, str(connections)]
        for server in servers:
            runs = cells.get((workload, connections, server.kind), [])
            row.append(median_cell(runs, "ops_s", 0))
            row.append(median_cell(runs, "ops_per_cpu_s", 0))
            row.append(median_cell(runs, "p50_ms", 3))
            row.append(median_cell(runs, "p99_ms", 3))
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "| server | first request after start (median ms) | preload s "
        "| peak RSS after preload MiB | peak RSS whole run MiB | of it anonymous MiB |"
    )
    lines.append("|---|---|---|---|---|---|")
    for server in servers:
        startup = f"{statistics.median(server.startup_ms):.0f}" if server.startup_ms else "-"
        preload = f"{server.preload_s:.1f}" if server.preload_s is not None else "-"
        after_preload = (
            f"{server.rss_after_preload_mb:.0f}" if server.rss_after_preload_mb is not None else "-"
        )
        lines.append(
            f"| {server.label} | {startup} | {preload} | {after_preload} "
            f"| {server.peak_rss_mb:.0f} | {server.peak_anon_mb:.0f} |"
        )
    busy = [float(r["other_cpu_pct"]) for r in results if r.get("other_cpu_pct") is not None]  # type: ignore[arg-type]
    if busy:
        lines.append("")
        lines.append(
            f"Other processes used {statistics.median(busy):.0f}% CPU (median over runs; "
            "200% = both cores) while these were measured."
        )
    return "\n".join(lines)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    parser.add_argument("--items", type=int, default=100_000, help="items preloaded per server")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--connections", default="1,32", help="comma-separated")
    parser.add_argument("--servers", default=",".join(SERVER_KINDS), help="memory, disk, dynalite")
    parser.add_argument("--rounds", type=int, default=1, help="runs per cell (median reported)")
    parser.add_argument("--startup-trials", type=int, default=5)
    parser.add_argument("--out", default="", help="append raw loadgen JSON lines to this file")
    arguments = parser.parse_args(argv)
    arguments.workloads = [w for w in arguments.workloads.split(",") if w]
    arguments.connections = [int(c) for c in arguments.connections.split(",") if c]
    arguments.servers = [s for s in arguments.servers.split(",") if s]
    for name in arguments.workloads:
        if name not in WORKLOADS:
            parser.error(f"unknown workload {name}")
    for name in arguments.servers:
        if name not in SERVER_KINDS:
            parser.error(f"unknown server {name}")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    if "dynalite" in arguments.servers and not ensure_dynalite():
        arguments.servers.remove("dynalite")
    scratch = Path(tempfile.mkdtemp(prefix="dynastore-bench-"))
    servers = [
        Server(kind, data_dir=scratch / "data" if kind == "disk" else None)
        for kind in arguments.servers
    ]
    try:
        print(f"startup: {arguments.startup_trials} cold starts each", flush=True)
        for server in servers:
            measure_startup(server, arguments.startup_trials)
        for server in servers:
            server.start()
            print(f"preloading {arguments.items:,} items into {server.label} ...", flush=True)
            setup = loadgen(server, "--setup-only", "--items", str(arguments.items))
            server.preload_s = float(setup.get("preload_s") or 0.0)  # type: ignore[arg-type]
            after_setup = setup.get("server_hwm_mb_after_setup")
            if isinstance(after_setup, int | float):
                server.rss_after_preload_mb = float(after_setup)
        results = run_matrix(servers, arguments)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    if arguments.out:
        with open(arguments.out, "a") as out:
            for result in results:
                out.write(json.dumps(result) + "\n")
    print()
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {arguments.duration:g} s per run, "
          f"{arguments.items:,} items")
    print(summary_table(servers, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
