"""dynastore's Redis protocol against Debian's redis-server, side by side.

    python bench/redis.py                         # GET SET INCR LPUSH HSET ZADD, 50 clients, -P 1 and 16
    python bench/redis.py --requests 20000 --servers redis,memory --pipeline 1
    python bench/redis.py --servers redis,disk,disk@/work/main   # A/B: a second source tree, same run

Starts redis-server (no persistence: the fastest it can be), dynastore
``--in-memory`` and dynastore on a scratch data directory (SQLite, every
acknowledged write durable), each on a free loopback port, then runs
``redis-benchmark -t TESTS -c CLIENTS -n REQUESTS -P PIPELINE --csv``
against each in turn, alternating the order per test (the machine is shared:
the ratios measured side by side are what count), and prints requests per
second and each dynastore's share of redis-server's, then each server's CPU
time per request (every thread of the process, from /proc) and the same
share by CPU, which a loaded machine disturbs less. The issue's target:
at least 25% without pipelining, in memory and on the data directory.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import socket
import statistics
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
    """``kind``: redis, memory or disk; ``memory@TREE`` / ``disk@TREE`` run
    dynastore from the source tree TREE instead (an A/B in one run)."""
    port = free_port()
    kind, _, tree = kind.partition("@")
    environment = dict(os.environ)
    directory = None
    if tree:
        # ``python -m`` puts the working directory first on sys.path, ahead of
        # PYTHONPATH: the other tree's server must run from inside it, or it
        # imports this one's dynastore (every A/B before 2026-12-04 compared a
        # tree with itself when run from a source tree).
        directory = str(Path(tree).resolve())
        environment["PYTHONPATH"] = directory
    if kind == "redis":
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", str(scratch), "--logfile", ""]
    else:
        store = {"memory": ["--in-memory"], "postgres": ["--postgres", postgres_url()]}.get(
            kind, ["--data-dir", str(scratch / "data")])
        command = [sys.executable, "-m", "dynastore", "serve", "--port", str(free_port()),
                   "--redis-port", str(port), "--log-level", "warning", *store]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                               cwd=directory)
    wait_for(port)
    return process, port


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far, every thread (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every test this many times; the medians are printed")
    arguments = parser.parse_args()
    if shutil.which("redis-benchmark") is None or shutil.which("redis-server") is None:
        print("needs Debian's redis-server and redis-tools (apt-get install redis-server redis-tools)")
        return 2
    kinds = arguments.servers.split(",")
    tests = arguments.tests.split(",")
    pipelines = [int(value) for value in arguments.pipeline.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    results: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    """Server CPU microseconds per request (all its threads), per round."""
    try:
        for number, kind in enumerate(kinds):
            (scratch / str(number)).mkdir()
            servers[kind] = start(kind, scratch / str(number))
        turn = 0
        for _ in range(arguments.rounds):
            for pipeline in pipelines:
                for test in tests:
                    order = kinds[turn % len(kinds):] + kinds[:turn % len(kinds)]
                    turn += 1
                    for kind in order:
                        process, port = servers[kind]
                        before = cpu_seconds(process.pid)
                        results.setdefault((kind, test, pipeline), []).append(benchmark(
                            port, test, arguments.clients, arguments.requests, pipeline))
                        cpu.setdefault((kind, test, pipeline), []).append(
                            (cpu_seconds(process.pid) - before) * 1e6 / arguments.requests)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nredis-benchmark, {arguments.clients} clients, {arguments.requests} requests, "
          f"{arguments.rounds} round(s), {os.cpu_count()} cores (requests/s; dynastore's share "
          "of redis-server's in the same round; medians)\n")
    header = "| test | -P | " + " | ".join(kinds) + " |"
    print(header)
    print("|" + " --- |" * (len(kinds) + 2))
    for pipeline in pipelines:
        for test in tests:
            cells = []
            base = results.get(("redis", test, pipeline))
            for kind in kinds:
                values = results[(kind, test, pipeline)]
                share = ""
                if base and kind != "redis":
                    share = f" ({statistics.median(v / b for v, b in zip(values, base, strict=True)):.0%})"
                cells.append(f"{statistics.median(values):,.0f}{share}")
            print(f"| {test.upper()} | {pipeline} | " + " | ".join(cells) + " |")
    print("\nserver CPU per request (microseconds, every thread; redis-server's CPU over dynastore's:\n"
          "the share a CPU-bound server would reach, steadier than requests/s on a loaded machine)\n")
    print(header)
    print("|" + " --- |" * (len(kinds) + 2))
    for pipeline in pipelines:
        for test in tests:
            cells = []
            base_cpu = cpu.get(("redis", test, pipeline))
            for kind in kinds:
                values = cpu[(kind, test, pipeline)]
                share = ""
                if base_cpu and kind != "redis":
                    share = f" ({statistics.median(b / v for v, b in zip(values, base_cpu, strict=True) if v):.0%})"
                cells.append(f"{statistics.median(values):.1f}{share}")
            print(f"| {test.upper()} | {pipeline} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
