"""The one runner of the background jobs of backups, restores, exports and
imports: schedule, step, resume.

A job is a record in the store (a backup CREATING, a restore, export or
import IN_PROGRESS) whose work goes a page per step, each step moving the
record on in the same transaction as its page, so after a kill -9 the job
resumes where it stopped. What differs between the kinds of jobs is said by
a ``JobKind``: how to find the unfinished records (``unfinished``, at
resume), how to load one (``load``: None once it is finished or gone) and
how to do one step of it (``advance``). The runner does the rest, the same
for every kind:

- which jobs of a namespace this process knows are unfinished (``add``, and
  ``resume``: at a server's start, on the first call of a process, and
  every few seconds on a shared store, to take over a dead server's);
- one step of one job at a time (``step``), where the job's lock
  (``<kind>-job/<id>``) is held: on a store several servers share, a job
  runs on one of them, another takes it over if that one dies;
- on a server, the steps run on the event loop between requests (or in a
  greenlet of their own on a shared store: ``Database.run_in_background``),
  one page at a time, so a large job never blocks requests for longer than
  a page; a step that finds the store away is retried after
  JOB_RETRY_SECONDS; without a running loop (the embedded database, a
  command over a data directory) the jobs run to the end before the call
  that started them answers (``run_to_end``);
- with ``attempts``, a step that fails that many times in a row (a bug, not
  the store being away) ends its job through the kind's ``give_up``, rather
  than being retried forever.

Where the steps run (``run_steps``) and ``Upkeep``, the part of a server
that calls ``resume`` (and whatever else a kind of job needs now and then:
cleanups, pruning) on a timer, are the same for every background job of the
server: dynastore/workers/jobs.py.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynastore.storage.errors import StorageUnavailable
from dynastore.workers.jobs import JOB_RETRY_SECONDS, Upkeep, background_loop, run_steps

if TYPE_CHECKING:
    from dynastore.database import Database



@dataclass(frozen=True)
class JobKind:
    """What the runner needs to know of one kind of job."""

    name: str
    """``backup``, ``restore``, ``export``, ``import``: the job's lock is
    ``<name>-job/<id>`` in the namespace."""
    unfinished: Callable[[Database], Iterable[str]]
    """The ids of the jobs of this kind the store holds unfinished."""
    load: Callable[[Database, str], Any]
    """The job's record if it is still to be run, else None (finished,
    failed, gone: the runner forgets it)."""
    advance: Callable[[Database, Any], bool]
    """One step of the job; whether it is still unfinished after it."""
    give_up: Callable[[Database, Any, Exception], object] | None = None
    """With the runner's ``attempts``: ends the job (FAILED, with the error)
    after that many failed steps in a row."""


@dataclass
class _Pending:
    """The jobs of one namespace this process knows are unfinished."""

    jobs: dict[str, set[str]] = field(default_factory=dict)
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    scheduled: bool = False
    resumed: bool = False

    def any(self) -> bool:
        return any(self.jobs.values())


class JobRunner:
    """The jobs of ``kinds`` (stepped in that order) of every namespace."""

    def __init__(self, label: str, kinds: Sequence[JobKind], logger: logging.Logger,
                 step_delay_seconds: Callable[[], float] = lambda: 0.0, attempts: int | None = None) -> None:
        self.label = label
        self.kinds = {kind.name: kind for kind in kinds}
        self.logger = logger
        self.step_delay_seconds = step_delay_seconds
        self.attempts = attempts
        self._pending: weakref.WeakKeyDictionary[Any, _Pending] = weakref.WeakKeyDictionary()
        """Keyed by the Database itself: a collected one's id() can be a new one's."""

    def pending(self, database: Database) -> _Pending:
        found = self._pending.get(database)
        if found is None:
            found = self._pending[database] = _Pending(jobs={name: set() for name in self.kinds})
        return found

    # --- one step --------------------------------------------------------------------------

    def step(self, database: Database) -> bool | None:
        """One step of one unfinished job: True while work remains, False when
        none does, None when the next step must wait (the job is another
        server's, or its step failed and is to be tried again)."""
        pending = self.pending(database)
        for kind in self.kinds.values():
            ids = pending.jobs[kind.name]
            for job_id in sorted(ids):
                # Loaded before the lock (a job another server finished is
                # forgotten without waiting for its lock) and again once it
                # is held (what that server did meanwhile).
                if kind.load(database, job_id) is None:
                    ids.discard(job_id)
                    continue
                if not database.storage.hold_lock(database.storage_name(f"{kind.name}-job/{job_id}")):
                    return None
                record = kind.load(database, job_id)
                if record is None:
                    ids.discard(job_id)
                    continue
                unfinished = self._advance(database, kind, job_id, record)
                if unfinished is None:
                    return None
                if not unfinished:
                    ids.discard(job_id)
                return pending.any()
        return False

    def _advance(self, database: Database, kind: JobKind, job_id: str, record: Any) -> bool | None:
        if self.attempts is None or kind.give_up is None:
            return kind.advance(database, record)
        failures = self.pending(database).failures
        try:
            unfinished = kind.advance(database, record)
        except StorageUnavailable:
            raise
        except Exception as error:
            count = failures[(kind.name, job_id)] = failures.get((kind.name, job_id), 0) + 1
            self.logger.exception("%s %s: a step failed (%d of %d)", kind.name, job_id, count, self.attempts)
            if count < self.attempts:
                return None
            kind.give_up(database, record, error)
            unfinished = False
        failures.pop((kind.name, job_id), None)
        return unfinished

    # --- which jobs ------------------------------------------------------------------------

    def resume(self, database: Database) -> None:
        """Find the unfinished jobs the store holds (after a restart, or
        another server's) and run them."""
        pending = self.pending(database)
        pending.resumed = True
        for kind in self.kinds.values():
            pending.jobs[kind.name].update(kind.unfinished(database))
        if pending.any():
            self.kick(database)

    def ensure_resumed(self, database: Database) -> None:
        """Resume once per process (the jobs' operations call this first)."""
        if not self.pending(database).resumed:
            self.resume(database)

    def add(self, database: Database, kind: str, job_id: str) -> None:
        """A job just recorded: run it."""
        self.pending(database).jobs[kind].add(job_id)
        self.kick(database)

    # --- running ---------------------------------------------------------------------------

    def kick(self, database: Database) -> None:
        """Run the unfinished jobs: in the server's background, else right now."""
        loop = background_loop(database)
        if loop is None:
            self.run_to_end(database)
            return
        pending = self.pending(database)
        if pending.scheduled:
            return
        pending.scheduled = True

        def done() -> None:
            pending.scheduled = False

        run_steps(database, loop, lambda: self.step(database), self.label, self.logger,
                  self.step_delay_seconds, done)

    def run_to_end(self, database: Database) -> None:
        """Every unfinished job of the namespace, to its end (no loop: the
        embedded database, a command). A step to retry is retried at once,
        ``attempts`` times at most (once without)."""
        retries = 0
        while True:
            more = self.step(database)
            if more is False or (more is None and retries >= (self.attempts or 1)):
                return
            retries = retries + 1 if more is None else 0


__all__ = ["JOB_RETRY_SECONDS", "JobKind", "JobRunner", "Upkeep"]
