"""HTTP/1.1 for dynastore's servers: connections over httptools' parser, and
the listener that owns them.

Two servers are built on this module:

- ``server.Server``: HTTP and the database in one process (the embedded
  ``db.serve()``, ``dynastore serve --single-process``, the group-commit tests);
- ``front.FrontServer``: the HTTP front process of ``dynastore serve``, which
  forwards every request to the engine process over a socket (ADR 0003).

What a listener does with a complete request is its own business
(``HttpListener.answer``); this module parses, bounds and writes. It imports
nothing of the engine, so the front process stays small and starts fast.

How a request flows: ``data_received`` feeds bytes to httptools, whose
callbacks collect the URL, the headers and the body; on message complete the
listener's ``answer`` is called, and the connection's ``send`` writes the
reply when it is ready (at once in the single process, when the engine
answers in the front). Replies leave in request order, which is all HTTP
pipelining needs.

Bounds: header bytes (limits.HTTP_HEADER_MAX_BYTES, 16 KB: DynamoDB answers
a larger header block 400 Bad Request, as it does a request target over
limits.HTTP_REQUEST_LINE_MAX_BYTES), body bytes
(limits.REQUEST_BODY_MAX_BYTES, checked from Content-Length before any body
byte is read, and again while a chunked body streams in), and the requests
queued while the client is not reading its responses
(limits.HTTP_MAX_PIPELINED_REQUESTS): when the transport's write buffer is
full the connection stops reading, and a client that keeps pipelining past
the bound is disconnected. Connections are bounded too: at most
MAX_CONNECTIONS at once, closed after IDLE_CONNECTION_SECONDS without a
request or STALLED_REQUEST_SECONDS stuck in the middle of one. A request
target over limits.HTTP_REQUEST_LINE_MAX_BYTES (16 KB, DynamoDB's bound) is
answered 400.

Compression: a request whose Accept-Encoding allows gzip or deflate gets a
reply of 4 KB or more compressed (``choose_coding``, ``encode_reply``), here,
where the reply is written: in the front process for its connections, so
the engine never pays for it. Requests record the coding they asked for in
``HttpConnection.codings``; a request without Accept-Encoding, or with
``identity``, costs a dictionary lookup and a comparison.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import httptools

from dynastore import limits
from dynastore.errors import RequestEntityTooLargeException
from dynastore.protocol.link import ReadinessSpinner

if TYPE_CHECKING:
    import asyncio
    import ssl

try:  # ISA-L's CRC32 is about 3x faster than zlib's (1 MB: 0.3 ms instead of 1.2 ms)
    from isal.isal_zlib import crc32  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - isal is an optional accelerator
    from zlib import crc32

logger = logging.getLogger("dynastore.server")

Reply = tuple[int, bytes, bytes, bytes]
"""(status, content type, body, extra header lines each ending in CRLF).
A plain tuple: it is built once per request on the hot path."""

JSON_1_0 = b"application/x-amz-json-1.0"
APPLICATION_JSON = b"application/json"
TEXT_PLAIN = b"text/plain"

SHUTDOWN_GRACE_SECONDS = limits.HTTP_SHUTDOWN_GRACE_SECONDS
"""How long a stopping server waits for connections to finish their request."""
IDLE_CONNECTION_SECONDS = limits.HTTP_IDLE_CONNECTION_SECONDS
"""A keep-alive connection with no request for this long is closed (clients
reconnect transparently; the bound keeps abandoned sockets from piling up)."""
STALLED_REQUEST_SECONDS = limits.HTTP_STALLED_REQUEST_SECONDS
"""A request that has not progressed for this long (a client that sends half
a request and stops) is dropped and its connection closed."""
MAX_CONNECTIONS = limits.HTTP_MAX_CONNECTIONS
"""Connections beyond this many are closed as soon as they are accepted, so a
flood cannot exhaust the process's file descriptors."""
LISTEN_BACKLOG = 1024
TICK_MINIMUM_SECONDS = 0.05
"""A tick due sooner than this after the last is moved on by a second."""

