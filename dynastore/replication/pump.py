"""The server's replication pump: every ``PUMP_INTERVAL_SECONDS`` it
applies the replicated writes due in one namespace's region (between
requests, on the server's loop, as every background job runs: ADR 0000),
so a replica's stream and metrics move on even when nobody reads it, and
resumes the backfill of a replica a restart left CREATING.
Requests do not wait for it: each applies what is due first
(replicator.catch_up)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from dynastore.storage.errors import StorageUnavailable

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.replication")

PUMP_INTERVAL_SECONDS = 0.1
BACKFILL_CHECK_PASSES = 20
"""Every this many passes the pump looks for replicas still CREATING with no job."""


class ReplicationPump:
    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = PUMP_INTERVAL_SECONDS) -> None:
        self.database = database
        self.loop = loop
        self.interval = interval
        self._handle: asyncio.TimerHandle | None = None
        self._passes = 0

    def start(self) -> ReplicationPump:
        self._handle = self.loop.call_later(self.interval, self._tick)
        return self

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        if self.database.replication is not None:
            self.database.run_in_background(self._pass)
        if self._handle is not None:
            self._handle = self.loop.call_later(self.interval, self._tick)

    def _pass(self) -> None:
        replicator = self.database.replication
        if replicator is None:
            return
        self._passes += 1
        try:
            if self._passes % BACKFILL_CHECK_PASSES == 1:  # a replica left CREATING by a restart is filled
                from dynastore.replication.backfill import resume_replica_backfills

                resume_replica_backfills(self.database)
            replicator.catch_up(self.database)
        except StorageUnavailable as error:
            logger.warning("replication into %s waits for the store: %s", self.database.region, error)
        except Exception:
            logger.exception("replication into %s failed a pass; retrying", self.database.region)
