"""The engine's side of ``dynastore serve``: the database, answering requests
that the HTTP front process forwards over the link (ADR 0003).

``bind_listening_sockets`` binds the server's address here (so a port in use
is reported by the command the user ran, and port 0 is resolved before the
front starts); ``start_front`` starts protocol/front.py with those sockets
and one end of a socketpair; ``FrontEndpoint`` is this end of the link.

Each read from the link brings every request the front has forwarded since
the last read. They run one at a time, to completion, on this loop (ADR
0000), item operations inside one group-commit transaction
(group_commit.py); at the end of the batch the group commits and the
replies go back in one write, in request order. A reply to a write therefore
leaves only after its COMMIT: "acknowledged" still means "survives kill -9".
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import orjson

from dynastore.errors import InternalServerError
from dynastore.protocol.app import Application, RequestHandler
from dynastore.protocol.group_commit import GroupCommit, run_request
from dynastore.protocol.http import JSON_1_0, LISTEN_BACKLOG, SHUTDOWN_GRACE_SECONDS, Reply
from dynastore.protocol.link import HELLO, FrameReader, LinkError, ReadinessSpinner, reply_frame

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.server")

FRONT_MODULE = "dynastore.protocol.front"
REPLY_WRITE_HIGH_WATER_BYTES = 4 << 20
"""Replies the front has not read yet beyond this pause reading requests
from the link until it has caught up."""
REPLY_WRITE_LOW_WATER_BYTES = 1 << 20

STOPPED_AFTER_FAILURE: Reply = (
    500, JSON_1_0, orjson.dumps(InternalServerError().to_wire()), b""
)
"""What a request gets once a COMMIT has failed and the server is stopping."""


def bind_listening_sockets(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to (as asyncio's
    create_server binds them); with port 0 they share the first one's port."""
    infos = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    seen: set[tuple[Any, ...]] = set()
    try:
        for family, kind, protocol, _, address in infos:
            if family not in (socket.AF_INET, socket.AF_INET6) or (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, protocol)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def start_front(
    listening: list[socket.socket], log_level: str
) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Start the front process on ``listening``; returns it and the engine's
    end of the link. The sockets stay open here too (closing them is the
    caller's choice): the front has its own copies."""
    engine_end, front_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        arguments = [sys.executable, "-m", FRONT_MODULE, "--link-fd", str(front_end.fileno())]
        for sock in listening:
            arguments += ["--listen-fd", str(sock.fileno())]
        arguments += ["--log-level", log_level]
        process = subprocess.Popen(
            arguments, pass_fds=(front_end.fileno(), *(sock.fileno() for sock in listening))
        )
    except BaseException:
        engine_end.close()
        raise
    finally:
        front_end.close()
    return process, engine_end


class FrontEndpoint(asyncio.Protocol):
    """The engine's end of the link: runs the front's requests, sends replies."""

    def __init__(
        self,
        handle: Callable[[bytes, bytes, dict[bytes, bytes], bytes], Reply],
        group: GroupCommit,
    ) -> None:
        self.handle = handle
        self.group = group
        self.transport: asyncio.Transport | None = None
        self.spinner: ReadinessSpinner | None = None
        self.reader = FrameReader()
        self.outgoing: list[bytes] = []
        self.failed = False
        """A COMMIT failed: further requests are refused, the server is stopping."""
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[None] = loop.create_future()
        """Resolved when the front said HELLO (it is listening)."""
        self.closed: asyncio.Future[None] = loop.create_future()
        """Resolved when the link closed (the front stopped, or died)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.set_write_buffer_limits(
            REPLY_WRITE_HIGH_WATER_BYTES, REPLY_WRITE_LOW_WATER_BYTES
        )
        self.spinner = ReadinessSpinner(transport.get_extra_info("socket").fileno())

    def send(self, reply: Reply, keep_alive: bool) -> None:
        """A reply is ready (the group-commit sink): queue it for this batch's write."""
        self.outgoing.extend(reply_frame(reply))

    def data_received(self, data: bytes) -> None:
        if self.spinner is not None:
            self.spinner.answered()
        try:
            messages = self.reader.feed(data)
        except LinkError as error:
            logger.critical("the front sent a corrupt frame (%s); closing the link", error)
            self._close()
            return
        if not self.ready.done():
            if not messages or tuple(messages[0]) != HELLO:
                logger.critical("the front did not greet the engine; closing the link")
                self._close()
                return
            self.ready.set_result(None)
            messages = messages[1:]
        group, handle = self.group, self.handle
        if not all(type(message) is tuple and len(message) == 4 for message in messages):
            logger.critical("the front sent a frame that is not a request; closing the link")
            self._close()
            return
        for method, url, headers, body in messages:
            if self.failed:
                self.send(STOPPED_AFTER_FAILURE, False)
                continue
            run_request(group, handle, self, method, url, headers, body, True)
        group.commit()
        self._flush()
        if self.spinner is not None:
            # A client in a tight loop sends its next request sooner than this
            # process could fall asleep and be woken again (link.ReadinessSpinner).
            self.spinner.started_waiting()
            self.spinner.spin()

    def _flush(self) -> None:
        outgoing = self.outgoing
        if outgoing and self.transport is not None:
            self.outgoing = []
            self.transport.writelines(outgoing)

    def commit_failed(self) -> None:
        """The group's COMMIT failed (its replies are errors already): refuse the rest."""
        self.failed = True
        self._flush()

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None:
            self.transport.resume_reading()

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if not self.ready.done():
            self.ready.set_exception(ConnectionError("the front process closed the link"))
        if not self.closed.done():
            self.closed.set_result(None)


FRONT_START_TIMEOUT_SECONDS = 30.0
"""How long the engine waits for the front's HELLO (the front imports little;
a busy machine still starts it in well under a second)."""
FRONT_EXIT_GRACE_SECONDS = 5.0
"""After the link closed, how long the front may take to exit before it is killed."""


class FrontProcessLost(Exception):
    """The front process went away while the server was not stopping."""


class EngineServer:
    """``dynastore serve``'s engine: the database here, HTTP in the front
    process. The same interface as the single-process ``server.Server``
    (``application``, ``start``, ``stop``, ``failure``, ``on_failure``), so the
    CLI drives either."""

    def __init__(
        self,
        database: Database,
        front: subprocess.Popen[bytes],
        link: socket.socket,
        address: tuple[str, int],
        application: RequestHandler | None = None,
    ) -> None:
        self.database = database
        self.front = front
        self.link = link
        self.address = address
        self.application: RequestHandler = application or Application(database)
        self.group = GroupCommit(database, self._commit_failed)
        self.failure: BaseException | None = None
        """Why the server stopped itself (a failed COMMIT, the front lost), else None."""
        self.on_failure: Callable[[BaseException], None] | None = None
        self.stopping = False
        self.endpoint: FrontEndpoint | None = None

    async def start(self) -> tuple[str, int]:
        """Connect the link and wait for the front to be listening."""
        loop = asyncio.get_running_loop()
        endpoint = FrontEndpoint(self.application.handle, self.group)
        self.endpoint = endpoint
        await loop.connect_accepted_socket(lambda: endpoint, self.link)
        try:
            await asyncio.wait_for(asyncio.shield(endpoint.ready), FRONT_START_TIMEOUT_SECONDS)
        except (ConnectionError, TimeoutError) as error:
            self._kill_front()
            raise FrontProcessLost(
                f"the HTTP front process did not start (exit status {self.front.poll()})"
            ) from error
        endpoint.closed.add_done_callback(self._link_closed)
        return self.address

    def _link_closed(self, _: asyncio.Future[None]) -> None:
        if self.stopping:
            return
        self.failure = FrontProcessLost(
            f"the HTTP front process went away (exit status {self.front.poll()})"
        )
        if self.on_failure is not None:
            self.on_failure(self.failure)

    def _commit_failed(self, error: BaseException) -> None:
        """A group's COMMIT failed: refuse further requests, have the owner stop us."""
        self.failure = error
        if self.endpoint is not None:
            self.endpoint.commit_failed()
        if self.on_failure is not None:
            self.on_failure(error)

    async def stop(self, grace_seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Have the front stop accepting and finish the requests in progress
        (they are still answered here), then wait for it to exit."""
        self.stopping = True
        endpoint = self.endpoint
        if self.front.poll() is None:
            self.front.send_signal(signal.SIGTERM)
        if endpoint is not None:
            try:
                await asyncio.wait_for(
                    asyncio.shield(endpoint.closed), grace_seconds + FRONT_EXIT_GRACE_SECONDS
                )
            except TimeoutError:
                logger.warning("the HTTP front process did not stop in time; killing it")
        self.group.commit()
        deadline = asyncio.get_running_loop().time() + FRONT_EXIT_GRACE_SECONDS
        while self.front.poll() is None and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        self._kill_front()

    def _kill_front(self) -> None:
        if self.front.poll() is None:
            self.front.kill()
            self.front.wait()
        self.link.close()
