"""Switching the model on and off, and its admin routes, as plain
functions for the protocol layer: ``handle_admin_metrics(database, method,
path, body) -> (status, answer)`` for ``GET /_dynastore/metrics`` and
``POST /_dynastore/throughput``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.throughput.model import ENFORCE, MODES, OBSERVE, OFF, Throughput

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_METRICS_PATH = "/_dynastore/metrics"
ADMIN_THROUGHPUT_PATH = "/_dynastore/throughput"
ADMIN_THROUGHPUT_PATHS = (ADMIN_METRICS_PATH, ADMIN_THROUGHPUT_PATH)


def enable(database: Database, mode: str = ENFORCE) -> Throughput:
    """Turn the model on for ``database`` (``mode`` ENFORCE or OBSERVE)."""
    meter: Throughput | None = database.throughput
    if meter is None:
        meter = Throughput(database, mode)
        database.throughput = meter
    else:
        meter.mode = mode
    return meter


def disable(database: Database) -> None:
    database.throughput = None


Answer = tuple[int, dict[str, Any]]


def handle_admin_metrics(database: Database, method: str, path: str, body: bytes | None) -> Answer:
    """``GET /_dynastore/metrics`` -> the figures (``{"Mode": "off"}`` when off);
    ``POST /_dynastore/throughput`` ``{"Mode": "enforce"|"observe"|"off"[, "TableName": t]}``
    switches the model server-wide, or for one table."""
    route = path.split("?", 1)[0].rstrip("/")
    if route == ADMIN_METRICS_PATH:
        if method != "GET":
            return 405, {"message": "Method not allowed"}
        meter = database.throughput
        answer = meter.metrics() if meter is not None else {"Mode": OFF, "Tables": {}}
        if database.replication is not None:  # global tables: what each replica here received
            from dynastore.replication.replicator import replication_metrics

            answer["Replication"] = replication_metrics(database)
        return 200, answer
    if route != ADMIN_THROUGHPUT_PATH:
        return 404, {"message": "Not found"}
    if method == "GET":
        meter = database.throughput
        return 200, {"Mode": meter.mode if meter else OFF, "TableModes": dict(meter.table_modes) if meter else {}}
    if method != "POST":
        return 405, {"message": "Method not allowed"}
    try:
        spec = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return 400, {"message": "The body is not JSON"}
    mode = spec.get("Mode") if isinstance(spec, dict) else None
    if mode not in MODES:
        return 400, {"message": f"Mode must be one of {', '.join(MODES)}"}
    table_name = spec.get("TableName")
    if table_name is None:
        if mode == OFF:
            disable(database)
        else:
            enable(database, mode)
    else:
        meter = database.throughput or enable(database, OBSERVE)
        meter.table_modes[str(table_name)] = mode
    meter = database.throughput
    return 200, {"Mode": meter.mode if meter else OFF, "TableModes": dict(meter.table_modes) if meter else {}}
