"""Contributor Insights settings per table and index (issue 7), pure.

DynamoDB keeps, per table and per GSI, whether Contributor Insights is on and
in which mode; the rules it creates report the most accessed and most
throttled keys to CloudWatch. dynastore keeps the same settings in the
table's metadata (``extensions``) and serves the figures themselves from its
own counters at /_dynastore/metrics (TopKeys, TopThrottledKeys).
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.schema import TableSchema

EXTENSION = "contributor_insights"
TABLE_TARGET = ""
"""The settings key of the table itself (indexes use their names)."""
ACCESSED_AND_THROTTLED = "ACCESSED_AND_THROTTLED_KEYS"
THROTTLED_ONLY = "THROTTLED_KEYS"


def settings(schema: TableSchema) -> dict[str, dict[str, Any]]:
    """target ("" for the table, else an index name) -> {"status", "mode", "updated"}."""
    return dict(schema.extensions.get(EXTENSION, {}))


def with_setting(schema: TableSchema, target: str, enabled: bool, mode: str, now: float) -> dict[str, Any]:
    """The table's ``extensions`` with one target switched on or off."""
    current = settings(schema)
    current[target] = {"status": "ENABLED" if enabled else "DISABLED", "mode": mode, "updated": now}
    return {**schema.extensions, EXTENSION: current}


def rule_names(schema: TableSchema, index_name: str | None, mode: str, created: float) -> list[str]:
    """DynamoDB's rule names: PKC/PKT (partition keys, accessed/throttled),
    SKC/SKT when the table or index has a sort key."""
    target = schema.name if index_name is None else f"{schema.name}-{index_name}"
    has_sort_key = schema.sort_key is not None
    if index_name is not None:
        index = schema.index(index_name)
        has_sort_key = index is not None and len(index.sort_keys) > 0
    kinds = ["PKC", "PKT"] + (["SKC", "SKT"] if has_sort_key else [])
    if mode == THROTTLED_ONLY:
        kinds = [kind for kind in kinds if kind.endswith("T")]
    stamp = int(created * 1000)
    return [f"DynamoDBContributorInsights-{kind}-{target}-{stamp}" for kind in kinds]


def description(schema: TableSchema, index_name: str | None) -> dict[str, Any]:
    """The DescribeContributorInsights answer for the table or one of its indexes."""
    setting = settings(schema).get(index_name or TABLE_TARGET)
    answer: dict[str, Any] = {"TableName": schema.name}
    if index_name is not None:
        answer["IndexName"] = index_name
    if setting is None or setting["status"] == "DISABLED":
        answer["ContributorInsightsStatus"] = "DISABLED"
        if setting is not None:
            answer["LastUpdateDateTime"] = setting["updated"]
        return answer
    answer["ContributorInsightsRuleList"] = rule_names(schema, index_name, setting["mode"], setting["updated"])
    answer["ContributorInsightsStatus"] = "ENABLED"
    answer["LastUpdateDateTime"] = setting["updated"]
    answer["ContributorInsightsMode"] = setting["mode"]
    return answer


def summaries(schema: TableSchema) -> list[dict[str, Any]]:
    """ListContributorInsights entries for the table and each index with a setting."""
    entries = []
    for target, setting in sorted(settings(schema).items()):
        entry: dict[str, Any] = {"TableName": schema.name, "ContributorInsightsStatus": setting["status"]}
        if target != TABLE_TARGET:
            entry["IndexName"] = target
        if setting["status"] == "ENABLED":
            entry["ContributorInsightsMode"] = setting["mode"]
        entries.append(entry)
    return entries
