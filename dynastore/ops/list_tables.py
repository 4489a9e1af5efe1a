"""ListTables: names in byte order, pages of at most 100 names.

LastEvaluatedTableName is returned only when more names remain, so a page that
ends exactly on the last table is the final one (as DynamoDB answers).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from dynastore import limits

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    limit = int(request.get("Limit") or limits.LIST_TABLES_MAX_LIMIT)
    # Table names are ASCII, so str order is DynamoDB's byte order.
    from dynastore.backups.visible import creating  # restored or imported: CREATING

    names = sorted(set(database.tables) | set(creating(database)))
    start = request.get("ExclusiveStartTableName")
    if start is not None:
        # The start name need not exist (a deleted table's name still works).
        names = names[bisect.bisect_right(names, start) :]
    page = names[:limit]
    result: dict[str, Any] = {"TableNames": page}
    if len(names) > limit:
        result["LastEvaluatedTableName"] = page[-1]
    return result
