"""The link between the HTTP front process and the engine (ADR 0003).

One Unix stream socket (a socketpair made by the engine) carries frames both
ways, each a 4-byte little-endian payload length and the payload:

    front -> engine   a request: marshal of (method, url, headers, body)
    engine -> front   a reply: the request's ordinal (4 bytes: the n-th
                      request the front sent since HELLO, counting from 0,
                      modulo 2**32), its status (2), the lengths of the
                      content type (2), body (4) and extra header lines (4),
                      then those three byte strings; one per request

The front's first frame is ``HELLO`` (marshal: it is listening). Replies
name their request because they may come back in another order: an engine
over PostgreSQL runs many requests at once (ADR 0005); the front puts each
connection's replies back in its requests' order. ``marshal`` is the fastest serialiser of bytes, dicts and
tuples in CPython and is safe here because both ends are the same dynastore
build in processes of one server (it must never read bytes from anywhere
else). Replies have a layout of their own because their bodies are the big
ones (a Query page, a Scan's megabyte): written as they are, never copied
into a marshal buffer.
"""

from __future__ import annotations

import marshal
import select
import struct
import time
from collections.abc import Callable
from typing import Any

from dynastore import limits

HELLO = ("dynastore-front", 2)
"""The front's first frame: it is up and listening (version 2 of this framing)."""

FRAME_HEADER = struct.Struct("<I")
REPLY_HEADER = struct.Struct("<IHHII")
"""A reply's request ordinal, status, and the lengths of its content type,
body and extra headers."""
ORDINALS = 1 << 32
REPLY_FRAME_HEADER = struct.Struct("<IIHHII")
"""The frame's length, then REPLY_HEADER: packed in one step."""
REPLY_HEADER_BYTES = REPLY_HEADER.size
MAX_FRAME_BYTES = limits.REQUEST_BODY_MAX_BYTES + limits.HTTP_REQUEST_HEAD_MAX_BYTES + 65536
"""No request frame is larger than a request at its bounds (body, headers,
framing); a bigger length means the stream is corrupt."""
REPLY_MAX_FRAME_BYTES = limits.LINK_REPLY_MAX_BYTES
"""A reply may be far larger than any request: BatchGetItem returns up to
16 MB of items, which base64 and JSON escaping make up to six times longer."""


class LinkError(Exception):
    """The other end sent something that is not a frame of this link."""


def frame(message: Any) -> tuple[bytes, bytes]:
    """A marshalled message as (header, payload), for ``transport.writelines``."""
    payload = marshal.dumps(message)
    return FRAME_HEADER.pack(len(payload)), payload


def reply_frame(ordinal: int, reply: tuple[int, bytes, bytes, bytes]) -> tuple[bytes, bytes, bytes, bytes]:
    """The reply to request ``ordinal`` as the pieces of its frame (the body
    is not copied)."""
    status, content_type, body, extra_headers = reply
    header = REPLY_FRAME_HEADER.pack(
        REPLY_HEADER_BYTES + len(content_type) + len(body) + len(extra_headers),
        ordinal % ORDINALS, status, len(content_type), len(body), len(extra_headers),
    )
    return header, content_type, body, extra_headers


def decode_reply(payload: memoryview) -> tuple[int, tuple[int, bytes, bytes, bytes]]:
    """(ordinal, reply) of one reply frame's payload."""
    ordinal, status, type_length, body_length, extra_length = REPLY_HEADER.unpack_from(payload)
    body_start = REPLY_HEADER_BYTES + type_length
    extra_start = body_start + body_length
    if extra_start + extra_length != len(payload):
        raise LinkError("a reply whose lengths do not add up")
    return ordinal, (
        status,
        bytes(payload[REPLY_HEADER_BYTES:body_start]),
        bytes(payload[body_start:extra_start]),
        bytes(payload[extra_start:]),
    )


