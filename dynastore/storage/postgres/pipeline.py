"""Many requests' statements over a few connections, in pipelined batches.

Why (ADR 0005): a server over PostgreSQL spends most of an operation
waiting. One request at a time on one connection pays a round trip per
statement and an fsync per commit (measured here: 11,500 GetItem/s and
2,300 PutItem/s at 32 connections); request threads pay the GIL instead
(6,900 GetItem/s). This module lets every request in flight run at once on
the server's one event-loop thread, and sends their statements together:

- each request runs in a greenlet (``Hub.spawn``); a storage call made in
  one (``Hub.execute``) parks it and queues the call;
- once the loop has run what was ready, the queued calls go out on a free
  connection as one libpq pipeline (``PipelineConnection.send``): one write,
  one round trip, whatever their number;
- reads (``READ``) are each their own implicit transaction (a Sync after
  each: a read never sees another request's uncommitted write);
- commits of the write path (``GROUPED``) share one implicit transaction:
  one Sync, one COMMIT, one WAL flush for all of them (group commit). Their
  statements run in one global key order, so two batches never wait for
  each other in a cycle. A statement that fails aborts the group: its call
  gets the error (a conflict, usually) and the other calls go out again in
  the next batch;
- a transaction that spans several calls (``storage.transaction()``, a
  stream append's two round trips) reserves a connection of its own until
  it ends (``Hub.reserve``); its calls go out there, one at a time.

Results come back as the connection's socket becomes readable; each parked
greenlet resumes with its call's outcome, in the order the calls were sent.
A connection that breaks fails the calls it carried (the store is
unavailable: InternalServerError, retried by SDKs) and is replaced when next
needed.

Statements and results go through psycopg's libpq layer (``psycopg.pq``):
parameters as text (integers, booleans, strings) or binary (bytea), results
in binary, decoded by column type.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from greenlet import getcurrent, greenlet  # type: ignore[import-untyped]
from psycopg import pq

from dynastore import limits
from dynastore.storage.errors import StorageUnavailable

logger = logging.getLogger("dynastore.storage")

READ = "read"
GROUPED = "grouped"
ALONE = "alone"
"""Call kinds: its own implicit transaction; the batch's group transaction;
on a reserved connection, inside whatever transaction that connection has open."""

MAX_CALLS_PER_BATCH = limits.POSTGRES_BATCH_MAX_CALLS
CALL_TIMEOUT_SECONDS = limits.POSTGRES_CALL_TIMEOUT_SECONDS
WATCHDOG_INTERVAL_SECONDS = 1.0
MIN_EXTRA_BATCH_CALLS = limits.POSTGRES_MIN_EXTRA_BATCH_CALLS
IDLE_WORKERS_MAX = limits.POSTGRES_IDLE_GREENLETS_MAX

_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)
_INT8, _INT4, _INT2, _BOOL, _BYTEA, _TEXT, _OID, _XID = 20, 23, 21, 16, 17, 25, 26, 28
_PLACEHOLDER = re.compile(r"%s")


def _signed(raw: bytes) -> int:
    return int.from_bytes(raw, "big", signed=True)


def _unsigned(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def _boolean(raw: bytes) -> bool:
    return raw == b"\x01"


def _text(raw: bytes) -> str:
    return raw.decode()


_DECODERS: dict[int, Callable[[bytes], Any]] = {
    _INT8: _signed, _INT4: _signed, _INT2: _signed, _OID: _unsigned, _XID: _unsigned,
    _BOOL: _boolean, _BYTEA: bytes,
}
"""Binary results by column type; anything else is text."""


def _decoder(type_oid: int) -> Callable[[bytes], Any]:
    return _DECODERS.get(type_oid, _text)


def _encode(value: Any) -> tuple[bytes | None, int]:
    """A parameter as libpq takes it: (bytes, format), bytea binary, the rest text."""
    kind = type(value)
    if kind is bytes:
        return value, 1
    if kind is int or kind is str:
        return str(value).encode(), 0
    if value is None:
        return None, 0
    if isinstance(value, bytearray | memoryview):
        return bytes(value), 1
    if isinstance(value, bool):
        return (b"t" if value else b"f"), 0
    return str(value).encode(), 0


class Outcome:
    """What one statement returned: its rows and how many it changed (the
    part of a psycopg cursor the storage uses)."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


