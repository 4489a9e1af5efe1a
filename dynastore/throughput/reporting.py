"""The model's figures as ``GET /_dynastore/metrics`` answers them: per
table, index and partition; top keys and Contributor Insights' rules;
hints when the counters show a known anti-pattern (a hot key, a date key,
a low-cardinality GSI key)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.engine import throughput as rules
from dynastore.engine import top_keys
from dynastore.engine.contributor_insights import settings as insights_settings
from dynastore.engine.schema import IndexDefinition, TableSchema
from dynastore.throughput.state import IndexResource, KeyStats, Partition, TableState

if TYPE_CHECKING:
    from dynastore.throughput.model import Throughput

TOP_KEYS = limits.THROUGHPUT_TOP_KEYS


def metrics(meter: Throughput) -> dict[str, Any]:
    """The answer of ``GET /_dynastore/metrics`` while the model is on."""
    now = meter.database.now()
    tables = {}
    for name, state in meter.tables.items():
        if name not in meter.database.tables:
            continue
        tables[name] = table_metrics(meter, state, now)
    return {
        "Mode": meter.mode,
        "TableModes": dict(meter.table_modes),
        "ControlPlaneThrottledRequests": meter.control_throttled,
        "Operations": {name: stats.report() for name, stats in sorted(meter.operations.items())},
        "Tables": tables,
    }


def table_metrics(meter: Throughput, state: TableState, now: float) -> dict[str, Any]:
    ranked = sorted(state.keys.values(), key=lambda s: s.read_units + s.write_units, reverse=True)
    throttled = sorted((s for s in state.keys.values() if s.throttled), key=lambda s: s.throttled, reverse=True)
    return {
        "BillingMode": state.schema.billing_mode,
        "Enforced": meter.enforced(state.schema.name),
        "PartitionCount": state.partition_count,
        **state.table.report(now),
        "ThrottlesByReason": dict(state.throttles),
        "Indexes": {name: index_report(resource, now) for name, resource in state.indexes.items()},
        "Partitions": partitions_report(state.partitions, state.partition_count, now),
        "TopKeys": [key_report(stats) for stats in ranked[:TOP_KEYS]],
        "TopThrottledKeys": [key_report(stats) for stats in throttled[:TOP_KEYS]],
        "Hints": hot_key_hints(state, ranked) + gsi_key_hints(state, now),
        "ContributorInsights": contributor_insights_report(
            state, meter.database.tables.get(state.schema.name, state.schema), now
        ),
    }



def partitions_report(partitions: dict[int, Partition], count: int, now: float) -> list[dict[str, Any]]:
    """The partitions that saw traffic, with their hash ranges."""
    width = rules.HASH_SPACE // count
    return [
        {"Partition": number, "HashRange": [number * width, (number + 1) * width - 1], **partition.report(now)}
        for number, partition in sorted(partitions.items())
    ]


def index_report(resource: IndexResource, now: float) -> dict[str, Any]:
    return {
        **resource.report(now),
        "PartitionCount": resource.partition_count,
        "Partitions": partitions_report(resource.partitions, resource.partition_count, now),
    }


WINDOW_LABELS = {minutes: f"{minutes}m" for minutes in top_keys.REPORT_WINDOWS}
RULE_VALUE = {
    top_keys.ACCESSED_PARTITION: "ConsumedUnits",
    top_keys.ACCESSED_ITEM: "ConsumedUnits",
    top_keys.THROTTLED_PARTITION: "ThrottleEvents",
    top_keys.THROTTLED_ITEM: "ThrottleEvents",
}


def dynamodb_rules(schema: TableSchema, index: IndexDefinition | None) -> list[str]:
    """The rules DynamoDB would publish for the table (or a GSI) now: none
    unless Contributor Insights is ENABLED for it, only PKT/SKT in
    THROTTLED_KEYS mode, SKC/SKT only with a sort key. LSIs have none."""
    if index is not None and not index.is_global:
        return []
    setting = insights_settings(schema).get(index.name if index is not None else "")
    if setting is None or setting.get("status") != "ENABLED":
        return []
    has_sort_key = bool(index.sort_keys) if index is not None else schema.sort_key is not None
    kinds = [top_keys.ACCESSED_PARTITION, top_keys.THROTTLED_PARTITION]
    if has_sort_key:
        kinds += [top_keys.ACCESSED_ITEM, top_keys.THROTTLED_ITEM]
    if setting.get("mode") == "THROTTLED_KEYS":
        kinds = [kind for kind in kinds if kind.endswith("T")]
    return kinds


def target_report(
    schema: TableSchema, index: IndexDefinition | None, insights: top_keys.KeyInsights | None, now: float
) -> dict[str, Any]:
    """The top keys of the table or one index: every rule, every window."""
    has_sort_key = bool(index.sort_keys) if index is not None else schema.sort_key is not None
    setting = insights_settings(schema).get(index.name if index is not None else "") or {}
    figures = insights.report(now, TOP_KEYS) if insights is not None else {}
    kinds = [top_keys.ACCESSED_PARTITION, top_keys.THROTTLED_PARTITION]
    if has_sort_key:
        kinds += [top_keys.ACCESSED_ITEM, top_keys.THROTTLED_ITEM]
    rules_report = {
        kind: {
            WINDOW_LABELS[window]: [
                {"Key": label, RULE_VALUE[kind]: value} for label, value in figures.get(kind, {}).get(window, [])
            ]
            for window in top_keys.REPORT_WINDOWS
        }
        for kind in kinds
    }
    answer: dict[str, Any] = {}
    if index is not None:
        answer["IndexType"] = "GSI" if index.is_global else "LSI"
    answer.update({
        "ContributorInsightsStatus": setting.get("status", "DISABLED"),
        "ContributorInsightsMode": setting.get("mode") if setting.get("status") == "ENABLED" else None,
        "DynamoDBRules": dynamodb_rules(schema, index),
        "Rules": rules_report,
    })
    return answer


def contributor_insights_report(state: TableState, schema: TableSchema, now: float) -> dict[str, Any]:
    """Top keys per table and per index (GSI and LSI), per rule and window;
    the settings as the table has them now (``schema``)."""
    return {
        "Windows": list(WINDOW_LABELS.values()),
        "Table": target_report(schema, None, state.insights.get(""), now),
        "Indexes": {index.name: target_report(schema, index, state.insights.get(index.name), now)
                    for index in schema.indexes},
    }


DATE_LIKE = re.compile(r"^\d{4}-?\d{2}-?\d{2}([T ]\d{2}.*)?$")
"""A partition-key value that is a date (or a timestamp): every write of a day lands on one key."""
HOT_KEY_SHARE = 0.5
"""One key taking at least this share of a table's units is a hot key."""
HOT_KEY_MIN_UNITS = 100.0
"""...once the table has consumed enough for the share to mean something."""


