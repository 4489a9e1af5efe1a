"""The single-process server: HTTP and the database on one event loop.

Used by the embedded ``db.serve()`` (whose requests take the database's
lock), by ``dynastore serve --single-process``, and by the tests of group
commit. ``dynastore serve`` itself runs HTTP in a front process and the
database here in the engine process (protocol/front.py, protocol/engine.py;
ADR 0003); both servers answer through the same ``Application`` and group
commit (``group_commit.run_request``).

On an exclusive store (memory, SQLite) each request is answered
synchronously, on the event-loop thread, as soon as it is complete: only one
operation ever runs at a time (ADR 0000). On a store several servers share
(PostgreSQL, ``pipelined``) every request runs in a greenlet of its own on
the same thread, parked while the database works, its statements batched
with the other requests' (storage/postgres/pipeline.py, ADR 0005); the write
path's conditional commits make each operation atomic (ADR 0004). Replies
still leave each connection in the order its requests came.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynastore.protocol.app import Application, RequestHandler
from dynastore.protocol.group_commit import GroupCommit, internal_error, reply_to, run_request
from dynastore.protocol.http import (
    IDLE_CONNECTION_SECONDS,
    MAX_CONNECTIONS,
    SHUTDOWN_GRACE_SECONDS,
    STALLED_REQUEST_SECONDS,
    HttpConnection,
    HttpListener,
)

if TYPE_CHECKING:
    import ssl

    from dynastore.database import Database
    from dynastore.protocol.http import Reply

logger = logging.getLogger("dynastore.server")


class _Slot:
    """A request's place in its connection's order; ``reply`` once answered."""

    __slots__ = ("keep_alive", "reply")

    def __init__(self, keep_alive: bool) -> None:
        self.keep_alive = keep_alive
        self.reply: Reply | None = None


class Server(HttpListener):
    """Listens on one address and serves one Database.

    ``application`` defaults to ``Application(database)``; pass a wrapper to
    change how requests reach it (the embedded server takes a lock)."""

    def __init__(
        self,
        database: Database,
        host: str = "127.0.0.1",
        port: int = 8000,
        application: RequestHandler | None = None,
        idle_connection_seconds: int = IDLE_CONNECTION_SECONDS,
        stalled_request_seconds: int = STALLED_REQUEST_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
        group_commit: bool = False,
        pipelined: bool = False,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """``pipelined`` runs each request in a greenlet with its statements
        batched (a store other servers share; never with ``group_commit``);
        ``ssl_context`` serves HTTPS (ADR 0007)."""
        super().__init__(idle_connection_seconds, stalled_request_seconds, max_connections)
        self.ssl_context = ssl_context
        self.database = database
        self.group: GroupCommit | None = (
            GroupCommit(database, self._commit_failed) if group_commit else None
        )
        """Item operations of one loop turn share a transaction (group_commit.py)."""
        self.failure: BaseException | None = None
        """Why the server stopped itself (a failed COMMIT), else None."""
        self.on_failure: Callable[[BaseException], None] | None = None
        """Told when the server must stop (the CLI ends its serve loop)."""
        self.application: RequestHandler = application or Application(database)
        self.host = host
        self.port = port
        self.pipelined = pipelined
        self.hub: Any = None
        """The store's batching (storage/postgres/pipeline.py) once started."""
        self._in_order: dict[HttpConnection, deque[_Slot]] = {}
        """Each connection's requests still running in greenlets, oldest first."""

    async def start(self) -> tuple[str, int]:
        """Start listening; returns the bound (host, port), useful with port 0."""
        if self.pipelined:
            import asyncio

            loop = asyncio.get_running_loop()
            self.hub = self.database.storage.start_pipelining(loop)  # type: ignore[attr-defined]
            self.database.background_loop = loop
            self.database.background_spawn = self.hub.spawn
        return await self.listen(self.host, self.port)

    def answer(
        self,
        connection: HttpConnection,
        method: bytes,
        url: bytes,
        headers: dict[bytes, bytes],
        body: bytes,
        keep_alive: bool,
    ) -> None:
        if self.hub is None:
            run_request(
                self.group, self.application.handle, connection, method, url, headers, body, keep_alive
            )
            return
        slot = _Slot(keep_alive)
        self._in_order.setdefault(connection, deque()).append(slot)
        handle = self.application.handle

        def run() -> None:
            try:
                reply = reply_to(handle, method, url, headers, body)
            except Exception:  # Application.handle answers errors itself; this is a bug
                logger.exception("a request greenlet failed")
                reply = internal_error((500, b"application/x-amz-json-1.0", b"", b""))
            self._answered(connection, slot, reply)

        self.hub.spawn(run)

    def _answered(self, connection: HttpConnection, slot: _Slot, reply: Reply) -> None:
        """A request finished: send every reply of the connection that is
        ready, in request order (a later one waits for an earlier one)."""
        slot.reply = reply
        queue = self._in_order.get(connection)
        while queue and queue[0].reply is not None:
            ready = queue.popleft()
            assert ready.reply is not None
            connection.send(ready.reply, ready.keep_alive)
        if queue is not None and not queue:
            self._in_order.pop(connection, None)

    def connection_closed(self, connection: HttpConnection) -> None:
        super().connection_closed(connection)
        self._in_order.pop(connection, None)

    async def stop(self, grace_seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
        await super().stop(grace_seconds)

    def _commit_failed(self, error: BaseException) -> None:
        """A group's COMMIT failed: accept no more requests and have the owner stop us."""
        self.failure = error
        self.stopping = True
        self.stop_listening()
        if self.on_failure is not None:
            self.on_failure(error)

    def before_stopping(self) -> None:
        if self.group is not None:
            self.group.commit()


__all__ = ["SHUTDOWN_GRACE_SECONDS", "HttpConnection", "Server"]
