"""DescribeContributorInsights: the Contributor Insights settings and rule
names of a table or one of its indexes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import contributor_insights as insights
from dynastore.errors import ResourceNotFoundException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    index_name = request.get("IndexName")
    if index_name is not None and schema.index(index_name) is None:
        raise ResourceNotFoundException(
            f"Requested resource not found: Index: {index_name} not found for table: {schema.name}"
        )
    return insights.description(schema, index_name)
