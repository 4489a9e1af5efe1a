"""The front/engine link's framing (dynastore/protocol/link.py)."""

from __future__ import annotations

import pytest

from dynastore.protocol.link import FRAME_HEADER, MAX_FRAME_BYTES, FrameReader, LinkError, frame

REQUEST = (b"POST", b"/", {b"x-amz-target": b"DynamoDB_20120810.GetItem"}, b'{"TableName":"t"}')
REPLY = (200, b"application/x-amz-json-1.0", b"{}", b"")


def stream_of(*messages: object) -> bytes:
    return b"".join(b"".join(frame(message)) for message in messages)


def test_messages_round_trip_whole() -> None:
    assert FrameReader().feed(stream_of(REQUEST, REPLY)) == [REQUEST, REPLY]


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 4, 5, 7, 64])
def test_messages_split_anywhere_round_trip(chunk_size: int) -> None:
    """Reads cut frames at any byte, headers included."""
    data = stream_of(REQUEST, REPLY, REQUEST)
    reader = FrameReader()
    received = []
    for start in range(0, len(data), chunk_size):
        received += reader.feed(data[start:start + chunk_size])
    assert received == [REQUEST, REPLY, REQUEST]


def test_a_large_frame_arriving_in_many_reads_is_joined_once() -> None:
    body = bytes(range(256)) * 40_000  # ~10 MB
    data = stream_of((b"POST", b"/", {}, body), REPLY)
    reader = FrameReader()
    received = []
    for start in range(0, len(data), 262_144):
        received += reader.feed(data[start:start + 262_144])
    assert received == [(b"POST", b"/", {}, body), REPLY]


def test_nothing_is_returned_until_a_frame_is_complete() -> None:
    data = stream_of(REPLY)
    reader = FrameReader()
    assert reader.feed(data[:-1]) == []
    assert reader.feed(data[-1:]) == [REPLY]


def test_a_length_past_any_request_is_a_corrupt_stream() -> None:
    with pytest.raises(LinkError):
        FrameReader().feed(FRAME_HEADER.pack(MAX_FRAME_BYTES + 1) + b"x")
