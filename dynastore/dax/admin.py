"""The DAX endpoint's admin route and metrics (docs/admin.md, docs/dax.md).

``GET /_dynastore/dax``: the endpoint's URL, its caches' figures (entries,
bytes, hits, misses, evictions, expirations) and request counts;
``POST /_dynastore/dax/flush``: empty both caches (or ``{"Cache": "item"}``
/ ``"query"``). ``GET /_dynastore/metrics`` carries the same figures under
``"Dax"`` and its Prometheus form the ``dynastore_dax_*`` samples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from dynastore.dax import service_of

if TYPE_CHECKING:
    from dynastore.database import Database

ADMIN_DAX_PATH = "/_dynastore/dax"
NO_ENDPOINT = {"message": "No DAX endpoint: start the server with --dax-port PORT (docs/dax.md)"}


def handle_admin_dax(database: Database, method: str, path: str, body: bytes | None) -> tuple[int, Any]:
    service = service_of(database)
    route = path.rstrip("/")
    if route not in (ADMIN_DAX_PATH, ADMIN_DAX_PATH + "/flush"):
        return 404, {"message": "Not found"}
    if service is None:
        return 404, NO_ENDPOINT
    if route == ADMIN_DAX_PATH:
        if method != "GET":
            return 405, {"message": "Method not allowed"}
        return 200, {"Url": service.url, **service.statistics()}
    if method != "POST":
        return 405, {"message": "Method not allowed"}
    try:
        spec = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return 400, {"message": "The body is not JSON"}
    which = spec.get("Cache") if isinstance(spec, dict) else None
    if which not in (None, "item", "query"):
        return 400, {"message": "Cache must be item or query"}
    flushed = {}
    if which in (None, "item"):
        flushed["item"] = service.item_cache.flush()
    if which in (None, "query"):
        flushed["query"] = service.query_cache.flush()
    return 200, {"Flushed": flushed}


def with_dax_metrics(database: Database, answer: Any) -> Any:
    """``/_dynastore/metrics``' answer, with the DAX figures when DAX runs."""
    service = service_of(database)
    if service is None or not isinstance(answer, dict):
        return answer
    return {**answer, "Dax": service.statistics()}


def dax_prometheus(database: Database) -> bytes:
    """The DAX figures as Prometheus samples (empty when DAX is off)."""
    service = service_of(database)
    if service is None:
        return b""
    lines = [
        "# TYPE dynastore_dax_cache_hits_total counter",
        "# TYPE dynastore_dax_cache_misses_total counter",
        "# TYPE dynastore_dax_cache_evictions_total counter",
        "# TYPE dynastore_dax_cache_expirations_total counter",
        "# TYPE dynastore_dax_cache_entries gauge",
        "# TYPE dynastore_dax_cache_size_bytes gauge",
        "# TYPE dynastore_dax_requests_total counter",
        "# TYPE dynastore_dax_connections gauge",
        "# TYPE dynastore_dax_malformed_frames_total counter",
    ]
    for cache in (service.item_cache, service.query_cache):
        label = f'{{cache="{cache.name}"}}'
        lines += [
            f"dynastore_dax_cache_hits_total{label} {cache.hits}",
            f"dynastore_dax_cache_misses_total{label} {cache.misses}",
            f"dynastore_dax_cache_evictions_total{label} {cache.evictions}",
            f"dynastore_dax_cache_expirations_total{label} {cache.expirations}",
            f"dynastore_dax_cache_entries{label} {len(cache)}",
            f"dynastore_dax_cache_size_bytes{label} {cache.size_bytes}",
        ]
    for method, count in sorted(service.request_counts().items()):
        lines.append(f'dynastore_dax_requests_total{{method="{method}"}} {count}')
    lines.append(f"dynastore_dax_connections {service.connections}")
    lines.append(f"dynastore_dax_malformed_frames_total {service.malformed_frames}")
    return ("\n".join(lines) + "\n").encode()
