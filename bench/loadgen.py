#!/usr/bin/env python3
"""loadgen.py - closed-loop load generator for DynamoDB-API (JSON 1.0 over HTTP/1.1) servers.

Design goals: the client must not be the bottleneck.
  * asyncio Protocol callbacks (no streams, no per-request coroutine), uvloop when installed;
  * raw HTTP/1.1 over N keep-alive connections, one request in flight per connection
    (closed loop: concurrency == --connections);
  * every request is pre-serialized (headers + body bytes) before the clock starts; the
    put workload splices fixed-width keys into a pre-serialized template;
  * optional --workers W forks W client processes that split the connections;
  * several --url endpoints (servers sharing one database): the connections are spread over
    them round-robin (connection i to endpoint i mod n); table creation and preload go to
    the first. The requests are serialized once, for the first endpoint; a connection to
    another one swaps the request line and Host header, a slice and a concatenation.
Servers that answer "Connection: close" (e.g. Werkzeug/moto) are handled by reconnecting;
the connect time is then part of the request latency, as it would be for a real client.

Each request carries a static SigV4-style Authorization header and X-Amz-Date; the
signature is not valid (nothing here verifies signatures) unless --secret is given: then
every request is signed for real (SigV4, before the clock starts; the put workload then
cycles through --pool distinct signed PutItems instead of splicing a template), for
servers that verify signatures (dynastore serve --credentials).

--server-pid (repeatable, or a comma list) sums the CPU and RSS of those pids' process trees;
--db-pid reports a database's process tree (e.g. PostgreSQL's postmaster) apart, as
db_cpu_pct and db_pss_mb, and leaves it out of other_cpu_pct.

Prints a human summary followed by ONE JSON line (the last line of stdout).
Every run is bounded: it stops after --duration seconds (default 10) or after --requests
requests, whichever comes first; in-flight requests get --drain seconds, then sockets close.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import http.client
import itertools
import json
import os
import random
import resource
import socket
import sys
import time
from array import array
from collections import Counter, deque
from urllib.parse import urlsplit

perf_ns = time.perf_counter_ns

try:  # optional
    import uvloop  # type: ignore
except Exception:  # pragma: no cover
    uvloop = None

VERSION = "0.1"
AMZ_DATE_DEFAULT = "20250101T000000Z"
WORKLOADS = ("put", "get", "query", "update", "mixed")
TARGET_PREFIX = "DynamoDB_20120810."

# --------------------------------------------------------------------------------------
# Request construction
# --------------------------------------------------------------------------------------


class Req:
    """Builds raw HTTP request bytes for one endpoint."""

    def __init__(self, host_hdr: str, path: str, region: str, access_key: str, amz_date: str,
                 secret: str = ""):
        self.host_hdr = host_hdr
        self.path = path or "/"
        self.region = region
        self.access_key = access_key
        self.secret = secret
        """With a secret every request is signed for real (``full``)."""
        date = amz_date[:8]
        # A static but well-formed SigV4 header; the signature is a fixed hex string.
        sig = hashlib.sha256(b"dynastore-loadgen static signature").hexdigest()
        self.auth = (
            f"AWS4-HMAC-SHA256 Credential={access_key}/{date}/{region}/dynamodb/aws4_request, "
            f"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature={sig}"
        )
        self.amz_date = amz_date
        self._heads: dict = {}

    def head(self, op: str, body_len: int, auth: str = "") -> bytes:
        return (
            f"POST {self.path} HTTP/1.1\r\n"
            f"Host: {self.host_hdr}\r\n"
            f"User-Agent: dynastore-loadgen/{VERSION}\r\n"
            f"Accept-Encoding: identity\r\n"
            f"Content-Type: application/x-amz-json-1.0\r\n"
            f"X-Amz-Target: {TARGET_PREFIX}{op}\r\n"
            f"X-Amz-Date: {self.amz_date}\r\n"
            f"Authorization: {auth or self.auth}\r\n"
            f"Content-Length: {body_len}\r\n\r\n"
        ).encode()

    def full(self, op: str, body: bytes) -> bytes:
        if self.secret:
            return self.signed(op, body)
        return self.head(op, len(body)) + body

    def signed(self, op: str, body: bytes) -> bytes:
        """The request with a valid SigV4 signature over its headers and body."""
        return self.head(op, len(body), self.authorization(op, body)) + body

    def authorization(self, op: str, body: bytes) -> str:
        """SigV4 over host, content-type, x-amz-date, x-amz-target and the body."""
        import hmac

        date = self.amz_date[:8]
        canonical = "\n".join((
            "POST", self.path, "",
            "content-type:application/x-amz-json-1.0", f"host:{self.host_hdr}",
            f"x-amz-date:{self.amz_date}", f"x-amz-target:{TARGET_PREFIX}{op}", "",
            "content-type;host;x-amz-date;x-amz-target", hashlib.sha256(body).hexdigest(),
        ))
        scope = f"{date}/{self.region}/dynamodb/aws4_request"
        to_sign = "\n".join(("AWS4-HMAC-SHA256", self.amz_date, scope,
                              hashlib.sha256(canonical.encode()).hexdigest()))
        key = ("AWS4" + self.secret).encode()
        for part in (date, self.region, "dynamodb", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        return (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                f"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature={signature}")


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


PK_FMT = b"pk%08d"   # preloaded partitions
SK_FMT = b"sk%08d"
PW_FMT = b"pw%08d"   # put-workload partitions (never collide with preloaded ones)
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class Data:
    """Deterministic data layout shared by preload and workloads.

    Preloaded item i (0 <= i < items): pk = pk%08d % (i // P), sk = sk%08d % (i % P),
    with P = --partition-size (default 100), i.e. 100k items -> 1000 partitions of 100.
    """

    def __init__(self, table: str, items: int, partition_size: int, item_size: int, seed: int):
        self.table = table
        self.items = items
        self.P = max(1, partition_size)
        self.rng = random.Random(seed)
        self.seed = seed
        # The item, minus its payload, is 150 bytes in DynamoDB size accounting
        # (attribute names + values); the payload fills it up to item_size.
        self.payload_len = max(16, item_size - 150)
        blob = "".join(self.rng.choice(_ALNUM) for _ in range(8192))
        self.payloads = [
            (blob[o:] + blob[:o])[: self.payload_len].encode()
            for o in (self.rng.randrange(8192) for _ in range(64))
        ]

    # -- keys
    def key_of(self, i: int):
        return PK_FMT % (i // self.P), SK_FMT % (i % self.P)

    def item_json(self, pk: bytes, sk: bytes, payload: bytes) -> bytes:
        # Hand-assembled for speed; all inserted values are [A-Za-z0-9] so no escaping.
        return b"".join((
            b'{"pk":{"S":"', pk, b'"},"sk":{"S":"', sk, b'"},',
            b'"ver":{"N":"1"},"cnt":{"N":"0"},"owner":{"S":"user-', pk[-6:], b'"},',
            b'"status":{"S":"active"},"created":{"S":"2025-01-01T00:00:00Z"},',
            b'"score":{"N":"1234.5"},"flag":{"BOOL":true},"tags":{"SS":["alpha","beta","gamma"]},',
            b'"attrs":{"M":{"color":{"S":"blue"},"size":{"N":"42"}}},',
            b'"data":{"S":"', payload, b'"}}',
        ))

    def key_json(self, pk: bytes, sk: bytes) -> bytes:
        return b'{"pk":{"S":"' + pk + b'"},"sk":{"S":"' + sk + b'"}}'

    def tname(self) -> bytes:
        return json.dumps(self.table).encode()

    # -- bodies
    def put_body(self, pk, sk, payload) -> bytes:
        return b'{"TableName":' + self.tname() + b',"Item":' + self.item_json(pk, sk, payload) + b"}"

    def get_body(self, pk, sk) -> bytes:
        return b'{"TableName":' + self.tname() + b',"Key":' + self.key_json(pk, sk) + b"}"

    def query_body(self, pk: bytes, prefix: bytes, limit: int) -> bytes:
        return dumps({
            "TableName": self.table,
            "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
            "ExpressionAttributeValues": {":p": {"S": pk.decode()}, ":s": {"S": prefix.decode()}},
            "Limit": limit,
        })

    def update_body(self, pk, sk, cond: str) -> bytes:
        body = {
            "TableName": self.table,
            "Key": {"pk": {"S": pk.decode()}, "sk": {"S": sk.decode()}},
            "UpdateExpression": "SET #c = if_not_exists(#c, :z) + :one",
            "ExpressionAttributeNames": {"#c": "cnt"},
            "ExpressionAttributeValues": {":z": {"N": "0"}, ":one": {"N": "1"}},
        }
        if cond == "exists":
            body["ConditionExpression"] = "attribute_exists(pk)"
        elif cond == "version":
            # Every preloaded item has ver = 1 and nothing here changes ver.
            body["ConditionExpression"] = "#v = :v"
            body["ExpressionAttributeNames"]["#v"] = "ver"
            body["ExpressionAttributeValues"][":v"] = {"N": "1"}
        return dumps(body)

    def batch_body(self, idxs) -> bytes:
        reqs = []
        for i in idxs:
            pk, sk = self.key_of(i)
            reqs.append(b'{"PutRequest":{"Item":' + self.item_json(pk, sk, self.payloads[i & 63]) + b"}}")
        return b'{"RequestItems":{' + self.tname() + b":[" + b",".join(reqs) + b"]}}"

    def query_prefix(self) -> bytes:
        first, last = SK_FMT % 0, SK_FMT % (self.P - 1)
        return os.path.commonprefix([first, last])


def build_workload(wl: str, d: Data, rb: Req, args):
    """Returns (kind, payload, meta). kind 'pool': payload is a list of request bytes to
    cycle through; kind 'put': payload is a factory(worker, nworkers) -> next_request."""
    rng = random.Random(args.seed * 7919 + WORKLOADS.index(wl))
    n_items = d.items
    pool_n = args.pool
    meta = {}
    if wl in ("get", "update", "mixed") and n_items <= 0:
        raise SystemExit(f"--workload {wl} needs --items > 0")
    if wl == "put" and rb.secret:  # each signed over its own body: a pool, no template
        base = args.seed * 1000003
        pool = []
        for k in range(base, base + pool_n):
            pk = PW_FMT % ((k * 2654435761) % 100000000)
            pool.append(rb.full("PutItem", d.put_body(pk, SK_FMT % (k % 100000000), d.payloads[k & 63])))
        return "pool", pool, meta
    if wl == "put":
        # pre-serialized template; fixed-width keys -> constant Content-Length
        mark_pk, mark_sk = b"pw@@@@@@@@", b"sk@@@@@@@@"
        body = d.put_body(mark_pk, mark_sk, b"#" * d.payload_len)
        head = rb.head("PutItem", len(body))
        a, rest = body.split(mark_pk)
        b_, rest = rest.split(mark_sk, 1)
        # owner uses pk[-6:], so a second pk-derived chunk appears: split on it too
        owner_mark = mark_pk[-6:]
        b1, rest2 = rest.split(owner_mark, 1)
        c, e = rest2.split(b"#" * d.payload_len)
        pre = head + a
        payloads = d.payloads
        base = args.seed * 1000003

        def factory(w: int, nw: int):
            def gen():
                k = base + w
                while True:
                    pk = PW_FMT % ((k * 2654435761) % 100000000)
                    yield b"".join((pre, pk, b_, SK_FMT % (k % 100000000), b1, pk[-6:], c, payloads[k & 63], e))
                    k += nw
            return gen().__next__

        return "put", factory, meta
    if wl == "query":
        nparts = n_items // d.P if n_items else 0
        if nparts <= 0:
            nparts = 1  # e.g. --no-setup against a fixed-response server
        prefix = d.query_prefix()
        meta["expect_count"] = min(args.limit, d.P) if n_items else None
        pool = [rb.full("Query", d.query_body(PK_FMT % rng.randrange(nparts), prefix, args.limit))
                for _ in range(pool_n)]
        return "pool", pool, meta
    if wl == "get":
        pool = [rb.full("GetItem", d.get_body(*d.key_of(rng.randrange(n_items)))) for _ in range(pool_n)]
        return "pool", pool, meta
    if wl == "update":
        pool = [rb.full("UpdateItem", d.update_body(*d.key_of(rng.randrange(n_items)), args.update_cond))
                for _ in range(pool_n)]
        return "pool", pool, meta
    if wl == "mixed":
        pool = []
        for _ in range(pool_n):
            i = rng.randrange(n_items)
            pk, sk = d.key_of(i)
            if rng.random() < args.mixed_put:
                pool.append(rb.full("PutItem", d.put_body(pk, sk, d.payloads[rng.randrange(64)])))
            else:
                pool.append(rb.full("GetItem", d.get_body(pk, sk)))
        return "pool", pool, meta
    raise SystemExit(f"unknown workload {wl}")


# --------------------------------------------------------------------------------------
# Engine: N connections, one request in flight each
# --------------------------------------------------------------------------------------


def parse_chunked(data: bytes, pos: int):
    parts = []
    n = len(data)
    while True:
        e = data.find(b"\r\n", pos)
        if e < 0:
            return None
        size = int(data[pos:e].split(b";", 1)[0], 16)
        if size == 0:
            if data[e + 2:e + 4] == b"\r\n":
                return b"".join(parts), e + 4
            t = data.find(b"\r\n\r\n", e)
            if t < 0:
                return None
            return b"".join(parts), t + 4
        start = e + 2
        stop = start + size
        if n < stop + 2:
            return None
        parts.append(data[start:stop])
        pos = stop + 2


class Conn(asyncio.Protocol):
    """One client connection slot. On 'Connection: close' a successor Conn takes over."""

    __slots__ = ("eng", "tr", "buf", "chunks", "have", "need", "req", "t0", "n", "vc",
                 "dead", "done", "inflight", "closing", "eof_body", "ep", "fix")

    def __init__(self, eng: Engine, ep=None):
        self.eng = eng
        self.ep = ep if ep is not None else eng.endpoints[0]
        self.fix = self.ep[2]  # None, or (length of the first endpoint's prefix, this one's)
        self.tr = None
        self.buf = b""
        self.chunks = []
        self.have = 0
        self.need = 0
        self.req = None
        self.t0 = 0
        self.n = 0
        self.vc = 1
        self.dead = False
        self.done = False
        self.inflight = False
        self.closing = False
        self.eof_body = False

    # -- asyncio callbacks
    def connection_made(self, tr):
        self.tr = tr
        self.eng.connects += 1
        self.eng.live.add(self)
        if self.inflight:
            tr.write(self.req)

    def data_received(self, data):
        if self.need:
            self.chunks.append(data)
            self.have += len(data)
            if self.have < self.need:
                return
            data = b"".join(self.chunks)
            self.chunks = []
            self.need = self.have = 0
        elif self.buf:
            data = self.buf + data
            self.buf = b""
        while True:
            i = data.find(b"\r\n\r\n")
            if i < 0:
                self.buf = data
                return
            hl = data[:i].lower()
            n = len(data)
            j = hl.find(b"\ncontent-length:")
            if j >= 0:
                k = hl.find(b"\r", j)
                clen = int(hl[j + 16:k]) if k > 0 else int(hl[j + 16:])
                total = i + 4 + clen
                if n < total:
                    self.chunks = [data]
                    self.have = n
                    self.need = total
                    return
                body = data[i + 4:total]
            elif b"\ntransfer-encoding: chunked" in hl:
                r = parse_chunked(data, i + 4)
                if r is None:
                    self.buf = data
                    return
                body, total = r
            else:  # body delimited by connection close
                self.buf = data
                self.eof_body = True
                return
            self.complete(int(hl[9:12]), body, b"\nconnection: close" in hl)
            if total >= n or self.dead or self.done:
                return
            data = data[total:]

    def connection_lost(self, exc):
        self.tr = None
        self.eng.live.discard(self)
        if self.dead or self.done:
            return
        eng = self.eng
        if self.eof_body and self.buf:
            data = self.buf
            self.buf = b""
            i = data.find(b"\r\n\r\n")
            self.complete(int(data[9:12]), data[i + 4:], True)
            return
        if self.inflight and not self.closing:
            eng.lost += 1
            self.inflight = False
            self.buf = b""
            self.chunks = []
            self.need = self.have = 0
            now = perf_ns()
            if eng.t_measure <= now <= eng.t_end:
                eng.err += 1
                eng.err_types["connection_lost"] += 1
            if now >= eng.t_end or eng.stopping:
                self.finish()
                return
            if eng.hook is not None:
                eng.hook(self, 0, b"")  # let preload requeue the batch
            self.send_next()

    # -- request cycle
    def complete(self, status, body, close):
        eng = self.eng
        now = perf_ns()
        self.inflight = False
        if eng.t_measure <= now <= eng.t_end:
            eng.lats.append(now - self.t0)
            eng.last_done = now
            if status == 200:
                eng.ok += 1
            else:
                eng.note_error(status, body)
        elif status != 200 and now < eng.t_measure:
            eng.warm_err += 1
        self.n += 1
        if eng.hook is not None:
            eng.hook(self, status, body)
        elif eng.verify_every and status == 200:
            self.vc -= 1
            if self.vc <= 0:
                self.vc = eng.verify_every
                eng.verify(body)
        if close:
            self.closing = True
            if self.tr is not None:
                self.tr.close()
        if now >= eng.t_end or eng.stopping:
            self.finish()
            return
        self.send_next()

    def send_next(self):
        eng = self.eng
        if eng.remaining is not None:
            if eng.remaining <= 0:
                self.finish()
                return
            eng.remaining -= 1
        req = eng.next_req()
        if req is None:
            self.finish()
            return
        if self.fix is not None:
            req = self.fix[1] + req[self.fix[0]:]
        if self.closing or self.tr is None:
            c = Conn(eng, self.ep)
            c.req = req
            c.n = self.n
            c.vc = self.vc
            c.inflight = True
            c.t0 = perf_ns()
            self.dead = True
            eng.spawn(c)
            return
        self.req = req
        self.inflight = True
        self.t0 = perf_ns()
        self.tr.write(req)

    def finish(self):
        if self.done or self.dead:
            return
        self.done = True
        if self.tr is not None:
            self.tr.close()
        self.eng.slot_done()


class Engine:
    def __init__(self, loop, host, port, connections, next_req, *, remaining=None,
                 hook=None, verify_every=0, verifier=None, endpoints=None, first_index=0):
        """endpoints: [(host, port, fix)], connection i (counting from first_index) to
        endpoint i mod n; fix rewrites the request prefix (see endpoint_list). Without
        endpoints, every connection goes to host:port."""
        self.loop = loop
        self.endpoints = endpoints or [(host, port, None)]
        self.first_index = first_index
        self.nconns = connections
        self.next_req = next_req
        self.remaining = remaining
        self.hook = hook
        self.verify_every = verify_every
        self.verifier = verifier
        self.lats = array("q")
        self.ok = 0
        self.err = 0
        self.warm_err = 0
        self.err_types = Counter()
        self.err_sample = None
        self.verify_fail = 0
        self.verify_n = 0
        self.verify_sample = None
        self.lost = 0
        self.connects = 0
        self.connect_errors = 0
        self.t_measure = 0
        self.t_end = 1 << 62
        self.last_done = 0
        self.stopping = False
        self.open_deadline = 0
        self.active = 0
        self.conns = []
        self.live = set()
        self.done_fut = loop.create_future()
        self.tasks = set()

    def note_error(self, status, body):
        self.err += 1
        kind = f"http_{status}"
        try:
            t = json.loads(body).get("__type", "")
            if t:
                kind += ":" + t.rsplit("#", 1)[-1]
        except Exception:
            pass
        self.err_types[kind] += 1
        if self.err_sample is None:
            self.err_sample = body[:300].decode("utf-8", "replace")

    def verify(self, body):
        self.verify_n += 1
        try:
            msg = self.verifier(json.loads(body)) if self.verifier else None
        except Exception as e:  # unparsable body
            msg = f"bad JSON: {e}"
        if msg:
            self.verify_fail += 1
            if self.verify_sample is None:
                self.verify_sample = msg + " | " + body[:200].decode("utf-8", "replace")

    async def _connect(self, c):
        delay = 0.02
        while True:
            try:
                await self.loop.create_connection(lambda: c, c.ep[0], c.ep[1])
                return True
            except OSError as e:
                self.connect_errors += 1
                self.err_types["connect:" + type(e).__name__] += 1
                now = perf_ns()
                if self.stopping or now >= self.t_end:
                    c.finish()
                    return False
                if self.open_deadline and now >= self.open_deadline:
                    raise ConnectionError(f"cannot connect to {c.ep[0]}:{c.ep[1]}: {e}") from e
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    def spawn(self, c):
        t = self.loop.create_task(self._connect(c))
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def open(self):
        """Open all connections before the clock starts."""
        eps = self.endpoints
        self.conns = [Conn(self, eps[(self.first_index + k) % len(eps)]) for k in range(self.nconns)]
        self.active = len(self.conns)
        self.open_deadline = perf_ns() + 10_000_000_000  # 10 s to get every connection up
        for c in self.conns:
            await self._connect(c)
        self.open_deadline = 0

    def start(self):
        for c in self.conns:
            if not c.done:
                c.send_next()

    def slot_done(self):
        self.active -= 1
        if self.active <= 0 and not self.done_fut.done():
            self.done_fut.set_result(True)

    async def wait(self, timeout):
        try:
            await asyncio.wait_for(asyncio.shield(self.done_fut), timeout)
        except TimeoutError:
            pass
        self.stopping = True
        # abort whatever is still in flight (a hung server must not hang the client)
        for t in list(self.tasks):
            t.cancel()
        await asyncio.sleep(0)


def close_all(eng: Engine):
    """Abort every transport still open (a hung server must not keep the client alive)."""
    for c in list(eng.live) + eng.conns:
        if c.tr is not None:
            c.tr.abort()


# --------------------------------------------------------------------------------------
# Simple synchronous client for setup calls
# --------------------------------------------------------------------------------------


class Setup:
    def __init__(self, host, port, rb: Req, timeout=30.0):
        self.host, self.port, self.rb, self.timeout = host, port, rb, timeout

    def call(self, op: str, body):
        if not isinstance(body, (bytes, bytearray)):
            body = dumps(body)
        raw = self.rb.full(op, body)
        s = socket.create_connection((self.host, self.port), timeout=self.timeout)
        try:
            s.sendall(raw)
            resp = http.client.HTTPResponse(s)
            resp.begin()
            data = resp.read()
            return resp.status, data
        finally:
            s.close()

    def json(self, op, body):
        st, data = self.call(op, body)
        try:
            return st, json.loads(data) if data else {}
        except ValueError:
            return st, {"_raw": data[:300].decode("utf-8", "replace")}


def ensure_table(su: Setup, table: str, recreate: bool, wait_s: float = 60.0):
    if recreate:
        su.json("DeleteTable", {"TableName": table})
        t_end = time.monotonic() + wait_s
        while time.monotonic() < t_end:
            st, d = su.json("DescribeTable", {"TableName": table})
            if st != 200:
                break
            time.sleep(0.1)
    st, d = su.json("CreateTable", {
        "TableName": table,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "BillingMode": "PAY_PER_REQUEST",
    })
    created = st == 200
    if not created and "ResourceInUse" not in str(d.get("__type", "")):
        raise SystemExit(f"CreateTable failed: HTTP {st} {d}")
    t_end = time.monotonic() + wait_s
    while True:
        st, d = su.json("DescribeTable", {"TableName": table})
        status = (d.get("Table") or {}).get("TableStatus")
        if st == 200 and status == "ACTIVE":
            return created
        if time.monotonic() > t_end:
            raise SystemExit(f"table {table} not ACTIVE after {wait_s}s: HTTP {st} {d}")
        time.sleep(0.05)


def preload_present(su: Setup, d: Data, samples=5) -> bool:
    rng = random.Random(12345)
    idxs = [0, d.items - 1] + [rng.randrange(d.items) for _ in range(samples)]
    for i in idxs:
        st, r = su.json("GetItem", d.get_body(*d.key_of(i)))
        if st != 200 or "Item" not in r:
            return False
    return True


async def preload(loop, host, port, d: Data, rb: Req, connections: int, batch: int, max_s: float):
    order = list(range(d.items))
    random.Random(d.seed).shuffle(order)
    q = deque(rb.full("BatchWriteItem", d.batch_body(order[k:k + batch]))
              for k in range(0, len(order), batch))
    stats = {"requests": 0, "retries": 0, "unprocessed": 0, "errors": 0, "last_error": None, "fatal": None}

    def next_req():
        return q.popleft() if q else None

    def hook(conn, status, body):
        stats["requests"] += 1
        if status != 200:
            stats["errors"] += 1
            stats["last_error"] = f"HTTP {status}: {body[:200]!r}"
            if stats["errors"] > 100:
                stats["fatal"] = f"preload: too many errors, last: {stats['last_error']}"
                conn.eng.stopping = True
                return
            q.append(conn.req)
            stats["retries"] += 1
            return
        if b'"UnprocessedItems":{}' in body:
            return
        un = json.loads(body).get("UnprocessedItems") or {}
        if un:
            stats["unprocessed"] += sum(len(v) for v in un.values())
            q.append(rb.full("BatchWriteItem", dumps({"RequestItems": un})))
            stats["retries"] += 1

    eng = Engine(loop, host, port, connections, next_req, hook=hook)
    eng.t_measure = 1 << 62  # record nothing
    eng.t_end = perf_ns() + int(max_s * 1e9)
    t0 = perf_ns()
    await eng.open()
    eng.start()
    await eng.wait(max_s)
    close_all(eng)
    el = (perf_ns() - t0) / 1e9
    if stats["fatal"]:
        raise SystemExit(stats["fatal"])
    if q:
        raise SystemExit(f"preload did not finish within {max_s}s ({len(q)} batches left)")
    return el, stats


# --------------------------------------------------------------------------------------
# Process stats (server pid tree, client rusage)
# --------------------------------------------------------------------------------------


def _proc_children_map():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(b")")
        ppid = int(s[r + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def proc_tree(pid: int):
    kids = _proc_children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def proc_trees(pids):
    """The processes of several trees (each pid and its descendants), without repeats."""
    kids = _proc_children_map()
    out, seen, todo = [], set(), list(pids)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def tree_pss_kb(pids):
    """Proportional set size of the processes, in KiB: shared memory (PostgreSQL's
    shared_buffers) divided among the processes that map it, so the sum is not inflated."""
    pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                        break
        except OSError:
            continue
    return pss


def tree_cpu_s(pids):
    tick = os.sysconf("SC_CLK_TCK")
    tot = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(b")")
        fields = s[r + 2:].split()
        tot += int(fields[11]) + int(fields[12])  # utime, stime
    return tot / tick


def tree_mem_kb(pids):
    """(RSS, peak RSS, anonymous RSS) of the processes, in KiB. RSS counts file
    pages a process has mapped (a memory-mapped database file); the anonymous
    part is the memory that is the process's own."""
    rss = hwm = anon = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
                    elif line.startswith("RssAnon:"):
                        anon += int(line.split()[1])
        except OSError:
            continue
    return rss, hwm, anon


def all_procs_cpu():
    """{pid: cpu seconds} for every user-space process (kernel threads left out)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                st = f.read()
        except OSError:
            continue
        r = st.rfind(b")")
        fl = st[r + 2:].split()
        if fl[1] in (b"0", b"2") and name != "1" or int(fl[6]) & 0x00200000:  # kthreadd children / PF_KTHREAD
            continue
        out[int(name)] = (int(fl[11]) + int(fl[12])) / tick
    return out


def other_cpu_s(before, after, exclude):
    """CPU seconds used between two all_procs_cpu() snapshots by processes not in exclude."""
    return sum(v - before.get(p, 0.0) for p, v in after.items() if p not in exclude)


def system_cpu_s():
    """(busy, steal) CPU-seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return (user + nice + system + irq + softirq) / tick, steal / tick


def client_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --------------------------------------------------------------------------------------
# Measured run (one process; optionally forked W times)
# --------------------------------------------------------------------------------------


def make_verifier(wl, meta):
    if wl == "get":
        return lambda d: None if isinstance(d.get("Item"), dict) else "GetItem without Item"
    if wl == "query":
        exp = meta.get("expect_count")

        def v(d):
            if not isinstance(d.get("Items"), list):
                return "Query without Items"
            if exp is not None and (d.get("Count") != exp or len(d["Items"]) != exp):
                return f"Query Count {d.get('Count')} != {exp}"
            return None
        return v
    return lambda d: None if isinstance(d, dict) else "not a JSON object"


def new_loop(kind):
    if kind == "uvloop" or (kind == "auto" and uvloop is not None):
        if uvloop is None:
            raise SystemExit("uvloop requested but not importable")
        return uvloop.new_event_loop(), "uvloop"
    return asyncio.new_event_loop(), "asyncio"


def worker_run(args, endpoints, wl_kind, wl_payload, meta, widx, nworkers, sync=None):
    """Runs one client process's share. sync: None (single process) or (conn) pipe to the
    parent for the ready/start handshake. Returns a result dict (lats as bytes)."""
    loop, loop_name = new_loop(args.loop)
    asyncio.set_event_loop(loop)
    nconns = args.connections // nworkers + (1 if widx < args.connections % nworkers else 0)
    # this worker's first connection's index among all workers' (round-robin over endpoints)
    first = sum(args.connections // nworkers + (1 if v < args.connections % nworkers else 0)
                for v in range(widx))
    if wl_kind == "pool":
        pool = wl_payload
        off = (len(pool) * widx) // max(1, nworkers)
        next_req = itertools.cycle(pool[off:] + pool[:off]).__next__
    else:
        next_req = wl_payload(widx, nworkers)
    remaining = None
    if args.requests:
        remaining = args.requests // nworkers + (1 if widx < args.requests % nworkers else 0)
    eng = Engine(loop, endpoints[0][0], endpoints[0][1], nconns, next_req, remaining=remaining,
                 verify_every=args.verify_every, verifier=make_verifier(args.workload, meta),
                 endpoints=endpoints, first_index=first)
    res = {}

    async def main():
        await eng.open()
        if sync is not None:
            sync.send("ready")
            t_start, warm_ns, dur_ns = sync.recv()
        else:
            t_start, warm_ns, dur_ns = perf_ns(), int(args.warmup * 1e9), int(args.duration * 1e9)
        now = perf_ns()
        if t_start > now:
            await asyncio.sleep((t_start - now) / 1e9)
        eng.t_measure = t_start + warm_ns
        eng.t_end = eng.t_measure + dur_ns
        snaps = {}
        srv = db = None
        if sync is None and args.server_pids:
            srv = proc_trees(args.server_pids)
        if sync is None and args.db_pids:
            db = proc_trees(args.db_pids)

        def snap(tag):
            snaps[tag] = (perf_ns(), client_cpu_s(), tree_cpu_s(srv) if srv else None, system_cpu_s(),
                          all_procs_cpu() if sync is None else None, tree_cpu_s(db) if db else None)

        loop.call_later(max(0.0, (eng.t_measure - perf_ns()) / 1e9), snap, "start")
        gc.collect()
        gc.freeze()
        gc.disable()
        eng.start()
        await eng.wait(max(0.0, (eng.t_end - perf_ns()) / 1e9) + args.drain)
        gc.enable()
        if "start" not in snaps:
            snap("start")
        end_ns = min(perf_ns(), eng.t_end)
        if args.requests:
            end_ns = eng.last_done or end_ns
        # cpu over the measured window: sample end now (drain is short; in-flight only)
        snap("end")
        close_all(eng)
        await asyncio.sleep(0.01)
        t0, c0, s0, y0, a0, d0 = snaps["start"]
        t1, c1, s1, y1, a1, d1 = snaps["end"]
        wall = (t1 - t0) / 1e9 or 1e-9
        other = None
        if a0 is not None:
            excl = set(srv or ()) | set(db or ()) | {os.getpid(), os.getppid()}
            other = 100.0 * other_cpu_s(a0, a1, excl) / wall
        res.update(
            window_s=max(1e-9, (end_ns - eng.t_measure) / 1e9),
            ok=eng.ok, err=eng.err, warm_err=eng.warm_err, err_types=dict(eng.err_types),
            err_sample=eng.err_sample, verify_n=eng.verify_n, verify_fail=eng.verify_fail,
            verify_sample=eng.verify_sample, connects=eng.connects,
            connect_errors=eng.connect_errors, lost=eng.lost,
            client_cpu_pct=100.0 * (c1 - c0) / wall,
            server_cpu_pct=(100.0 * (s1 - s0) / wall) if s0 is not None else None,
            db_cpu_pct=(100.0 * (d1 - d0) / wall) if d0 is not None else None,
            system_cpu_pct=100.0 * (y1[0] - y0[0]) / wall, steal_pct=100.0 * (y1[1] - y0[1]) / wall,
            other_cpu_pct=other,
            lats=eng.lats.tobytes(), loop=loop_name, conns=nconns,
        )

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return res


def _child(args, endpoints, wl_kind, wl_payload, meta, widx, nworkers, conn):
    try:
        res = worker_run(args, endpoints, wl_kind, wl_payload, meta, widx, nworkers, sync=conn)
        conn.send(("ok", res))
    except BaseException as e:  # report, never hang the parent
        conn.send(("error", repr(e)))
    finally:
        conn.close()


def run_forked(args, endpoints, wl_kind, wl_payload, meta):
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    W = args.workers
    pipes, procs = [], []
    for w in range(W):
        a, b = ctx.Pipe()
        p = ctx.Process(target=_child, args=(args, endpoints, wl_kind, wl_payload, meta, w, W, b),
                        daemon=True)
        p.start()
        pipes.append(a)
        procs.append(p)
    deadline = time.monotonic() + 60
    for a in pipes:
        if not a.poll(max(0.1, deadline - time.monotonic())):
            raise SystemExit("a client worker did not become ready")
        msg = a.recv()
        if isinstance(msg, tuple):
            raise SystemExit(f"client worker failed: {msg}")
    srv = proc_trees(args.server_pids) if args.server_pids else None
    db = proc_trees(args.db_pids) if args.db_pids else None
    t_start = perf_ns() + 50_000_000
    warm_ns, dur_ns = int(args.warmup * 1e9), int(args.duration * 1e9)
    for a in pipes:
        a.send((t_start, warm_ns, dur_ns))
    t_meas = t_start + warm_ns
    time.sleep(max(0.0, (t_meas - perf_ns()) / 1e9))
    s0 = tree_cpu_s(srv) if srv else None
    d0 = tree_cpu_s(db) if db else None
    y0 = system_cpu_s()
    a0 = all_procs_cpu()
    ts0 = perf_ns()
    results = []
    limit = args.warmup + args.duration + args.drain + 30
    for a in pipes:
        if not a.poll(limit):
            raise SystemExit("a client worker did not finish in time")
        status, res = a.recv()
        if status != "ok":
            raise SystemExit(f"client worker failed: {res}")
        results.append(res)
        if len(results) == 1:
            s1 = tree_cpu_s(srv) if srv else None
            d1 = tree_cpu_s(db) if db else None
            y1, ts1 = system_cpu_s(), perf_ns()
            a1 = all_procs_cpu()
    for p in procs:
        p.join(5)
    merged = merge_results(results)
    wall = (ts1 - ts0) / 1e9
    if s0 is not None:
        merged["server_cpu_pct"] = 100.0 * (s1 - s0) / wall
    if d0 is not None:
        merged["db_cpu_pct"] = 100.0 * (d1 - d0) / wall
    merged["system_cpu_pct"] = 100.0 * (y1[0] - y0[0]) / wall
    merged["steal_pct"] = 100.0 * (y1[1] - y0[1]) / wall
    excl = set(srv or ()) | set(db or ()) | set(proc_tree(os.getpid())) | {os.getppid()} | {p.pid for p in procs}
    merged["other_cpu_pct"] = 100.0 * other_cpu_s(a0, a1, excl) / wall
    return merged


def merge_results(results):
    out = dict(results[0])
    lats = array("q")
    for r in results:
        lats.frombytes(r["lats"])
    out["lats"] = lats
    for k in ("ok", "err", "warm_err", "verify_n", "verify_fail", "connects", "connect_errors", "lost",
              "client_cpu_pct"):
        out[k] = sum(r[k] for r in results)
    out["window_s"] = max(r["window_s"] for r in results)
    et = Counter()
    for r in results:
        et.update(r["err_types"])
    out["err_types"] = dict(et)
    out["err_sample"] = next((r["err_sample"] for r in results if r["err_sample"]), None)
    out["verify_sample"] = next((r["verify_sample"] for r in results if r["verify_sample"]), None)
    return out


def pct(sorted_lats, q):
    n = len(sorted_lats)
    if not n:
        return None
    k = max(0, min(n - 1, int(-(-q * n // 1)) - 1))
    return sorted_lats[k] / 1e6


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def _prefix(path: str, host_hdr: str) -> bytes:
    """The start of every request Req builds: the request line and the Host header."""
    return f"POST {path or '/'} HTTP/1.1\r\nHost: {host_hdr}\r\n".encode()


def endpoint_list(urls):
    """[(address, port, fix)] for the URLs; fix is None for the first (the requests are
    built for it) and, for another, (len(first prefix), its own prefix) when they differ."""
    out = []
    first = None
    for url in urls:
        u = urlsplit(url)
        if u.scheme != "http":
            raise SystemExit("only http:// URLs are supported")
        host_name = u.hostname or "127.0.0.1"
        port = u.port or 80
        host = socket.getaddrinfo(host_name, port, type=socket.SOCK_STREAM)[0][4][0]
        prefix = _prefix(u.path, f"{host_name}:{port}")
        if first is None:
            first = prefix
        fix = None if prefix == first else (len(first), prefix)
        out.append((host, port, fix))
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--url", action="append", default=None,
                    help="endpoint (http only; default http://127.0.0.1:8000/); repeat it or give a comma "
                         "list to spread the connections over several servers round-robin (setup goes "
                         "to the first)")
    ap.add_argument("--workload", "-w", choices=WORKLOADS, default="get")
    ap.add_argument("--connections", "-c", type=int, default=32, help="connections = concurrency")
    ap.add_argument("--duration", "-d", type=float, default=None,
                    help="measured seconds (default 10; 300 as a cap when --requests is given)")
    ap.add_argument("--requests", "-n", type=int, default=0, help="stop after this many requests (0: none)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds run before measuring (default 1; 0 with --requests)")
    ap.add_argument("--drain", type=float, default=5.0, help="seconds to wait for in-flight requests at the end")
    ap.add_argument("--workers", type=int, default=1, help="client processes (connections are split)")
    ap.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto")
    ap.add_argument("--items", type=int, default=100000, help="items preloaded / key space for get/update/query/mixed")
    ap.add_argument("--item-size", type=int, default=1024, help="approx item size (DynamoDB accounting), bytes")
    ap.add_argument("--partition-size", type=int, default=100, help="preloaded items per partition key")
    ap.add_argument("--limit", type=int, default=25, help="Query Limit")
    ap.add_argument("--mixed-put", type=float, default=0.2, help="fraction of PutItem in mixed")
    ap.add_argument("--update-cond", choices=("exists", "version", "none"), default="exists",
                    help="UpdateItem ConditionExpression: attribute_exists(pk) or #ver = :v")
    ap.add_argument("--table", default="bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool", type=int, default=100000, help="distinct pre-serialized requests per run")
    ap.add_argument("--preload", choices=("auto", "yes", "no"), default="auto",
                    help="auto: preload unless sampled keys already exist (get/query/update/mixed)")
    ap.add_argument("--preload-connections", type=int, default=8)
    ap.add_argument("--preload-batch", type=int, default=25)
    ap.add_argument("--preload-timeout", type=float, default=1800.0)
    ap.add_argument("--recreate", action="store_true", help="DeleteTable first")
    ap.add_argument("--no-setup", action="store_true",
                    help="skip CreateTable/preload (for fixed-response servers)")
    ap.add_argument("--setup-only", action="store_true", help="create table + preload, report, exit")
    ap.add_argument("--verify-every", type=int, default=1000,
                    help="parse and check every Nth response per connection (0: off)")
    ap.add_argument("--server-pid", action="append", default=None,
                    help="report CPU%% and RSS of this pid's process tree; repeat it or give a comma list "
                         "to report the sum over several servers")
    ap.add_argument("--db-pid", action="append", default=None,
                    help="report the CPU%% and PSS of this pid's process tree apart (db_cpu_pct, db_pss_mb), "
                         "e.g. a PostgreSQL postmaster; repeatable or a comma list")
    ap.add_argument("--region", default="us-east-1")
    ap.add_argument("--access-key", default="AKIAIOSFODNN7EXAMPLE")
    ap.add_argument("--amz-date", default=AMZ_DATE_DEFAULT)
    ap.add_argument("--secret", default="",
                    help="sign every request for real with --access-key and this secret key")
    ap.add_argument("--label", default="", help="free text copied into the JSON line")
    ap.add_argument("--out", default="", help="also append the JSON line to this file")
    ap.add_argument("--json-only", action="store_true", help="print only the JSON line")
    ap.add_argument("--wrk-script", default="",
                    help="write a wrk Lua script replaying this workload's first request, then exit")
    a = ap.parse_args(argv)
    a.urls = [u.strip() for v in (a.url or ["http://127.0.0.1:8000/"]) for u in v.split(",") if u.strip()]
    if not a.urls:
        ap.error("--url: no endpoint given")
    a.url = ",".join(a.urls)

    def pids(values, flag):
        out = []
        for v in values or ():
            for p in v.split(","):
                p = p.strip()
                if not p:
                    continue
                try:
                    n = int(p)
                except ValueError:
                    ap.error(f"{flag}: not a pid: {p!r}")
                if n:  # 0: none, as before
                    out.append(n)
        return out

    a.server_pids = pids(a.server_pid, "--server-pid")
    a.db_pids = pids(a.db_pid, "--db-pid")
    if a.duration is None:
        a.duration = 300.0 if a.requests else 10.0
    if a.warmup is None:
        a.warmup = 0.0 if a.requests else 1.0
    if a.connections < 1 or a.workers < 1 or a.workers > a.connections:
        ap.error("need 1 <= --workers <= --connections")
    if a.requests:
        a.pool = min(a.pool, max(a.requests, 1000))
    return a


def main(argv=None):
    args = parse_args(argv)
    endpoints = endpoint_list(args.urls)
    host, port = endpoints[0][0], endpoints[0][1]
    u = urlsplit(args.urls[0])
    host_hdr = f"{u.hostname or '127.0.0.1'}:{u.port or 80}"
    if args.secret and args.amz_date == AMZ_DATE_DEFAULT:  # signatures must be current
        args.amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    rb = Req(host_hdr, u.path or "/", args.region, args.access_key, args.amz_date, args.secret)
    d = Data(args.table, args.items, args.partition_size, args.item_size, args.seed)
    say = (lambda *a: None) if args.json_only else (lambda *a: print(*a, flush=True))

    if args.wrk_script:
        kind, payload, meta = build_workload(args.workload, d, rb, argparse.Namespace(**{**vars(args), "pool": 1}))
        raw = payload[0] if kind == "pool" else payload(0, 1)()
        head, body = raw.split(b"\r\n\r\n", 1)
        hdrs = [h.split(": ", 1) for h in head.decode().split("\r\n")[1:]]
        with open(args.wrk_script, "w") as f:
            f.write("-- generated by loadgen.py --wrk-script\nwrk.method = \"POST\"\n")
            f.write(f"wrk.path = {json.dumps(u.path or '/')}\n")
            f.write(f"wrk.body = {json.dumps(body.decode())}\n")
            for k, v in hdrs:
                if k.lower() in ("host", "content-length"):
                    continue
                f.write(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}\n")
        say(f"wrote {args.wrk_script}")
        return 0

    result = {"tool": "loadgen", "version": VERSION, "label": args.label, "url": args.url,
              **({"urls": args.urls} if len(args.urls) > 1 else {}),
              "workload": args.workload, "connections": args.connections, "workers": args.workers,
              "items": args.items, "item_size": args.item_size, "seed": args.seed}
    needs_data = args.workload in ("get", "query", "update", "mixed")
    if not args.no_setup:
        su = Setup(host, port, rb)
        t0 = time.monotonic()
        created = ensure_table(su, args.table, args.recreate)
        result["create_table_s"] = round(time.monotonic() - t0, 3)
        do_preload = args.items > 0 and (
            args.preload == "yes"
            or (args.preload == "auto" and (needs_data or args.setup_only) and (created or not preload_present(su, d))))
        if do_preload:
            say(f"preloading {args.items} items (~{args.item_size} B) with BatchWriteItem x{args.preload_batch}, "
                f"{args.preload_connections} connections ...")
            loop, _ = new_loop(args.loop)
            try:
                el, st = loop.run_until_complete(preload(loop, host, port, d, rb, args.preload_connections,
                                                         args.preload_batch, args.preload_timeout))
            finally:
                loop.close()
            result.update(preload_s=round(el, 3), preload_items_s=round(args.items / el, 1),
                          preload_retries=st["retries"], preload_errors=st["errors"])
            say(f"  preload {el:.2f}s  ({args.items / el:.0f} items/s, retries {st['retries']}, "
                f"errors {st['errors']})")
        if len(endpoints) > 1:
            # the setup went to the first endpoint: do the others see the table?
            unseen = []
            for url, (ep_host, ep_port, _) in zip(args.urls[1:], endpoints[1:], strict=True):
                uj = urlsplit(url)
                rbj = Req(f"{uj.hostname or '127.0.0.1'}:{uj.port or 80}", uj.path or "/",
                          args.region, args.access_key, args.amz_date)
                st, body = Setup(ep_host, ep_port, rbj).json("DescribeTable", {"TableName": args.table})
                if st != 200:
                    unseen.append(url)
                    print(f"loadgen: WARNING: {url} does not see table {args.table} created through "
                          f"{args.urls[0]}: HTTP {st} {body}", file=sys.stderr, flush=True)
            if unseen:
                result["table_not_visible_at"] = unseen
        if args.server_pids:
            rss, hwm, anon = tree_mem_kb(proc_trees(args.server_pids))
            result.update(server_rss_mb_after_setup=round(rss / 1024, 1), server_hwm_mb_after_setup=round(hwm / 1024, 1),
                          server_anon_mb_after_setup=round(anon / 1024, 1))
            say(f"  server rss {rss / 1024:.1f} MiB, peak (VmHWM) {hwm / 1024:.1f} MiB")
    if args.setup_only:
        print(json.dumps(result))
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(result) + "\n")
        return 0

    kind, payload, meta = build_workload(args.workload, d, rb, args)
    if args.workers == 1:
        r = worker_run(args, endpoints, kind, payload, meta, 0, 1)
        lats = array("q")
        lats.frombytes(r["lats"])
        r["lats"] = lats
    else:
        r = run_forked(args, endpoints, kind, payload, meta)
    s = sorted(r["lats"])
    win = r["window_s"]
    result.update(
        duration_s=round(win, 3), loop=r["loop"],
        ops=r["ok"], errors=r["err"], warmup_errors=r["warm_err"],
        ops_s=round(r["ok"] / win, 1), rps=round((r["ok"] + r["err"]) / win, 1),
        p50_ms=pct(s, 0.50), p90_ms=pct(s, 0.90), p99_ms=pct(s, 0.99), p999_ms=pct(s, 0.999),
        max_ms=(s[-1] / 1e6) if s else None, mean_ms=(sum(s) / len(s) / 1e6) if s else None,
        connects=r["connects"], connect_errors=r["connect_errors"],
        verify_checked=r["verify_n"], verify_fail=r["verify_fail"],
        client_cpu_pct=round(r["client_cpu_pct"], 1),
        server_cpu_pct=round(r["server_cpu_pct"], 1) if r.get("server_cpu_pct") is not None else None,
        system_cpu_pct=round(r["system_cpu_pct"], 1), steal_pct=round(r["steal_pct"], 1),
    )
    # CPU used by user-space processes other than this client and the server tree during
    # the window (noise indicator); 100 = one core
    result["other_cpu_pct"] = round(r["other_cpu_pct"], 1) if r.get("other_cpu_pct") is not None else None
    for k in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms"):
        if result[k] is not None:
            result[k] = round(result[k], 3)
    if r["err_types"]:
        result["error_types"] = r["err_types"]
        result["error_sample"] = r["err_sample"]
    if r["verify_sample"]:
        result["verify_sample"] = r["verify_sample"]
    if args.server_pids:
        rss, hwm, anon = tree_mem_kb(proc_trees(args.server_pids))
        result.update(server_rss_mb=round(rss / 1024, 1), server_hwm_mb=round(hwm / 1024, 1),
                      server_anon_mb=round(anon / 1024, 1))
    if args.db_pids:
        result["db_cpu_pct"] = round(r["db_cpu_pct"], 1) if r.get("db_cpu_pct") is not None else None
        result["db_pss_mb"] = round(tree_pss_kb(proc_trees(args.db_pids)) / 1024, 1)

    def f3(v):
        return "-" if v is None else f"{v:.3f}"

    say(f"{args.workload}  {args.url}  connections={args.connections} workers={args.workers} "
        f"loop={r['loop']}  window={win:.2f}s")
    say(f"  ops/s {result['ops_s']:.1f}   ok {result['ops']}  errors {result['errors']}  "
        f"connects {result['connects']}  verify {result['verify_checked']}/{result['verify_fail']} failed")
    say(f"  latency ms  p50 {f3(result['p50_ms'])}  p90 {f3(result['p90_ms'])}  p99 {f3(result['p99_ms'])}  "
        f"p99.9 {f3(result['p999_ms'])}  max {f3(result['max_ms'])}")
    srv = ""
    if args.db_pids:
        srv = f"  db cpu {result['db_cpu_pct']}%  pss {result['db_pss_mb']} MiB"
    if args.server_pids:
        srv = (f"  server cpu {result['server_cpu_pct']}%  rss {result['server_rss_mb']} MiB  "
               f"hwm {result['server_hwm_mb']} MiB" + srv)
    say(f"  client cpu {result['client_cpu_pct']}%{srv}  machine busy {result['system_cpu_pct']}% "
        f"(other {result['other_cpu_pct']}%, steal {result['steal_pct']}%)  [100% = 1 core]")
    if r["err_types"]:
        say(f"  errors: {r['err_types']}  sample: {r['err_sample']}")
    if r["verify_sample"]:
        say(f"  verify failure sample: {r['verify_sample']}")
    line = json.dumps(result)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