class FrameReader:
    """Cuts a byte stream into messages (``decode`` turns each frame's payload
    into one: ``marshal.loads`` by default, ``decode_reply`` for replies). A
    frame split across reads is kept as a list of chunks until it is complete,
    so a 16 MB request arriving in 256 KB reads is joined once, not once per
    read."""

    __slots__ = ("_decode", "_chunks", "_buffered", "_wanted", "_max_frame_bytes")

    def __init__(
        self, decode: Callable[[memoryview], Any] = marshal.loads, max_frame_bytes: int = MAX_FRAME_BYTES
    ) -> None:
        self._decode = decode
        self._max_frame_bytes = max_frame_bytes
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._wanted = 0
        """Bytes the first incomplete frame needs (header included)."""

    def feed(self, data: bytes) -> list[Any]:
        """The messages completed by ``data`` (possibly none)."""
        if self._chunks:
            self._chunks.append(data)
            self._buffered += len(data)
            if self._buffered < self._wanted:
                return []
            data = b"".join(self._chunks)
            self._chunks = []
            self._buffered = 0
        messages: list[Any] = []
        decode = self._decode
        view = memoryview(data)
        position = 0
        size = len(data)
        while size - position >= 4:
            (length,) = FRAME_HEADER.unpack_from(data, position)
            if length > self._max_frame_bytes:
                raise LinkError(f"a frame of {length} bytes")
            end = position + 4 + length
            if end > size:
                self._wanted = 4 + length
                break
            try:
                messages.append(decode(view[position + 4:end]))
            except (ValueError, EOFError, TypeError) as error:  # not marshal data
                raise LinkError(f"an undecodable frame ({error})") from None
            position = end
        else:
            self._wanted = 4
        if position < size:
            rest = data[position:]
            self._chunks = [rest]
            self._buffered = len(rest)
        return messages


class ReadinessSpinner:
    """An adaptive busy-wait for the link to become readable.

    Why: each hop between the processes is a wake-up of a sleeping process,
    and on a virtual machine waking an idle CPU costs tens of microseconds:
    with one client in a tight loop, GetItem p50 was 0.16 ms through the front
    against 0.145 ms in one process, and 0.055 ms once both ends spin briefly
    instead of sleeping (ADR 0003). Spinning pays only when the other side
    answers quickly, so ``spin`` runs only while the last answer came within
    ``quick_seconds`` (even when this side slept for it): a client that
    thinks for a millisecond between requests costs no spinning at all, and
    under load the data is already there (the first poll returns at once).
    """

    __slots__ = ("_poll", "_budget_seconds", "_quick_seconds", "worth_it", "_waiting_since")

    def __init__(
        self,
        file_descriptor: int,
        budget_seconds: float = limits.LINK_SPIN_MAX_SECONDS,
        quick_seconds: float = limits.LINK_SPIN_WHEN_ANSWERED_WITHIN_SECONDS,
    ) -> None:
        poller = select.poll()
        poller.register(file_descriptor, select.POLLIN)
        self._poll = poller.poll
        self._budget_seconds = budget_seconds
        self._quick_seconds = quick_seconds
        self.worth_it = budget_seconds > 0
        """Whether the other side answered quickly last time (so spinning pays)."""
        self._waiting_since = 0.0

    def started_waiting(self) -> None:
        """The other side was sent something; its answer is awaited from now."""
        self._waiting_since = time.perf_counter()

    def answered(self) -> None:
        """Data arrived (whether this side spun or slept for it): was it quick?"""
        waited = time.perf_counter() - self._waiting_since
        self.worth_it = self._budget_seconds > 0 and waited < self._quick_seconds

    def spin(self) -> None:
        """Busy-wait up to the budget for the link to be readable, if worth it;
        the event loop then finds it readable without sleeping."""
        if not self.worth_it:
            return
        poll = self._poll
        clock = time.perf_counter
        deadline = self._waiting_since + self._budget_seconds
        while clock() < deadline:
            if poll(0):
                return
