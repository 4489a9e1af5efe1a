"""``/_dynastore/replication``: the replication lag, partitions, and what
each replica received (dynastore-specific, docs/admin.md).

- ``GET`` -> 200 ``{"Now", "DefaultLagMs", "Pairs": [{"From", "To", "LagMs"}],
  "Paused": [regions], "Replicas": [{"Region", "TableName", "Applied",
  "Overwrites", "Discarded", "ReplicatedWriteUnits", "LastAppliedAt",
  "LastLagSeconds", "Pending": {source region: queued writes},
  "OldestPendingAt"}]}`` for the request's account;
- ``POST`` a JSON object with any of:
  ``{"lag_ms": N}`` (every pair without a lag of its own),
  ``{"lag_ms": N, "from": R1, "to": R2}`` (one pair, one way; ``"lag_ms": null``
  removes the pair's own lag), ``{"conflict_window_ms": N}`` (STRONG tables:
  how recent another region's write to an item must be for a write to
  conflict with it), ``{"transaction_item_spacing_ms": N}`` (how far apart a
  transaction's items reach the other regions, default 1), ``{"pause": R}`` (region R neither sends nor
  receives: a partition), ``{"resume": R}`` -> 200 and the state as GET answers
  (also at ``/_dynastore/replication/change``, the console's route).

A bad body is 400 ``{"message"}``; settings are kept in the store, so they
survive a restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.replication.regions import SUPPORTED_REGIONS
from dynastore.replication.replicas import replica_set

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_REPLICATION_PATH = "/_dynastore/replication"
ADMIN_REPLICATION_CHANGE_PATH = ADMIN_REPLICATION_PATH + "/change"


class _BadRequest(Exception):
    pass


def handle_admin_replication(database: Database, method: str, path: str, body: bytes | None) -> tuple[int, Any]:
    from dynastore.namespaces import Namespaces
    from dynastore.replication.replicator import attach_all

    path = path.rstrip("/")
    if path == ADMIN_REPLICATION_CHANGE_PATH and method == "POST":
        path = ADMIN_REPLICATION_PATH  # the console's POST (its proxy routes one method per path)
    if path != ADMIN_REPLICATION_PATH:
        return 404, {"message": "Not Found"}
    registry = Namespaces.of(database)
    replicator = attach_all(registry.default)
    replicator.load_settings(registry.default)
    if method == "POST":
        try:
            _change(database, replicator, _body(body))
        except _BadRequest as error:
            return 400, {"message": str(error)}
        replicator.save_settings(registry.default)
    elif method != "GET":
        return 405, {"message": "Method Not Allowed"}
    if not registry.default.storage.exclusive:  # another server's namespaces and global tables too
        registry.open_stored()
    for namespace in registry.all():  # what is due arrives before the figures are read
        if namespace.account_id == database.account_id:
            if not namespace.storage.exclusive:
                namespace.refresh_catalogue(check=True)
            replicator.catch_up(namespace)
    return 200, state(database, replicator)


def _body(body: bytes | None) -> dict[str, Any]:
    try:
        decoded = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError as error:
        raise _BadRequest("The body must be a JSON object") from error
    if not isinstance(decoded, dict):
        raise _BadRequest("The body must be a JSON object")
    return decoded


def _region(body: dict[str, Any], name: str) -> str:
    region = body.get(name)
    if not isinstance(region, str) or region not in SUPPORTED_REGIONS:
        raise _BadRequest(f"{name} must name a region global tables can use")
    return region


def _change(database: Database, replicator: Any, body: dict[str, Any]) -> None:
    if "lag_ms" in body:
        lag = body["lag_ms"]
        if lag is not None and (isinstance(lag, bool) or not isinstance(lag, int | float) or lag < 0):
            raise _BadRequest("lag_ms must be a number >= 0 (or null for a pair)")
        if "from" in body or "to" in body:
            pair = (_region(body, "from"), _region(body, "to"))
            if lag is None:
                replicator.pair_lag_seconds.pop(pair, None)
            else:
                replicator.pair_lag_seconds[pair] = float(lag) / 1000
        elif lag is None:
            raise _BadRequest("lag_ms must be a number >= 0")
        else:
            replicator.default_lag_seconds = float(lag) / 1000
    if "conflict_window_ms" in body:
        window = body["conflict_window_ms"]
        if isinstance(window, bool) or not isinstance(window, int | float) or window < 0:
            raise _BadRequest("conflict_window_ms must be a number >= 0")
        replicator.conflict_window_seconds = float(window) / 1000
    if "transaction_item_spacing_ms" in body:
        spacing = body["transaction_item_spacing_ms"]
        if isinstance(spacing, bool) or not isinstance(spacing, int | float) or spacing < 0:
            raise _BadRequest("transaction_item_spacing_ms must be a number >= 0")
        replicator.transaction_item_spacing_seconds = float(spacing) / 1000
    if "pause" in body:
        replicator.paused.add(_region(body, "pause"))
    if "resume" in body:
        replicator.paused.discard(_region(body, "resume"))
    replicator.settings_changed()


def state(database: Database, replicator: Any) -> dict[str, Any]:
    from dynastore.namespaces import Namespaces
    from dynastore.replication.replica_updates import region_database

    replicas = []
    for namespace in sorted(Namespaces.of(database).all(), key=lambda each: each.region):
        if namespace.account_id != database.account_id:
            continue
        for name, schema in sorted(namespace.tables.items()):
            members = replica_set(schema)
            if members is None:
                continue
            entry = {"Region": namespace.region, "TableName": name,
                     **replicator.counter(namespace, name).report(), "Pending": {}, "OldestPendingAt": None}
            for other in members.others(namespace.region):
                count, oldest = replicator.pending(region_database(namespace, other.region), namespace.region)
                entry["Pending"][other.region] = count
                if oldest is not None and (entry["OldestPendingAt"] is None or oldest < entry["OldestPendingAt"]):
                    entry["OldestPendingAt"] = oldest
            replicas.append(entry)
    return {
        "Now": database.now(),
        "DefaultLagMs": replicator.default_lag_seconds * 1000,
        "Pairs": [{"From": source, "To": target, "LagMs": seconds * 1000}
                  for (source, target), seconds in sorted(replicator.pair_lag_seconds.items())],
        "Paused": sorted(replicator.paused),
        "ConflictWindowMs": replicator.conflict_window_seconds * 1000,
        "TransactionItemSpacingMs": replicator.transaction_item_spacing_seconds * 1000,
        "Replicas": replicas,
    }
