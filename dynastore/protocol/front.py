"""The HTTP front process of ``dynastore serve`` (ADR 0003).

    python -m dynastore.protocol.front --link-fd L --handoff-fd H
        [--tls-cert FILE --tls-key FILE] [--log-level LEVEL]

The engine process (protocol/engine.py) accepts every connection; past the
few it serves itself, it hands each new connection to this process over the
handoff socket (the descriptor itself). Here its HTTP is parsed, bounded and
answered (protocol/http.py); every complete request is forwarded over the
link to the engine, which runs it, and the replies come back in order. The
front holds no data and no state of the database, so nothing is lost when it
stops; a reply is written to its client only after the engine sent it, and
the engine sends a write's reply only after its COMMIT.

Why a process: the engine runs every operation on one thread (ADR 0000) and
was spending about half of each GetItem on HTTP parsing, the response head,
the CRC32 and the socket system calls. Here that work runs on the second
core; the link moves many requests per system call.

It runs on protocol/reactor.py, a small epoll loop, not on asyncio: the
front needs sockets, a timer and a signal, and asyncio with uvloop was half
of its memory (25 -> ~13 MiB RSS).

Lifetime: SIGTERM stops it gracefully (requests in progress are answered,
then it exits 0); the engine sends it when it is told to stop. SIGINT is
ignored: Ctrl-C in a terminal reaches the whole process group, and the
engine stops the front itself. If the engine goes away (the link closes), every connection is
dropped at once and the process exits 1.

HTTPS (ADR 0007): with ``--tls-cert`` and ``--tls-key`` the front builds its
own SSL context from the files and serves every handed-over connection over
TLS (protocol/tls.py, a TLS transport on the same reactor); the engine hands
over the raw TCP connection before its handshake. Without them ssl is never
imported.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from dynastore import limits
from dynastore.protocol.http import (
    SHUTDOWN_GRACE_SECONDS,
    HttpConnection,
    HttpListener,
    Reply,
)
from dynastore.protocol.link import (
    HELLO,
    ORDINALS,
    REPLY_MAX_FRAME_BYTES,
    FrameReader,
    LinkError,
    ReadinessSpinner,
    decode_reply,
    frame,
)
from dynastore.protocol.reactor import Reactor, SocketTransport, TimerHandle

logger = logging.getLogger("dynastore.front")

LINK_WRITE_HIGH_WATER_BYTES = 1 << 20
"""Requests waiting to be written to the engine beyond this pause reading from
clients until the engine has taken them (back-pressure, not a drop)."""
LINK_WRITE_LOW_WATER_BYTES = 1 << 18


class EngineLink:
    """The front's end of the link: forwards requests, routes replies back."""

    def __init__(self, front: FrontServer) -> None:
        self.front = front
        self.transport: SocketTransport | None = None
        self.spinner: ReadinessSpinner | None = None
        self.reader = FrameReader(decode_reply, REPLY_MAX_FRAME_BYTES)
        self.sent = 0
        """Requests forwarded so far: the next one's ordinal."""
        self.waiting: dict[int, _Slot] = {}
        """The forwarded requests not yet answered, by ordinal."""
        self.in_order: dict[HttpConnection, deque[_Slot]] = {}
        """Each connection's forwarded requests, oldest first: replies may
        come back in another order (an engine over PostgreSQL), but leave
        a connection in its requests' order."""
        self.unsent: list[bytes] = []
        """Frames of the requests forwarded this reactor turn, sent at its end."""
        self.send_scheduled = False

    def connection_made(self, transport: SocketTransport) -> None:
        self.transport = transport
        transport.set_write_buffer_limits(LINK_WRITE_HIGH_WATER_BYTES, LINK_WRITE_LOW_WATER_BYTES)
        self.spinner = ReadinessSpinner(transport.get_extra_info("socket").fileno())
        transport.writelines(frame(HELLO))

    def forward(
        self,
        connection: HttpConnection,
        keep_alive: bool,
        request: tuple[bytes, bytes, dict[bytes, bytes], bytes],
    ) -> None:
        """Send ``request`` (method, url, headers, body) to the engine; its
        reply goes to ``connection``."""
        if self.transport is None:
            connection.send(ENGINE_GONE, False)
            return
        slot = _Slot(connection, keep_alive)
        self.waiting[self.sent] = slot
        self.sent = (self.sent + 1) % ORDINALS
        self.in_order.setdefault(connection, deque()).append(slot)
        # Written at the end of the reactor's turn, with every other request
        # the turn read: one sendmsg for them all instead of one each (under
        # load a turn reads several; the engine's next read takes them all).
        self.unsent.extend(frame(request))
        if not self.send_scheduled:
            self.send_scheduled = True
            self.front.reactor.call_soon(self.send_unsent)

    def send_unsent(self) -> None:
        """Write the requests forwarded during this turn to the engine."""
        self.send_scheduled = False
        parts, self.unsent = self.unsent, []
        if self.transport is None:  # the engine is gone: engine_lost answers them
            return
        self.transport.writelines(parts)
        if len(self.waiting) == 1 and self.spinner is not None:
            # The only request in flight: its reply is usually back sooner
            # than this process could fall asleep and be woken again.
            self.spinner.started_waiting()
            self.spinner.spin()

    def data_received(self, data: bytes) -> None:
        if self.spinner is not None:
            self.spinner.answered()
        try:
            replies = self.reader.feed(data)
        except LinkError as error:
            logger.critical("the engine sent a corrupt frame (%s); stopping", error)
            self.front.engine_lost()
            return
        waiting = self.waiting
        for ordinal, reply in replies:
            slot = waiting.pop(ordinal, None)
            if slot is None:
                logger.critical("the engine answered a request it was not sent; stopping")
                self.front.engine_lost()
                return
            slot.reply = reply
            queue = self.in_order.get(slot.connection)
            while queue and queue[0].reply is not None:
                ready = queue.popleft()
                ready.connection.send(ready.reply, ready.keep_alive)  # type: ignore[arg-type]
            if queue is not None and not queue:
                del self.in_order[slot.connection]

    def forget(self, connection: HttpConnection) -> None:
        """A closed connection's replies, when they come, go nowhere."""
        self.in_order.pop(connection, None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.front.engine_lost()

    def pause_writing(self) -> None:
        self.front.pause_clients()

    def resume_writing(self) -> None:
        self.front.resume_clients()


class _Slot:
    """A forwarded request: where its reply goes, once it has come."""

    __slots__ = ("connection", "keep_alive", "reply")

    def __init__(self, connection: HttpConnection, keep_alive: bool) -> None:
        self.connection = connection
        self.keep_alive = keep_alive
        self.reply: Reply | None = None


ENGINE_GONE: Reply = (503, b"text/plain", b"Service unavailable", b"")
"""What a request gets if it arrives after the engine went away."""


class FrontServer(HttpListener):
    """HTTP connections whose requests are answered by the engine."""

    def __init__(
        self,
        reactor: Reactor,
        connect: Callable[[Reactor, socket.socket, Any], SocketTransport] | None = None,
    ) -> None:
        """``connect`` serves a handed-over socket (``Reactor.connect`` over
        plain TCP; ``tls.tls_socket_connector``'s over TLS)."""
        super().__init__()
        self.reactor = reactor
        self.connect = connect or Reactor.connect
        self.link = EngineLink(self)
        self.handed_over = False
        """Whether the engine ever handed a connection over (before that, an
        engine that goes away failed to start, and says why itself)."""
        self.exit_status: int | None = None
        """Set once the front has stopped (the reactor then stops too)."""
        self._grace_timer: TimerHandle | None = None

    def event_loop(self) -> Reactor:
        return self.reactor

    def answer(
        self,
        connection: HttpConnection,
        method: bytes,
        url: bytes,
        headers: dict[bytes, bytes],
        body: bytes,
        keep_alive: bool,
    ) -> None:
        self.link.forward(connection, keep_alive, (method, url, headers, body))

    def adopt_socket(self, sock: socket.socket) -> None:
        """Serve a connection the engine handed over."""
        self._start_ticking()
        self.connect(self.reactor, sock, HttpConnection(self))

    def pause_clients(self) -> None:
        self.clients_paused = True
        for connection in self.connections:
            connection.update_reading()

    def resume_clients(self) -> None:
        self.clients_paused = False
        for connection in self.connections:
            connection.update_reading()

    def engine_lost(self) -> None:
        """The engine is gone: nothing more can be answered."""
        if self.exit_status is not None:
            return
        if not self.stopping and self.handed_over:
            logger.error("the engine closed the link; dropping %d connections", len(self.connections))
        elif not self.stopping:
            logger.debug("the engine closed the link before handing over a connection")
        self.stop_listening()
        self.abort_connections()
        self._finish(0 if self.stopping else 1)

    def stop_gracefully(self) -> None:
        """Answer the requests in progress (for at most the shutdown grace
        period), close every connection, then close the link and stop."""
        if self.stopping:
            return
        self.begin_stopping()
        if not self.connections:
            self._all_answered()
            return
        self._grace_timer = self.reactor.call_later(SHUTDOWN_GRACE_SECONDS, self.abort_at_shutdown)

    def connection_closed(self, connection: HttpConnection) -> None:
        super().connection_closed(connection)
        self.link.forget(connection)
        if self.stopping and not self.connections and self.exit_status is None:
            self._all_answered()

    def _all_answered(self) -> None:
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        self.stop_ticking()
        if self.link.transport is not None:
            self.link.transport.close()  # the engine sees the link close: all answered
        self._finish(0)

    def _finish(self, status: int) -> None:
        if self.exit_status is None:
            self.exit_status = status
            self.reactor.stop()


class HandoffReceiver:
    """Takes the connections the engine hands over (SCM_RIGHTS) and serves them."""

    def __init__(self, front: FrontServer, handoff: socket.socket) -> None:
        self.front = front
        self.handoff = handoff
        handoff.setblocking(False)
        front.reactor.add_reader(handoff.fileno(), self._receive)

    def _receive(self) -> None:
        for _ in range(limits.HTTP_ACCEPTS_PER_TURN):
            try:
                data, descriptors, _, _ = socket.recv_fds(self.handoff, 64, 64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                logger.error("the handoff socket failed: %s", error)
                self.stop()
                return
            if not data:  # the engine closed it: the link's end follows
                self.stop()
                return
            for descriptor in descriptors:
                self.front.handed_over = True
                connection = socket.socket(fileno=descriptor)
                if self.front.stopping:
                    connection.close()
                    continue
                self.front.adopt_socket(connection)

    def stop(self) -> None:
        """Take no more connections."""
        if self.handoff.fileno() != -1:
            self.front.reactor.remove_reader(self.handoff.fileno())
            self.handoff.close()


def run_front(link_fd: int, handoff_fd: int, tls_files: tuple[str, str] | None = None) -> int:
    """Serve until the engine goes away or SIGTERM; returns the exit status.
    ``tls_files`` (certificate chain, key) serves every connection over TLS."""
    connect = None
    if tls_files is not None:
        from dynastore.protocol.tls import (
            TlsConfigurationError,
            server_context,
            tls_socket_connector,
        )

        try:
            connect = tls_socket_connector(server_context(*tls_files))
        except TlsConfigurationError as error:
            # The engine checked the files before it started us: they changed
            # since. Exiting before HELLO has the engine serve every connection.
            logger.error("cannot serve TLS: %s", error)
            return 1
    reactor = Reactor()
    front = FrontServer(reactor, connect)
    try:
        reactor.connect(socket.socket(fileno=link_fd), front.link)
        receiver = HandoffReceiver(front, socket.socket(fileno=handoff_fd))

        def stop() -> None:
            receiver.stop()
            front.stop_gracefully()

        reactor.add_signal_handler(signal.SIGTERM, stop)
        # Ctrl-C reaches the whole process group: the engine stops the front
        # itself (SIGTERM), after it has stopped accepting, so the front ignores it.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        reactor.run()
    finally:
        reactor.close()
    return front.exit_status if front.exit_status is not None else 1


USAGE = (
    "usage: python -m dynastore.protocol.front --link-fd L --handoff-fd H "
    "[--tls-cert FILE --tls-key FILE] [--log-level LEVEL]"
)


def parse_arguments(argv: Sequence[str]) -> dict[str, str]:
    """The engine's command line for this process (no argparse: it is the
    engine that writes it, and argparse would be half a MiB of the front)."""
    if len(argv) % 2:
        raise SystemExit(USAGE)
    options = dict(zip(argv[::2], argv[1::2], strict=True))
    known = {"--link-fd", "--handoff-fd", "--log-level", "--tls-cert", "--tls-key"}
    if not options.keys() <= known or not {"--link-fd", "--handoff-fd"} <= options.keys():
        raise SystemExit(USAGE)
    if ("--tls-cert" in options) != ("--tls-key" in options):
        raise SystemExit(USAGE)
    return options


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_arguments(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=options.get("--log-level", "info").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    tls_files = None
    if "--tls-cert" in options:
        tls_files = (options["--tls-cert"], options["--tls-key"])
    return run_front(int(options["--link-fd"]), int(options["--handoff-fd"]), tls_files)


if __name__ == "__main__":
    # Exit without running finalizers of the objects still around: nothing
    # here holds data, and the engine decides what the server's status is.
    sys.stdout.flush()
    os._exit(main())