def _outcome(result: pq.abc.PGresult) -> Outcome:
    rows: list[tuple[Any, ...]] = []
    count = result.ntuples
    if count:
        decoders = [(column, _DECODERS.get(result.ftype(column), _text)) for column in range(result.nfields)]
        get = result.get_value
        for row in range(count):
            rows.append(tuple([
                None if (raw := get(row, column)) is None else decode(raw)
                for column, decode in decoders
            ]))
    status = result.command_status or b""
    tail = status.rsplit(b" ", 1)[-1]
    return Outcome(rows, int(tail) if tail.isdigit() else count)


class StatementError(Exception):
    """A statement PostgreSQL refused: its SQLSTATE and message, and which of
    the call's statements it was."""

    def __init__(self, sqlstate: str, message: str, detail: str, statement: int) -> None:
        super().__init__(message or "statement failed")
        self.sqlstate = sqlstate
        self.detail = detail
        self.statement = statement

    @classmethod
    def of(cls, result: pq.abc.PGresult, statement: int) -> StatementError:
        def field(code: pq.DiagnosticField) -> str:
            raw = result.error_field(code)
            return raw.decode(errors="replace") if raw else ""

        return cls(field(pq.DiagnosticField.SQLSTATE), field(pq.DiagnosticField.MESSAGE_PRIMARY),
                   field(pq.DiagnosticField.MESSAGE_DETAIL), statement)


CONFLICT_SQLSTATE = "DSC01"
"""What dynastore_expect raises; also what a call gets that claims a row
another call of its batch claimed first (it would fail against it anyway)."""


class Call:
    """Statements a request (greenlet) hands the hub to run as one unit."""

    __slots__ = ("statements", "kind", "waiter", "outcomes", "error", "order", "claims")

    def __init__(self, statements: Sequence[tuple[str, Sequence[Any]]], kind: str,
                 order: Sequence[Any] | None = None, claims: dict[Any, int] | None = None) -> None:
        self.statements = statements
        self.kind = kind
        self.order = order
        """GROUPED: each statement's place in the batch's key order (None: after the ordered ones)."""
        self.claims = claims or {}
        """GROUPED: the rows whose version the call expects (order key -> the
        change's position): two calls of one batch never claim the same row."""
        self.waiter: greenlet | None = None
        self.outcomes: list[Outcome | None] = [None] * len(statements)
        self.error: BaseException | None = None


_SYNC = object()
SHARED_CHECK = 0
"""The first element of the order key of a statement every commit of a group
may share (commit.CHECK_TABLE): identical ones run once per group."""
_NO_ROWS = Outcome([], 0)


CONNECT_TIMEOUT_SECONDS = 10
"""How long opening a connection may take before the server is called unreachable."""


def connect(url: str, configure: Callable[[psycopg.Connection[Any]], None]) -> psycopg.Connection[Any]:
    """A new connection, configured (blocking: ``Hub`` calls it off the loop)."""
    connection = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        configure(connection)
    except BaseException:
        connection.close()
        raise
    return connection


