#!/usr/bin/env python3
"""dynastore's benchmark: dynastore (in memory, on a data dir, on PostgreSQL) against dynalite.

    python bench/run.py                      # memory, disk, dynalite; 5 s per run
    python bench/run.py --duration 2 --servers memory,dynalite --workloads get,put
    python bench/run.py --servers postgres,postgres2,memory --workloads get,put

For each server it measures the time from process start to the first answered
request, preloads --items items (bench/loadgen.py --setup-only), then runs
every workload at every connection count, alternating the servers run by run
(the machines are shared and noisy: ratios measured side by side are what
count). It prints a table of ops/s, p50/p99 latency and peak RSS per server,
and with --out writes every raw loadgen result as JSON lines.

dynalite is installed into bench/node_modules from bench/package.json on
first use (``npm ci``); without node/npm the dynalite column is skipped.

The postgres kinds run ``dynastore serve --postgres URL`` over a throwaway
PostgreSQL cluster this script starts (tests/postgres_server.py), durable like
a deployment (fsync, full_page_writes, synchronous_commit on), one fresh
database per kind: ``postgres`` is one server, ``postgres2`` two servers on
different ports over one database with the connections split between them
(loadgen's round-robin over its --url list). Their ops/CPU-s and RSS count the
dynastore processes (both servers' summed for postgres2); PostgreSQL's own CPU
is measured apart (loadgen --db-pid) and shown in a table of its own. Without
PostgreSQL's binaries the postgres kinds are skipped.

``--dynastore-args ARGS`` (or $DYNASTORE_BENCH_ARGS) appends ARGS to every
``dynastore serve`` command; ``--dynastore-args 'postgres,postgres2: ARGS'``
to those kinds only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.postgres_server import ThrowawayPostgres

BENCH_DIR = Path(__file__).resolve().parent
REPOSITORY = BENCH_DIR.parent
LOADGEN = BENCH_DIR / "loadgen.py"
DYNALITE_CLI = BENCH_DIR / "node_modules" / "dynalite" / "cli.js"
WORKLOADS = ("get", "put", "query", "update", "mixed")
SERVER_KINDS = ("memory", "disk", "dynalite", "postgres", "postgres2")
DEFAULT_SERVERS = ("memory", "disk", "dynalite")
POSTGRES_KINDS = ("postgres", "postgres2")
DYNASTORE_KINDS = ("memory", "disk", "postgres", "postgres2")
STARTUP_TIMEOUT_S = 30.0
POSTGRES_SETTINGS = {
    # durable, like a deployment (tests/postgres_server.py turns fsync off for the tests)
    "fsync": "on",
    "full_page_writes": "on",
    "synchronous_commit": "on",
    "shared_buffers": "256MB",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """One server under test (one process, or two over one database for
    postgres2): how to start it, and what was measured."""

    kind: str
    data_dir: Path | None = None
    extra_args: list[str] = field(default_factory=list)
    """Appended to every ``dynastore serve`` command of this kind (--dynastore-args)."""
    postgres: ThrowawayPostgres | None = None
    """The ThrowawayPostgres cluster of the postgres kinds."""
    database_url: str = ""
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    log_dir: Path | None = None
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
        return {
            "memory": "dynastore (memory)",
            "disk": "dynastore (data dir)",
            "postgres": "dynastore (postgres)",
            "postgres2": "dynastore (postgres, 2 servers)",
        }.get(self.kind, self.kind)

    @property
    def process_count(self) -> int:
        return 2 if self.kind == "postgres2" else 1

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}/" for port in self.ports]

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def postmaster_pid(self) -> int | None:
        """PostgreSQL's postmaster (its backends are its children), for loadgen --db-pid."""
        if self.postgres is None:
            return None
        try:
            first_line = (self.postgres.data / "postmaster.pid").read_text().split("\n", 1)[0]
            return int(first_line)
        except (OSError, ValueError):
            return None

    def command(self, port: int) -> list[str]:
        if self.kind == "dynalite":
            return ["node", str(DYNALITE_CLI), "--port", str(port), "--createTableMs", "0"]
        if self.kind in POSTGRES_KINDS:
            storage = ["--postgres", self.database_url]
        elif self.data_dir is None:
            storage = ["--in-memory"]
        else:
            storage = ["--data-dir", str(self.data_dir)]
        return [sys.executable, "-m", "dynastore", "serve", "--port", str(port), *storage,
                "--log-level", "warning", *self.extra_args]

    def fresh_store(self) -> None:
        """A new empty database for the postgres kinds (before each start of a trial)."""
        if self.postgres is not None:
            self.database_url = self.postgres.new_database()

    def drop_store(self) -> None:
        """Remove the database of a startup trial (the servers are stopped)."""
        if self.postgres is None or not self.database_url:
            return
        name = self.database_url.rsplit("/", 1)[1].split("?", 1)[0]
        try:
            self.postgres.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        except subprocess.CalledProcessError as error:
            print(f"could not drop {name}: {error.stderr}", file=sys.stderr)
        self.database_url = ""

    def start(self) -> float:
        """Start the process(es); returns milliseconds until every one answered a request."""
        self.ports = []
        while len(self.ports) < self.process_count:
            port = free_port()
            if port not in self.ports:
                self.ports.append(port)
        started = time.perf_counter()
        self.processes = [self.spawn(index) for index in range(len(self.ports))]
        for port, process in zip(self.ports, self.processes, strict=True):
            wait_until_answering(port, process)
        elapsed_ms = (time.perf_counter() - started) * 1000
        self.startup_ms.append(elapsed_ms)
        return elapsed_ms

    def spawn(self, index: int) -> subprocess.Popen[bytes]:
        """Start process ``index`` on its port, its stderr appended to the log directory."""
        if self.log_dir is None:
            return subprocess.Popen(self.command(self.ports[index]), cwd=REPOSITORY,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(self.log_dir / f"{self.kind}-{index}.log", "ab") as log:
            return subprocess.Popen(self.command(self.ports[index]), cwd=REPOSITORY,
                                    stdout=subprocess.DEVNULL, stderr=log)

    def restart_process(self, index: int) -> None:
        """Stop one of the processes and start it again on the same port."""
        process = self.processes[index]
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.processes[index] = self.spawn(index)
        wait_until_answering(self.ports[index], self.processes[index])

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.returncode not in (0, -signal.SIGTERM):
                print(f"{self.label}: server {process.pid} exited with {process.returncode}",
                      file=sys.stderr)
        self.processes = []

    def log_tail(self, lines: int = 20) -> str:
        """The end of what the servers wrote to stderr (warnings and errors)."""
        if self.log_dir is None:
            return ""
        parts = []
        for log in sorted(self.log_dir.glob(f"{self.kind}-*.log")):
            text = log.read_text(errors="replace").strip()
            if text:
                tail = "\n".join(text.splitlines()[-lines:])
                parts.append(f"--- {log.name} ({len(text.splitlines())} lines) ---\n{tail}")
        return "\n".join(parts)


LIST_TABLES = (
    b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
    b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nX-Amz-Date: 20260101T000000Z\r\n"
    b"Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + b"0" * 64 + b"\r\n"
    b"Content-Length: 2\r\n\r\n{}"
)
"""A real API call (not the health check), so the measured start includes
everything a first client request needs to be served."""


def start_postgres() -> ThrowawayPostgres | None:
    """The throwaway PostgreSQL cluster of the postgres kinds, or None without its binaries."""
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))
    from tests.postgres_server import ThrowawayPostgres, available

    if not available():
        print("PostgreSQL's initdb/pg_ctl not found: skipping the postgres kinds", file=sys.stderr)
        return None
    cluster = ThrowawayPostgres(settings=dict(POSTGRES_SETTINGS))
    try:
        cluster.start()
    except subprocess.CalledProcessError as error:
        cluster.remove()
        print(f"PostgreSQL did not start, skipping the postgres kinds:\n{error.stderr}",
              file=sys.stderr)
        return None
    version = cluster.psql("SHOW server_version")
    print(f"PostgreSQL {version} on port {cluster.port} ({cluster.root}), "
          + ", ".join(f"{k}={v}" for k, v in POSTGRES_SETTINGS.items()), flush=True)
    return cluster


