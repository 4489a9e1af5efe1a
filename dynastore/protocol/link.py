"""The link between the HTTP front process and the engine (ADR 0003).

One Unix stream socket (a socketpair made by the engine) carries frames both
ways: a 4-byte little-endian payload length, then a ``marshal`` payload.

    front -> engine   (method, url, headers, body)   one per HTTP request
    engine -> front   (status, content type, body, extra header lines)
                      one per request, in the order the requests came

The front's first frame is ``HELLO`` (it is listening); nothing else is ever
sent out of turn, so a reply needs no id: the n-th reply answers the n-th
request. ``marshal`` is the fastest serialiser of bytes, dicts and tuples in
CPython and is safe here because both ends are the same dynastore build in
processes of one server (it must never read bytes from anywhere else).
"""

from __future__ import annotations

import marshal
import struct
from typing import Any

from dynastore import limits

HELLO = ("dynastore-front", 1)
"""The front's first frame: it is up and listening (version 1 of this framing)."""

FRAME_HEADER = struct.Struct("<I")
MAX_FRAME_BYTES = limits.REQUEST_BODY_MAX_BYTES + limits.HTTP_HEADER_MAX_BYTES + 65536
"""No frame is larger than a request at its bounds (body, headers, framing);
a bigger length means the stream is corrupt."""


class LinkError(Exception):
    """The other end sent something that is not a frame of this link."""


def frame(message: Any) -> tuple[bytes, bytes]:
    """A message as (header, payload), for ``transport.writelines`` (no copy
    of a large payload)."""
    payload = marshal.dumps(message)
    return FRAME_HEADER.pack(len(payload)), payload


class FrameReader:
    """Cuts a byte stream into messages. A frame split across reads is kept
    as a list of chunks until it is complete, so a 16 MB request arriving in
    256 KB reads is joined once, not once per read."""

    __slots__ = ("_chunks", "_buffered", "_wanted")

    def __init__(self) -> None:
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
        view = memoryview(data)
        position = 0
        size = len(data)
        while size - position >= 4:
            (length,) = FRAME_HEADER.unpack_from(data, position)
            if length > MAX_FRAME_BYTES:
                raise LinkError(f"a frame of {length} bytes")
            end = position + 4 + length
            if end > size:
                self._wanted = 4 + length
                break
            messages.append(marshal.loads(view[position + 4:end]))
            position = end
        else:
            self._wanted = 4
        if position < size:
            rest = data[position:]
            self._chunks = [rest]
            self._buffered = len(rest)
        return messages
