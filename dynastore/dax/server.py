"""The DAX endpoint: a TCP (or TLS) listener on the engine's event loop.

Each connection reads the client's hello, then requests one after the
other (``wire``: nothing frames a request but its CBOR items, so the method
id says how many arguments follow). Each request runs as an HTTP request
does (protocol/group_commit.py): an item operation joins the open group
commit and its answer leaves after the COMMIT that made it durable; on a
store other servers share (PostgreSQL) it runs in a greenlet of its own.
Answers leave in the order their requests came.

Bytes that are not DAX's protocol (a bad hello, a broken CBOR item, an
unknown method, a request beyond DAX_REQUEST_MAX_BYTES) close that
connection only; nothing of the broken request has run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.dax.methods import (
    ARGUMENT_COUNTS,
    AUTHORIZE_CONNECTION,
    GET_ITEM,
    OPERATION_NAMES,
    QUERY,
    SCAN,
)
from dynastore.dax.service import INTERNAL_ERROR_ANSWER, DaxService, Session
from dynastore.dax.wire import (
    MAGIC,
    SERVICE_ID,
    Incomplete,
    ItemReader,
    MalformedFrame,
    byte_string_at,
)
from dynastore.protocol.group_commit import run_request

if TYPE_CHECKING:
    import ssl

    from dynastore.database import Database
    from dynastore.protocol.group_commit import GroupCommit
    from dynastore.protocol.http import Reply

logger = logging.getLogger("dynastore.dax")

PLAIN_GET_ITEM = bytes([0x01, 0x1A]) + GET_ITEM.to_bytes(4, "big")
QUERY_PREFIX = bytes([0x01, 0x3A]) + (-1 - QUERY).to_bytes(4, "big")
SCAN_PREFIX = bytes([0x01, 0x3A]) + (-1 - SCAN).to_bytes(4, "big")
"""1, query / scan (negative ids): requests the query cache may answer whole."""
FAST_PREFIXES = frozenset((PLAIN_GET_ITEM, QUERY_PREFIX, SCAN_PREFIX))
"""1, getItem: the start of the request the fast path answers."""
NULL = 0xF6
HELLO_ITEMS = 4
"""After the magic bytes: layering, session id, client properties, types."""

_TARGETS = {
    method_id: {b"x-amz-target": b"DynamoDB_20120810." + name.encode()}
    for method_id, name in OPERATION_NAMES.items()
}
"""What group commit sees of a data request: the DynamoDB operation it runs."""
_OWN_TARGET = {b"x-amz-target": b"DAX.metadata"}
"""DAX's own calls (endpoints, key schemas, attribute lists): no group."""


class Request:
    __slots__ = ("method_id", "arguments", "raw")

    def __init__(self, method_id: int, arguments: list[Any], raw: bytes) -> None:
        self.method_id = method_id
        self.arguments = arguments
        self.raw = raw