def dynastore_args(values: list[str]) -> dict[str, list[str]]:
    """--dynastore-args values -> {kind: extra arguments}. A value is ARGS (every
    dynastore kind) or 'kind[,kind...]: ARGS' (those kinds)."""
    extra: dict[str, list[str]] = {kind: [] for kind in DYNASTORE_KINDS}
    for value in values:
        kinds: tuple[str, ...] = DYNASTORE_KINDS
        head, colon, rest = value.partition(":")
        names = [name.strip() for name in head.split(",")]
        if colon and names and all(name in DYNASTORE_KINDS for name in names):
            kinds, value = tuple(names), rest
        for kind in kinds:
            extra[kind].extend(shlex.split(value))
    return extra


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


def describe_table_status(port: int, table: str) -> tuple[int, str]:
    """DescribeTable through one server: (HTTP status, body's start)."""
    body = json.dumps({"TableName": table}).encode()
    request = LIST_TABLES.split(b"\r\n\r\n", 1)[0].replace(b".ListTables", b".DescribeTable")
    request = request.replace(b"Content-Length: 2", b"Content-Length: %d" % len(body)) + b"\r\n\r\n" + body
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()[:300].decode("utf-8", "replace")


def check_table_everywhere(server: Server, table: str = "bench") -> None:
    """postgres2: the setup went through the first server; every other one must see
    the table. One that does not (it has cached the catalog before the table was
    created) is reported and restarted, so the run measures something."""
    for index, port in enumerate(server.ports[1:], start=1):
        status, body = describe_table_status(port, table)
        if status == 200:
            continue
        print(f"WARNING: {server.label}: server {index + 1} (port {port}) does not see table "
              f"{table!r} created through server 1: HTTP {status} {body}; restarting it",
              file=sys.stderr, flush=True)
        server.restart_process(index)
        status, body = describe_table_status(port, table)
        if status != 200:
            raise RuntimeError(f"{server.label}: server {index + 1} still does not see table "
                               f"{table!r} after a restart: HTTP {status} {body}")


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
    assert server.processes
    command = [sys.executable, str(LOADGEN), "--url", ",".join(server.urls), "--server-pid",
               ",".join(str(pid) for pid in server.pids), "--json-only", *arguments]
    postmaster = server.postmaster_pid()
    if postmaster is not None:
        command += ["--db-pid", str(postmaster)]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        tail = server.log_tail()
        raise RuntimeError(f"loadgen failed against {server.label}: {completed.stderr[-2000:]}"
                           + (f"\nserver log:\n{tail}" if tail else ""))
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
    """Cold starts on an empty store; the median is reported. On PostgreSQL each
    trial gets a new empty database (so it includes creating dynastore's schema),
    and postgres2's trial starts both servers at once and waits for both."""
    for _ in range(trials):
        server.fresh_store()
        server.start()
        server.stop()
        server.drop_store()
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
                    database = (f"  PostgreSQL cpu {result['db_cpu_pct']}%"
                                if result.get("db_cpu_pct") is not None else "")
                    error_types = (f" {result['error_types']}" if result.get("error_types") else "")
                    print(
                        f"  {workload:6s} c={connections:<3d} {server.label:31s} "
                        f"{result['ops_s']:>10,.0f} ops/s  p50 {result['p50_ms']} ms  "
                        f"p99 {result['p99_ms']} ms  errors {result['errors']}{error_types}"
                        f"  server cpu {result.get('server_cpu_pct')}%{database}",
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
    postgres_servers = [server for server in servers if server.kind in POSTGRES_KINDS]
    if postgres_servers:
        lines.append("")
        lines.append(postgres_table(postgres_servers, cells))
    busy = [float(r["other_cpu_pct"]) for r in results if r.get("other_cpu_pct") is not None]  # type: ignore[arg-type]
    if busy:
        lines.append("")
        lines.append(
            f"Other processes used {statistics.median(busy):.0f}% CPU (median over runs; "
            "200% = both cores) while these were measured."
        )
    return "\n".join(lines)


def postgres_table(servers: list[Server], cells: dict[tuple[str, int, str], list[dict[str, object]]]) -> str:
    """The postgres kinds' CPU: dynastore's (summed over postgres2's two servers),
    PostgreSQL's (the postmaster's tree: every backend), and the operations per
    CPU-second of both together."""
    header = "| workload | conns | " + " | ".join(
        f"{server.label} dynastore CPU % | PostgreSQL CPU % | ops per (dynastore + PostgreSQL) CPU-s"
        for server in servers
    ) + " |"
    lines = [header, "|" + "---|" * (2 + 3 * len(servers))]
    for workload, connections in dict.fromkeys((k[0], k[1]) for k in cells):
        row = [workload, str(connections)]
        for server in servers:
            runs = cells.get((workload, connections, server.kind), [])
            for run in runs:
                total = (run.get("server_cpu_pct") or 0) + (run.get("db_cpu_pct") or 0)  # type: ignore[operator]
                run["ops_per_total_cpu_s"] = float(run["ops_s"]) / (total / 100) if total else None  # type: ignore[arg-type]
            row.append(median_cell(runs, "server_cpu_pct", 0))
            row.append(median_cell(runs, "db_cpu_pct", 0))
            row.append(median_cell(runs, "ops_per_total_cpu_s", 0))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", "-d", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    parser.add_argument("--items", type=int, default=100_000, help="items preloaded per server")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--connections", default="1,32", help="comma-separated")
    parser.add_argument("--servers", default=",".join(DEFAULT_SERVERS),
                        help="comma-separated, of: " + ", ".join(SERVER_KINDS))
    parser.add_argument("--rounds", type=int, default=1, help="runs per cell (median reported)")
    parser.add_argument("--startup-trials", type=int, default=5)
    parser.add_argument("--out", default="", help="append raw loadgen JSON lines to this file")
    parser.add_argument(
        "--dynastore-args", action="append", default=[],
        help="arguments appended to every `dynastore serve` command (shell-quoted; repeatable); "
             "'postgres,postgres2: ARGS' for those kinds only; write --dynastore-args=--flag for "
             "a single flag. Default: $DYNASTORE_BENCH_ARGS",
    )
    arguments = parser.parse_args(argv)
    if not arguments.dynastore_args and os.environ.get("DYNASTORE_BENCH_ARGS"):
        arguments.dynastore_args = [os.environ["DYNASTORE_BENCH_ARGS"]]
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
    extra = dynastore_args(arguments.dynastore_args)
    for kind, values in extra.items():
        if values and kind in arguments.servers:
            print(f"{kind}: dynastore serve ... {shlex.join(values)}", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="dynastore-bench-"))
    (scratch / "logs").mkdir()
    postgres = None
    if any(kind in POSTGRES_KINDS for kind in arguments.servers):
        postgres = start_postgres()
        if postgres is None:
            arguments.servers = [k for k in arguments.servers if k not in POSTGRES_KINDS]
    servers = [
        Server(kind, data_dir=scratch / "data" if kind == "disk" else None,
               extra_args=extra.get(kind, []), log_dir=scratch / "logs",
               postgres=postgres if kind in POSTGRES_KINDS else None)
        for kind in arguments.servers
    ]
    results: list[dict[str, object]] = []
    try:
        print(f"startup: {arguments.startup_trials} cold starts each", flush=True)
        for server in servers:
            measure_startup(server, arguments.startup_trials)
        for server in servers:
            server.fresh_store()
            server.start()
            print(f"preloading {arguments.items:,} items into {server.label} ...", flush=True)
            setup = loadgen(server, "--setup-only", "--items", str(arguments.items))
            if len(server.ports) > 1:
                check_table_everywhere(server)
            server.preload_s = float(setup.get("preload_s") or 0.0)  # type: ignore[arg-type]
            after_setup = setup.get("server_hwm_mb_after_setup")
            if isinstance(after_setup, int | float):
                server.rss_after_preload_mb = float(after_setup)
        results = run_matrix(servers, arguments)
    finally:
        for server in servers:
            server.stop()
        for server in servers:
            tail = server.log_tail()
            if tail:
                print(f"{server.label} wrote to stderr:\n{tail}", file=sys.stderr)
        if postgres is not None:
            postgres.remove()
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