STATUS_LINES: dict[int, bytes] = {
    100: b"HTTP/1.1 100 Continue",
    200: b"HTTP/1.1 200 OK",
    400: b"HTTP/1.1 400 Bad Request",
    404: b"HTTP/1.1 404 Not Found",
    405: b"HTTP/1.1 405 Method Not Allowed",
    413: b"HTTP/1.1 413 Request Entity Too Large",
    500: b"HTTP/1.1 500 Internal Server Error",
    503: b"HTTP/1.1 503 Service Unavailable",
}

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
CONNECTION_CLOSE = b"Connection: close\r\n"
TOO_LARGE: Reply = (
    413,
    JSON_1_0,
    # The stdlib's json, formatted as orjson would: the front process needs no orjson.
    json.dumps(RequestEntityTooLargeException().to_wire(), separators=(",", ":")).encode(),
    b"",
)
BAD_REQUEST: Reply = (400, TEXT_PLAIN, b"Bad request", b"")
"""Malformed HTTP, a request target over 16 KB, a header block over 16 KB:
DynamoDB's status (ScyllaDB's issue 23438 and PR 23442, measured on the
service); its body for them is not recorded."""
HEADER_LINE_OVERHEAD_BYTES = 4
"""``: `` and CRLF around each header's name and value."""

RESPONSE_HEAD = (
    b"%s\r\nServer: Server\r\nx-amzn-RequestId: %s%020d\r\nx-amz-crc32: %d\r\nContent-Type: %s\r\n"
    b"Content-Length: %d\r\nDate: %s\r\n%s%s\r\n"
)
"""Every response's head. The request id is a per-process random prefix and a
counter, formatted in the same step. ``Server: Server`` is what DynamoDB
sends (captures of dynamodb.us-east-1.amazonaws.com; ScyllaDB's
test_http_headers.py checks the header is there on AWS)."""
BARE_RESPONSE_HEAD = (
    b"%s\r\nServer: Server\r\nx-amzn-RequestId: %s%020d\r\nContent-Length: %d\r\nDate: %s\r\n%s%s\r\n"
)
"""The head of a reply whose content type is empty (a CORS preflight): DynamoDB's
answer to one has neither Content-Type nor x-amz-crc32."""
KEEP_ALIVE = b"Connection: keep-alive\r\n"
"""DynamoDB says so on every reply that leaves the connection open."""
SMALL_BODY_BYTES = 65536
"""Bodies below this are copied into one write with the head; larger ones are
written after it without the copy."""

#: A completed request waiting for its turn: method, url, headers, body, keep-alive.
PendingRequest = tuple[bytes, bytes, dict[bytes, bytes], bytes, bool]


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop when it is installed (about twice the throughput), else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on POSIX
        import asyncio

        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def switch_reading(transport: Transport, paused: bool, pause: bool) -> bool:
    """Pause or resume reading ``transport`` when ``pause`` differs from what
    it is (``paused``); returns the new state."""
    if pause != paused:
        if pause:
            transport.pause_reading()
        else:
            transport.resume_reading()
    return pause


def request_id_prefix() -> bytes:
    """32 random characters of [0-9A-Z]; with a 20-digit counter after them an
    ``x-amzn-RequestId`` looks like DynamoDB's ([0-9A-Z]{52}) and is unique
    without paying for randomness on every request."""
    alphabet = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return bytes(alphabet[byte % 36] for byte in os.urandom(32))


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def http_date(seconds: float | None = None) -> bytes:
    """RFC 9110's IMF-fixdate, e.g. ``Sun, 06 Nov 1994 08:49:37 GMT`` (not
    locale-dependent, and without importing the email package at startup)."""
    t = time.gmtime(seconds)
    return (
        f"{WEEKDAYS[t.tm_wday]}, {t.tm_mday:02d} {MONTHS[t.tm_mon - 1]} {t.tm_year} "
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT"
    ).encode()


