"""CreateTable: validate the definition, register the table, answer CREATING.

The table is usable at once (dynastore has nothing to provision), but the
answer says CREATING as DynamoDB's does, so code that waits for ACTIVE keeps
working and code that assumes ACTIVE fails here as it would in production.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_creation, table_description, table_settings
from dynastore.errors import ResourceInUseException
from dynastore.streams_api.control import enable_on_create

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    # TableName may be the ARN the new table will have.
    name = table_arns.new_table_name(request.get("TableName", ""))
    schema = table_creation.build_table_schema(
        {**request, "TableName": name},
        table_uuid=str(uuid.uuid4()),
        arn=database.table_arn(name),
        region=database.region,
        now=database.now(),
        reserved=table_settings.reserved_capacity(database.tables.values()),
    )
    # DynamoDB validates the whole request before it looks for the name.
    if name in database.tables:
        raise ResourceInUseException(f"Table already exists: {name}")
    from dynastore.backups.visible import creating_one  # restored or imported: CREATING

    if creating_one(database, name) is not None:
        raise ResourceInUseException(f"Table already exists: {name}")
    with database.storage.transaction():
        # One transaction: the table is nobody else's until it commits, so
        # its stream's compare-and-set (enable_on_create) cannot be refused
        # by a change another server made to the table in between.
        created = database.create_table(schema)
        created = enable_on_create(database, created, request)  # StreamSpecification (issue 5)
    return {"TableDescription": table_description.created_table_description(created, request)}
