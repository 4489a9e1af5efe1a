"""TransactWriteItems throughput and conflict rate (issue 4).

    python bench/transactions.py [--duration 5] [--connections 1,32]

Starts ``dynastore serve --in-memory`` on a free port, creates a table, and for
each connection count runs two closed-loop workloads of TransactWriteItems with
4 Update actions each (``ADD balance :d``):

- spread: the 4 keys drawn from 100,000 keys (little contention);
- hot: the 4 keys drawn from 10 hot keys (heavy contention).

It prints ops/s, p50/p99 latency and the share of transactions cancelled with
TransactionConflict. Operations run one at a time (docs/adr/0000), so real
contention produces no conflicts: the hot-key conflict rate measured is 0%;
conflicts are produced on purpose with fault rules (docs/faults.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import time

HEADERS = (
    "POST / HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-amz-json-1.0\r\n"
    "X-Amz-Target: DynamoDB_20120810.{operation}\r\n"
    "Authorization: AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0\r\nX-Amz-Date: 20260101T000000Z\r\n"
    "Content-Length: {length}\r\n\r\n"
)


def request(operation: str, body: dict) -> bytes:
    payload = json.dumps(body).encode()
    return HEADERS.format(operation=operation, length=len(payload)).encode() + payload


def transaction(keys: list[str]) -> bytes:
    return request("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": "bank", "Key": {"pk": {"S": key}},
                    "UpdateExpression": "ADD balance :d",
                    "ExpressionAttributeValues": {":d": {"N": "1"}}}} for key in keys]})


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> bytes:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return await reader.readexactly(length)


async def worker(port: int, requests: list[bytes], deadline: float, latencies: list[float], outcomes: list[str]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    index = 0
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        body = await exchange(reader, writer, requests[index % len(requests)])
        latencies.append(time.perf_counter() - started)
        outcomes.append("conflict" if b"TransactionConflict" in body else ("error" if b"__type" in body else "ok"))
        index += 1
    writer.close()


async def run(port: int, connections: int, duration: float, key_space: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    requests = [transaction([f"k{n}" for n in rng.sample(range(key_space), 4)]) for _ in range(2000)]
    latencies: list[float] = []
    outcomes: list[str] = []
    deadline = time.perf_counter() + duration
    await asyncio.gather(*(worker(port, requests[i::connections] or requests, deadline, latencies, outcomes)
                           for i in range(connections)))
    latencies.sort()
    return {
        "ops_s": len(latencies) / duration,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "conflict_rate": outcomes.count("conflict") / len(outcomes),
        "errors": outcomes.count("error"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", default="1,32")
    arguments = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)

        async def setup() -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await exchange(reader, writer, request("CreateTable", {
                "TableName": "bank", "BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}))
            writer.close()

        asyncio.run(setup())
        print("| keys | conns | ops/s | p50 ms | p99 ms | conflict rate | errors |")
        print("|---|---|---|---|---|---|---|")
        for connections in (int(c) for c in arguments.connections.split(",")):
            for label, key_space in (("spread (100,000)", 100_000), ("hot (10)", 10)):
                result = asyncio.run(run(port, connections, arguments.duration, key_space, seed=connections))
                print(f"| {label} | {connections} | {result['ops_s']:,.0f} | {result['p50_ms']:.3f} | "
                      f"{result['p99_ms']:.3f} | {result['conflict_rate']:.1%} | {result['errors']} |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