GZIP = b"gzip"
DEFLATE = b"deflate"
CONTENT_ENCODING_LINES = {
    GZIP: b"Content-Encoding: gzip\r\n",
    DEFLATE: b"Content-Encoding: deflate\r\n",
}
_ZLIB_WBITS = {GZIP: 16 + zlib.MAX_WBITS, DEFLATE: zlib.MAX_WBITS}
"""gzip (RFC 1952) and deflate as HTTP means it: the zlib format (RFC 1950)."""
_QUALITY_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_CODINGS_ASKED: dict[bytes, bytes | None] = {}
"""Accept-Encoding value -> the coding it chooses (clients send the same few)."""
_NOT_PARSED = b"not parsed"


def response_coding(accept_encoding: bytes) -> bytes | None:
    """The coding (``GZIP``, ``DEFLATE``) to compress a large reply with for
    a request that sent this ``Accept-Encoding``, or None for none."""
    try:
        return _CODINGS_ASKED[accept_encoding]
    except KeyError:
        pass
    coding = choose_coding(accept_encoding)
    if len(_CODINGS_ASKED) >= limits.HTTP_ACCEPT_ENCODING_CACHE_ENTRIES:
        _CODINGS_ASKED.clear()
    _CODINGS_ASKED[accept_encoding] = coding
    return coding


def choose_coding(accept_encoding: bytes) -> bytes | None:
    """DynamoDB's reading of Accept-Encoding (as ScyllaDB's
    test_compressed_response.py records it against the service): it
    compresses with gzip or deflate, the one of highest quality; ``*``
    stands for either one not named; ``identity`` and unknown names are
    ignored; names are case-insensitive; an entry's first well-formed
    ``q=`` counts (clamped to 0..1; a malformed one is skipped, so the
    default 1 stands); a name listed twice keeps its best quality. Ties go
    to a named coding over ``*``, then to the one named first, then to gzip."""
    named: dict[bytes, tuple[float, int]] = {}
    """coding -> (quality, position of its first entry)"""
    wildcard: float | None = None
    for position, entry in enumerate(accept_encoding.split(b",")):
        name, *parameters = entry.split(b";")
        name = name.strip().lower()
        if name != GZIP and name != DEFLATE and name != b"*":
            continue
        quality = _quality(parameters)
        if name == b"*":
            wildcard = quality if wildcard is None else max(wildcard, quality)
            continue
        earlier = named.get(name)
        if earlier is None:
            named[name] = (quality, position)
        elif quality > earlier[0]:
            named[name] = (quality, earlier[1])
    best: bytes | None = None
    best_rank: tuple[float, int, int] | None = None
    for order, coding in enumerate((GZIP, DEFLATE)):
        if coding in named:
            quality, position = named[coding]
            rank = (quality, 1, -position)
        elif wildcard is not None:
            rank = (wildcard, 0, -order)
        else:
            continue
        if rank[0] > 0 and (best_rank is None or rank > best_rank):
            best, best_rank = coding, rank
    return best


def _quality(parameters: list[bytes]) -> float:
    """The quality of one Accept-Encoding entry (1 unless a ``q=`` says otherwise)."""
    for parameter in parameters:
        parameter = parameter.strip()
        if parameter[:1].lower() != b"q":
            continue
        rest = parameter[1:].lstrip()
        if rest[:1] != b"=":
            continue
        number = rest[1:].strip()
        if _QUALITY_NUMBER.fullmatch(number) is None:
            continue
        return min(1.0, max(0.0, float(number)))
    return 1.0


