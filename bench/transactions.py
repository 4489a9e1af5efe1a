"""TransactWriteItems throughput and conflict rate (issue 4).

    python bench/transactions.py [--duration 5] [--connections 1,32]    # dynastore serve --in-memory
    python bench/transactions.py --postgres [--servers 2]               # N servers over one PostgreSQL
    python bench/transactions.py --url http://127.0.0.1:8000/ --url http://127.0.0.1:8001/

Without --url or --postgres it starts ``dynastore serve --in-memory`` on a free
port, as it always did. ``--postgres`` starts a throwaway PostgreSQL cluster
(tests/postgres_server.py, durable: fsync, full_page_writes and
synchronous_commit on) and ``--servers`` (default 2) ``dynastore serve
--postgres URL`` processes on different ports over one database. ``--url``
(repeatable, or a comma list) runs against servers already running, which must
share one store. The connections are spread over the servers round-robin
(connection i to server i mod n); the table is created through the first.

For each connection count it runs two closed-loop workloads of
TransactWriteItems with 4 Update actions each (``ADD balance :d``):

- spread: the 4 keys drawn from 100,000 keys (little contention);
- hot: the 4 keys drawn from 10 hot keys (heavy contention).

It prints transactions answered per second, committed per second, p50/p99
latency (of every answer), the share cancelled with TransactionConflict (a
TransactionCanceledException with a TransactionConflict reason, or a
TransactionConflictException), and every other outcome by type. Each run uses
keys of its own; afterwards it reads them back (BatchGetItem, consistent) and
compares each balance with the committed transactions that touched the key:
"ok", or how many increments are missing (lost updates) or extra. Answers
that leave the outcome unknown (5xx, a dropped connection) are counted as
ambiguous. With several servers the keys are read through each, and keys the
others read differently from the first are counted.

In one process, operations run one at a time (docs/adr/0000), so contention
produces no conflicts there: the in-memory hot-key conflict rate is 0%, and
conflicts are produced on purpose with fault rules (docs/faults.md). Several
servers over one PostgreSQL database can really conflict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

REPOSITORY = Path(__file__).resolve().parent.parent
TABLE = "bank"
POSTGRES_SETTINGS = {
    # durable, like a deployment (tests/postgres_server.py turns fsync off for the tests)
    "fsync": "on",
    "full_page_writes": "on",
    "synchronous_commit": "on",
    "shared_buffers": "256MB",
}

HEADERS = (
    "POST / HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-amz-json-1.0\r\n"
    "X-Amz-Target: DynamoDB_20120810.{operation}\r\n"
    "Authorization: AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0\r\nX-Amz-Date: 20260101T000000Z\r\n"
    "Content-Length: {length}\r\n\r\n"
)

Endpoint = tuple[str, int]


def request(operation: str, body: dict) -> bytes:
    payload = json.dumps(body).encode()
    return HEADERS.format(operation=operation, length=len(payload)).encode() + payload


def transaction(keys: list[str]) -> bytes:
    return request("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": TABLE, "Key": {"pk": {"S": key}},
                    "UpdateExpression": "ADD balance :d",
                    "ExpressionAttributeValues": {":d": {"N": "1"}}}} for key in keys]})


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


async def call(endpoint: Endpoint, operation: str, body: dict) -> tuple[int, dict]:
    reader, writer = await asyncio.open_connection(*endpoint)
    try:
        status, raw = await exchange(reader, writer, request(operation, body))
    finally:
        writer.close()
    return status, (json.loads(raw) if raw else {})


def outcome(status: int, body: bytes) -> str:
    """'ok', 'conflict', or the error's type (with the cancellation reasons)."""
    if status == 200:
        return "ok"
    try:
        document = json.loads(body)
    except ValueError:
        return f"http_{status}:unparsable"
    kind = str(document.get("__type", "")).rsplit("#", 1)[-1] or f"http_{status}"
    if kind == "TransactionConflictException":
        return "conflict"
    if kind == "TransactionCanceledException":
        codes = [str(r.get("Code")) for r in document.get("CancellationReasons") or ()]
        if "TransactionConflict" in codes:
            return "conflict"
        kind += "[" + ",".join(sorted(set(codes) - {"None"})) + "]"
    return kind if status < 500 else f"{kind} (HTTP {status})"


