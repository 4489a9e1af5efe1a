"""The engine's side of ``dynastore serve``: the database, and every
connection's requests, whichever process parses its HTTP (ADR 0003).

The engine binds the listening sockets and accepts every connection itself
(``EngineServer``). The first ``HTTP_ENGINE_CONNECTIONS`` open at a time are
served right here, as the single-process server does: one client (a test
suite, a script) pays no hop between processes. Connections beyond those
are handed to the HTTP front process (protocol/front.py) over a Unix socket
(the descriptor itself, SCM_RIGHTS); the front parses their HTTP and
forwards each complete request over the link (protocol/link.py), answered
by ``FrontEndpoint`` here.

Each read from the link brings every request the front has forwarded since
the last read. They run one at a time, to completion, on this loop (ADR
0000), item operations inside one group-commit transaction
(group_commit.py, shared with the connections served here); at the end of
the batch the group commits and the replies go back in one write, in
request order. A reply to a write therefore leaves only after its COMMIT:
"acknowledged" still means "survives kill -9".

If the front goes away (or never comes up), the engine serves every new
connection itself: the server stays up, on one core.

HTTPS (ADR 0007): both processes build a context from the same certificate
and key. The engine hands over the raw TCP connection, before any TLS byte
is read; the front does the handshake itself (protocol/tls.py). The
engine's own connections use its loop's SSL transport.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import orjson

from dynastore import limits
from dynastore.errors import InternalServerError
from dynastore.protocol.app import Application, RequestHandler
from dynastore.protocol.group_commit import GroupCommit, reply_to, run_request
from dynastore.protocol.http import (
    JSON_1_0,
    LISTEN_BACKLOG,
    SHUTDOWN_GRACE_SECONDS,
    Reply,
    switch_reading,
)
from dynastore.protocol.link import (
    HELLO,
    ORDINALS,
    FrameReader,
    LinkError,
    ReadinessSpinner,
    reply_frame,
)
from dynastore.protocol.server import Server
from dynastore.protocol.tls import is_handshake_failure

if TYPE_CHECKING:
    import ssl

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
    log_level: str, tls_files: tuple[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], socket.socket, socket.socket]:
    """Start the front process; returns it, the engine's end of the link and
    the engine's end of the socket that hands connections over. With
    ``tls_files`` (certificate chain, key) the front serves TLS."""
    link, front_link = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    handoff, front_handoff = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        arguments = [
            sys.executable, "-m", FRONT_MODULE,
            "--link-fd", str(front_link.fileno()),
            "--handoff-fd", str(front_handoff.fileno()),
            "--log-level", log_level,
        ]
        if tls_files is not None:
            arguments += ["--tls-cert", tls_files[0], "--tls-key", tls_files[1]]
        process = subprocess.Popen(arguments, pass_fds=(front_link.fileno(), front_handoff.fileno()))
    except BaseException:
        link.close()
        handoff.close()
        raise
    finally:
        front_link.close()
        front_handoff.close()
    handoff.setblocking(False)
    return process, link, handoff


class _Answer:
    """Where the reply to one of the front's requests goes (a group-commit
    sink: the reply may be held until its group's COMMIT)."""

    __slots__ = ("endpoint", "ordinal")

    def __init__(self, endpoint: FrontEndpoint, ordinal: int) -> None:
        self.endpoint = endpoint
        self.ordinal = ordinal

    def send(self, reply: Reply, keep_alive: bool) -> None:
        self.endpoint.outgoing.extend(reply_frame(self.ordinal, reply))


