"""DescribeTimeToLive: the table's TTL status (and attribute when enabled)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, ttl

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = database.table(table_arns.table_name_from_identifier(request.get("TableName", "")))
    return {"TimeToLiveDescription": ttl.description(ttl.ttl_state(schema.extensions))}
