"""ListTagsOfResource: a table's tags in one page (at most 50 exist)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_tags

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    arn = request.get("ResourceArn")
    name = table_arns.table_name_from_arn(arn, database.region, database.account_id)
    schema = database.tables.get(name)
    if schema is None:
        raise table_arns.resource_arn_not_found(arn)
    # NextToken is accepted and ignored: every tag fits in the first page.
    return {"Tags": table_tags.tags_description(schema.tags)}
