#!/usr/bin/env python3
"""The engine's CPU per request, without sockets: frames fed to FrontEndpoint.

    python bench/engine_cost.py get                 # in memory, 20,000 items
    python bench/engine_cost.py put --data-dir /tmp/d --items 100000
    python bench/engine_cost.py query --profile cumtime

Builds the bench's table and items (the load generator's layout, random
order), then feeds batches of link frames, as the HTTP front forwards them,
to the engine's end of the link (protocol/engine.py), group commit and the
console wrapper included, and prints microseconds per request. This is the
figure that bounds `dynastore serve` at 32 connections (the engine's core),
and it is repeatable to a few percent where the HTTP bench moves ±10%.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import random
import socket
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import loadgen  # noqa: E402  (bench/loadgen.py: the same data layout as the HTTP bench)

from dynastore.console import with_console  # noqa: E402
from dynastore.database import Database  # noqa: E402
from dynastore.ops import load_all  # noqa: E402
from dynastore.protocol.app import Application  # noqa: E402
from dynastore.protocol.engine import FrontEndpoint  # noqa: E402
from dynastore.protocol.group_commit import GroupCommit  # noqa: E402
from dynastore.protocol.link import HELLO, frame  # noqa: E402

HEADERS = {
    b"host": b"127.0.0.1:8000",
    b"content-type": b"application/x-amz-json-1.0",
    b"authorization": b"AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
                      b"SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + b"0" * 64,
    b"x-amz-date": b"20260101T000000Z",
}


class NullTransport:
    """Takes the engine's writes and drops them."""

    def __init__(self) -> None:
        self._socket, self._peer = socket.socketpair()

    def writelines(self, parts: Any) -> None:
        pass

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str) -> Any:
        return self._socket if name == "socket" else None


def request_frame(target: bytes, body: bytes) -> bytes:
    headers = dict(HEADERS)
    headers[b"x-amz-target"] = b"DynamoDB_20120810." + target
    return b"".join(frame((b"POST", b"/", headers, body)))


def request_bodies(kind: str, data: loadgen.Data, items: int, count: int) -> list[bytes]:
    rng = random.Random(3)
    frames = []
    for number in range(count):
        if kind == "put":
            pk = loadgen.PW_FMT % rng.randrange(10**8)
            body = data.put_body(pk, loadgen.SK_FMT % number, data.payloads[number & 63])
            frames.append(request_frame(b"PutItem", body))
        elif kind == "get":
            frames.append(request_frame(b"GetItem", data.get_body(*data.key_of(rng.randrange(items)))))
        elif kind == "update":
            key = data.key_of(rng.randrange(items))
            frames.append(request_frame(b"UpdateItem", data.update_body(*key, "exists")))
        else:
            pk = loadgen.PK_FMT % rng.randrange(max(1, items // data.P))
            frames.append(request_frame(b"Query", data.query_body(pk, data.query_prefix(), 25)))
    return frames


async def measure(arguments: argparse.Namespace) -> None:
    load_all()
    database = Database.open(arguments.data_dir)
    application = with_console(Application(database), region=database.region)
    endpoint = FrontEndpoint(application.handle, GroupCommit(database, lambda error: None))
    endpoint.connection_made(NullTransport())  # type: ignore[arg-type]
    endpoint.spinner = None  # no socket to spin on

    def feed(data: bytes) -> None:
        """What the link delivers; then the slices later loop turns would run."""
        endpoint.data_received(data)
        while endpoint.pending:
            endpoint._run()

    feed(b"".join(frame(HELLO)))
    feed(request_frame(b"CreateTable", json.dumps({
        "TableName": "bench", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
    }).encode()))
    data = loadgen.Data("bench", arguments.items, 100, 1024, 1)
    order = list(range(arguments.items))
    random.Random(1).shuffle(order)
    for start in range(0, arguments.items, 400):
        feed(b"".join(
            request_frame(b"BatchWriteItem", data.batch_body(order[batch:batch + 25]))
            for batch in range(start, min(start + 400, arguments.items), 25)
        ))
    frames = request_bodies(arguments.workload, data, arguments.items, arguments.requests)
    batches = [b"".join(frames[k:k + arguments.batch]) for k in range(0, len(frames), arguments.batch)]
    gc.collect()
    gc.freeze()

    def run() -> None:
        for batch in batches:
            feed(batch)

    if arguments.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run()
        profiler.disable()
        pstats.Stats(profiler).sort_stats(arguments.profile).print_stats(35)
        return
    started = time.perf_counter()
    run()
    elapsed = time.perf_counter() - started
    print(f"{arguments.workload}: {elapsed / len(frames) * 1e6:.1f} us per request in the engine "
          f"({'data dir' if arguments.data_dir else 'in memory'}, {arguments.items:,} items, "
          f"batches of {arguments.batch})")
    database.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=("get", "put", "update", "query"))
    parser.add_argument("--data-dir", default=None, help="SQLite store here (default: in memory)")
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=16, help="requests per read off the link")
    parser.add_argument("--profile", default="", help="cProfile, sorted by this (tottime, cumtime)")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
