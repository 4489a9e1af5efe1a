"""Admin endpoints for time (dynastore-specific, not part of DynamoDB's API):
the movable database clock and on-demand TTL sweeps.

Routes (JSON in, JSON out), as ``handle_admin_time(database, method, path, body)
-> (HTTP status, answer)``:

- ``GET  /_dynastore/clock`` -> 200 ``{"Now": epoch seconds, "OffsetSeconds": s}``
- ``POST /_dynastore/clock`` body ``{"advance_seconds": N}`` (N >= 0; optional
  ``"sweep": true`` also runs the TTL sweeper to completion at the new time)
  -> 200 ``{"Now", "OffsetSeconds"[, "Deleted"]}``
- ``POST /_dynastore/ttl/sweep`` body ``{}`` or ``{"max_items": N}`` (one
  bounded pass) or ``{"all": true}`` (passes until every table was walked)
  -> 200 ``{"Deleted": n}``

Anything else under these paths is 404 (unknown path) or 405 (method); a bad
body is 400 ``{"message": ...}``. The embedded API calls the same functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.clock import advance_clock, clock_offset
from dynastore.workers.ttl_sweeper import SWEEP_MAX_ITEMS, sweep, sweep_all

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_CLOCK_PATH = "/_dynastore/clock"
ADMIN_SWEEP_PATH = "/_dynastore/ttl/sweep"
ADMIN_TIME_PATHS = (ADMIN_CLOCK_PATH, ADMIN_SWEEP_PATH)
"""Path prefixes routed to ``handle_admin_time``."""

Answer = tuple[int, dict[str, Any]]


class _BadRequest(Exception):
    pass


def _body(body: bytes | dict[str, Any] | None) -> dict[str, Any]:
    if body is None or body == b"":
        return {}
    if isinstance(body, dict):
        return body
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise _BadRequest("The body must be a JSON object") from error
    if not isinstance(decoded, dict):
        raise _BadRequest("The body must be a JSON object")
    return decoded


def _number(body: dict[str, Any], name: str, default: float | None = None) -> float:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _BadRequest(f"{name} must be a number >= 0")
    return float(value)


def clock_state(database: Database) -> dict[str, Any]:
    return {"Now": database.now(), "OffsetSeconds": clock_offset(database)}


def handle_admin_time(
    database: Database, method: str, path: str, body: bytes | dict[str, Any] | None
) -> Answer:
    path = path.split("?", 1)[0].rstrip("/")
    try:
        if path == ADMIN_CLOCK_PATH:
            return _clock(database, method, _body(body) if method == "POST" else {})
        if path == ADMIN_SWEEP_PATH:
            return _sweep(database, method, _body(body) if method == "POST" else {})
    except _BadRequest as error:
        return 400, {"message": str(error)}
    return 404, {"message": "Not Found"}


def _clock(database: Database, method: str, body: dict[str, Any]) -> Answer:
    if method == "GET":
        return 200, clock_state(database)
    if method != "POST":
        return 405, {"message": "Method Not Allowed"}
    if "advance_seconds" not in body:
        raise _BadRequest("advance_seconds is required")
    advance_clock(database, _number(body, "advance_seconds"))
    answer = clock_state(database)
    if body.get("sweep"):
        answer["Deleted"] = sweep_all(database)
    return 200, answer


def _sweep(database: Database, method: str, body: dict[str, Any]) -> Answer:
    if method != "POST":
        return 405, {"message": "Method Not Allowed"}
    if body.get("all"):
        return 200, {"Deleted": sweep_all(database)}
    max_items = int(_number(body, "max_items", SWEEP_MAX_ITEMS))
    if max_items < 1:
        raise _BadRequest("max_items must be a number >= 1")
    return 200, {"Deleted": sweep(database, max_items)}
