"""The front/engine link's framing (dynastore/protocol/link.py)."""

from __future__ import annotations

import pytest

from dynastore.protocol.link import (
    FRAME_HEADER,
    MAX_FRAME_BYTES,
    FrameReader,
    LinkError,
    decode_reply,
    frame,
    reply_frame,
)

REQUEST = (b"POST", b"/", {b"x-amz-target": b"DynamoDB_20120810.GetItem"}, b'{"TableName":"t"}')
REPLY = (200, b"application/x-amz-json-1.0", b"{}", b"")


def stream_of(*messages: object) -> bytes:
    return b"".join(b"".join(frame(message)) for message in messages)


def replies_stream(*replies: tuple[int, bytes, bytes, bytes]) -> bytes:
    return b"".join(b"".join(reply_frame(ordinal, reply)) for ordinal, reply in enumerate(replies))


def test_messages_round_trip_whole() -> None:
    assert FrameReader().feed(stream_of(REQUEST, REPLY)) == [REQUEST, REPLY]


@pytest.mark.parametrize("chunk_size", [1, 3, 11, 4096])
def test_replies_round_trip_in_their_own_layout(chunk_size: int) -> None:
    replies = [
        REPLY,
        (404, b"text/plain", b"<UnknownOperationException/>\n", b""),
        (200, b"application/json", b"x" * 100_000, b"Access-Control-Allow-Origin: *\r\n"),
        (500, b"", b"", b""),
    ]
    data = replies_stream(*replies)
    reader = FrameReader(decode_reply)
    received = []
    for start in range(0, len(data), chunk_size):
        received += reader.feed(data[start:start + chunk_size])
    assert received == list(enumerate(replies))


def test_a_reply_names_its_request_even_past_two_to_the_32() -> None:
    (ordinal, reply), = FrameReader(decode_reply).feed(b"".join(reply_frame((1 << 32) + 7, REPLY)))
    assert (ordinal, reply) == (7, REPLY)


def test_a_reply_whose_lengths_do_not_add_up_is_a_corrupt_stream() -> None:
    header, content_type, body, extra = reply_frame(0, REPLY)
    truncated = FRAME_HEADER.pack(len(header) - 4 + len(content_type) + len(body) - 1)
    payload = header[4:] + content_type + body[:-1]
    with pytest.raises(LinkError):
        FrameReader(decode_reply).feed(truncated + payload)


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


def test_a_frame_that_is_not_marshal_data_is_a_corrupt_stream() -> None:
    garbage = b"\xff\x00not marshal"
    with pytest.raises(LinkError):
        FrameReader().feed(FRAME_HEADER.pack(len(garbage)) + garbage)


def test_the_spinner_spins_only_for_a_side_that_answers_quickly() -> None:
    """Budgets of a third of a second, not the server's microseconds: the
    bounds hold on a loaded test machine (a preempted spin is only longer)."""
    import socket
    import time

    from dynastore.protocol.link import ReadinessSpinner

    budget = 0.3
    mine, theirs = socket.socketpair()
    with mine, theirs:
        spinner = ReadinessSpinner(mine.fileno(), budget_seconds=budget, quick_seconds=1.0)
        spinner.started_waiting()
        theirs.send(b"x")
        started = time.perf_counter()
        spinner.spin()  # readable already: returns at once, long before the budget
        assert time.perf_counter() - started < budget
        spinner.answered()
        assert spinner.worth_it
        mine.recv(1)
        spinner.started_waiting()
        spinner.spin()  # nothing comes: gives up after the budget, not before
        assert budget <= time.perf_counter() - spinner._waiting_since < 30
        time.sleep(0.8)
        spinner.answered()  # answered after 1.1 s: slowly, not worth spinning for next time
        assert not spinner.worth_it
        spinner.started_waiting()
        started = time.perf_counter()
        spinner.spin()  # not worth it: returns without spinning out the budget
        assert time.perf_counter() - started < budget