class PipelineConnection:
    """One connection in libpq's pipeline mode, read and written as the
    event loop finds its socket ready."""

    def __init__(
        self,
        connection: psycopg.Connection[Any],
        loop: Any,
        on_idle: Callable[[PipelineConnection], None],
        requeue: Callable[[list[Call]], None],
        main: greenlet | None = None,
    ) -> None:
        """``connection``: a new one (``connect``), which this takes over;
        ``on_idle``: nothing is in flight any more; ``requeue``: calls of a
        failed group that must go out again; ``main``: the greenlet the loop
        runs in (failed calls are resumed from it, see ``_fail``)."""
        self.connection = connection
        self.pgconn = self.connection.pgconn
        self.pgconn.enter_pipeline_mode()
        self.loop = loop
        self.main = main
        self.on_idle = on_idle
        self.requeue = requeue
        # The loop watches a duplicate of libpq's descriptor, ours to close:
        # libpq closes its own the moment it sees the connection die, and a
        # new connection may get the same number at once; a loop still
        # watching that number would then never see the new one's data.
        self.socket = os.dup(self.pgconn.socket)
        self.prepared: dict[str, bytes] = {}
        self.expected: deque[Any] = deque()
        """What each result still to come belongs to, in order: (call, index),
        a prepare, or _SYNC markers closing a segment."""
        self.segments: deque[list[Call]] = deque()
        """The calls of each segment in flight, one list per Sync."""
        self.sent_at: deque[float] = deque()
        """When each segment in flight was sent (monotonic seconds)."""
        self.broken = False
        self.writing = False
        self.sync_error: StatementError | None = None
        """An error PostgreSQL sent where the oldest segment's Sync was due (its
        COMMIT failed): that segment's calls fail once its Sync comes."""
        self.sync_error_ended = False
        loop.add_reader(self.socket, self._readable)

    @property
    def busy(self) -> bool:
        return bool(self.segments)

    # --- sending -----------------------------------------------------------------
    def _statement_name(self, sql: str) -> bytes:
        name = self.prepared.get(sql)
        if name is None:
            name = b"ds%d" % len(self.prepared)
            numbered = sql
            index = 0

            def number(_: re.Match[str]) -> str:
                nonlocal index
                index += 1
                return f"${index}"

            numbered = _PLACEHOLDER.sub(number, sql)
            self.pgconn.send_prepare(name, numbered.encode())
            self.expected.append(sql)  # the prepare's own result
            self.prepared[sql] = name
        return name

    def _send_statement(self, call: Call, index: int) -> None:
        sql, parameters = call.statements[index]
        name = self._statement_name(sql)
        encoded = [_encode(value) for value in parameters]
        self.pgconn.send_query_prepared(
            name, [value for value, _ in encoded], [form for _, form in encoded], result_format=1
        )
        self.expected.append((call, index))

    def _sync(self, calls: list[Call]) -> None:
        self.pgconn.pipeline_sync()
        self.expected.append(_SYNC)
        self.segments.append(calls)
        self.sent_at.append(time.monotonic())

    def overdue(self, now: float, limit_seconds: float) -> bool:
        """Its oldest segment has waited longer than anything should."""
        return bool(self.sent_at) and now - self.sent_at[0] > limit_seconds

    def send(self, calls: list[Call]) -> None:
        """Send one batch: the reads together in one segment (one snapshot:
        each sees every commit before it, none of the batch's own), each
        reserved call a segment of its own, the grouped calls one segment
        together (one implicit transaction). A Sync costs a write to the
        socket: a batch has at most three.

        A connection that fails while the batch is written (libpq flushes
        as its buffer fills: a connection PostgreSQL closed fails there, or
        in the flush at the end) fails every call it carried and every call
        of the batch, sent or not."""
        try:
            self._send(calls)
        except Exception as error:  # noqa: BLE001 - a half-written pipeline: the connection is done
            if not isinstance(error, psycopg.Error):
                logger.exception("sending a batch to PostgreSQL failed")
            self._fail(error, calls)
            return
        self._flush()

    def _send(self, calls: list[Call]) -> None:
        grouped: list[tuple[Any, int, Call, int]] = []
        unordered: list[tuple[Call, int]] = []
        reads = [call for call in calls if call.kind == READ]
        for call in reads:
            for index in range(len(call.statements)):
                self._send_statement(call, index)
        if reads:
            self._sync(reads)
        for call in calls:
            if call.kind == READ:
                continue
            if call.kind != GROUPED:
                for index in range(len(call.statements)):
                    self._send_statement(call, index)
                self._sync([call])
                continue
            for index in range(len(call.statements)):
                key = None if call.order is None else call.order[index]
                if key is None:
                    unordered.append((call, index))
                else:
                    grouped.append((key, len(grouped), call, index))
        if grouped or unordered:
            grouped.sort(key=lambda entry: (entry[0], entry[1]))
            shared: set[tuple[str, tuple[Any, ...]]] = set()
            for key, _, call, index in grouped:
                if key[0] == SHARED_CHECK:
                    # The same check for several commits of the group (their
                    # table's generation) runs once: in one transaction the
                    # first one holds for all of them.
                    statement = call.statements[index]
                    identity = (statement[0], tuple(statement[1]))
                    if identity in shared:
                        call.outcomes[index] = _NO_ROWS
                        continue
                    shared.add(identity)
                self._send_statement(call, index)
            for call, index in unordered:
                self._send_statement(call, index)
            self._sync([call for call in calls if call.kind == GROUPED])

    def _flush(self) -> None:
        try:
            pending = self.pgconn.flush()
        except psycopg.OperationalError as error:
            self._fail(error)
            return
        if pending and not self.writing:
            self.writing = True
            self.loop.add_writer(self.socket, self._writable)
        elif not pending and self.writing:
            self.writing = False
            self.loop.remove_writer(self.socket)

    def _writable(self) -> None:
        self._flush()

    # --- receiving -----------------------------------------------------------------
    def _readable(self) -> None:
        pgconn = self.pgconn
        try:
            pgconn.consume_input()
            while self.expected and not pgconn.is_busy():
                if not self._take(pgconn.get_result()):
                    break  # nothing more has come yet
            if pgconn.status != pq.ConnStatus.OK:
                raise psycopg.OperationalError(pgconn.get_error_message() or "connection lost")
        except psycopg.OperationalError as error:
            self._fail(error)

    def _take(self, result: pq.abc.PGresult | None) -> bool:
        """Account for one result; False when there was none to take."""
        head = self.expected[0]
        if head is _SYNC:
            return self._take_sync(result)
        if result is None:
            self.expected.popleft()  # this command's results are complete
            return True
        if result.status == pq.ExecStatus.FATAL_ERROR and _ends_connection(result):
            self._fail(psycopg.OperationalError(_message(result)))
            return False
        if isinstance(head, str):  # a prepare
            if result.status not in _OK:  # refused, or skipped after an error: prepare it again
                self.prepared.pop(head, None)
                if result.status == pq.ExecStatus.FATAL_ERROR:
                    logger.error("PostgreSQL refused a statement: %s", result.error_message)
            return True
        call, index = head
        status = result.status
        if status in _OK:
            call.outcomes[index] = _outcome(result)
        elif status == pq.ExecStatus.FATAL_ERROR and call.error is None:
            call.error = StatementError.of(result, index)
        elif status == pq.ExecStatus.PIPELINE_ABORTED and call.error is None:
            call.error = _Aborted()
        return True

    def _take_sync(self, result: pq.abc.PGresult | None) -> bool:
        """The result where the oldest segment's Sync is due. Only a
        PIPELINE_SYNC ends the segment: PostgreSQL answers the Sync once the
        segment's implicit transaction committed. An error there is the
        COMMIT's: the backend ended (a FATAL error, say
        pg_terminate_backend while the COMMIT ran) fails the connection and
        every call it carried, as the transaction rolled back; any other
        error (a commit-time serialization failure) fails the segment's calls
        when its Sync follows. Taking such an error for the Sync answered
        calls whose rows never committed (issue 22)."""
        if result is None:
            if self.sync_error is not None and not self.sync_error_ended:
                self.sync_error_ended = True  # the error's own end: its Sync follows
                return True
            return False  # no Sync yet (a connection on its way out sends none)
        status = result.status
        if status == pq.ExecStatus.PIPELINE_SYNC:
            self.expected.popleft()
            self.sent_at.popleft()
            calls = self.segments.popleft()
            failure, self.sync_error, self.sync_error_ended = self.sync_error, None, False
            if failure is not None:
                for call in calls:
                    if not isinstance(call.error, StatementError):
                        call.error = failure
            self._finish_segment(calls)
            return True
        if status == pq.ExecStatus.FATAL_ERROR and not _ends_connection(result):
            if self.sync_error is None:
                self.sync_error = StatementError.of(result, 0)
            return True
        # The backend ended, or a result no Sync can have: nothing it carried
        # is known to have committed.
        self._fail(psycopg.OperationalError(
            _message(result) if status == pq.ExecStatus.FATAL_ERROR
            else f"a {pq.ExecStatus(status).name} result where a Sync was due"))
        return False

    def _finish_segment(self, calls: list[Call]) -> None:
        """A Sync came back: wake its calls. In a failed segment of several
        calls (the commits' group, the reads) the call whose statement failed
        gets the error and the others go out again (a segment that failed
        without naming a statement fails every call)."""
        done = calls
        if len(calls) > 1 and any(call.error is not None for call in calls):
            done = [call for call in calls if isinstance(call.error, StatementError)]
            if done:
                again = [call for call in calls if not isinstance(call.error, StatementError)]
                for call in again:
                    call.error = None
                    call.outcomes = [None] * len(call.statements)
                self.requeue(again)
            else:
                done = calls
        for call in done:
            if isinstance(call.error, _Aborted):
                call.error = StorageUnavailable("a statement could not be prepared")
            _resume(call)
        if not self.segments:
            self.on_idle(self)

    def _fail(self, error: BaseException, unsent: Sequence[Call] = ()) -> None:
        """The connection broke: every call it carried (and ``unsent``, the
        calls of a batch it failed to send) fails, and it leaves the rotation.

        The calls are resumed by the loop's greenlet: this may run in a
        request greenlet (a flush or a send that failed in ``Hub.execute``),
        and a request greenlet that switched to another parked one would
        never be switched back to: it and the calls after it would hang."""
        if self.broken:
            return
        self.broken = True
        logger.warning("lost a PostgreSQL connection: %s", error)
        self.close()
        unavailable = StorageUnavailable(f"PostgreSQL connection lost: {' '.join(str(error).split())}")
        segments, self.segments = self.segments, deque()
        self.expected.clear()
        self.sent_at.clear()
        failed: list[Call] = []
        seen: set[int] = set()
        for calls in [*segments, unsent]:
            for call in calls:
                if id(call) not in seen:
                    seen.add(id(call))
                    call.error = unavailable
                    failed.append(call)
        if getcurrent() is self.main:
            _resume_all(failed)
        else:
            self.loop.call_soon(_resume_all, failed)
        self.on_idle(self)

    def fail_overdue(self) -> None:
        self._fail(TimeoutError(f"no answer from PostgreSQL in {CALL_TIMEOUT_SECONDS:g} s"))

    def close(self) -> None:
        if self.socket < 0:
            return
        try:
            self.loop.remove_reader(self.socket)
            if self.writing:
                self.loop.remove_writer(self.socket)
        except (ValueError, OSError):
            pass
        os.close(self.socket)
        self.socket = -1
        try:
            self.connection.close()
        except psycopg.Error:
            pass


