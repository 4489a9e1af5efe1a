"""A DAX cluster endpoint over dynastore's engine (docs/dax.md).

``dynastore serve --dax-port PORT`` listens for Amazon's DAX clients (the
Python ``amazon-dax-client``, the JavaScript ``@amazon-dax-sdk/client-dax``)
beside the HTTP endpoint: their binary protocol (``wire``), cluster
discovery answering with this one node (``methods.endpoints``), DAX's item
and query caches (``cache``) in front of the same operations HTTP requests
run (``methods``), on the same engine and write path.

Modules: ``wire`` (CBOR stream, keys, numbers), ``expressions`` (DAX's
compiled expressions back to DynamoDB's text), ``items`` (attribute lists,
DAX's item shapes), ``cache`` (TTL + LRU in bytes), ``methods``, ``batch``,
``transactions`` (one function per DAX method; ``registry`` maps the
ids), ``service`` (the node's state, error answers),
``server`` (connections), ``authorization`` (authorizeConnection),
``admin`` (metrics and the flush route).
"""

from __future__ import annotations

import argparse
import os
import weakref
from typing import TYPE_CHECKING, Any

from dynastore import limits

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.dax.server import DaxServer
    from dynastore.dax.service import DaxService
    from dynastore.protocol.tls import TlsSettings

CACHE_MAX_BYTES_VARIABLE = "DYNASTORE_DAX_CACHE_MAX_BYTES"

_SERVICES: weakref.WeakKeyDictionary[Any, DaxService] = weakref.WeakKeyDictionary()
"""The DAX endpoint of each store (namespaces share their store's), for the
admin routes and the metrics."""


def service_of(database: Database) -> DaxService | None:
    """The DAX endpoint serving this database's store, if one runs."""
    return _SERVICES.get(database.storage)


def cache_max_bytes_from_environment() -> int:
    value = os.environ.get(CACHE_MAX_BYTES_VARIABLE)
    if not value:
        return limits.DAX_CACHE_MAX_BYTES
    try:
        return max(0, int(value))
    except ValueError:
        raise SystemExit(f"dynastore: ${CACHE_MAX_BYTES_VARIABLE} must be a whole number, not {value!r}") from None


DAX_PORT_VARIABLE = "DYNASTORE_DAX_PORT"


def dax_port_from(arguments: argparse.Namespace) -> int | None:
    """--dax-port, else $DYNASTORE_DAX_PORT, else None (no DAX endpoint)."""
    if getattr(arguments, "dax_port", None) is not None:
        return int(arguments.dax_port)
    value = os.environ.get(DAX_PORT_VARIABLE)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"dynastore: ${DAX_PORT_VARIABLE} must be a port number, not {value!r}") from None


def dax_url(host: str, port: int, tls: bool) -> str:
    scheme = "daxs" if tls else "dax"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


async def start_dax(database: Database, host: str, port: int, http_server: Any, tls: TlsSettings | None,
                    verifier: Any, item_ttl_ms: float | None = None,
                    query_ttl_ms: float | None = None) -> DaxServer:
    """Listen for DAX clients beside ``http_server`` (sharing its group commit)."""
    from dynastore.dax.server import DaxServer
    from dynastore.dax.service import DaxService

    service = DaxService(
        database,
        item_ttl_ms=limits.DAX_ITEM_TTL_MS_DEFAULT if item_ttl_ms is None else max(0.0, item_ttl_ms),
        query_ttl_ms=limits.DAX_QUERY_TTL_MS_DEFAULT if query_ttl_ms is None else max(0.0, query_ttl_ms),
        cache_max_bytes=cache_max_bytes_from_environment(),
    )
    server = DaxServer(
        database, host, port, service, group=getattr(http_server, "group", None),
        ssl_context=None if tls is None else tls.context, verifier=verifier,
    )
    bound_host, bound_port = await server.start()
    _SERVICES[database.storage] = service
    service.url = dax_url(bound_host, bound_port, tls is not None)
    return server