def encode_reply(reply: Reply, coding: bytes) -> Reply:
    """``reply`` compressed with ``coding`` if its body is large enough for
    DynamoDB to compress it (limits.HTTP_COMPRESSION_MIN_BYTES), else as it is.
    The reply's x-amz-crc32 is then computed over the compressed bytes, as
    DynamoDB's is (botocore checks the CRC32 of the body as received)."""
    status, content_type, body, extra_headers = reply
    if len(body) < limits.HTTP_COMPRESSION_MIN_BYTES:
        return reply
    compressed = zlib.compress(body, limits.HTTP_COMPRESSION_LEVEL, _ZLIB_WBITS[coding])
    return (status, content_type, compressed, extra_headers + CONTENT_ENCODING_LINES[coding])


Transport = Any
"""``asyncio.Transport`` in the engine, ``reactor.SocketTransport`` in the
front: the methods used here are the same (protocol/reactor.py)."""


class HttpConnection:
    """One client connection: parses requests and writes the replies. An
    asyncio protocol by its methods (not by inheritance: the front process
    runs it on protocol/reactor.py and never imports asyncio)."""

    def __init__(self, server: HttpListener) -> None:
        self.server = server
        self.answer = server.answer
        self.transport: Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.closing = False
        self.writing_paused = False
        self.reading_paused = False
        self.pending: deque[PendingRequest] = deque()
        """Complete requests not yet handed on: the client is not reading its replies."""
        self.unanswered = 0
        """Requests handed to the listener whose reply has not been written yet
        (always 0 between requests in the single process; in the front, the
        requests the engine is running)."""
        self.last_request = False
        """No more requests are taken (the client asked to close, to upgrade,
        or sent something refused): close once every reply is written."""
        self.spinner: ReadinessSpinner | None = None
        """Made on the first reply that may spin (see ``_maybe_spin``)."""
        self.final_reply: Reply | None = None
        """A refusal waiting for the earlier requests' replies to be written."""
        self.messages_begun = 0
        self.in_message = False
        self.in_headers = False
        self.url = b""
        self.headers: dict[bytes, bytes] = {}
        self.header_bytes = 0
        self.header_chunk_bytes = 0
        self.body_parts: list[bytes] = []
        self.body_bytes = 0
        self.last_active = 0
        self.requests_taken = 0
        """Requests handed to the listener so far (the next one's number);
        ``requests_taken - unanswered`` replies have been sent."""
        self.codings: deque[tuple[int, bytes]] = deque()
        """(request number, coding) of the requests that asked for a
        compressed reply (Accept-Encoding), oldest first."""

    # --- the protocol's callbacks ----------------------------------------
    def connection_made(self, transport: Transport) -> None:
        self.transport = transport
        self.last_active = self.server.clock_seconds
        if len(self.server.connections) >= self.server.max_connections:
            logger.warning("refusing a connection: %d open", len(self.server.connections))
            self.closing = True
            self.transport.abort()
            return
        self.server.connections.add(self)
        self.update_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self.pending.clear()
        self.transport = None
        self.server.connection_closed(self)

    def eof_received(self) -> None:
        """The client half-closed: returning nothing lets asyncio close the
        transport (without this method asyncio's selector loop logs the
        AttributeError as a fatal error first; the front's reactor closes
        it either way)."""
        return None

    def pause_writing(self) -> None:
        self.writing_paused = True
        self.update_reading()

    def resume_writing(self) -> None:
        self.writing_paused = False
        while self.pending and not self.writing_paused and not self.closing:
            self._answer(*self.pending.popleft())
        self.update_reading()

    def update_reading(self) -> None:
        """Read from the client unless its replies are backing up (it does not
        read them, or too many are still being answered), the listener has
        paused every client, or no more requests will be taken."""
        transport = self.transport
        if transport is None or self.closing:
            return
        self.reading_paused = switch_reading(transport, self.reading_paused, (
            self.writing_paused
            or self.server.clients_paused
            or self.unanswered >= limits.HTTP_MAX_PIPELINED_REQUESTS
            or self.last_request
        ))

    def data_received(self, data: bytes) -> None:
        if self.spinner is not None:
            self.spinner.answered()
        if self.closing or self.last_request:
            return
        self.last_active = self.server.clock_seconds
        headers_in_progress = self.in_headers
        message_number = self.messages_begun
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # The request asking to switch protocols is answered in HTTP/1.1;
            # what follows it is not HTTP, so stop reading.
            self.last_request = True
            if self.unanswered == 0:
                self._close()
            else:
                self.update_reading()
            return
        except httptools.HttpParserError:
            if not self.closing:
                self._reject(BAD_REQUEST)
            return
        # A chunk that began and ended inside one message's header block is
        # all header bytes, which httptools buffers: count them here.
        if headers_in_progress and self.in_headers and message_number == self.messages_begun:
            self.header_chunk_bytes += len(data)
            if self.header_chunk_bytes > limits.HTTP_REQUEST_HEAD_MAX_BYTES:
                self._reject(BAD_REQUEST)

    # --- httptools callbacks ---------------------------------------------
    def on_message_begin(self) -> None:
        self.messages_begun += 1
        self.in_message = True
        self.in_headers = True
        self.url = b""
        self.headers = {}
        self.header_bytes = 0
        self.header_chunk_bytes = 0
        self.body_parts = []
        self.body_bytes = 0

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_bytes += len(name) + len(value) + HEADER_LINE_OVERHEAD_BYTES
        self.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self.in_headers = False
        if self.closing or self.last_request:
            return
        headers = self.headers
        if self.header_bytes > limits.HTTP_HEADER_MAX_BYTES or len(self.url) > limits.HTTP_REQUEST_LINE_MAX_BYTES:
            # DynamoDB answers 400 Bad Request past 16 KB of headers or of
            # request target (ScyllaDB's issue 23438 and its
            # test_too_large_request_line, run against the service). A head
            # that trickles in is bounded as it comes (data_received).
            self._reject(BAD_REQUEST)
            return
        declared_length = headers.get(b"content-length")
        if declared_length is not None and int(declared_length) > limits.REQUEST_BODY_MAX_BYTES:
            self._reject(TOO_LARGE)
            return
        if b"expect" in headers and headers[b"expect"].lower() == b"100-continue":
            if self.transport is not None:
                self.transport.write(CONTINUE)

    def on_body(self, body: bytes) -> None:
        if self.closing:
            return
        self.body_bytes += len(body)
        if self.body_bytes > limits.REQUEST_BODY_MAX_BYTES:
            self.body_parts = []
            self._reject(TOO_LARGE)
            return
        self.body_parts.append(body)

    def on_message_complete(self) -> None:
        self.in_message = False
        if self.closing or self.last_request:
            return
        parts = self.body_parts
        body = parts[0] if len(parts) == 1 else b"".join(parts)
        parser = self.parser
        if not self.pending and not self.writing_paused:
            self._answer(
                parser.get_method(), self.url, self.headers, body, parser.should_keep_alive()
            )
            return
        if len(self.pending) >= limits.HTTP_MAX_PIPELINED_REQUESTS:
            # The client keeps sending without reading its replies: hang up.
            logger.warning("closing a connection that pipelined too many requests")
            self.closing = True
            self.pending.clear()
            if self.transport is not None:
                self.transport.abort()
            return
        self.pending.append(
            (parser.get_method(), self.url, self.headers, body, parser.should_keep_alive())
        )

    # --- replies ------------------------------------------------------------
    def _answer(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes, keep_alive: bool
    ) -> None:
        self.unanswered += 1
        accept_encoding = headers.get(b"accept-encoding")
        if accept_encoding is not None and accept_encoding != b"identity":
            # The cache's lookup inline (most requests say "identity" or nothing).
            coding = _CODINGS_ASKED.get(accept_encoding, _NOT_PARSED)
            if coding is _NOT_PARSED:
                coding = response_coding(accept_encoding)
            if coding is not None:
                self.codings.append((self.requests_taken, coding))
        self.requests_taken += 1
        if not keep_alive:
            self.last_request = True
        if self.unanswered >= limits.HTTP_MAX_PIPELINED_REQUESTS or not keep_alive:
            self.update_reading()
        self.answer(self, method, url, headers, body, keep_alive)

    def send(self, reply: Reply, keep_alive: bool) -> None:
        """Write the reply to the oldest unanswered request; close the
        connection after it unless ``keep_alive`` (and the connection is to
        stay open: not when it is the last reply of a closing connection or
        of a stopping server)."""
        self.unanswered -= 1
        codings = self.codings
        if codings and codings[0][0] == self.requests_taken - self.unanswered - 1:
            # This reply answers the oldest request that asked for compression.
            reply = encode_reply(reply, codings.popleft()[1])
        last_reply = self.unanswered == 0 and not self.pending
        if keep_alive and not (last_reply and (self.last_request or self.server.stopping)):
            self._write(reply, KEEP_ALIVE)
            if self.reading_paused:
                self.update_reading()
            if last_reply:
                self._maybe_spin()
            return
        if self.final_reply is not None:
            self._write(reply, KEEP_ALIVE)
            reply = self.final_reply
        self._write(reply, CONNECTION_CLOSE)
        self._close()

    def _maybe_spin(self) -> None:
        """A lone client in a tight loop sends its next request sooner than
        this process could fall asleep and be woken again: busy-wait briefly
        for it (link.ReadinessSpinner; only where the listener allows it)."""
        server = self.server
        allowed = server.spin_after_reply
        if allowed is None or len(server.connections) != 1 or not allowed():
            return
        spinner = self.spinner
        if spinner is None:
            transport = self.transport
            if transport is None:
                return
            spinner = self.spinner = ReadinessSpinner(transport.get_extra_info("socket").fileno())
        spinner.started_waiting()
        spinner.spin()

    def _write(self, reply: Reply, connection_header: bytes) -> None:
        transport = self.transport
        if transport is None:
            return
        status, content_type, body, extra_headers = reply
        server = self.server
        server.requests_answered += 1
        if not content_type:
            transport.write(BARE_RESPONSE_HEAD % (
                STATUS_LINES.get(status) or b"HTTP/1.1 %d Status" % status,
                server.request_id_prefix,
                server.requests_answered,
                len(body),
                server.date,
                extra_headers,
                connection_header,
            ) + body)
            return
        head = RESPONSE_HEAD % (
            STATUS_LINES.get(status) or b"HTTP/1.1 %d Status" % status,
            server.request_id_prefix,
            server.requests_answered,
            crc32(body),
            content_type,
            len(body),
            server.date,
            extra_headers,
            connection_header,
        )
        if len(body) < SMALL_BODY_BYTES:
            transport.write(head + body)
        else:
            transport.writelines((head, body))

    def _close(self) -> None:
        self.closing = True
        self.pending.clear()
        if self.transport is not None:
            self.transport.close()

    def _reject(self, reply: Reply) -> None:
        """Answer a request the server will not read, then hang up (after the
        replies to the requests before it, which are still being answered)."""
        if self.unanswered == 0:
            self._write(reply, CONNECTION_CLOSE)
            self._close()
            return
        self.final_reply = reply
        self.last_request = True
        self.pending.clear()
        self.update_reading()

    def expire(self, now_seconds: int) -> None:
        """Close the connection if it has been idle, or stalled mid-request, too long."""
        if self.closing or self.pending or self.unanswered:
            return  # replies are waiting for the client to read: pause_writing handles it
        inactive_seconds = now_seconds - self.last_active
        if self.in_message and inactive_seconds >= self.server.stalled_request_seconds:
            self._close()
        elif not self.in_message and inactive_seconds >= self.server.idle_connection_seconds:
            self._close()

    def close_when_idle(self) -> None:
        """Shutdown: close now unless a request is half received or queued;
        the answer to that request then closes the connection."""
        if not (self.in_message or self.pending or self.unanswered or self.closing):
            self._close()