def _ends_connection(result: pq.abc.PGresult) -> bool:
    """An error after which the connection is gone: a FATAL or PANIC one (the
    backend exits), a connection exception or operator intervention
    (SQLSTATE classes 08, 57), or one libpq made itself (no SQLSTATE: the
    server closed the connection)."""
    state = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
    severity = result.error_field(pq.DiagnosticField.SEVERITY_NONLOCALIZED) or b""
    return not state or state[:2] in ("08", "57") or severity in (b"FATAL", b"PANIC")


def _message(result: pq.abc.PGresult) -> str:
    return result.get_error_message() or "connection lost"


class _Aborted(Exception):
    """Skipped: an earlier statement of the same segment failed."""


def _cannot_connect(error: BaseException | None) -> StorageUnavailable:
    return StorageUnavailable(f"cannot connect to PostgreSQL: {' '.join(str(error).split())}")


def _resume_all(calls: list[Call]) -> None:
    for call in calls:
        _resume(call)


def _resume(call: Call) -> None:
    waiter, call.waiter = call.waiter, None
    if waiter is not None and not waiter.dead:
        waiter.switch()


class Hub:
    """The batching of one server: its pipelined connections, the calls
    waiting for one, and the greenlets waiting for their calls."""

    def __init__(self, url: str, loop: Any, configure: Callable[[psycopg.Connection[Any]], None],
                 connections: int = limits.POSTGRES_PIPELINE_CONNECTIONS,
                 reserved: int = limits.POSTGRES_RESERVED_CONNECTIONS) -> None:
        self.url = url
        self.loop = loop
        self.configure = configure
        self.main = getcurrent()
        """The greenlet the event loop runs in: parked requests switch back to it."""
        self.connections_max = connections
        self.idle: list[PipelineConnection] = []
        self.opened = 0
        self.pending: deque[Call] = deque()
        self.flush_scheduled = False
        self.reserved_max = reserved
        self.reserved_free: list[PipelineConnection] = []
        self.reserved_opened = 0
        self.reserve_waiters: deque[greenlet] = deque()
        self.closed = False
        self.batching: set[PipelineConnection] = set()
        """The batch connections with a batch out."""
        self.busy: set[PipelineConnection] = set()
        """Connections with calls in flight (watched: nothing waits forever)."""
        self.idle_workers: list[greenlet] = []
        """Greenlets that finished their function and wait for another (spawn)."""
        self._watchdog = loop.call_later(WATCHDOG_INTERVAL_SECONDS, self._watch)

    def _watch(self) -> None:
        """A call unanswered past CALL_TIMEOUT_SECONDS (a connection that died
        without a word, a network partition) fails its connection: its calls
        get StorageUnavailable, and the connection is replaced."""
        now = time.monotonic()
        for connection in list(self.busy):
            if connection.broken or not connection.busy:
                self.busy.discard(connection)
            elif connection.overdue(now, CALL_TIMEOUT_SECONDS):
                self.busy.discard(connection)
                connection.fail_overdue()
        if not self.closed:
            self._watchdog = self.loop.call_later(WATCHDOG_INTERVAL_SECONDS, self._watch)

    def in_request(self) -> bool:
        """True in a greenlet the hub can park (not the event loop's own)."""
        return getcurrent() is not self.main and not self.closed

    def spawn(self, function: Callable[[], Any]) -> None:
        """Run ``function`` in a greenlet of its own (a request, a background
        step): its storage calls park it instead of blocking the loop. From
        the loop it starts at once; from another greenlet, on the loop's next
        turn (a parked greenlet is resumed only by the loop).

        The greenlet is an idle worker when there is one: a new greenlet's
        first Python call maps a fresh 16 KB frame stack (CPython 3.11's data
        stack chunk) and its end unmaps it, an mmap and a munmap per request
        that reusing workers saves (measured: one pair per GetItem)."""
        workers = self.idle_workers
        runner = workers.pop() if workers else greenlet(self._work, parent=self.main)
        if getcurrent() is self.main:
            runner.switch(function)
        else:
            self.loop.call_soon(runner.switch, function)

    def _work(self, function: Callable[[], Any]) -> None:
        """A worker greenlet: runs one function, then waits idle for the next
        (an exception ends the worker and reaches the loop, as without reuse)."""
        while True:
            function()
            function = None  # type: ignore[assignment]  # nothing of a request outlives it
            if self.closed or len(self.idle_workers) >= IDLE_WORKERS_MAX:
                return
            self.idle_workers.append(getcurrent())
            function = self.main.switch()

    def sleep(self, seconds: float) -> None:
        """Park the calling greenlet for ``seconds`` (the loop runs on)."""
        current = getcurrent()
        self.loop.call_later(seconds, current.switch)
        self.main.switch()

    # --- batched calls ---------------------------------------------------------------
    def execute(self, call: Call, connection: PipelineConnection | None = None) -> list[Outcome | None]:
        """Run ``call`` (on ``connection`` when the caller reserved one); park
        until it is answered; raise its error."""
        if not call.statements:
            return []
        call.waiter = getcurrent()
        if connection is not None:
            if connection.broken:
                raise StorageUnavailable("PostgreSQL connection lost")
            connection.send([call])
            if not connection.broken:
                self.busy.add(connection)
        else:
            self.pending.append(call)
            if call.kind == GROUPED and len(self.pending) >= MIN_EXTRA_BATCH_CALLS:
                # Enough for a batch with commits: send it now if a connection
                # is free, so that PostgreSQL works on it (its writes and its
                # WAL flush) while this turn of the loop runs the other
                # requests, instead of after all of them. Reads are cheap
                # for PostgreSQL: they wait for the turn's end, in fewer,
                # larger batches.
                self._flush()
            self._schedule_flush()
        self.main.switch()
        if call.error is not None:
            raise call.error
        return call.outcomes

    def _schedule_flush(self) -> None:
        if not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.flush_scheduled = False
        while self.pending:
            if self.batching and len(self.pending) < MIN_EXTRA_BATCH_CALLS:
                # A batch is out already: these few wait for it and go with
                # the calls that come meanwhile (a batch costs two system
                # calls whatever its size; a second small one buys little).
                return
            connection = self._idle_connection()
            if connection is None:
                return  # all busy: the next one to finish flushes again
            batch = self._batch()
            if batch:
                connection.send(batch)
                if not connection.broken:  # else its calls failed, and it was returned
                    self.busy.add(connection)
                    self.batching.add(connection)
            else:
                self._returned(connection)

    def _batch(self) -> list[Call]:
        """The next calls to send together. A commit that expects a row
        another commit of the batch claimed first loses at once: that one
        changes the row, so this one's expectation is stale (it reads again
        and retries; a group that failed on it would cost everyone a trip)."""
        batch: list[Call] = []
        claimed: set[Any] = set()
        lost: list[Call] = []
        pending = self.pending
        while pending and len(batch) < MAX_CALLS_PER_BATCH:
            call = pending.popleft()
            if call.claims:
                overlap = claimed.intersection(call.claims)
                if overlap:
                    position = call.claims[min(overlap)]
                    call.error = StatementError(CONFLICT_SQLSTATE, "claimed by another write of the batch",
                                                str(position), 0)
                    lost.append(call)
                    continue
                claimed.update(call.claims)
            batch.append(call)
        if lost:
            self.loop.call_soon(_resume_all, lost)
        return batch

    def _idle_connection(self) -> PipelineConnection | None:
        while self.idle:
            connection = self.idle.pop()
            if not connection.broken:
                return connection
            # (counted out already: a connection that breaks is returned)
        if self.opened < self.connections_max:
            # Opened off the loop: a PostgreSQL that does not answer would
            # hold the loop (every request, the health check) for the
            # connect timeout. The calls wait for it parked, as for a
            # busy connection.
            self.opened += 1
            self._in_thread(lambda: connect(self.url, self.configure), self._opened)
        return None

    def _opened(self, connection: psycopg.Connection[Any] | None, error: BaseException | None) -> None:
        """A batch connection opened (or could not be): into the rotation."""
        if connection is None:
            self.opened -= 1
            self._fail_pending(_cannot_connect(error))
            return
        if self.closed:
            connection.close()
            return
        try:
            adopted = self._adopt(connection, self._returned)
        except (psycopg.Error, OSError) as failure:
            connection.close()
            self.opened -= 1
            self._fail_pending(_cannot_connect(failure))
            return
        self._returned(adopted)

    def _adopt(self, connection: psycopg.Connection[Any],
               on_idle: Callable[[PipelineConnection], None]) -> PipelineConnection:
        return PipelineConnection(connection, self.loop, on_idle, self._requeue, self.main)

    def _in_thread(self, function: Callable[[], Any],
                   then: Callable[[Any, BaseException | None], None]) -> None:
        """Run the blocking ``function`` on a thread of its own; then, on
        the loop, ``then(result, None)`` or ``then(None, error)``."""
        def run() -> None:
            result: Any = None
            failure: BaseException | None = None
            try:
                result = function()
            except Exception as error:  # noqa: BLE001 - handed to ``then`` on the loop
                failure = error
            try:
                self.loop.call_soon_threadsafe(then, result, failure)
            except RuntimeError:  # the loop is closed: the server stopped
                if isinstance(result, psycopg.Connection):
                    result.close()

        threading.Thread(target=run, name="dynastore-postgres-connect", daemon=True).start()

    def blocking(self, function: Callable[[], Any]) -> Any:
        """``function()``, which blocks (a connect, a query on a connection
        of its own): from a request greenlet on a thread while the greenlet
        is parked and the loop runs on; elsewhere right here."""
        if not self.in_request():
            return function()
        current = getcurrent()
        outcome: list[tuple[Any, BaseException | None]] = []

        def done(result: Any, error: BaseException | None) -> None:
            outcome.append((result, error))
            if not current.dead:
                current.switch()

        self._in_thread(function, done)
        while not outcome:
            self.main.switch()
        result, error = outcome[0]
        if error is not None:
            raise error
        return result

    def _requeue(self, calls: list[Call]) -> None:
        """Calls of a group that failed for another call: first in line again."""
        if calls:
            self.pending.extendleft(reversed(calls))
            self._schedule_flush()

    def _returned(self, connection: PipelineConnection) -> None:
        self.batching.discard(connection)
        if connection.broken:
            self.opened -= 1
            if connection in self.idle:
                self.idle.remove(connection)
        elif connection not in self.idle:
            self.idle.append(connection)
        if self.pending:
            self._schedule_flush()

    def _fail_pending(self, error: BaseException) -> None:
        """Fail the calls waiting for a connection (resumed by the loop's
        greenlet: see PipelineConnection._fail)."""
        pending, self.pending = list(self.pending), deque()
        for call in pending:
            call.error = error
        if getcurrent() is self.main:
            _resume_all(pending)
        else:
            self.loop.call_soon(_resume_all, pending)

    # --- reserved connections (transactions over several calls) ----------------------
    def reserve(self) -> PipelineConnection:
        """A connection for the calling greenlet alone until ``release``."""
        while True:
            while self.reserved_free:
                connection = self.reserved_free.pop()
                if not connection.broken:
                    return connection
                self.reserved_opened -= 1
            if self.reserved_opened < self.reserved_max:
                self.reserved_opened += 1  # counted while it opens (parked, off the loop)
                try:
                    opened = self.blocking(lambda: connect(self.url, self.configure))
                except psycopg.Error as error:
                    self.reserved_opened -= 1
                    raise _cannot_connect(error) from error
                except BaseException:
                    self.reserved_opened -= 1
                    raise
                if self.closed:
                    opened.close()
                    self.reserved_opened -= 1
                    raise StorageUnavailable("the server is stopping")
                return self._adopt(opened, lambda _: None)
            self.reserve_waiters.append(getcurrent())
            self.main.switch()

    def release(self, connection: PipelineConnection,
                trailing: Sequence[tuple[str, Sequence[Any]]] | None = None) -> None:
        """Give a reserved connection back; ``trailing`` statements (a read
        snapshot's COMMIT) go out on it first, their results not waited for."""
        if trailing and not connection.broken:
            connection.send([Call(trailing, ALONE)])
        if connection.broken:
            self.reserved_opened -= 1
        else:
            self.reserved_free.append(connection)
        if self.reserve_waiters:
            waiter = self.reserve_waiters.popleft()
            self.loop.call_soon(waiter.switch)

    def close(self) -> None:
        self.closed = True
        self._watchdog.cancel()
        self._fail_pending(StorageUnavailable("the server is stopping"))
        for connection in [*self.idle, *self.reserved_free]:
            connection.close()
        self.idle, self.reserved_free = [], []
        self.idle_workers = []