class FrontEndpoint(asyncio.Protocol):
    """The engine's end of the link: runs the front's requests in the order
    they came, sends each reply with its request's ordinal.

    Over PostgreSQL (``hub`` set: the store's batching, ADR 0005) each
    request runs in a greenlet of its own and many are in flight at once;
    a reply leaves as soon as its request is done.

    Requests wait in ``pending``. A run takes them for at most
    LINK_REPLY_FLUSH_SECONDS, then commits the group, writes the replies and,
    if some are left, yields to the event loop before the next run: the
    requests that arrived meanwhile join the queue behind them, and the first
    replies of a long batch do not wait for its last request (at 32
    connections a batch of Queries on a data directory takes ~5 ms)."""

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
        self.hub: Any = None
        """The store's batching when it is shared (set by EngineServer.start)."""
        self.received = 0
        """Requests the front has sent: the next one's ordinal."""
        self.flush_scheduled = False
        self.in_flight = 0
        """Requests running in greenlets (a shared store)."""
        self.pending: deque[tuple[int, bytes, bytes, dict[bytes, bytes], bytes]] = deque()
        self.run_scheduled = False
        self.writing_paused = False
        """The front is not reading replies: no request runs until it does."""
        self.reading_paused = False
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
        if not all(type(message) is tuple and len(message) == 4 for message in messages):
            logger.critical("the front sent a frame that is not a request; closing the link")
            self._close()
            return
        ordinal = self.received
        for message in messages:
            self.pending.append((ordinal, *message))
            ordinal = (ordinal + 1) % ORDINALS
        self.received = ordinal
        if not self.run_scheduled:
            self._run()
        self._update_reading()

    def _run(self) -> None:
        """Run pending requests for at most LINK_REPLY_FLUSH_SECONDS, then
        commit and send their replies (see the class docstring)."""
        self.run_scheduled = False
        if self.writing_paused:
            return
        if self.hub is not None:
            self._start_pending()
            return
        pending, group, handle = self.pending, self.group, self.handle
        clock = time.perf_counter
        stop_at = clock() + limits.LINK_REPLY_FLUSH_SECONDS
        while pending:
            ordinal, method, url, headers, body = pending.popleft()
            if self.failed:
                _Answer(self, ordinal).send(STOPPED_AFTER_FAILURE, False)
            else:
                run_request(group, handle, _Answer(self, ordinal), method, url, headers, body, True)
            if clock() >= stop_at:
                break
        group.commit()
        self._flush()
        if pending:
            self.run_scheduled = True
            asyncio.get_running_loop().call_soon(self._run)
        elif self.spinner is not None:
            # A client in a tight loop sends its next request sooner than this
            # process could fall asleep and be woken again (link.ReadinessSpinner).
            self.spinner.started_waiting()
            self.spinner.spin()

    def _start_pending(self) -> None:
        """A shared store: start every pending request in a greenlet (at most
        LINK_PENDING_REQUESTS_MAX in flight); each reply leaves when done."""
        pending = self.pending
        while pending and self.in_flight < limits.LINK_PENDING_REQUESTS_MAX:
            ordinal, method, url, headers, body = pending.popleft()
            if self.failed:
                self._answered(ordinal, STOPPED_AFTER_FAILURE, counted=False)
                continue
            self.in_flight += 1
            self.hub.spawn(self._runner(ordinal, method, url, headers, body))

    def _runner(
        self, ordinal: int, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Callable[[], None]:
        handle = self.handle

        def run() -> None:
            try:
                reply = reply_to(handle, method, url, headers, body)
            except Exception:  # Application.handle answers errors itself; this is a bug
                logger.exception("a request greenlet failed")
                reply = STOPPED_AFTER_FAILURE
            self._answered(ordinal, reply)

        return run

    def _answered(self, ordinal: int, reply: Reply, counted: bool = True) -> None:
        self.outgoing.extend(reply_frame(ordinal, reply))
        if counted:
            self.in_flight -= 1
        if not self.flush_scheduled:
            self.flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_answers)

    def _flush_answers(self) -> None:
        """Write the replies finished since the last write (one write for all
        of a turn of the loop), then start what waited for a free place."""
        self.flush_scheduled = False
        self._flush()
        if self.pending and not self.writing_paused:
            self._start_pending()
        self._update_reading()

    def _update_reading(self) -> None:
        """Stop reading the link while replies back up or too many requests
        wait (the front then stops reading its clients): every buffer bounded."""
        transport = self.transport
        if transport is None:
            return
        self.reading_paused = switch_reading(
            transport,
            self.reading_paused,
            self.writing_paused
            or len(self.pending) + self.in_flight >= limits.LINK_PENDING_REQUESTS_MAX,
        )

    def _flush(self) -> None:
        outgoing = self.outgoing
        if outgoing and self.transport is not None:
            self.outgoing = []
            self.transport.writelines(outgoing)
        if self.reading_paused:
            self._update_reading()

    def commit_failed(self) -> None:
        """The group's COMMIT failed (its replies are errors already): refuse the rest."""
        self.failed = True
        self._flush()

    def pause_writing(self) -> None:
        self.writing_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._update_reading()
        if self.pending and not self.run_scheduled:
            self.run_scheduled = True
            asyncio.get_running_loop().call_soon(self._run)

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.pending.clear()
        if not self.ready.done():
            self.ready.set_exception(ConnectionError("the front process closed the link"))
        if not self.closed.done():
            self.closed.set_result(None)


