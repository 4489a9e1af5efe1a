"""The HTTP front's event loop (dynastore/protocol/reactor.py), over real
socket pairs: buffering and back-pressure, close and abort, pausing reads,
the end of a stream, a peer that goes away, timers and signals."""

from __future__ import annotations

import os
import select
import signal
import socket
import time
from collections.abc import Callable, Iterator

import pytest

if not hasattr(select, "epoll"):  # the reactor is Linux's (ADR 0003)
    pytest.skip("epoll only", allow_module_level=True)

from dynastore.protocol.reactor import Reactor, SocketTransport  # noqa: E402

TIMEOUT_SECONDS = 5.0


class Recorder:
    """A protocol that records every callback."""

    def __init__(self) -> None:
        self.transport: SocketTransport | None = None
        self.received = bytearray()
        self.events: list[str] = []
        self.lost: list[Exception | None] = []

    def connection_made(self, transport: SocketTransport) -> None:
        self.transport = transport
        self.events.append("made")

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.append(exc)
        self.events.append("lost")

    def pause_writing(self) -> None:
        self.events.append("pause")

    def resume_writing(self) -> None:
        self.events.append("resume")


def run_until(reactor: Reactor, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT_SECONDS

    def check() -> None:
        if done() or time.monotonic() > deadline:
            reactor.stop()
        else:
            reactor.call_later(0.001, check)

    reactor.call_soon(check)
    reactor.run()
    assert done(), "the reactor did not get there in time"


@pytest.fixture
def reactor() -> Iterator[Reactor]:
    reactor = Reactor()
    yield reactor
    reactor.close()


@pytest.fixture
def peers() -> Iterator[list[socket.socket]]:
    """The test's ends of the socket pairs, closed after the test."""
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def connected_pair(reactor: Reactor, peers: list[socket.socket]) -> tuple[Recorder, socket.socket]:
    """A transport on one end of a socket pair; the other end is the test's."""
    ours, theirs = socket.socketpair()
    theirs.settimeout(TIMEOUT_SECONDS)
    peers.append(theirs)
    protocol = Recorder()
    reactor.connect(ours, protocol)
    return protocol, theirs


def take_available(peer: socket.socket, into: bytearray) -> bool:
    """Read what the peer has without waiting; True once its stream ended."""
    peer.setblocking(False)
    try:
        while True:
            chunk = peer.recv(1 << 20)
            if not chunk:
                return True
            into.extend(chunk)
    except BlockingIOError:
        return False
    finally:
        peer.settimeout(TIMEOUT_SECONDS)


def test_bytes_arrive_in_order_and_the_protocol_is_told(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    assert protocol.events == ["made"]
    peer.sendall(b"hello, ")
    peer.sendall(b"world")
    run_until(reactor, lambda: protocol.received == b"hello, world")


def test_writes_the_socket_cannot_take_are_buffered_in_order_with_back_pressure(
    reactor: Reactor, peers: list[socket.socket]
) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    transport.set_write_buffer_limits(high=64 * 1024, low=16 * 1024)
    chunks = [bytes([index % 251]) * 50_000 for index in range(40)]  # 2 MB, far past the socket buffer
    for index, chunk in enumerate(chunks):
        if index % 2:
            transport.writelines([chunk[:10_000], b"", chunk[10_000:]])
        else:
            transport.write(chunk)
    assert transport.get_write_buffer_size() > 64 * 1024
    assert protocol.events == ["made", "pause"]
    expected = b"".join(chunks)
    received = bytearray()
    run_until(reactor, lambda: take_available(peer, received) or len(received) == len(expected))
    assert received == expected
    assert protocol.events == ["made", "pause", "resume"]
    assert transport.get_write_buffer_size() == 0


def test_close_sends_what_is_buffered_then_reports_the_loss_from_the_loop(
    reactor: Reactor, peers: list[socket.socket]
) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    payload = b"x" * 3_000_000
    transport.write(payload)
    transport.close()
    assert transport.is_closing()
    assert protocol.lost == []  # never inside close()
    transport.write(b"ignored after close")
    received = bytearray()
    run_until(reactor, lambda: take_available(peer, received))
    assert received == payload
    run_until(reactor, lambda: protocol.lost == [None])


def test_abort_drops_what_is_buffered(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    transport.write(b"y" * 3_000_000)
    transport.abort()
    assert protocol.lost == []
    run_until(reactor, lambda: protocol.lost == [None])
    received = 0
    while chunk := peer.recv(1 << 20):
        received += len(chunk)
    assert received < 3_000_000


def test_paused_reading_delivers_nothing_until_resumed(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    transport.pause_reading()
    peer.sendall(b"later")
    deadline = time.monotonic() + 0.05
    run_until(reactor, lambda: time.monotonic() > deadline)
    assert protocol.received == b""
    transport.resume_reading()
    run_until(reactor, lambda: protocol.received == b"later")


def test_the_end_of_the_stream_closes_the_transport(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    peer.sendall(b"last words")
    peer.shutdown(socket.SHUT_WR)
    run_until(reactor, lambda: protocol.lost == [None])
    assert protocol.received == b"last words"
    assert peer.recv(10) == b""  # and ours was closed


def test_a_peer_that_goes_away_while_reading_is_paused_is_noticed(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    transport.pause_reading()
    peer.close()  # a socket pair hangs up both ways: EPOLLHUP, reported whatever the mask
    run_until(reactor, lambda: bool(protocol.lost))
    assert isinstance(protocol.lost[0], ConnectionResetError)


def test_writing_to_a_peer_that_is_gone_loses_the_connection(reactor: Reactor, peers: list[socket.socket]) -> None:
    protocol, peer = connected_pair(reactor, peers)
    transport = protocol.transport
    assert transport is not None
    peer.close()
    transport.write(b"anyone there?")
    run_until(reactor, lambda: bool(protocol.lost))
    assert isinstance(protocol.lost[0], OSError)


def test_timers_run_in_time_order_and_a_cancelled_one_does_not(reactor: Reactor, peers: list[socket.socket]) -> None:
    ran: list[str] = []
    del peers
    reactor.call_later(0.02, lambda: ran.append("second"))
    reactor.call_later(0.01, lambda: ran.append("first"))
    cancelled = reactor.call_later(0.015, lambda: ran.append("cancelled"))
    cancelled.cancel()
    assert cancelled.when() >= reactor.time()
    run_until(reactor, lambda: len(ran) == 2)
    assert ran == ["first", "second"]


def test_a_signal_runs_its_callback_on_the_loop(reactor: Reactor, peers: list[socket.socket]) -> None:
    del peers
    ran: list[str] = []
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        reactor.add_signal_handler(signal.SIGUSR1, lambda: ran.append("usr1"))
        reactor.call_later(0.01, lambda: os.kill(os.getpid(), signal.SIGUSR1))
        run_until(reactor, lambda: ran == ["usr1"])
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_reader_is_called_while_its_descriptor_is_readable(reactor: Reactor, peers: list[socket.socket]) -> None:
    ours, theirs = socket.socketpair()
    peers.extend((ours, theirs))
    ours.setblocking(False)
    got: list[bytes] = []
    reactor.add_reader(ours.fileno(), lambda: got.append(ours.recv(100)))
    theirs.sendall(b"ping")
    run_until(reactor, lambda: got == [b"ping"])
    reactor.remove_reader(ours.fileno())
    theirs.sendall(b"unread")
    deadline = time.monotonic() + 0.02
    run_until(reactor, lambda: time.monotonic() > deadline)
    assert got == [b"ping"]


class Failing(Recorder):
    def data_received(self, data: bytes) -> None:
        raise RuntimeError("a bug in a protocol")


def test_a_protocol_that_fails_loses_its_connection_and_the_loop_goes_on(
    reactor: Reactor, peers: list[socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    ours, theirs = socket.socketpair()
    theirs.settimeout(TIMEOUT_SECONDS)
    peers.append(theirs)
    failing = Failing()
    reactor.connect(ours, failing)
    healthy, healthy_peer = connected_pair(reactor, peers)
    theirs.sendall(b"boom")
    run_until(reactor, lambda: failing.lost == [None])
    assert theirs.recv(10) == b""  # dropped
    assert "protocol failed" in caplog.text
    healthy_peer.sendall(b"still served")
    run_until(reactor, lambda: healthy.received == b"still served")
    reactor.call_soon(lambda: 1 / 0)  # a failing callback is logged, not fatal
    ran: list[bool] = []
    reactor.call_later(0.001, lambda: ran.append(True))
    run_until(reactor, lambda: ran == [True])
    assert "ZeroDivisionError" in caplog.text