def ambiguous(kind: str) -> bool:
    """The transaction may or may not have been applied."""
    return kind == "connection_lost" or "(HTTP 5" in kind


async def worker(endpoint: Endpoint, requests: list[tuple[int, bytes]], deadline: float,
                 latencies: list[float], outcomes: Counter[str], committed: list[int],
                 samples: dict[str, str]) -> None:
    reader, writer = await asyncio.open_connection(*endpoint)
    index = 0
    while time.perf_counter() < deadline:
        number, raw = requests[index % len(requests)]
        index += 1
        started = time.perf_counter()
        try:
            status, body = await exchange(reader, writer, raw)
        except (OSError, asyncio.IncompleteReadError):
            outcomes["connection_lost"] += 1
            writer.close()
            reader, writer = await asyncio.open_connection(*endpoint)
            continue
        latencies.append(time.perf_counter() - started)
        kind = outcome(status, body)
        outcomes[kind] += 1
        if kind == "ok":
            committed[number] += 1
        elif kind not in samples:
            samples[kind] = body[:300].decode("utf-8", "replace")
    writer.close()


async def balances(endpoint: Endpoint, keys: list[str]) -> dict[str, int]:
    """The balances of these keys (absent keys are left out), consistent reads."""
    found: dict[str, int] = {}
    for start in range(0, len(keys), 100):
        pending: dict = {TABLE: {"Keys": [{"pk": {"S": k}} for k in keys[start:start + 100]],
                                 "ConsistentRead": True, "ProjectionExpression": "pk, balance"}}
        for _ in range(50):
            status, document = await call(endpoint, "BatchGetItem", {"RequestItems": pending})
            if status != 200:
                raise RuntimeError(f"BatchGetItem: HTTP {status} {document}")
            for item in document.get("Responses", {}).get(TABLE, []):
                found[item["pk"]["S"]] = int(item.get("balance", {}).get("N", "0"))
            pending = document.get("UnprocessedKeys") or {}
            if not pending:
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError("BatchGetItem: keys left unprocessed after 50 tries")
    return found


