"""ListContributorInsights: the settings of every table (or one table) and
its indexes, paginated by table name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.engine import contributor_insights as insights
from dynastore.errors import ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database

MAX_RESULTS_LIMIT = limits.CONTRIBUTOR_INSIGHTS_MAX_RESULTS


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    max_results = request.get("MaxResults", MAX_RESULTS_LIMIT)
    if not isinstance(max_results, int) or not 1 <= max_results <= MAX_RESULTS_LIMIT:
        raise ValidationException(
            f"1 validation error detected: Value '{max_results}' at 'maxResults' failed to satisfy "
            f"constraint: Member must have value less than or equal to {MAX_RESULTS_LIMIT}"
        )
    if request.get("TableName"):
        schemas = [database.table(request["TableName"])]
    else:
        schemas = [database.tables[name] for name in sorted(database.tables)]
    entries = [entry for schema in schemas for entry in insights.summaries(schema)]
    start = int(request["NextToken"]) if str(request.get("NextToken") or "").isdigit() else 0
    page = entries[start : start + max_results]
    answer: dict[str, Any] = {"ContributorInsightsSummaries": page}
    if start + max_results < len(entries):
        answer["NextToken"] = str(start + max_results)
    return answer
