"""TagResource: add or overwrite tags on a table, all or nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine import tables

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request.get("ResourceArn")
    name = tables.table_name_from_arn(arn, database.region, database.account_id)
    # DynamoDB checks the tags before it looks for the table.
    added = tables.validate_tags(request.get("Tags") or [])
    schema = database.tables.get(name)
    if schema is None:
        raise tables.resource_arn_not_found(arn)
    merged = tables.merge_tags(schema.tags, added)
    if merged != schema.tags:
        database.update_table(replace(schema, tags=merged))
    return {}