async def run(endpoints: list[Endpoint], connections: int, duration: float, key_space: int,
              seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    prefix = uuid.uuid4().hex[:8]  # keys of this run's own
    keysets = [[f"{prefix}-k{n}" for n in rng.sample(range(key_space), 4)] for _ in range(2000)]
    requests = [(number, transaction(keys)) for number, keys in enumerate(keysets)]
    latencies: list[float] = []
    outcomes: Counter[str] = Counter()
    committed = [0] * len(requests)
    samples: dict[str, str] = {}
    started = time.perf_counter()
    deadline = started + duration
    await asyncio.gather(*(
        worker(endpoints[i % len(endpoints)], requests[i::connections] or requests, deadline,
               latencies, outcomes, committed, samples)
        for i in range(connections)
    ))
    elapsed = time.perf_counter() - started  # the last answers come after the deadline
    expected: Counter[str] = Counter()
    for number, times in enumerate(committed):
        if times:
            for key in keysets[number]:
                expected[key] += times
    actual = await balances(endpoints[0], sorted(expected)) if expected else {}
    # the same keys read through every other server: do they agree with the first?
    disagree = {}
    for index, endpoint in enumerate(endpoints[1:], start=2):
        other = await balances(endpoint, sorted(expected)) if expected else {}
        differing = sum(1 for k in expected if other.get(k, 0) != actual.get(k, 0))
        if differing:
            disagree[f"server {index}"] = differing
    missing = sum(max(0, n - actual.get(k, 0)) for k, n in expected.items())
    extra = sum(max(0, actual.get(k, 0) - n) for k, n in expected.items())
    answered = sum(n for kind, n in outcomes.items() if kind != "connection_lost")
    latencies.sort()
    errors = {kind: n for kind, n in outcomes.items() if kind not in ("ok", "conflict")}
    return {
        "keys": key_space, "connections": connections, "servers": len(endpoints),
        "seconds": round(elapsed, 3),
        "tx_s": answered / elapsed,
        "committed_s": outcomes["ok"] / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else None,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else None,
        "answered": answered,
        "committed": outcomes["ok"],
        "conflicts": outcomes["conflict"],
        "conflict_rate": outcomes["conflict"] / answered if answered else 0.0,
        "errors": errors,
        "error_samples": {kind: samples[kind] for kind in errors if kind in samples},
        "ambiguous": sum(n for kind, n in errors.items() if ambiguous(kind)),
        "missing_increments": missing,
        "extra_increments": extra,
        "keys_read_differently": disagree,
    }


def free_port(taken: set[int]) -> int:
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port


class Servers:
    """The dynastore servers this script starts (in memory, or N over PostgreSQL)."""

    def __init__(self, count: int, use_postgres: bool, extra_args: list[str], log_dir: Path) -> None:
        self.postgres = None
        self.extra_args = extra_args
        self.log_dir = log_dir
        self.storage = ["--in-memory"]
        if use_postgres:
            if str(REPOSITORY) not in sys.path:
                sys.path.insert(0, str(REPOSITORY))
            from tests.postgres_server import ThrowawayPostgres

            self.postgres = ThrowawayPostgres(settings=dict(POSTGRES_SETTINGS)).start()
            self.storage = ["--postgres", self.postgres.new_database()]
            print(f"PostgreSQL {self.postgres.psql('SHOW server_version')} on port "
                  f"{self.postgres.port}, " + ", ".join(f"{k}={v}" for k, v in POSTGRES_SETTINGS.items()),
                  flush=True)
        ports: set[int] = set()
        self.ports = []
        for _ in range(count):
            port = free_port(ports)
            ports.add(port)
            self.ports.append(port)
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * count
        for index in range(count):
            self.start(index)

    def command(self, index: int) -> list[str]:
        return [sys.executable, "-m", "dynastore", "serve", "--port", str(self.ports[index]),
                *self.storage, "--log-level", "warning", *self.extra_args]

    def start(self, index: int) -> None:
        with open(self.log_dir / f"server-{index}.log", "ab") as log:
            process = subprocess.Popen(self.command(index), cwd=REPOSITORY,
                                       stdout=subprocess.DEVNULL, stderr=log)
        self.processes[index] = process
        # A TCP connection, not a request: the first request a server answers
        # should come after the table exists (see check_table).
        for _ in range(600):
            if process.poll() is not None:
                raise RuntimeError(f"server {index + 1} exited with {process.returncode}: "
                                   + self.log_tail(index))
            try:
                socket.create_connection(("127.0.0.1", self.ports[index]), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"server {index + 1} did not listen in time")

    def stop(self, index: int) -> None:
        process = self.processes[index]
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.processes[index] = None

    def restart(self, index: int) -> None:
        self.stop(index)
        self.start(index)

    def log_tail(self, index: int, lines: int = 20) -> str:
        path = self.log_dir / f"server-{index}.log"
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        if not text:
            return ""
        return (f"--- server {index + 1} stderr ({len(text.splitlines())} lines) ---\n"
                + "\n".join(text.splitlines()[-lines:]))

    def close(self) -> None:
        for index in range(len(self.processes)):
            self.stop(index)
        tails = [t for t in (self.log_tail(i) for i in range(len(self.processes))) if t]
        if tails:
            print("\n".join(tails), file=sys.stderr)
        if self.postgres is not None:
            self.postgres.remove()


async def create_table(endpoint: Endpoint) -> None:
    status, document = await call(endpoint, "CreateTable", {
        "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})
    if status != 200 and "ResourceInUse" not in str(document.get("__type", "")):
        raise RuntimeError(f"CreateTable: HTTP {status} {document}")
    for _ in range(600):
        status, document = await call(endpoint, "DescribeTable", {"TableName": TABLE})
        if status == 200 and document.get("Table", {}).get("TableStatus") == "ACTIVE":
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"table {TABLE} not ACTIVE: HTTP {status} {document}")


def check_table(endpoints: list[Endpoint], servers: Servers | None) -> None:
    """Every server must see the table created through the first; one that does
    not is reported (and restarted, if this script started it)."""
    for index, endpoint in enumerate(endpoints[1:], start=1):
        status, document = asyncio.run(call(endpoint, "DescribeTable", {"TableName": TABLE}))
        if status == 200:
            continue
        print(f"WARNING: server {index + 1} ({endpoint[0]}:{endpoint[1]}) does not see table "
              f"{TABLE!r} created through server 1: HTTP {status} {document}"
              + ("; restarting it" if servers else ""), file=sys.stderr, flush=True)
        if servers is not None:
            servers.restart(index)


def parse_endpoints(values: list[str]) -> list[Endpoint]:
    endpoints = []
    for value in values:
        for url in value.split(","):
            if url.strip():
                parts = urlsplit(url.strip())
                if parts.scheme != "http":
                    raise SystemExit(f"only http:// URLs: {url}")
                endpoints.append((parts.hostname or "127.0.0.1", parts.port or 80))
    return endpoints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", default="1,32")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--url", action="append", default=[],
                        help="a running server (repeatable or a comma list; they must share one store)")
    target.add_argument("--postgres", action="store_true",
                        help="start a throwaway PostgreSQL and --servers dynastore servers over it")
    parser.add_argument("--servers", type=int, default=None,
                        help="servers to start (default 2 with --postgres, 1 in memory)")
    parser.add_argument("--dynastore-args", action="append", default=[],
                        help="arguments appended to every `dynastore serve` this script starts "
                             "(default $DYNASTORE_BENCH_ARGS; --dynastore-args=--flag for one flag)")
    parser.add_argument("--out", default="", help="append each run's result as a JSON line")
    arguments = parser.parse_args()
    if not arguments.dynastore_args and os.environ.get("DYNASTORE_BENCH_ARGS"):
        arguments.dynastore_args = [os.environ["DYNASTORE_BENCH_ARGS"]]
    extra = [a for value in arguments.dynastore_args for a in shlex.split(value)]
    connection_counts = [int(c) for c in arguments.connections.split(",") if c]
    servers: Servers | None = None
    log_dir = Path(tempfile.mkdtemp(prefix="dynastore-tx-bench-"))
    try:
        if arguments.url:
            endpoints = parse_endpoints(arguments.url)
        else:
            count = arguments.servers or (2 if arguments.postgres else 1)
            if count > 1 and not arguments.postgres:
                parser.error("several in-memory servers would not share a store: use --postgres")
            servers = Servers(count, arguments.postgres, extra, log_dir)
            endpoints = [("127.0.0.1", port) for port in servers.ports]
        what = ("PostgreSQL" if arguments.postgres else "in memory") if servers else "given endpoints"
        print(f"{len(endpoints)} server(s), {what}: "
              + ", ".join(f"http://{h}:{p}/" for h, p in endpoints)
              + (f"  (dynastore serve ... {shlex.join(extra)})" if servers and extra else ""), flush=True)
        asyncio.run(create_table(endpoints[0]))
        check_table(endpoints, servers)
        results = []
        print("| keys | conns | servers | tx/s | committed/s | p50 ms | p99 ms | conflict rate "
              "| other outcomes | balance check |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for connections in connection_counts:
            for label, key_space in (("spread (100,000)", 100_000), ("hot (10)", 10)):
                result = asyncio.run(run(endpoints, connections, arguments.duration, key_space,
                                         seed=connections))
                result["label"] = label
                results.append(result)
                errors = result["errors"]
                other = ", ".join(f"{k}: {n}" for k, n in sorted(errors.items())) or "0"  # type: ignore[attr-defined]
                missing, surplus = result["missing_increments"], result["extra_increments"]
                check = "ok" if not missing and not surplus else (
                    f"{missing} increments missing, {surplus} extra")
                if result["ambiguous"]:
                    check += f" ({result['ambiguous']} ambiguous answers)"
                for where, count in result["keys_read_differently"].items():  # type: ignore[attr-defined]
                    check += f"; {where} reads {count} keys differently"
                p50 = "-" if result["p50_ms"] is None else f"{result['p50_ms']:.3f}"
                p99 = "-" if result["p99_ms"] is None else f"{result['p99_ms']:.3f}"
                print(f"| {label} | {connections} | {len(endpoints)} | {result['tx_s']:,.0f} | "
                      f"{result['committed_s']:,.0f} | {p50} | {p99} | "
                      f"{result['conflict_rate']:.1%} | {other} | {check} |", flush=True)
        samples = {k: v for r in results for k, v in r["error_samples"].items()}  # type: ignore[attr-defined]
        for kind, sample in samples.items():
            print(f"sample {kind}: {sample}")
        if arguments.out:
            with open(arguments.out, "a") as out:
                for result in results:
                    out.write(json.dumps(result) + "\n")
    finally:
        if servers is not None:
            servers.close()
        shutil.rmtree(log_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
