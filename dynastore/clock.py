"""The database clock: real time plus an offset an administrator can advance.

DynamoDB's time-driven behaviour (TTL expiry, stream retention, shard
rollover, iterator expiry) is hard to test against because a test would have
to sleep for hours. dynastore reads time only through ``Database.now()``
(``Database.clock``), so moving that clock forward moves every one of these
behaviours forward together. This is dynastore-specific: DynamoDB has no
such call (docs/ttl-and-streams.md).

The clock only moves forward: a negative advance is refused, so sequence
numbers, shard ages and TTL decisions never see time run backwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dynastore.database import Database


class DatabaseClock:
    """A callable clock: ``source() + offset`` epoch seconds."""

    def __init__(self, source: Callable[[], float] = time.time, offset: float = 0.0) -> None:
        self.source = source
        self.offset = offset

    def __call__(self) -> float:
        return self.source() + self.offset

    def advance(self, seconds: float) -> float:
        """Move the clock ``seconds`` forward; returns the new time."""
        if seconds < 0:
            raise ValueError("the database clock only moves forward")
        self.offset += seconds
        return self()


def movable_clock(database: Database) -> DatabaseClock:
    """The database's clock as a DatabaseClock, wrapping a plain clock function
    the first time (so a database that never moves its clock keeps reading
    ``time.time`` directly, with no extra call on its hot paths)."""
    clock = database.clock
    if not isinstance(clock, DatabaseClock):
        clock = DatabaseClock(clock)
        database.clock = clock
    return clock


def clock_offset(database: Database) -> float:
    clock = database.clock
    return clock.offset if isinstance(clock, DatabaseClock) else 0.0


def advance_clock(database: Database, seconds: float) -> float:
    """Advance the database clock by ``seconds``; returns the new epoch time.
    On a store several servers share, every server's clock moves with it."""
    clock = movable_clock(database)
    now = clock.advance(seconds)
    database.share_clock_offset(clock.offset)
    return now
