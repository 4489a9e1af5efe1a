"""PartiQL's cost against the item API it translates to (issue 18).

    python bench/partiql.py [--duration 3] [--rounds 3] [--connections 32] [--items 2000] [--store disk]
    python bench/partiql.py --url http://127.0.0.1:8000/

Without --url it starts ``dynastore serve --in-memory`` (``--store disk``:
``--data-dir`` on a scratch directory) on a free port. It
creates table ``partiql_bench`` (pk S + sk S), preloads ``--items`` items,
then runs four closed-loop workloads over raw HTTP keep-alive connections:

- ``get``: GetItem by the full key;
- ``select``: ExecuteStatement ``SELECT * FROM t WHERE pk = ? AND sk = ?``;
- ``update``: UpdateItem ``SET n = n + :one`` under ``attribute_exists(pk)``
  (what a PartiQL UPDATE translates to);
- ``partiql_update``: ExecuteStatement ``UPDATE t SET n = n + 1 WHERE pk = ? AND sk = ?``.

The workloads are interleaved round by round (the order rotates each round):
the machine is shared, so the ratios measured side by side are what count.
It prints each workload's median ops/s and the cost ratios select/get and
partiql_update/update (time per operation; target <= 1.3), as the median of
the rounds' ratios (each pairs two runs seconds apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

REPOSITORY = Path(__file__).resolve().parent.parent
TABLE = "partiql_bench"
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


def key_of(number: int) -> tuple[str, str]:
    return f"p{number % 100}", f"s{number}"


def workload_requests(kind: str, items: int, count: int = 2000) -> list[bytes]:
    rng = random.Random(kind)
    built = []
    for _ in range(count):
        pk, sk = key_of(rng.randrange(items))
        key = {"pk": {"S": pk}, "sk": {"S": sk}}
        if kind == "get":
            built.append(request("GetItem", {"TableName": TABLE, "Key": key}))
        elif kind == "select":
            built.append(request("ExecuteStatement", {
                "Statement": f'SELECT * FROM "{TABLE}" WHERE pk = ? AND sk = ?',
                "Parameters": [{"S": pk}, {"S": sk}]}))
        elif kind == "update":
            built.append(request("UpdateItem", {
                "TableName": TABLE, "Key": key, "UpdateExpression": "SET #n = #n + :one",
                "ConditionExpression": "attribute_exists(#pk)",
                "ExpressionAttributeNames": {"#n": "n", "#pk": "pk"},
                "ExpressionAttributeValues": {":one": {"N": "1"}}}))
        else:
            built.append(request("ExecuteStatement", {
                "Statement": f'UPDATE "{TABLE}" SET n = n + 1 WHERE pk = ? AND sk = ?',
                "Parameters": [{"S": pk}, {"S": sk}]}))
    return built


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


async def worker(endpoint: Endpoint, requests: list[bytes], deadline: float, done: list[int],
                 failures: list[str]) -> None:
    reader, writer = await asyncio.open_connection(*endpoint)
    index = random.randrange(len(requests))
    while time.perf_counter() < deadline:
        status, body = await exchange(reader, writer, requests[index % len(requests)])
        index += 1
        if status != 200:
            failures.append(body[:200].decode("utf-8", "replace"))
        done[0] += 1
    writer.close()


async def measure(endpoint: Endpoint, requests: list[bytes], connections: int, duration: float) -> float:
    done = [0]
    failures: list[str] = []
    await asyncio.gather(*(worker(endpoint, requests, time.perf_counter() + 0.3, [0], failures)
                           for _ in range(connections)))  # warm-up
    started = time.perf_counter()
    await asyncio.gather(*(worker(endpoint, requests, started + duration, done, failures)
                           for _ in range(connections)))
    if failures:
        raise RuntimeError(f"{len(failures)} failed requests, e.g. {failures[0]}")
    return done[0] / (time.perf_counter() - started)


async def call(endpoint: Endpoint, operation: str, body: dict) -> dict:
    reader, writer = await asyncio.open_connection(*endpoint)
    try:
        status, raw = await exchange(reader, writer, request(operation, body))
    finally:
        writer.close()
    document = json.loads(raw) if raw else {}
    if status != 200 and document.get("__type", "").rsplit("#", 1)[-1] != "ResourceInUseException":
        raise RuntimeError(f"{operation}: HTTP {status} {document}")
    return document


async def setup(endpoint: Endpoint, items: int) -> None:
    await call(endpoint, "CreateTable", {
        "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}]})
    for start in range(0, items, 25):
        writes = []
        for number in range(start, min(items, start + 25)):
            pk, sk = key_of(number)
            writes.append({"PutRequest": {"Item": {
                "pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": "0"}, "payload": {"S": "x" * 200}}}})
        await call(endpoint, "BatchWriteItem", {"RequestItems": {TABLE: writes}})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(store: str) -> tuple[subprocess.Popen[bytes], Endpoint]:
    port = free_port()
    log = tempfile.TemporaryFile()
    where = ["--in-memory"] if store == "memory" else ["--data-dir", tempfile.mkdtemp(prefix="partiql-bench-")]
    process = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", *where, "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, cwd=REPOSITORY,
                               env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, ("127.0.0.1", port)
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the server did not start")


async def main_async(args: argparse.Namespace, endpoint: Endpoint) -> None:
    await setup(endpoint, args.items)
    kinds = ["get", "select", "update", "partiql_update"]
    requests = {kind: workload_requests(kind, args.items) for kind in kinds}
    results: dict[str, list[float]] = {kind: [] for kind in kinds}
    for round_number in range(args.rounds):
        order = kinds[round_number % len(kinds):] + kinds[:round_number % len(kinds)]
        for kind in order:
            rate = await measure(endpoint, requests[kind], args.connections, args.duration)
            results[kind].append(rate)
            print(f"round {round_number + 1} {kind:15} {rate:9.0f} ops/s", flush=True)
    medians = {kind: statistics.median(rates) for kind, rates in results.items()}
    print(f"\n{args.connections} connections, {args.rounds} rounds of {args.duration}s, median ops/s:")
    for kind in kinds:
        print(f"  {kind:15} {medians[kind]:9.0f}")
    per_round = [results["get"][i] / results["select"][i] for i in range(args.rounds)]
    per_round_update = [results["update"][i] / results["partiql_update"][i] for i in range(args.rounds)]
    # Each round's ratio pairs two runs seconds apart; its median is the figure
    # that counts on a shared machine (the medians of ops/s mix rounds).
    print(f"cost ratio select/get, median of rounds:            {statistics.median(per_round):.2f}")
    print(f"cost ratio partiql_update/update, median of rounds: {statistics.median(per_round_update):.2f}")
    print(f"(ratio of median ops/s: {medians['get'] / medians['select']:.2f} and "
          f"{medians['update'] / medians['partiql_update']:.2f})")
    print("per round select/get:", " ".join(f"{ratio:.2f}" for ratio in per_round))
    print("per round partiql_update/update:", " ".join(f"{ratio:.2f}" for ratio in per_round_update))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (default: start dynastore serve --in-memory)")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--store", choices=("memory", "disk"), default="memory",
                        help="dynastore serve --in-memory, or --data-dir on a scratch directory (SQLite)")
    args = parser.parse_args()
    process = None
    if args.url:
        parts = urlsplit(args.url)
        endpoint: Endpoint = (parts.hostname or "127.0.0.1", parts.port or 80)
    else:
        process, endpoint = start_server(args.store)
    try:
        asyncio.run(main_async(args, endpoint))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