def hot_key_hints(state: TableState, ranked: list[KeyStats]) -> list[str]:
    """The source documents' anti-patterns, when the counters show them."""
    hints: list[str] = []
    total = state.table.read_units + state.table.write_units
    if ranked and total >= HOT_KEY_MIN_UNITS:
        top = ranked[0]
        share = (top.read_units + top.write_units) / total
        if share >= HOT_KEY_SHARE:
            hints.append(
                f"One partition key takes {share:.0%} of this table's capacity "
                f"({orjson.dumps(top.key).decode()}): a counter or singleton item? Cache its reads, "
                "or shard its writes over random or calculated suffixes."
            )
    dates = [stats for stats in ranked[:TOP_KEYS] if _looks_like_date(stats.key)]
    if dates:
        hints.append(
            f"Partition key {orjson.dumps(dates[0].key).decode()} looks like a date: all of a day's "
            "traffic goes to one partition. Add a suffix, or use a key with many distinct values."
        )
    if any(stats.throttled for stats in ranked) or state.throttles.get(
        rules.throttling_reason("Table", "Write", rules.KEY_RANGE_EXCEEDED)
    ):
        hints.append(
            "Requests were throttled by partition limits (3,000 RCU / 1,000 WCU per partition) "
            "while the table may be under its own limit: spread the traffic over more keys."
        )
    return hints


GSI_KEY_RANGE_REASONS = tuple(
    rules.throttling_reason("Index", operation, rules.KEY_RANGE_EXCEEDED) for operation in ("Write", "Read")
)


def gsi_key_hints(state: TableState, now: float) -> list[str]:
    """A GSI partition key that was throttled (the source documents' low-
    cardinality GSI key: a status, a type, a date), named from the GSI's
    most throttled keys of the last hour."""
    if not any(state.throttles.get(reason) for reason in GSI_KEY_RANGE_REASONS):
        return []
    hints = []
    longest = max(top_keys.REPORT_WINDOWS)
    for name in state.indexes:
        insights = state.insights.get(name)
        ranked = insights.rules[top_keys.THROTTLED_PARTITION].top(longest, now, 1) if insights else []
        if ranked:
            key = orjson.dumps(ranked[0][0]).decode()
            hints.append(
                f"GSI {name}: its partition key {key} is hot -- its GSI partition (1,000 WCU / 3,000 RCU "
                "per second) throttled requests, and GSI writes hold back the table's writes. A GSI key "
                "with few distinct values (a status, a type, a date)? Add a suffix, or choose a key "
                "with many values."
            )
    return hints


def _looks_like_date(key: dict[str, Any]) -> bool:
    for value in key.values():
        text = value.get("S") if isinstance(value, dict) else None
        if isinstance(text, str) and DATE_LIKE.match(text):
            return True
    return False


def key_report(stats: KeyStats) -> dict[str, Any]:
    return {
        "Key": stats.key,
        "ReadUnits": stats.read_units,
        "WriteUnits": stats.write_units,
        "ThrottledRequests": stats.throttled,
    }
