"""TagResource: add or overwrite tags on a table, all or nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_tags

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request.get("ResourceArn")
    name = table_arns.table_name_from_arn(arn, database.region, database.account_id)
    # DynamoDB checks the tags before it looks for the table.
    added = table_tags.validate_tags(request.get("Tags") or [])
    schema = database.tables.get(name)
    if schema is None:
        raise table_arns.resource_arn_not_found(arn)
    merged = table_tags.merge_tags(schema.tags, added)
    if merged != schema.tags:
        database.update_table(replace(schema, tags=merged))
    return {}
