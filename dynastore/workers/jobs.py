"""The one loop of the server's background jobs (ADR 0006).

Every background job here goes a bounded step at a time: a GSI's backfill
and a replica's backfill (``ScanJob``: a page of a table per step, from a
cursor kept in ``_dynastore/jobs``), and the backups, restores, exports and
imports (``dynastore/backups/runner.py``: a page of a job record per step).
What is the same for all of them lives here, once:

- ``run_steps``: where the steps run. On a server, on the event loop between
  requests (``Database.run_in_background``), the next one scheduled after
  each: at once (or after the job's own delay) while work remains,
  JOB_RETRY_SECONDS later when a step could not run (the store away, a step
  that failed, a job another server holds), none once the job is done.
  Without a running loop (the embedded database, unit tests, a command over
  a data directory) the caller runs the steps to the end itself.
- ``ScanJob``: a job that walks a table in scan order under the job's lock
  (``Storage.hold_lock``), reads its position again whenever it (re)takes
  the lock (another server may have done part of it), and saves its new
  position with each page; a subclass says only which table it walks, what
  applying a page does and what finishing does.
- ``Upkeep``: the part of a server that looks for jobs to run (or to take
  over from a dead server) on a timer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.storage.base import HASH_SPACE, Row
from dynastore.storage.errors import StorageUnavailable

if TYPE_CHECKING:
    from dynastore.database import Database

JOB_RETRY_SECONDS = 1.0
"""How long a server waits before the next step when a step could not run
(the store away, a step that failed, a job another server holds)."""

Position = tuple[int, bytes, bytes]


def background_loop(database: Database) -> asyncio.AbstractEventLoop | None:
    """The loop the database's background steps run on: the server's, else
    the running one, else None (run the steps to the end now)."""
    loop: asyncio.AbstractEventLoop | None = database.background_loop
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
    return loop


def run_steps(database: Database, loop: asyncio.AbstractEventLoop, step: Callable[[], bool | None],
              label: str, logger: logging.Logger, step_delay_seconds: Callable[[], float] = lambda: 0.0,
              done: Callable[[], object] = lambda: None) -> None:
    """Run ``step`` in the server's background until it answers False
    (nothing left; ``done`` is called), again after ``step_delay_seconds``
    while it answers True, and JOB_RETRY_SECONDS later when it answers None
    or fails."""

    def tick() -> None:
        try:
            more = step()
        except StorageUnavailable as error:
            logger.warning("%s waits for the store: %s", label, error)
            more = None
        except Exception:  # the catalogue changed, a bug: try again soon
            logger.exception("a step of %s failed; retrying", label)
            more = None
        if more is None:
            schedule(JOB_RETRY_SECONDS)
        elif more:
            schedule(step_delay_seconds())
        else:
            done()

    def schedule(delay: float) -> None:
        loop.call_soon_threadsafe(loop.call_later, delay, database.run_in_background, tick)

    schedule(0)


_RUNNING: dict[tuple[int, str], ScanJob] = {}
"""Scan jobs in progress, by database and job name."""


class ScanJob:
    """A job that walks one table in scan order, a batch per ``step()``,
    under the lock ``job_name`` (see the module's docstring)."""

    logger = logging.getLogger("dynastore.workers")
    batch_rows = limits.BACKFILL_BATCH_ROWS

    def __init__(self, database: Database) -> None:
        self.database = database
        self.position: Position | None = None
        self.resume = True
        """Read the stored position before the next batch (a server may have
        done part of the job before)."""
        self.done = False

    @property
    def job_name(self) -> str:
        raise NotImplementedError

    @property
    def label(self) -> str:
        """What the log calls the job."""
        return self.job_name

    # --- what a kind of job says ------------------------------------------------------------

    def before_lock(self) -> bool | None:
        """Before the lock is asked for: True to end the job now (moot), None to go on."""
        return None

    def source(self) -> int | bool:
        """With the lock held: the table id to walk, or what the step answers
        instead (True: the job ended)."""
        raise NotImplementedError

    def apply(self, rows: list[Row], position: Position | None) -> None:
        """Apply one batch, saving ``position`` (None at the end) as the job's progress."""
        raise NotImplementedError

    def advanced(self) -> None:
        """After a batch that was not the last."""

    def complete(self) -> bool:
        """After the last batch: finish the job (and ``finish()``)."""
        return self.finish()

    # --- the walk ---------------------------------------------------------------------------

    def step(self, batch_rows: int | None = None) -> bool | None:
        """Do the next batch; True once the job is finished (or moot), None
        while another server holds the job (try again later: if that server
        dies, this one takes the job over where it stopped)."""
        early = self.before_lock()
        if early is not None:
            return early
        database = self.database
        if not database.storage.hold_lock(database.storage_name(self.job_name)):
            self.resume = True
            return None
        table_id = self.source()
        if isinstance(table_id, bool):
            return table_id
        if self.resume:  # the job was (or may have been) another server's: continue its work
            self.position, self.resume = database.job_position(self.job_name), False
        size = batch_rows or self.batch_rows
        rows = list(islice(database.storage.scan(table_id, 0, HASH_SPACE, exclusive_start=self.position), size))
        more = len(rows) == size
        position = (rows[-1].pk_hash, rows[-1].pk, rows[-1].sk) if more else None
        self.apply(rows, position)
        if more:
            self.position = position
            self.advanced()
            return False
        return self.complete()

    def finish(self) -> bool:
        self.done = True
        _RUNNING.pop((id(self.database), self.job_name), None)
        return True


def running(database: Database, job_name: str) -> bool:
    """Whether this process runs the scan job ``job_name`` of ``database``."""
    return (id(database), job_name) in _RUNNING


def start(job: ScanJob) -> ScanJob:
    """Run ``job``: in the server's background (a batch at a time between
    requests, or on its request threads when it has them), else right
    away, batch after batch."""
    _RUNNING[id(job.database), job.job_name] = job
    loop = background_loop(job.database)
    if loop is None:
        while job.step() is False:  # None: another server holds the job and does it
            pass
        return job

    def step() -> bool | None:
        finished = job.step()
        return None if finished is None else not finished

    run_steps(job.database, loop, step, job.label, job.logger)
    return job


class Upkeep:
    """A server's upkeep of one namespace's jobs: ``look`` at start (or
    ``first_delay_seconds`` after it), and then every ``interval`` seconds
    (always with ``repeat``, else only on a store other servers share: to
    take over a dead server's jobs), on the ticks it is ``wanted``."""

    logger = logging.getLogger("dynastore.backups")

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop, interval: float,
                 repeat: bool = False, first_delay_seconds: float = 0.0) -> None:
        self.database = database
        self.loop = loop
        self.interval = interval
        self.repeat = repeat
        self.first_delay_seconds = first_delay_seconds
        self._handle: asyncio.TimerHandle | None = None

    @property
    def label(self) -> str:
        """What the log calls a look."""
        return type(self).__name__

    def start(self) -> Any:
        self._handle = self.loop.call_later(self.first_delay_seconds, self._tick)
        return self

    def wanted(self) -> bool:
        """Whether this tick looks (every one unless said otherwise)."""
        return True

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        if self.wanted():
            self.database.run_in_background(self._look)
        if self._handle is not None and (self.repeat or not self.database.storage.exclusive):
            self._handle = self.loop.call_later(self.interval, self._tick)

    def _look(self) -> None:
        try:
            self.look()
        except StorageUnavailable as error:
            self.logger.warning("%s waits for the store: %s", self.label, error)
        except Exception:
            self.logger.exception("%s failed", self.label)

    def look(self) -> None:
        """What a look does (resume the jobs, clean up...)."""
        raise NotImplementedError
