"""UpdateContributorInsights: switch Contributor Insights on or off for a
table or one of its global secondary indexes (engine/contributor_insights.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine import contributor_insights as insights
from dynastore.errors import ResourceNotFoundException, ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    index_name = request.get("IndexName")
    if index_name is not None and schema.index(index_name) is None:
        raise ResourceNotFoundException(
            f"Requested resource not found: Index: {index_name} not found for table: {schema.name}"
        )
    action = request.get("ContributorInsightsAction")
    if action not in ("ENABLE", "DISABLE"):
        raise ValidationException(
            f"1 validation error detected: Value '{action}' at 'contributorInsightsAction' failed "
            "to satisfy constraint: Member must satisfy enum value set: [ENABLE, DISABLE]"
        )
    mode = request.get("ContributorInsightsMode") or insights.ACCESSED_AND_THROTTLED
    enabled = action == "ENABLE"
    extensions = insights.with_setting(schema, index_name or insights.TABLE_TARGET, enabled, mode, database.now())
    database.update_table(replace(schema, extensions=extensions))
    answer: dict[str, Any] = {"TableName": schema.name}
    if index_name is not None:
        answer["IndexName"] = index_name
    # As DynamoDB: the change is reported in progress; Describe shows it done.
    answer["ContributorInsightsStatus"] = "ENABLING" if enabled else "DISABLING"
    if enabled:
        answer["ContributorInsightsMode"] = mode
    return answer
