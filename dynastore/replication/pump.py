"""The server's replication pump: every ``PUMP_INTERVAL_SECONDS`` it
applies the replicated writes due in one namespace's region (between
requests, on the server's loop, as every background job runs: ADR 0000),
so a replica's stream and metrics move on even when nobody reads it, and
resumes the backfill of a replica a restart left CREATING.
Requests do not wait for it: each applies what is due first
(replicator.catch_up)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from dynastore.workers.jobs import Upkeep

if TYPE_CHECKING:
    import asyncio

    from dynastore.database import Database

logger = logging.getLogger("dynastore.replication")

PUMP_INTERVAL_SECONDS = 0.1
BACKFILL_CHECK_PASSES = 20
"""Every this many passes the pump looks for replicas still CREATING with no job."""


class ReplicationPump(Upkeep):
    """An ``Upkeep`` (workers/jobs.py) whose look is one replication pass."""

    logger = logger

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = PUMP_INTERVAL_SECONDS) -> None:
        super().__init__(database, loop, interval, repeat=True, first_delay_seconds=interval)
        self._passes = 0

    @property
    def label(self) -> str:
        return f"replication into {self.database.region}"

    def wanted(self) -> bool:
        return self.database.replication is not None

    def look(self) -> None:
        replicator = self.database.replication
        if replicator is None:
            return
        self._passes += 1
        if self._passes % BACKFILL_CHECK_PASSES == 1:  # a replica left CREATING by a restart is filled
            from dynastore.replication.backfill import resume_replica_backfills

            resume_replica_backfills(self.database)
        replicator.catch_up(self.database)
