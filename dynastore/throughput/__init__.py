"""The throughput model of one Database: capacity accounting on every
request, per-table/per-index/per-partition counters, and (opt-in) throttling
as DynamoDB does it. Off by default: ``database.throughput`` is None and
``ops.dispatch`` pays one attribute check. ``dynastore serve --throughput
enforce`` (or the admin endpoint, per table) turns it on (docs/throughput.md).

How it sees what a request consumed without touching every operation: while
on, ``Throughput.run`` calls the handler with ReturnConsumedCapacity=INDEXES
(the operations already compute capacity by DynamoDB's rules), charges the
reported units to the buckets, and gives the client the ConsumedCapacity it
asked for (or none). Before the handler runs, the request is refused when a
bucket it needs is empty -- DynamoDB refuses before it writes. Batch items
whose buckets are empty come back unprocessed instead.

Admin routes, as plain functions for the protocol layer:
``handle_admin_metrics(database, method, path, body) -> (status, answer)``
for ``GET /_dynastore/metrics`` and ``POST /_dynastore/throughput``.

The modules, from the bottom up:

- ``state``: buckets and counters of tables, GSIs and partitions; each
  table's state, kept current (limits, partition splits);
- ``targets``: what a request touches (table, partition, item and index keys);
- ``refusals``: why a request may not run now, and DynamoDB's error for it;
- ``consumed_capacity``: the ConsumedCapacity the client asked for;
- ``model``: ``Throughput``, which runs requests under the model;
- ``reporting``: the figures of ``GET /_dynastore/metrics`` and their hints;
- ``prometheus``: the same figures in Prometheus' text format;
- ``admin``: ``enable``/``disable`` and the admin routes.
"""

from __future__ import annotations

from dynastore.throughput.admin import (
    ADMIN_METRICS_PATH,
    ADMIN_THROUGHPUT_PATH,
    ADMIN_THROUGHPUT_PATHS,
    disable,
    enable,
    handle_admin_metrics,
)
from dynastore.throughput.consumed_capacity import as_asked, split_capacity
from dynastore.throughput.model import ENFORCE, MODES, OBSERVE, OFF, Throughput
from dynastore.throughput.prometheus import PROMETHEUS_CONTENT_TYPE, prometheus_metrics

__all__ = [
    "ADMIN_METRICS_PATH",
    "ADMIN_THROUGHPUT_PATH",
    "ADMIN_THROUGHPUT_PATHS",
    "ENFORCE",
    "MODES",
    "OBSERVE",
    "OFF",
    "PROMETHEUS_CONTENT_TYPE",
    "Throughput",
    "as_asked",
    "disable",
    "enable",
    "handle_admin_metrics",
    "prometheus_metrics",
    "split_capacity",
]
