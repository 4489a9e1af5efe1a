"""DescribeTable: the table's definition with its current item count and size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import table_description
from dynastore.workers.backfill import resume_backfills

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    # TableName may also be the table's ARN.
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    resume_backfills(database, schema)
    database.propagate_index_changes()
    schema = database.table(schema.name)
    item_count, size_bytes = database.table_statistics(schema)
    description = table_description.table_description(
        schema,
        item_count=item_count,
        size_bytes=size_bytes,
        now=database.now(),
        index_statistics=database.index_statistics(schema),
    )
    return {"Table": description}