TLS_SHUTDOWN_POLL_SECONDS = 0.02
"""How often a stopping TLS listener looks for connections that have sent everything."""


def _sent_everything(connection: HttpConnection) -> bool:
    """The connection is closing and has nothing left to send: no request
    unanswered, nothing in its transport's buffer nor in the kernel's."""
    transport = connection.transport
    if transport is None:
        return True
    if not connection.closing or connection.unanswered or connection.pending:
        return False
    if transport.get_write_buffer_size():
        return False
    try:
        import fcntl
        import termios

        unsent = fcntl.ioctl(transport.get_extra_info("socket").fileno(), termios.TIOCOUTQ, b"\0" * 4)
    except (ImportError, AttributeError, OSError, ValueError):
        return True  # not knowable here: the kernel sends what it holds after close
    return int.from_bytes(unsent, sys.byteorder) == 0


class HttpListener:
    """Listens on one socket and owns its connections; what a request gets is
    ``answer``'s business (subclasses: ``server.Server``, ``front.FrontServer``)."""

    def __init__(
        self,
        idle_connection_seconds: int = IDLE_CONNECTION_SECONDS,
        stalled_request_seconds: int = STALLED_REQUEST_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.idle_connection_seconds = idle_connection_seconds
        self.stalled_request_seconds = stalled_request_seconds
        self.max_connections = max_connections
        self.clock_seconds = int(time.monotonic())
        """Whole seconds of the monotonic clock, as of the last tick."""
        self.connections: set[HttpConnection] = set()
        self.request_id_prefix = request_id_prefix()
        self.requests_answered = 0
        self.date = http_date()
        self.stopping = False
        self.clients_paused = False
        """Reading from every connection is paused (the front's link is full)."""
        self.spin_after_reply: Callable[[], bool] | None = None
        """If set, a lone connection busy-waits briefly for its client's next
        request whenever this says so (the engine of ``dynastore serve``: not
        in the embedded server, whose thread shares the user's process)."""
        self.ssl_context: ssl.SSLContext | None = None
        """Serve HTTPS with this (ADR 0007): the asyncio listener's and
        ``adopt``'s connections; the front's reactor wraps its own."""
        self.reuse_port = False
        """Listen with SO_REUSEPORT, beside the other worker processes of one
        ``dynastore serve --workers N`` (dynastore/worker_processes.py)."""
        self._listeners: list[asyncio.AbstractServer] = []
        self._date_timer: Any = None
        """The next tick's timer (asyncio's or the reactor's TimerHandle)."""
        self._all_closed: asyncio.Event | None = None

    def event_loop(self) -> Any:
        """What the tick is scheduled on: the running asyncio loop here; the
        front's listener answers its reactor (``call_at`` and ``time`` alike)."""
        import asyncio

        return asyncio.get_running_loop()

    def answer(
        self,
        connection: HttpConnection,
        method: bytes,
        url: bytes,
        headers: dict[bytes, bytes],
        body: bytes,
        keep_alive: bool,
    ) -> None:
        """Handle one complete request; its reply goes to ``connection.send``
        (now or later, but in the order the connection's requests came)."""
        raise NotImplementedError

    async def listen(self, host: str, port: int) -> tuple[str, int]:
        """Bind host:port and start accepting; returns the bound (host, port),
        useful with port 0."""
        import asyncio

        loop = asyncio.get_running_loop()
        listener = await loop.create_server(
            lambda: cast("asyncio.Protocol", HttpConnection(self)), host, port, reuse_address=True, backlog=LISTEN_BACKLOG,
            ssl=self.ssl_context, reuse_port=self.reuse_port or None,
        )
        self._listeners.append(listener)
        self._start_ticking()
        bound_host, bound_port = listener.sockets[0].getsockname()[:2]
        return str(bound_host), int(bound_port)

    async def adopt(self, sock: socket.socket) -> None:
        """Serve a connection accepted elsewhere (the engine's accept loop, or
        one the engine handed to the front)."""
        import asyncio

        self._start_ticking()
        loop = asyncio.get_running_loop()
        await loop.connect_accepted_socket(
            lambda: cast("asyncio.Protocol", HttpConnection(self)), sock, ssl=self.ssl_context
        )

    def _start_ticking(self) -> None:
        if self._date_timer is None:
            self._tick()

    def _tick(self) -> None:
        """Once a second, just after the wall clock's second turns: format the
        Date header (not once per response) and close connections that were
        idle or stalled too long. The connections' clock is monotonic whole
        seconds, not a count of ticks: a timer may fire a little early (libuv
        keeps time in milliseconds), and a burst of early ticks must not age
        every connection."""
        now = time.time()
        until_next_second = 1.0 - now % 1.0
        if until_next_second < TICK_MINIMUM_SECONDS:  # fired early: the second is about to turn
            now += until_next_second
            until_next_second += 1.0
        self.date = http_date(now)
        self.clock_seconds = int(time.monotonic())
        for connection in list(self.connections):
            connection.expire(self.clock_seconds)
        loop = self.event_loop()
        self._date_timer = loop.call_at(loop.time() + until_next_second, self._tick)

    def stop_listening(self) -> None:
        """Accept no more connections (those open are served on)."""
        for listener in self._listeners:
            listener.close()

    def connection_closed(self, connection: HttpConnection) -> None:
        self.connections.discard(connection)
        if self.stopping and not self.connections and self._all_closed is not None:
            self._all_closed.set()

    def before_stopping(self) -> None:
        """Called once ``stop`` begins, before connections are asked to close."""

    async def stop(self, grace_seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Stop accepting, let requests in progress finish, close every connection."""
        import asyncio

        self._all_closed = asyncio.Event()
        self.begin_stopping()
        if self.connections:
            try:
                await asyncio.wait_for(self._until_everything_sent(), grace_seconds)
            except TimeoutError:
                self.abort_at_shutdown()
        self.stop_ticking()
        for listener in self._listeners:
            await listener.wait_closed()

    async def _until_everything_sent(self) -> None:
        """Until every connection has closed. Over TLS, until every connection
        has sent all it will (its replies, then close_notify): the loop's SSL
        transport then waits for the client's close_notify, which an idle
        keep-alive client never sends, so those are dropped at once rather
        than after the grace period (ADR 0007)."""
        import asyncio

        assert self._all_closed is not None
        if self.ssl_context is None:
            await self._all_closed.wait()
            return
        quiet_polls = 0
        while self.connections:
            quiet = all(_sent_everything(connection) for connection in self.connections)
            quiet_polls = quiet_polls + 1 if quiet else 0
            if quiet_polls >= 2:  # a poll apart: the loop wrote what it had buffered
                self.abort_connections()
            try:
                await asyncio.wait_for(self._all_closed.wait(), TLS_SHUTDOWN_POLL_SECONDS)
            except TimeoutError:
                pass

    def begin_stopping(self) -> None:
        """Stop's first half: accept no more, and close each connection once
        its request in progress is answered (at once if it has none)."""
        self.stopping = True
        self.before_stopping()
        self.stop_listening()
        for connection in list(self.connections):
            connection.close_when_idle()

    def abort_at_shutdown(self) -> None:
        """The grace period is over: drop the connections still open."""
        logger.warning("aborting %d connections at shutdown", len(self.connections))
        self.abort_connections()

    def stop_ticking(self) -> None:
        if self._date_timer is not None:
            self._date_timer.cancel()

    def abort_connections(self) -> None:
        """Drop every connection at once (nothing more will be answered)."""
        for connection in list(self.connections):
            connection.closing = True
            connection.pending.clear()
            if connection.transport is not None:
                connection.transport.abort()
