"""The HTTP front process of ``dynastore serve`` (ADR 0003).

    python -m dynastore.protocol.front --link-fd L --handoff-fd H

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

Lifetime: SIGTERM stops it gracefully (requests in progress are answered,
then it exits 0); the engine sends it when it is told to stop. SIGINT is
ignored: Ctrl-C in a terminal reaches the whole process group, and the
engine stops the front itself. If the engine goes away (the link closes), every connection is
dropped at once and the process exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Sequence
from typing import Any, cast

from dynastore import limits
from dynastore.protocol.http import HttpConnection, HttpListener, Reply, new_event_loop
from dynastore.protocol.link import (
    HELLO,
    FrameReader,
    LinkError,
    ReadinessSpinner,
    decode_reply,
    frame,
)

logger = logging.getLogger("dynastore.front")

LINK_WRITE_HIGH_WATER_BYTES = 1 << 20
"""Requests waiting to be written to the engine beyond this pause reading from
clients until the engine has taken them (back-pressure, not a drop)."""
LINK_WRITE_LOW_WATER_BYTES = 1 << 18


class EngineLink(asyncio.Protocol):
    """The front's end of the link: forwards requests, routes replies back."""

    def __init__(self, front: FrontServer) -> None:
        self.front = front
        self.transport: asyncio.Transport | None = None
        self.spinner: ReadinessSpinner | None = None
        self.reader = FrameReader(decode_reply)
        self.waiting: deque[tuple[HttpConnection, bool]] = deque()
        """(connection, keep-alive) of each forwarded request, oldest first."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.set_write_buffer_limits(
            LINK_WRITE_HIGH_WATER_BYTES, LINK_WRITE_LOW_WATER_BYTES
        )
        self.spinner = ReadinessSpinner(transport.get_extra_info("socket").fileno())
        self.transport.writelines(frame(HELLO))

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
        self.waiting.append((connection, keep_alive))
        # Written at once: while the engine is busy the requests queue in the
        # socket, and its next read takes them all.
        self.transport.writelines(frame(request))
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
        for reply in replies:
            connection, keep_alive = waiting.popleft()
            connection.send(reply, keep_alive)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.front.engine_lost()

    def pause_writing(self) -> None:
        self.front.pause_clients()

    def resume_writing(self) -> None:
        self.front.resume_clients()


ENGINE_GONE: Reply = (503, b"text/plain", b"Service unavailable", b"")
"""What a request gets if it arrives after the engine went away."""


class FrontServer(HttpListener):
    """HTTP connections whose requests are answered by the engine."""

    def __init__(self) -> None:
        super().__init__()
        self.link = EngineLink(self)
        self.finished: asyncio.Future[int] | None = None
        """Resolves to the exit status once the front has stopped."""

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
        if self.finished is not None and self.finished.done():
            return
        if not self.stopping:
            logger.error("the engine closed the link; dropping %d connections", len(self.connections))
        self.stop_listening()
        self.abort_connections()
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(0 if self.stopping else 1)

    async def stop_gracefully(self) -> None:
        await self.stop()
        if self.link.transport is not None:
            self.link.transport.close()  # the engine sees the link close: all answered
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(0)


class HandoffReceiver:
    """Takes the connections the engine hands over (SCM_RIGHTS) and serves them."""

    def __init__(self, front: FrontServer, handoff: socket.socket) -> None:
        self.front = front
        self.handoff = handoff
        handoff.setblocking(False)
        asyncio.get_running_loop().add_reader(handoff.fileno(), self._receive)

    def _receive(self) -> None:
        loop = asyncio.get_running_loop()
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
                connection = socket.socket(fileno=descriptor)
                if self.front.stopping:
                    connection.close()
                    continue
                loop.create_task(self.front.adopt(connection))

    def stop(self) -> None:
        """Take no more connections."""
        if self.handoff.fileno() != -1:
            asyncio.get_running_loop().remove_reader(self.handoff.fileno())
            self.handoff.close()


async def run_front(link_fd: int, handoff_fd: int) -> int:
    loop = asyncio.get_running_loop()
    front = FrontServer()
    front.finished = loop.create_future()
    await loop.connect_accepted_socket(lambda: front.link, socket.socket(fileno=link_fd))
    receiver = HandoffReceiver(front, socket.socket(fileno=handoff_fd))
    stopping: list[asyncio.Task[Any]] = []

    def stop() -> None:
        if not stopping:
            receiver.stop()
            stopping.append(loop.create_task(front.stop_gracefully()))

    loop.add_signal_handler(signal.SIGTERM, stop)
    # Ctrl-C reaches the whole process group: the engine stops the front
    # itself (SIGTERM), after it has stopped accepting, so the front ignores it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = await front.finished
    for task in stopping:
        if not task.done():
            task.cancel()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynastore.protocol.front")
    parser.add_argument("--link-fd", type=int, required=True)
    parser.add_argument("--handoff-fd", type=int, required=True)
    parser.add_argument("--log-level", default="info")
    arguments = parser.parse_args(argv)
    logging.basicConfig(
        level=arguments.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(run_front(arguments.link_fd, arguments.handoff_fd))
    finally:
        loop.close()


if __name__ == "__main__":
    # Exit without running finalizers of the objects still around: nothing
    # here holds data, and the engine decides what the server's status is.
    sys.stdout.flush()
    os._exit(main())
