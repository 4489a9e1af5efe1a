"""The single-process server: HTTP and the database on one event loop.

Used by the embedded ``db.serve()`` (whose requests take the database's
lock), by ``dynastore serve --single-process``, and by the tests of group
commit. ``dynastore serve`` itself runs HTTP in a front process and the
database here in the engine process (protocol/front.py, protocol/engine.py;
ADR 0003); both servers answer through the same ``Application`` and group
commit (``group_commit.run_request``).

Each request is answered synchronously, on the event-loop thread, as soon as
it is complete. Only one operation ever runs at a time, which is what makes
each operation atomic (ADR 0000).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dynastore.protocol.app import Application, RequestHandler
from dynastore.protocol.group_commit import GroupCommit, run_request
from dynastore.protocol.http import (
    IDLE_CONNECTION_SECONDS,
    MAX_CONNECTIONS,
    SHUTDOWN_GRACE_SECONDS,
    STALLED_REQUEST_SECONDS,
    HttpConnection,
    HttpListener,
)

if TYPE_CHECKING:
    from dynastore.database import Database


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
    ) -> None:
        super().__init__(idle_connection_seconds, stalled_request_seconds, max_connections)
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

    async def start(self) -> tuple[str, int]:
        """Start listening; returns the bound (host, port), useful with port 0."""
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
        run_request(
            self.group, self.application.handle, connection, method, url, headers, body, keep_alive
        )

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