FRONT_START_TIMEOUT_SECONDS = 30.0
"""How long the front may take to say HELLO (it imports little; a busy
machine still starts it in well under a second). Until then, and if it
never does, the engine serves every connection itself."""
FRONT_EXIT_GRACE_SECONDS = 5.0
"""After the link closed, how long the front may take to exit before it is killed."""


class EngineServer:
    """``dynastore serve``'s engine: accepts every connection, serves the
    first few itself and hands the rest to the front process. The same
    interface as the single-process ``server.Server`` (``application``,
    ``start``, ``stop``, ``failure``, ``on_failure``), so the CLI drives either."""

    def __init__(
        self,
        database: Database,
        listening: list[socket.socket],
        front: subprocess.Popen[bytes],
        link: socket.socket,
        handoff: socket.socket,
        application: RequestHandler | None = None,
        engine_connections: int = limits.HTTP_ENGINE_CONNECTIONS,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """``ssl_context`` serves the engine's own connections over TLS (the
        front was started with the same files, ``start_front``)."""
        self.database = database
        self.listening = listening
        self.front = front
        self.link = link
        self.handoff = handoff
        self.engine_connections = engine_connections
        self.application: RequestHandler = application or Application(database)
        self.group = GroupCommit(database, self._commit_failed)
        self.local = Server(database, ssl_context=ssl_context)
        """The connections served in this process (its group is ours)."""
        self.local.group = self.group
        self._adopting = 0
        """Accepted connections on their way into ``local`` (not counted there yet)."""
        self.front_serving = False
        """The front said HELLO and its link is up: connections can be handed over."""
        self.accepting = False
        self.failure: BaseException | None = None
        """Why the server stopped itself (a failed COMMIT), else None."""
        self.on_failure: Callable[[BaseException], None] | None = None
        self.stopping = False
        self.endpoint: FrontEndpoint | None = None

    async def start(self) -> tuple[str, int]:
        """Accept connections; returns the address they come to."""
        loop = asyncio.get_running_loop()
        self.local.application = self.application
        endpoint = FrontEndpoint(self.application.handle, self.group)
        self.endpoint = endpoint
        if not self.database.storage.exclusive:  # PostgreSQL: many requests at once (ADR 0005)
            hub = self.database.storage.start_pipelining(loop)  # type: ignore[attr-defined]
            endpoint.hub = self.local.hub = hub
            self.database.background_loop = loop
            self.database.background_spawn = hub.spawn
        # A lone client of the engine's own may be spun for while the front
        # has nothing waiting here (http.HttpConnection._maybe_spin).
        self.local.spin_after_reply = lambda: not endpoint.pending
        endpoint.ready.add_done_callback(self._front_ready)
        endpoint.closed.add_done_callback(self._link_closed)
        await loop.connect_accepted_socket(lambda: endpoint, self.link)
        if self.engine_connections > 0:
            self._start_accepting()
        # else: every connection is the front's, so accept once it is up (the
        # kernel queues them meanwhile), or once it is known not to come.
        loop.call_later(FRONT_START_TIMEOUT_SECONDS, self._front_start_timed_out)
        host, port = self.listening[0].getsockname()[:2]
        return str(host), int(port)

    def _start_accepting(self) -> None:
        if self.accepting or self.stopping:
            return
        self.accepting = True
        loop = asyncio.get_running_loop()
        for sock in self.listening:
            sock.setblocking(False)
            loop.add_reader(sock.fileno(), self._accept, sock)

    def _front_ready(self, ready: asyncio.Future[None]) -> None:
        if not ready.cancelled() and ready.exception() is None and not self.stopping:
            self.front_serving = True
        self._start_accepting()

    def _front_start_timed_out(self) -> None:
        if self.endpoint is not None and not self.endpoint.ready.done():
            logger.error("the HTTP front process did not start; serving every connection here")
            self._kill_front()
            self._start_accepting()

    def _link_closed(self, _: asyncio.Future[None]) -> None:
        self.front_serving = False
        self._start_accepting()
        if not self.stopping:
            logger.error(
                "the HTTP front process went away (exit status %s); its connections are "
                "lost, and every new connection is served here", self.front.poll()
            )

    # --- accepting ---------------------------------------------------------------
    def _accept(self, listening: socket.socket) -> None:
        for _ in range(limits.HTTP_ACCEPTS_PER_TURN):
            try:
                connection, _address = listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # out of descriptors, or the listener closed
                logger.warning("could not accept a connection: %s", error)
                return
            connection.setblocking(False)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            local = len(self.local.connections) + self._adopting
            if local >= self.engine_connections and self.front_serving and self._hand_off(connection):
                continue
            self._adopt(connection)

    def _hand_off(self, connection: socket.socket) -> bool:
        """Give the connection to the front; False if it cannot take it now."""
        try:
            socket.send_fds(self.handoff, [b"c"], [connection.fileno()])
        except OSError:  # the front is not reading (its socket is full) or gone
            return False
        connection.close()  # the front holds its own descriptor now
        return True

    def _adopt(self, connection: socket.socket) -> None:
        self._adopting += 1
        task = asyncio.get_running_loop().create_task(self.local.adopt(connection))
        task.add_done_callback(self._adopted)

    def _adopted(self, task: asyncio.Task[None]) -> None:
        self._adopting -= 1
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        if self.local.ssl_context is not None and is_handshake_failure(error):
            # A plain-HTTP client on the TLS port, a client that does not
            # trust the certificate, a reset mid-handshake: the client's business.
            logger.debug("a TLS handshake failed: %s", error)
            return
        logger.warning("could not serve an accepted connection: %s", error)

    # --- failure and shutdown ---------------------------------------------------
    def _commit_failed(self, error: BaseException) -> None:
        """A group's COMMIT failed: refuse further requests, have the owner stop us."""
        self.failure = error
        if self.endpoint is not None:
            self.endpoint.commit_failed()
        self.local._commit_failed(error)
        if self.on_failure is not None:
            self.on_failure(error)

    async def stop(self, grace_seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Stop accepting; let the requests in progress finish, here and in the
        front (whose requests are still answered here); then the front exits."""
        self.stopping = True
        self.front_serving = False
        loop = asyncio.get_running_loop()
        for sock in self.listening:
            if self.accepting:
                loop.remove_reader(sock.fileno())
            sock.close()
        if self.front.poll() is None:
            self.front.send_signal(signal.SIGTERM)
        await self.local.stop(grace_seconds)
        endpoint = self.endpoint
        if endpoint is not None and self.front.poll() is None:
            try:
                await asyncio.wait_for(
                    asyncio.shield(endpoint.closed), grace_seconds + FRONT_EXIT_GRACE_SECONDS
                )
            except TimeoutError:
                logger.warning("the HTTP front process did not stop in time; killing it")
        self.group.commit()
        deadline = loop.time() + FRONT_EXIT_GRACE_SECONDS
        while self.front.poll() is None and loop.time() < deadline:
            await asyncio.sleep(0.01)
        self._kill_front()

    def _kill_front(self) -> None:
        if self.front.poll() is None:
            self.front.kill()
            self.front.wait()
        self.front_serving = False
        self.link.close()
        self.handoff.close()