class DaxConnection(asyncio.Protocol):
    """One client connection."""

    def __init__(self, server: DaxServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.greeted = False
        self.session: Session | None = None
        self.pending: deque[Request] = deque()
        self.busy = False
        """A request is running in a greenlet (a shared store): the next waits."""
        self.closed = False
        self.last_data = time.monotonic()
        """When bytes last came (the stalled-request sweep reads it)."""

    # --- asyncio ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if len(self.server.connections) >= limits.DAX_MAX_CONNECTIONS:
            transport.close()
            self.closed = True
            return
        self.server.connections.add(self)
        self.server.service.connections = len(self.server.connections)
        address = transport.get_extra_info("sockname") or ("127.0.0.1", self.server.port)
        self.session = Session(self.server.database, (str(address[0]), int(address[1])))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)
        self.server.service.connections = len(self.server.connections)

    def data_received(self, data: bytes) -> None:
        head = data[:6]
        if (head in FAST_PREFIXES and self.greeted and not self.buffer and not self.pending
                and not self.busy and not self.closed):
            if head == PLAIN_GET_ITEM:
                end = self._cached_get_item(data, 0)  # a read-heavy client's common case
                if end == len(data):
                    return
                data = data[end:]  # answered the first request: the rest as usual
            elif self._cached_query(head, data):
                return
        if self.closed:
            return
        self.buffer += data
        self.last_data = time.monotonic()
        try:
            self._read_requests()
        except MalformedFrame as error:
            self.malformed(str(error))
            return
        if len(self.buffer) > limits.DAX_REQUEST_MAX_BYTES:
            self.malformed(f"a request larger than {limits.DAX_REQUEST_MAX_BYTES} bytes")
            return
        self._pump()

    # --- requests -----------------------------------------------------------------

    def _read_requests(self) -> None:
        """Parse every complete request in the buffer into ``pending``."""
        data = bytes(self.buffer)
        reader = ItemReader(data)
        consumed = 0
        try:
            if not self.greeted:
                self._read_hello(reader)
                consumed = reader.offset
                self.greeted = True
            while not reader.at_end():
                start = reader.offset
                if data.startswith(PLAIN_GET_ITEM, start) and not self.pending and not self.busy:
                    end = self._cached_get_item(data, start)
                    if end:
                        reader.skip_to(end)
                        consumed = end
                        continue
                request = self._read_request(reader, data, start)
                consumed = reader.offset
                if request is not None:
                    self.pending.append(request)
        except Incomplete:
            pass
        if consumed:
            del self.buffer[:consumed]

    def _cached_get_item(self, data: bytes, start: int) -> int:
        """The fast path of a cached GetItem (no parameters, an eventually
        consistent read, the item cache holding the key): answered from the
        cache's encoded answer; returns the request's end, else 0 (the full
        path runs)."""
        session = self.session
        assert session is not None
        table = byte_string_at(data, start + len(PLAIN_GET_ITEM))
        if table is None or session.authorization_error is not None:
            return 0
        key = byte_string_at(data, table[1])
        if key is None or key[1] >= len(data) or data[key[1]] != NULL:
            return 0
        try:
            table_name = data[table[0]:table[1]].decode("utf-8")
        except UnicodeDecodeError:
            return 0
        answer = self.server.service.cached_get_answer(session, table_name, data[key[0]:key[1]])
        if answer is None:
            return 0
        group = self.server.group
        if group is None:
            self.send((200, b"", answer, b""), True)
        else:  # after the replies the open group holds, if any (order kept)
            group.hold(self, (200, b"", answer, b""), True)
        return key[1] + 1

    def _cached_query(self, head: bytes, data: bytes) -> bool:
        """A packet that is exactly a Query or Scan the query cache holds
        (the cache is keyed by the request's bytes, and CBOR items delimit
        themselves: equal bytes are that very request): answered from it."""
        session = self.session
        assert session is not None
        if session.authorization_error is not None:
            return False
        name = "query" if head == QUERY_PREFIX else "scan"
        answer = self.server.service.cached_query_answer(session, data, name)
        if answer is None:
            return False
        group = self.server.group
        if group is None:
            self.send((200, b"", answer, b""), True)
        else:
            group.hold(self, (200, b"", answer, b""), True)
        return True

    def _read_hello(self, reader: ItemReader) -> None:
        magic = reader.raw(len(MAGIC))
        if magic != MAGIC:
            raise MalformedFrame("not a DAX client (no hello)")
        for _ in range(HELLO_ITEMS):
            reader.item()

    def _read_request(self, reader: ItemReader, data: bytes, start: int) -> Request | None:
        service_id = reader.item()
        if service_id != SERVICE_ID:
            raise MalformedFrame(f"a request must start with {SERVICE_ID}, not {service_id!r}")
        method_id = reader.item()
        count = ARGUMENT_COUNTS.get(method_id) if type(method_id) is int else None
        if count is None:
            raise MalformedFrame(f"unknown DAX method {method_id!r}")
        arguments = [reader.item() for _ in range(count)]
        if method_id == AUTHORIZE_CONNECTION:
            self._authorize(arguments)
            return None
        return Request(method_id, arguments, data[start:reader.offset])

    def _authorize(self, arguments: list[Any]) -> None:
        assert self.session is not None
        self.server.authorize(self.session, arguments)

    def _pump(self) -> None:
        """Run the pending requests in order (one at a time in greenlets)."""
        while self.pending and not self.busy and not self.closed:
            request = self.pending.popleft()
            spawn = self.server.spawn
            if spawn is None:
                self._run(request)
            else:
                self.busy = True
                spawn(lambda request=request: self._run_in_greenlet(request))

    def _run(self, request: Request) -> None:
        session = self.session
        assert session is not None
        service = self.server.service

        def handle(method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
            try:
                answer = service.run(session, request.method_id, request.arguments, request.raw)
            except MalformedFrame as error:
                return (400, b"", str(error).encode(), b"")
            return (200, b"", answer, b"")

        headers = _TARGETS.get(request.method_id, _OWN_TARGET)
        run_request(self.server.group, handle, self, b"POST", b"/", headers, b"", True)

    def _run_in_greenlet(self, request: Request) -> None:
        try:
            self._run(request)
        finally:
            loop = self.server.loop
            assert loop is not None
            loop.call_soon_threadsafe(self._greenlet_done)

    def _greenlet_done(self) -> None:
        self.busy = False
        self._pump()

    def send(self, reply: Reply, keep_alive: bool) -> None:
        """A request's answer (group commit's sink)."""
        if self.closed or self.transport is None:
            return
        status, _, body, _ = reply
        if status == 400:  # a malformed argument: the connection is not DAX's any more
            self.malformed(body.decode(errors="replace"))
            return
        if status != 200:  # the group's COMMIT failed: nothing was acknowledged
            self.transport.write(INTERNAL_ERROR_ANSWER)
            self.close()
            return
        self.transport.write(body)
        if not keep_alive:
            self.close()

    def malformed(self, why: str) -> None:
        self.server.service.malformed_frames += 1
        logger.info("closing a DAX connection: %s", why)
        self.pending.clear()
        self.close()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class DaxServer:
    """Listens for DAX clients and serves one Database's namespaces."""

    def __init__(self, database: Database, host: str, port: int, service: DaxService,
                 group: GroupCommit | None = None, ssl_context: ssl.SSLContext | None = None,
                 verifier: Any = None) -> None:
        self.database = database
        self.host = host
        self.port = port
        self.service = service
        self.group = group
        self.ssl_context = ssl_context
        self.verifier = verifier
        self.connections: set[DaxConnection] = set()
        self.listener: asyncio.Server | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.spawn: Any = None
        """On a shared store, the greenlet hub's spawn (requests run in greenlets)."""
        self._sweeper: asyncio.TimerHandle | None = None

    async def start(self) -> tuple[str, int]:
        self.loop = asyncio.get_running_loop()
        if not self.database.storage.exclusive:
            self.spawn = self.database.background_spawn
        self.listener = await self.loop.create_server(
            lambda: DaxConnection(self), self.host, self.port, ssl=self.ssl_context,
            reuse_address=True, backlog=limits.DAX_MAX_CONNECTIONS,
        )
        self._sweeper = self.loop.call_later(limits.DAX_STALLED_REQUEST_SECONDS / 2, self._sweep_stalled)
        sockets = self.listener.sockets
        host, port = sockets[0].getsockname()[:2]
        self.port = int(port)
        return str(host), int(port)

    def _sweep_stalled(self) -> None:
        """Close connections that left a request half-sent for too long
        (their buffered bytes are bounded, but not 1,024 times over)."""
        now = time.monotonic()
        for connection in list(self.connections):
            if connection.buffer and now - connection.last_data > limits.DAX_STALLED_REQUEST_SECONDS:
                connection.malformed("a request half-sent for too long")
        if self.loop is not None and self.listener is not None:
            self._sweeper = self.loop.call_later(limits.DAX_STALLED_REQUEST_SECONDS / 2, self._sweep_stalled)

    def authorize(self, session: Session, arguments: list[Any]) -> None:
        from dynastore.dax.authorization import authorize

        authorize(self, session, arguments)

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.listener is not None:
            self.listener.close()
        for connection in list(self.connections):
            connection.close()
        if self.listener is not None:
            await self.listener.wait_closed()
