"""Every (account, region) namespace of one store, a Database each.

DynamoDB keeps each account's tables apart in each region: a table created
in us-west-2 does not exist in us-east-1, and another account cannot see it.
dynastore gives each namespace its own ``Database`` over the one storage of
the server (the names of its storage tables carry the namespace:
dynastore/engine/namespaces.py), so everything keyed by table name —
streams, the throughput model, Contributor Insights, TTL cursors, the GSI
outbox — is per namespace without a change, and ARNs carry the namespace's
region and account. What is the store's and not a namespace's is shared: the
storage, the clock (one time for every table), the armed faults.

A namespace's Database opens the first time a request names it (the
region of its SigV4 credential scope, the account of its access key) or at
start when the store already holds its tables, so TTL sweeps, stream
triggers and index backfills run for every namespace. ``--single-region``
folds every region into the default one (one namespace per account), for
setups whose tools disagree about the region, as DynamoDB Local's
``-sharedDb`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from dynastore import limits
from dynastore.engine.namespaces import (
    DEFAULT_REGION,
    REGION_PATTERN,
    Namespace,
    namespace_of_storage_name,
)

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.namespaces")

NAMESPACES_MAX = limits.NAMESPACES_MAX


class TooManyNamespaces(Exception):
    """A request names a new namespace past the bound (NAMESPACES_MAX)."""

SINGLE_REGION_VARIABLE = "DYNASTORE_SINGLE_REGION"
OPENING_WAIT_SECONDS = 0.001
"""How often a request waits for another one opening the same namespace."""


class Namespaces:
    """The Databases of one store's namespaces; ``default`` is the one of
    account 000000000000 in us-east-1 (what unsigned tools and the admin
    routes see when they name no namespace)."""

    def __init__(self, default: Database, single_region: bool = False) -> None:
        self.default = default
        self.single_region = single_region
        self._databases: dict[Namespace, Database] = {default.namespace: default}
        self._opening: set[Namespace] = set()
        self._hooks: list[Callable[[Database], object]] = []
        self._seen_regions: set[str] = {default.region}

    @classmethod
    def of(cls, database: Database) -> Namespaces:
        """The registry of ``database``'s store (made on first use, kept on
        the default namespace's Database, so every server part finds the same)."""
        registry: Namespaces | None = getattr(database, "namespaces", None)
        if registry is None:
            registry = cls(database)
            database.namespaces = registry
        return registry

    # --- looking namespaces up ---------------------------------------------------
    def get(self, account_id: str, region: str) -> Database:
        """The Database of (account, region), opened if it is new."""
        if self.single_region:
            region = DEFAULT_REGION
        database = self._databases.get(Namespace(account_id, region))
        if database is None:
            database = self._open(Namespace(account_id, region))
        return database

    def all(self) -> list[Database]:
        return list(self._databases.values())

    def regions_with_tables(self, account_id: str) -> list[str]:
        """The regions where ``account_id`` has tables, in name order."""
        self.open_stored()
        return sorted(
            namespace.region for namespace, database in self._databases.items()
            if namespace.account_id == account_id and database.tables
        )

    # --- opening them ----------------------------------------------------------------
    def on_open(self, hook: Callable[[Database], object]) -> None:
        """Run ``hook`` on every namespace's Database, now and as each opens
        (a server's background jobs, the throughput mode)."""
        self._hooks.append(hook)
        for database in self.all():
            hook(database)

    def open_stored(self) -> None:
        """Open the namespaces the store holds tables of (at start, so their
        background jobs run; and for listings, since another server may have
        made one)."""
        for record in self.default.storage.load_tables():
            namespace, _ = namespace_of_storage_name(record.name)
            if namespace not in self._databases:
                self._open(namespace)

    def _open(self, namespace: Namespace) -> Database:
        # Requests run in greenlets on a shared store: another one may be
        # opening this namespace (its storage calls parked); wait for it.
        while namespace in self._opening:
            self.default.storage.pause(OPENING_WAIT_SECONDS)
        database = self._databases.get(namespace)
        if database is not None:
            return database
        if REGION_PATTERN.fullmatch(namespace.region) is None:
            raise ValueError(f"Credential should be scoped to a valid region, not '{namespace.region}'. ")
        if len(self._databases) >= NAMESPACES_MAX:
            raise TooManyNamespaces(
                f"dynastore keeps at most {NAMESPACES_MAX} (account, region) namespaces on one store"
            )
        self._opening.add(namespace)
        try:
            database = self._new_database(namespace)
            for hook in self._hooks:
                hook(database)
            self._databases[namespace] = database
        finally:
            self._opening.discard(namespace)
        self._note_region(namespace)
        return database

    def _new_database(self, namespace: Namespace) -> Database:
        from dynastore.clock import movable_clock
        from dynastore.database import Database

        default = self.default
        clock = movable_clock(default)  # one clock for the whole store
        database = Database(
            default.storage, clock=clock, region=namespace.region,
            account_id=namespace.account_id, faults=default.faults,
        )
        database.gsi_lag_seconds = default.gsi_lag_seconds
        database.item_collection_max_bytes = default.item_collection_max_bytes
        database.background_loop = default.background_loop
        database.background_spawn = default.background_spawn
        database.namespaces = self  # every namespace finds the others (global tables' replicas)
        if database.replication is None:
            database.replication = default.replication  # one replicator a store
        return database

    def _note_region(self, namespace: Namespace) -> None:
        """Say so the first time a region is used: a "table not found" caused
        by a client in another region than the one the tables were made in
        is then easy to tell."""
        if namespace.region in self._seen_regions:
            return
        self._seen_regions.add(namespace.region)
        logger.info(
            "first request in region %s (account %s): tables are per region as on DynamoDB "
            "(--single-region folds every region into %s)",
            namespace.region, namespace.account_id, DEFAULT_REGION,
        )


