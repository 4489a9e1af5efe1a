"""DescribeTimeToLive: the table's TTL status (and attribute when enabled)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import ttl

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    return {"TimeToLiveDescription": ttl.description(ttl.ttl_state(schema.extensions))}
