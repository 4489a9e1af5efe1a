#!/usr/bin/env python3
"""The engine's CPU per request, without sockets: frames fed to FrontEndpoint.

    python bench/engine_cost.py get                 # in memory, 20,000 items
    python bench/engine_cost.py put --data-dir /tmp/d --items 100000
    python bench/engine_cost.py query --profile cumtime
    python bench/engine_cost.py put --postgres postgresql://postgres@127.0.0.1:5432/empty

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
    """Takes the engine's writes and drops them (counting the replies: a
    reply is four pieces, link.reply_frame)."""

    def __init__(self) -> None:
        self._socket, self._peer = socket.socketpair()
        self.replies = 0
        self.on_reply: Any = None

    def writelines(self, parts: Any) -> None:
        self.replies += len(parts) // 4
        if self.on_reply is not None:
            self.on_reply()

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str) -> Any:
        return self._socket if name == "socket" else None


SIGNER: loadgen.Req | None = None
"""With --secret: signs every request for real (the server verifies them)."""
ACCESS_KEY = "AKIDBENCH"


def request_frame(target: bytes, body: bytes) -> bytes:
    headers = dict(HEADERS)
    headers[b"x-amz-target"] = b"DynamoDB_20120810." + target
    if SIGNER is not None:
        headers[b"x-amz-date"] = SIGNER.amz_date.encode()
        headers[b"authorization"] = SIGNER.authorization(target.decode(), body).encode()
    return b"".join(frame((b"POST", b"/", headers, body)))


def verifier(secret: str) -> Any:
    """The SignatureVerifier of ``dynastore serve --credentials`` with one key."""
    from dynastore.protocol.credentials import AccessKey
    from dynastore.protocol.sigv4 import SignatureVerifier

    return SignatureVerifier({ACCESS_KEY: AccessKey(ACCESS_KEY, secret)})


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
    database = Database.open(arguments.postgres or arguments.data_dir)
    application = with_console(
        Application(database, verifier(arguments.secret) if arguments.secret else None),
        region=database.region,
    )
    endpoint = FrontEndpoint(application.handle, GroupCommit(database, lambda error: None))
    transport = NullTransport()
    endpoint.connection_made(transport)  # type: ignore[arg-type]
    endpoint.spinner = None  # no socket to spin on
    if arguments.postgres:  # as the server does: a greenlet per request (ADR 0005)
        loop = asyncio.get_running_loop()
        hub = database.storage.start_pipelining(loop)  # type: ignore[attr-defined]
        endpoint.hub = hub
        database.background_loop, database.background_spawn = loop, hub.spawn

    async def answered(count: int) -> None:
        while transport.replies < count:
            await asyncio.sleep(0)

    async def feed_async(data: bytes, count: int) -> None:
        expected = transport.replies + count
        endpoint.data_received(data)
        await answered(expected)

    def feed(data: bytes) -> None:
        """What the link delivers; then the slices later loop turns would run."""
        endpoint.data_received(data)
        while endpoint.pending:
            endpoint._run()

    if arguments.postgres:
        await feed_async(b"".join(frame(HELLO)), 0)
        await _measure_postgres(arguments, database, transport, endpoint, feed_async)
        return

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


async def _measure_postgres(arguments: argparse.Namespace, database: Database, transport: NullTransport,
                            endpoint: FrontEndpoint, feed: Any) -> None:
    """A closed loop of ``--in-flight`` requests on PostgreSQL (the engine's
    core is the limit: PostgreSQL answers on the other one): time per
    request is the engine's CPU per request while it stays busy."""
    await feed(request_frame(b"CreateTable", json.dumps({
        "TableName": "bench", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
    }).encode()), 1)
    data = loadgen.Data("bench", arguments.items, 100, 1024, 1)
    order = list(range(arguments.items))
    random.Random(1).shuffle(order)
    batches = [request_frame(b"BatchWriteItem", data.batch_body(order[start:start + 25]))
               for start in range(0, arguments.items, 25)]
    for start in range(0, len(batches), 16):
        await feed(b"".join(batches[start:start + 16]), len(batches[start:start + 16]))
    frames = request_bodies(arguments.workload, data, arguments.items, arguments.requests)
    loop = asyncio.get_running_loop()
    gc.collect()
    gc.freeze()

    async def run() -> float:
        done = loop.create_future()
        sent = 0
        base = transport.replies

        def top_up() -> None:
            nonlocal sent
            answered = transport.replies - base
            if answered >= len(frames) and not done.done():
                done.set_result(None)
                return
            wanted = min(len(frames), answered + arguments.in_flight) - sent
            if wanted >= arguments.batch or (wanted > 0 and sent + wanted == len(frames)):
                endpoint.data_received(b"".join(frames[sent:sent + wanted]))
                sent += wanted

        transport.on_reply = lambda: loop.call_soon(top_up)
        started = time.perf_counter()
        top_up()
        await done
        transport.on_reply = None
        return time.perf_counter() - started

    if arguments.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        await run()
        profiler.disable()
        pstats.Stats(profiler).sort_stats(arguments.profile).print_stats(45)
        return
    cpu = time.process_time()
    elapsed = await run()
    cpu = time.process_time() - cpu
    print(f"{arguments.workload}: {cpu / len(frames) * 1e6:.1f} us of engine CPU per request on PostgreSQL "
          f"({len(frames) / elapsed:,.0f}/s with {arguments.in_flight} in flight, {arguments.items:,} items)")
    database.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=("get", "put", "update", "query"))
    parser.add_argument("--data-dir", default=None, help="SQLite store here (default: in memory)")
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=16, help="requests per read off the link")
    parser.add_argument("--profile", default="", help="cProfile, sorted by this (tottime, cumtime)")
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL (an empty database): the engine over it")
    parser.add_argument("--secret", default="", help="sign every request and verify it (--credentials)")
    parser.add_argument("--in-flight", type=int, default=32, help="with --postgres: requests in flight")
    arguments = parser.parse_args()
    if arguments.secret:
        global SIGNER
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        SIGNER = loadgen.Req(HEADERS[b"host"].decode(), "/", "us-east-1", ACCESS_KEY, amz_date, arguments.secret)
    if arguments.postgres:
        from dynastore.protocol.http import new_event_loop

        loop = new_event_loop()
        try:
            loop.run_until_complete(measure(arguments))
        finally:
            loop.close()
        return
    asyncio.run(measure(arguments))


if __name__ == "__main__":
    main()
