"""Commits to one stream, grouped under one lock of its head row.

A commit with a ``Sequenced`` part (a write to a table with a stream) must
number its records under the stream's head row, locked from its first round
trip to its COMMIT. One commit at a time per stream held that lock across
two round trips, the engine's turn in between and a WAL flush: about 1,000
writes/s to one stream-enabled table, whatever the number of servers. Here
the commits of one server to one head that wait together go as one group:
one transaction, one lock of the head, one WAL flush, their records
numbered in the group's order (ADR 0005).

The first commit to find no group for its head leads: it sends the group's
statements, builds every member's records under the lock and commits, in
rounds, each taking whatever queued meanwhile. The others park until the
leader answers them; when its own commit is answered, the first still
waiting leads on. Two members of a group never touch the same row (a commit
that would is kept for the next round), so their statements can run in one
key order, and the group is serialisable in the order its records are
numbered. A statement refused for one member fails that member only; the
others go again in the next round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from greenlet import getcurrent, greenlet  # type: ignore[import-untyped]

from dynastore.storage.base import Commit, Row, RowChange, RowCheck
from dynastore.storage.postgres import commit as commit_sql

MAX_GROUP_COMMITS = 64
"""Commits in one group (one transaction holding the head's lock)."""

RowIdentity = tuple[int, bytes, bytes]


@dataclass(slots=True, eq=False)
class Member:
    """One commit waiting for (or in) a group."""

    commit: Commit
    statements: list[commit_sql.Statement]
    cleanup: list[commit_sql.Statement]
    waiter: greenlet
    rows: frozenset[RowIdentity]
    done: bool = False
    error: BaseException | None = None
    lead: bool = False


@dataclass(slots=True)
class _Queue:
    waiting: list[Member] = field(default_factory=list)


class HeadGroups:
    """The groups of one server: per head, the commits queued for it.

    ``run(statements)`` runs statements on the calling greenlet's reserved
    connection (raising the store's ``ResultError`` with the refused
    statement's index); ``reserve()``/``release()`` give the calling greenlet
    one and take it back; ``park()`` switches to the event loop until
    ``wake(greenlet)`` is called for it."""

    def __init__(self, run: Callable[[list[tuple[str, Any]]], list[Any]],
                 reserve: Callable[[], None], release: Callable[[], None],
                 park: Callable[[], None], wake: Callable[[greenlet], None],
                 refused: type[Exception]) -> None:
        self._run = run
        self._reserve = reserve
        self._release = release
        self._park = park
        self._wake = wake
        self._refused = refused
        self._queues: dict[RowIdentity, _Queue] = {}

    def commit(self, commit: Commit, statements: list[commit_sql.Statement],
               cleanup: list[commit_sql.Statement]) -> None:
        """Commit ``commit`` (one Sequenced part) with the others waiting for
        its head; raise what the store refused of it."""
        head = commit.sequenced[0].head
        key = (head.table_id, head.pk, head.sk)
        entries: list[RowChange | RowCheck] = [*commit.changes, *commit.checks]
        rows = frozenset((entry.table_id, entry.pk, entry.sk) for entry in entries)
        mine = Member(commit, statements, cleanup, getcurrent(), rows)
        queue = self._queues.get(key)
        if queue is None:
            self._queues[key] = queue = _Queue()
            mine.lead = True
        else:
            queue.waiting.append(mine)
            self._park()
        if not mine.done:
            assert mine.lead
            self._lead(key, queue, mine)
        if mine.error is not None:
            raise mine.error

    # --- the leader ------------------------------------------------------------------
    def _lead(self, key: RowIdentity, queue: _Queue, mine: Member) -> None:
        again: list[Member] = [mine]
        group: list[Member] = []
        try:
            self._reserve()
            while not mine.done:
                group, queue.waiting = _disjoint(again + queue.waiting)
                again = self._round(key, group)
                for member in group:
                    if member.done and member is not mine:
                        self._wake(member.waiter)
            queue.waiting = again + queue.waiting
        except BaseException as error:
            # Nothing may stay parked behind a leader that failed.
            for member in {id(member): member for member in [*group, *again, *queue.waiting]}.values():
                if not member.done and member is not mine:
                    member.done, member.error = True, error
                    self._wake(member.waiter)
            queue.waiting = []
            raise
        finally:
            self._release()
            self._hand_over(key, queue)

    def _hand_over(self, key: RowIdentity, queue: _Queue) -> None:
        if not queue.waiting:
            del self._queues[key]
            return
        successor = queue.waiting.pop(0)
        successor.lead = True
        self._wake(successor.waiter)

    def _round(self, key: RowIdentity, group: list[Member]) -> list[Member]:
        """One transaction for ``group``; the members to send again (their
        group failed for another member)."""
        head = group[0].commit.sequenced[0].head
        sent, owners = _first_trip(group)
        locks = [statement[:2] for statement in commit_sql.head_statements(head)]
        try:
            outcomes = self._run([("BEGIN", ()), *sent, *locks])
        except self._refused as error:
            self._rollback()
            index = getattr(error, "statement", -1) - 1
            culprit = owners[index] if 0 <= index < len(owners) else None
            if culprit is None:
                _fail(group, error)
                return []
            culprit.done, culprit.error = True, error
            return [member for member in group if member is not culprit]
        head_row = commit_sql.head_row(outcomes[-1].fetchone())
        built: list[tuple[str, Any]] = []
        for member in group:
            changes = member.commit.sequenced[0].build(head_row)
            head_row = _written_head(changes, key, head_row)
            built += [statement[:2] for statement in
                      commit_sql.built_changes(head, changes, member.commit.by_transaction)]
        cleanup = [statement[:2] for member in group for statement in member.cleanup]
        try:
            self._run([*built, *cleanup, ("COMMIT", ())])
        except self._refused as error:
            self._rollback()
            _fail(group, error)
            return []
        for member in group:
            member.done = True
        return []

    def _rollback(self) -> None:
        try:
            self._run([("ROLLBACK", ())])
        except Exception:  # noqa: BLE001 - a broken connection fails the next call
            pass


def _disjoint(waiting: list[Member]) -> tuple[list[Member], list[Member]]:
    """The next group (in queue order, no two touching one row, at most
    MAX_GROUP_COMMITS) and the members left for later."""
    group: list[Member] = []
    later: list[Member] = []
    touched: set[RowIdentity] = set()
    for member in waiting:
        if len(group) >= MAX_GROUP_COMMITS or not touched.isdisjoint(member.rows):
            later.append(member)
            continue
        touched |= member.rows
        group.append(member)
    return group, later


def _first_trip(group: list[Member]) -> tuple[list[tuple[str, Any]], list[Member | None]]:
    """The group's statements before the head lock, in one key order (table
    checks, then rows; the rest after, in member order), and whose each is."""
    ordered: list[tuple[Any, int, commit_sql.Statement, Member]] = []
    unordered: list[tuple[commit_sql.Statement, Member]] = []
    for member in group:
        for statement in member.statements:
            if statement.order is None:
                unordered.append((statement, member))
            else:
                ordered.append((statement.order, len(ordered), statement, member))
    ordered.sort(key=lambda entry: (entry[0], entry[1]))
    sent = [entry[2][:2] for entry in ordered] + [statement[:2] for statement, _ in unordered]
    owners: list[Member | None] = [entry[3] for entry in ordered]
    owners += [member for _, member in unordered]
    return sent, owners


def _written_head(changes: list[RowChange], key: RowIdentity, head_row: Row | None) -> Row | None:
    """The head row as the next member must see it: as this member wrote it."""
    for change in changes:
        if (change.table_id, change.pk, change.sk) == key:
            return change.row
    return head_row


def _fail(group: list[Member], error: BaseException) -> None:
    for member in group:
        member.done, member.error = True, error
