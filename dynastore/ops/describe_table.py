"""DescribeTable: the table's definition with its current item count and size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import tables

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    # TableName may also be the table's ARN.
    schema = database.table(tables.table_name_from_identifier(request.get("TableName", "")))
    item_count, size_bytes = database.table_statistics(schema)
    description = tables.table_description(
        schema, item_count=item_count, size_bytes=size_bytes, now=database.now()
    )
    return {"Table": description}
