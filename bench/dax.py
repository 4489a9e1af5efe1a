#!/usr/bin/env python3
"""bench/dax.py - a cached GetItem through the DAX endpoint against an HTTP GetItem.

    python bench/dax.py                      # 32 connections, 5 s each, 10,000 items
    python bench/dax.py --connections 1,32 --duration 3 --out figures.jsonl

Starts ``dynastore serve --in-memory --dax-port``, preloads the table with
bench/loadgen.py (--setup-only: ~1 KB items, pk/sk strings), runs loadgen's
``get`` workload over HTTP, then this file's own DAX load generator: raw
asyncio connections speaking DAX's protocol (the client's hello, then
pre-serialized getItem requests, one in flight per connection, closed loop),
the same keys, after one pass over them so every one is in the item cache.
Each answer's length is learned in that pass, so the measured loop only
counts bytes. The target (issue 21): the cached DAX GetItem at least 1.5x
the HTTP GetItem's throughput at 32 connections.

Prints a table and one JSON line (the last line of stdout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dynastore.dax.wire import ItemReader, put_bytes, put_int, put_text  # noqa: E402

HELLO = b"gJ7yne5G" + bytes([0x00, 0xF6, 0xA1, 0x69]) + b"UserAgent" + bytes([0x69]) + b"bench/dax" + bytes([0x00])
GET_ITEM = 263244906
PK_FMT, SK_FMT = "pk%08d", "sk%08d"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, process: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("dynastore exited early")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def get_item_request(table: str, index: int, partition_size: int) -> bytes:
    """A DAX getItem of preloaded item ``index`` (pk S + sk S: the key is the
    CBOR text of pk followed by sk's raw bytes)."""
    out = bytearray()
    put_int(out, 1)
    put_int(out, GET_ITEM)
    put_bytes(out, table.encode())
    key = bytearray()
    put_text(key, PK_FMT % (index // partition_size))
    key += (SK_FMT % (index % partition_size)).encode()
    put_bytes(out, key)
    out.append(0xF6)  # no parameters: an eventually consistent read
    return bytes(out)


def answer_length(data: bytes) -> int | None:
    """The length of the complete answer at the start of ``data``, or None."""
    reader = ItemReader(data)
    try:
        header = reader.item()
        reader.item()
        if header != []:
            reader.item()  # an error: codes, message, details
    except Exception:  # noqa: BLE001 - incomplete
        return None
    return reader.offset


class DaxLoad(asyncio.Protocol):
    """One connection: sends request i, waits for its answer's known length."""

    def __init__(self, requests: list[bytes], lengths: list[int] | None, start: int, stats: dict[str, float]) -> None:
        self.requests = requests
        self.lengths = lengths
        self.position = start
        self.stats = stats
        self.buffer = bytearray()
        self.expected = 0
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stop_at = 0.0
        self.learned: list[tuple[int, int]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.write(HELLO)  # type: ignore[attr-defined]

    def send_next(self) -> None:
        index = self.position % len(self.requests)
        self.current = index
        self.expected = self.lengths[index] if self.lengths is not None else 0
        assert self.transport is not None
        self.transport.write(self.requests[index])

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.lengths is None:  # learning each answer's length
            length = answer_length(bytes(self.buffer))
            if length is None:
                return
        else:
            if len(self.buffer) < self.expected:
                return
            length = self.expected
        if self.lengths is None:
            self.learned.append((self.current, length))
        del self.buffer[:length]
        self.stats["ops"] += 1
        self.position += 1
        if time.perf_counter() >= self.stop_at or (self.lengths is None and self.position >= self.limit):
            self.done.set_result(None)
            return
        self.send_next()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionError(f"the DAX connection closed: {exc}"))


async def dax_run(port: int, requests: list[bytes], lengths: list[int] | None, connections: int,
                  duration: float) -> tuple[float, list[tuple[int, int]]]:
    loop = asyncio.get_running_loop()
    stats = {"ops": 0.0}
    protocols = []
    share = max(1, len(requests) // connections)
    for number in range(connections):
        _, protocol = await loop.create_connection(
            lambda number=number: DaxLoad(requests, lengths, number * share, stats), "127.0.0.1", port)
        protocols.append(protocol)
    started = time.perf_counter()
    for protocol in protocols:
        protocol.stop_at = started + duration if lengths is not None else float("inf")
        protocol.limit = protocol.position + share if lengths is None else 0
        protocol.send_next()
    await asyncio.gather(*(protocol.done for protocol in protocols))
    elapsed = time.perf_counter() - started
    learned = [pair for protocol in protocols for pair in protocol.learned]
    for protocol in protocols:
        protocol.transport.close()
    return stats["ops"] / elapsed, learned


def dax_throughput(port: int, table: str, items: int, partition_size: int, connections: int,
                   duration: float, warmup: float) -> float:
    requests = [get_item_request(table, index, partition_size) for index in range(items)]
    new_loop = _loop()
    try:
        _, learned = new_loop.run_until_complete(dax_run(port, requests, None, connections, 0))
        lengths = [0] * items
        for index, length in learned:
            lengths[index] = length
        missing = [index for index, length in enumerate(lengths) if not length]
        if missing:  # a remainder the first pass did not reach
            _, more = new_loop.run_until_complete(
                dax_run(port, [requests[index] for index in missing], None, 1, 0))
            for (position, length) in more:
                lengths[missing[position]] = length
        if warmup > 0:
            new_loop.run_until_complete(dax_run(port, requests, lengths, connections, warmup))
        rate, _ = new_loop.run_until_complete(dax_run(port, requests, lengths, connections, duration))
        return rate
    finally:
        new_loop.close()


def _loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:
        return asyncio.new_event_loop()


def loadgen(url: str, *arguments: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "loadgen.py"), "--url", url, *arguments],
        capture_output=True, text=True, timeout=600, check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", default="32", help="comma list (default 32)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--items", type=int, default=10_000, help="keys read (all cached after one pass)")
    parser.add_argument("--partition-size", type=int, default=100)
    parser.add_argument("--out", help="append the JSON line here")
    arguments = parser.parse_args()
    http_port, dax_port = free_port(), free_port()
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(http_port),
         "--dax-port", str(dax_port), "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    results: list[dict[str, object]] = []
    try:
        wait_for(http_port, server)
        wait_for(dax_port, server)
        url = f"http://127.0.0.1:{http_port}"
        common = ["--items", str(arguments.items), "--partition-size", str(arguments.partition_size)]
        loadgen(url, "--setup-only", *common)
        for connections in (int(value) for value in arguments.connections.split(",")):
            http = loadgen(url, "-w", "get", "-c", str(connections), "-d", str(arguments.duration),
                           "--warmup", str(arguments.warmup), "--no-setup", *common)
            dax = dax_throughput(dax_port, "bench", arguments.items, arguments.partition_size, connections,
                                 arguments.duration, arguments.warmup)
            http_rate = float(http["ops_s"])  # type: ignore[arg-type]
            results.append({"connections": connections, "http_get_ops_s": round(http_rate, 1),
                            "dax_cached_get_ops_s": round(dax, 1), "ratio": round(dax / http_rate, 2),
                            "http_errors": http.get("errors")})
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
    print("| connections | HTTP GetItem/s | DAX cached GetItem/s | ratio |")
    print("| --- | --- | --- | --- |")
    for row in results:
        print(f"| {row['connections']} | {row['http_get_ops_s']:,} | {row['dax_cached_get_ops_s']:,} | {row['ratio']}x |")
    line = json.dumps({"bench": "dax", "items": arguments.items, "duration_s": arguments.duration, "runs": results})
    if arguments.out:
        with open(arguments.out, "a") as out:
            out.write(line + "\n")
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
