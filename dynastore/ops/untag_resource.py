"""UntagResource: remove tags by key; absent keys are a no-op."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_tags

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request.get("ResourceArn")
    name = table_arns.table_name_from_arn(arn, database.region, database.account_id)
    removed = set(table_tags.validate_tag_keys(request.get("TagKeys") or []))
    schema = database.tables.get(name)
    if schema is None:
        raise table_arns.resource_arn_not_found(arn)
    remaining = tuple(pair for pair in schema.tags if pair[0] not in removed)
    if remaining != schema.tags:
        database.update_table(replace(schema, tags=remaining))
    return {}
