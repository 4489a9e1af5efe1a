"""The model's figures in Prometheus' text format."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from dynastore import limits
from dynastore.engine import top_keys
from dynastore.throughput.reporting import TOP_KEYS, WINDOW_LABELS
from dynastore.throughput.state import IndexResource, Resource, TableState

if TYPE_CHECKING:
    from dynastore.database import Database

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: dict[str, str], value: float) -> str:
    inner = ",".join(f'{key}="{_label(text)}"' for key, text in labels.items())
    return f"{name}{{{inner}}} {value:g}" if inner else f"{name} {value:g}"


def _resource_samples(lines: list[str], labels: dict[str, str], resource: Resource) -> None:
    lines.append(_sample("dynastore_consumed_read_units_total", labels, resource.read_units))
    lines.append(_sample("dynastore_consumed_write_units_total", labels, resource.write_units))
    lines.append(_sample("dynastore_throttled_requests_total", labels, resource.throttled))


def prometheus_metrics(database: Database) -> bytes:
    """The figures of ``GET /_dynastore/metrics`` in Prometheus' text format
    (serve with PROMETHEUS_CONTENT_TYPE); empty while the model is off."""
    meter = database.throughput
    if meter is None:
        replication = _replication_samples(database)
        return ("\n".join(replication) + "\n").encode() if replication else b""
    lines = [
        "# TYPE dynastore_consumed_read_units_total counter",
        "# TYPE dynastore_consumed_write_units_total counter",
        "# TYPE dynastore_throttled_requests_total counter",
        "# TYPE dynastore_partitions gauge",
        "# TYPE dynastore_requests_total counter",
        "# TYPE dynastore_request_latency_seconds summary",
        "# TYPE dynastore_top_key_consumed_units gauge",
        "# TYPE dynastore_top_key_throttle_events gauge",
        _sample("dynastore_control_plane_throttled_requests_total", {}, meter.control_throttled),
    ]
    for operation, stats in sorted(meter.operations.items()):
        labels = {"operation": operation}
        lines.append(_sample("dynastore_requests_total", labels, stats.requests))
        lines.append(_sample("dynastore_throttled_operation_requests_total", labels, stats.throttled))
        lines.append(_sample("dynastore_request_latency_seconds_sum", labels, stats.seconds_total))
        lines.append(_sample("dynastore_request_latency_seconds_count", labels, stats.requests))
    for name, state in sorted(meter.tables.items()):
        if name not in database.tables:
            continue
        lines.append(_sample("dynastore_partitions", {"table": name, "index": ""}, state.partition_count))
        _resource_samples(lines, {"table": name, "index": "", "partition": ""}, state.table)
        for index_name, resource in sorted(state.indexes.items()):
            _resource_samples(lines, {"table": name, "index": index_name, "partition": ""}, resource)
        for number, partition in sorted(state.partitions.items()):
            _resource_samples(lines, {"table": name, "index": "", "partition": str(number)}, partition)
        for resource_name, resource in sorted(state.indexes.items()):
            _index_partition_samples(lines, name, resource_name, resource)
        ranked = sorted(state.keys.values(), key=lambda s: s.read_units + s.write_units, reverse=True)
        for stats in ranked[:TOP_KEYS]:
            labels = {"table": name, "key": orjson.dumps(stats.key).decode()}
            lines.append(_sample("dynastore_key_consumed_units_total", labels, stats.read_units + stats.write_units))
            lines.append(_sample("dynastore_key_throttled_requests_total", labels, stats.throttled))
        _top_key_samples(lines, name, state, database.now())
    lines.extend(_replication_samples(database))
    return ("\n".join(lines) + "\n").encode()


def _replication_samples(database: Database) -> list[str]:
    """Global tables' counters: writes applied, overwrites, discarded writes
    and replicated write units per table (dynastore/replication/)."""
    if database.replication is None:
        return []
    from dynastore.replication.replicator import replication_samples

    return replication_samples(database)


def _index_partition_samples(lines: list[str], table: str, index: str, resource: IndexResource) -> None:
    lines.append(_sample("dynastore_partitions", {"table": table, "index": index}, resource.partition_count))
    for number, partition in sorted(resource.partitions.items()):
        _resource_samples(lines, {"table": table, "index": index, "partition": str(number)}, partition)


PROMETHEUS_TOP_KEYS = limits.THROUGHPUT_PROMETHEUS_TOP_KEYS
"""Keys per rule and window in the Prometheus text: label cardinality stays bounded."""
PROMETHEUS_RULE_METRIC = {
    top_keys.ACCESSED_PARTITION: "dynastore_top_key_consumed_units",
    top_keys.ACCESSED_ITEM: "dynastore_top_key_consumed_units",
    top_keys.THROTTLED_PARTITION: "dynastore_top_key_throttle_events",
    top_keys.THROTTLED_ITEM: "dynastore_top_key_throttle_events",
}


def _top_key_samples(lines: list[str], table: str, state: TableState, now: float) -> None:
    """The top PROMETHEUS_TOP_KEYS keys of every rule and window, per table
    ("" index) and index: gauges over the window, labelled by rule and key."""
    for index_name, insights in sorted(state.insights.items()):
        for kind, windows in insights.report(now, PROMETHEUS_TOP_KEYS).items():
            for window, ranked in windows.items():
                for label, value in ranked:
                    labels = {"table": table, "index": index_name, "rule": kind, "window": WINDOW_LABELS[window],
                              "key": orjson.dumps(label).decode()}
                    lines.append(_sample(PROMETHEUS_RULE_METRIC[kind], labels, value))
