"""dynastore's Redis protocol against Debian's redis-server, side by side.

    python bench/redis.py                         # GET SET INCR LPUSH HSET ZADD, 50 clients, -P 1 and 16
    python bench/redis.py --requests 20000 --servers redis,memory --pipeline 1

Starts redis-server (no persistence: the fastest it can be), dynastore
``--in-memory`` and dynastore on a scratch data directory (SQLite, every
acknowledged write durable), each on a free loopback port, then runs
``redis-benchmark -t TESTS -c CLIENTS -n REQUESTS -P PIPELINE --csv``
against each in turn, alternating the order per test (the machine is shared:
the ratios measured side by side are what count), and prints requests per
second and each dynastore's share of redis-server's. The issue's target:
at least 25% without pipelining, in memory and on the data directory.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = ("get", "set", "incr", "lpush", "hset", "zadd")
"""redis-benchmark's test names; ZADD's is ``zadd``."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def start(kind: str, scratch: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    if kind == "redis":
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", str(scratch), "--logfile", ""]
    else:
        store = {"memory": ["--in-memory"], "postgres": ["--postgres", postgres_url()]}.get(
            kind, ["--data-dir", str(scratch / "data")])
        command = [sys.executable, "-m", "dynastore", "serve", "--port", str(free_port()),
                   "--redis-port", str(port), "--log-level", "warning", *store]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return process, port


def benchmark(port: int, test: str, clients: int, requests: int, pipeline: int) -> float:
    completed = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-t", test, "-c", str(clients), "-n", str(requests),
         "-P", str(pipeline), "-r", "100000", "--csv"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    rows = list(csv.reader(io.StringIO(completed.stdout)))
    for row in rows[1:]:
        if row and row[0].upper().startswith(test.upper()):
            return float(row[1])
    raise RuntimeError(f"no result for {test}: {completed.stdout!r} {completed.stderr!r}")


def postgres_url() -> str:
    """The ``postgres`` server's database: $DYNASTORE_BENCH_POSTGRES, else a
    throwaway cluster's (tests/postgres_server.py), removed at exit."""
    url = os.environ.get("DYNASTORE_BENCH_POSTGRES")
    if url:
        return url
    import atexit

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.postgres_server import ThrowawayPostgres

    cluster = ThrowawayPostgres().start()
    atexit.register(cluster.remove)
    return str(cluster.new_database())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="redis,memory,disk")
    parser.add_argument("--tests", default=",".join(TESTS))
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--pipeline", default="1,16", help="comma list of -P values")
    arguments = parser.parse_args()
    if shutil.which("redis-benchmark") is None or shutil.which("redis-server") is None:
        print("needs Debian's redis-server and redis-tools (apt-get install redis-server redis-tools)")
        return 2
    kinds = arguments.servers.split(",")
    tests = arguments.tests.split(",")
    pipelines = [int(value) for value in arguments.pipeline.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    results: dict[tuple[str, str, int], float] = {}
    try:
        for kind in kinds:
            (scratch / kind).mkdir()
            servers[kind] = start(kind, scratch / kind)
        for pipeline in pipelines:
            for turn, test in enumerate(tests):
                order = kinds[turn % len(kinds):] + kinds[:turn % len(kinds)]
                for kind in order:
                    results[(kind, test, pipeline)] = benchmark(
                        servers[kind][1], test, arguments.clients, arguments.requests, pipeline)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nredis-benchmark, {arguments.clients} clients, {arguments.requests} requests, "
          f"{os.cpu_count()} cores (requests/s; dynastore's share of redis-server's)\n")
    header = "| test | -P | " + " | ".join(kinds) + " |"
    print(header)
    print("|" + " --- |" * (len(kinds) + 2))
    for pipeline in pipelines:
        for test in tests:
            cells = []
            base = results.get(("redis", test, pipeline))
            for kind in kinds:
                value = results[(kind, test, pipeline)]
                share = f" ({value / base:.0%})" if base and kind != "redis" else ""
                cells.append(f"{value:,.0f}{share}")
            print(f"| {test.upper()} | {pipeline} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
