"""Group commit: the data-plane requests of one event-loop turn share one
storage transaction, and their replies leave after its COMMIT.

Why: every operation used to be its own SQLite transaction. Under load the
server reads a handful of requests per turn of the loop; running them in one
transaction pays the transaction's fixed costs once (the WAL append of the
shared B-tree pages, the WAL header checks a read transaction starts with,
SQLite's bookkeeping) instead of once per request. Measured at 32
connections on a data directory: about a third less server CPU per PutItem
and per GetItem (docs/adr/0002-group-commit.md).

The rules that keep it correct:

- A reply is written only after the COMMIT that made its request's writes
  durable, so "acknowledged" still means "survives kill -9". Reads in the
  group wait too once the group has written anything (they may have seen
  uncommitted writes); a reply produced before the group's first write saw
  only committed data and leaves at once.
- Each operation still runs alone and to completion on the loop (ADR 0000),
  and its own ``storage.transaction()`` blocks nest as SAVEPOINTs inside the
  group, so a failing operation undoes exactly its own writes.
- Only data-plane item operations sent as SDKs send them (``POST /`` with
  one of ``GROUPED_TARGETS``) join a group. Anything else (control plane,
  Streams, the admin API and the console, whatever their headers) first
  commits the open group, then runs in its own transaction as before, so
  the catalogue never changes inside a group.
- The group commits at the next turn of the loop (``call_soon``), and before
  the server stops.
- A COMMIT that fails (disk full, I/O error) leaves SQLite rolled back, but
  the in-process state the group's operations updated (stream sequence
  numbers, the GSI outbox queue, throughput counters) cannot be rolled back
  with it. Every request of the group is answered with InternalServerError
  (500: the client may retry, nothing was acknowledged) and the server stops
  with an error; on the next start every acknowledged write is there and the
  in-process state is rebuilt from storage.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

import orjson

from dynastore.errors import InternalServerError
from dynastore.protocol.http import JSON_1_0, Reply

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.server")

GROUPED_OPERATIONS = (
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
    "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
    "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",  # PartiQL runs the item operations
)
"""Operations that read and write items only: they change no catalogue and
no in-process state that a failed COMMIT would leave behind unrecoverably."""
GROUPED_TARGETS = frozenset(
    b"DynamoDB_20120810." + operation.encode() for operation in GROUPED_OPERATIONS
)
"""``X-Amz-Target`` values of the grouped operations."""

def is_grouped(method: bytes, url: bytes, headers: dict[bytes, bytes]) -> bool:
    """True for a data-plane item operation sent as SDKs send them."""
    return method == b"POST" and url == b"/" and headers.get(b"x-amz-target") in GROUPED_TARGETS


def run_request(
    group: GroupCommit | None,
    handle: Callable[[bytes, bytes, dict[bytes, bytes], bytes], Reply],
    sink: ReplySink,
    method: bytes,
    url: bytes,
    headers: dict[bytes, bytes],
    body: bytes,
    keep_alive: bool,
) -> None:
    """Answer one request with ``handle`` and hand the reply to ``sink``: at
    once without a group; inside the open group for an item operation (held
    until its COMMIT when the group has written); after committing the open
    group for anything else. A HEAD reply loses its body.

    Never raises, and ``sink`` gets exactly one reply per request (the
    front's link pairs replies with requests by their order): if the group's
    transaction cannot begin (another program holds SQLite's write lock past
    the busy timeout), the request is not run and gets InternalServerError."""
    if group is not None:
        if is_grouped(method, url, headers):
            try:
                group.join()
            except Exception:
                logger.exception("could not begin the group's transaction; answering 500")
                sink.send(internal_error((500, JSON_1_0, b"", b"")), keep_alive)
                return
            group.hold(sink, reply_to(handle, method, url, headers, body), keep_alive)
            return
        group.commit()  # not an item operation: it runs after the open group commits
    sink.send(reply_to(handle, method, url, headers, body), keep_alive)


def reply_to(
    handle: Callable[[bytes, bytes, dict[bytes, bytes], bytes], Reply],
    method: bytes,
    url: bytes,
    headers: dict[bytes, bytes],
    body: bytes,
) -> Reply:
    """``handle``'s reply to one request (a HEAD reply loses its body)."""
    reply = handle(method, url, headers, body)
    if method == b"HEAD":  # the same head as GET, but a HEAD reply has no body
        return (reply[0], reply[1], b"", reply[3])
    return reply


class ReplySink(Protocol):
    """Where a held reply goes once its group has committed (a connection)."""

    def send(self, reply: Reply, keep_alive: bool) -> None: ...


class GroupCommit:
    """The open group of one server (at most one at a time)."""

    __slots__ = ("_database", "_on_failure", "_block", "_held", "_writes_before", "before_commit")

    def __init__(self, database: Database, on_failure: Callable[[BaseException], None]) -> None:
        self._database = database
        self._on_failure = on_failure
        """Called once a COMMIT failed, after the group's replies were sent."""
        self._block: AbstractContextManager[None] | None = None
        self._held: list[tuple[ReplySink, Reply, bool]] = []
        self._writes_before = 0
        """The store's write count when the group opened."""
        self.before_commit: list[Callable[[], None]] = []
        """Called inside the group just before its COMMIT (the Redis keyspace
        writes the rows its commands changed in this turn: dynastore/redis/)."""

    @property
    def is_open(self) -> bool:
        return self._block is not None

    def join(self) -> None:
        """Make sure a group is open for the request about to run (on a store
        other servers share, none is: each request commits on its own)."""
        if self._block is None and self._database.storage.exclusive:
            storage = self._database.storage
            self._writes_before = storage.write_count()
            block = storage.transaction()
            block.__enter__()
            self._block = block
            asyncio.get_running_loop().call_soon(self.commit)

    def hold(self, sink: ReplySink, reply: Reply, keep_alive: bool, wrote: bool = False) -> None:
        """Keep ``reply`` until the group commits, or send it now if the group
        has written nothing yet (so its request read only committed data).
        ``wrote``: writes wait for ``before_commit`` (always held)."""
        if self._block is None or (
            not wrote and not self._held
            and self._database.storage.write_count() == self._writes_before
        ):
            sink.send(reply, keep_alive)
            return
        self._held.append((sink, reply, keep_alive))

    def commit(self) -> None:
        """COMMIT the open group (if any), then send its replies in order."""
        block = self._block
        if block is None:
            return
        for hook in self.before_commit:
            hook()
        self._block = None
        held, self._held = self._held, []
        try:
            block.__exit__(None, None, None)
        except Exception as error:
            logger.critical(
                "COMMIT of %d requests failed; answering them with an internal error "
                "and stopping (acknowledged writes are safe; restart to continue): %s",
                len(held), error,
            )
            for sink, reply, _ in held:
                sink.send(internal_error(reply), False)
            self._on_failure(error)
            return
        for sink, reply, keep_alive in held:
            sink.send(reply, keep_alive)


def internal_error(reply: Reply) -> Reply:
    """``reply`` replaced by InternalServerError, in the same content type."""
    error = InternalServerError()
    return (error.status, reply[1], orjson.dumps(error.to_wire()), b"")
