"""The Redis keyspace's lease on a shared store (PostgreSQL; ADR 0009 §7).

Redis is single-primary, and so is this: one server at a time owns the
Redis keyspace of a database, keeps its values in memory and serves them;
any other server started with ``--redis-port`` over the same database is a
standby until the owner's lease is freed.

- **The lease** is the session advisory lock ``redis-keyspace``, taken with
  ``Storage.hold_lock`` like the background jobs' locks (ADR 0006): granted
  to one session at a time, and dropped by PostgreSQL when the owner's
  session ends (the owner stopped, was killed -9, or lost its connection).
- **The fence** is a row of the heads table (``LEASE_PK``: database byte
  0xFF, which no Redis database has, so loading skips it). A new owner
  writes it before it loads the keyspace, and every commit of the owner's
  rows checks it still has the version this owner wrote (a ``RowCheck``:
  ``FOR SHARE`` in PostgreSQL). So an owner that lost its lock without
  knowing it cannot write after the next owner took over: its commit
  conflicts; and a commit of the old owner still in flight when the new
  one writes the fence either commits before the fence write (which waits
  for its row lock) or fails, so the new owner loads every row the old one
  committed.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from dynastore import write_path
from dynastore.storage.base import Row, RowCheck, RowKey
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

LEASE_LOCK = "redis-keyspace"
"""The advisory lock's name (``Storage.hold_lock``)."""
LEASE_PK = b"\xfflease"
"""The fence row's key in the heads table (``keyspace.STORAGE_NAME``)."""


class Lease:
    """This server's claim on the keyspace: the lock, and the fence row's version."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.lock_name = database.storage_name(LEASE_LOCK)
        self.heads_id = 0
        self.version: int | None = None
        """The fence row's version this server wrote; None: not the owner."""
        self.owner = f"{socket.gethostname()}:{os.getpid()}".encode()

    def try_lock(self) -> bool:
        """Ask for the lock. False: another server owns the keyspace."""
        return bool(self.database.storage.hold_lock(self.lock_name))

    def claim(self, heads_id: int) -> None:
        """The lock is ours: write the fence row and remember its version
        (before the keyspace is loaded: see the module docstring)."""
        self.heads_id = heads_id
        item = b"L" + self.owner
        write_path.write(
            self.database,
            [write_path.Target(heads_id, LEASE_PK, b"", None, reads_old=True)],
            lambda rows, conflicted: [Row(partition_hash(LEASE_PK), LEASE_PK, b"", item, len(item))],
            conflicts=write_path.RETRY_ALL,
        )
        self.version = self.read_version()
        if self.version is None:
            raise RuntimeError("the lease row written is not there")

    def read_version(self) -> int | None:
        """The fence row's version in the store now (None: no row)."""
        found = self.database.storage.read_for_write([RowKey(self.heads_id, LEASE_PK, b"")])[0]
        return None if found.row is None else found.version

    def still_owned(self) -> bool:
        """The fence row is still the one this server wrote."""
        return self.version is not None and self.read_version() == self.version

    def fence(self) -> list[RowCheck]:
        """The check every commit of the owner's rows carries."""
        if self.version is None or not self.heads_id:
            return []
        return [RowCheck(self.heads_id, LEASE_PK, b"", self.version)]

    def give_up(self) -> None:
        """Stop owning: forget the version and unlock (if the session still holds it)."""
        self.version = None
        try:
            self.database.storage.release_lock(self.lock_name)
        except Exception:  # the connection is gone: so is the lock
            pass
