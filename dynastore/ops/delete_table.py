"""DeleteTable: drop the table and its items at once, answer DELETING.

DynamoDB takes seconds to delete; dynastore is done when it answers, so the
next DescribeTable already says ResourceNotFoundException.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_description
from dynastore.errors import ResourceInUseException, ResourceNotFoundException, ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database

PROTECTED_MESSAGE = (
    "Resource cannot be deleted as it is currently protected against deletion. "
    "Disable deletion protection first."
)


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    try:
        schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    except ResourceNotFoundException:
        name = table_arns.table_name_from_identifier(request.get("TableName", ""))
        from dynastore.backups.visible import creating_one  # restored or imported: CREATING

        if isinstance(name, str) and creating_one(database, name) is not None:
            raise ResourceInUseException(
                f"Attempt to change a resource which is still in use: Table is being created: {name}"
            ) from None
        raise
    if schema.deletion_protection:
        raise ValidationException(PROTECTED_MESSAGE)
    if "replication" in schema.extensions:  # one member of a STRONG global table cannot go alone
        from dynastore.replication.replica_updates import check_source_hold
        from dynastore.replication.replicas import replica_set
        from dynastore.replication.strong import check_table_deletion

        check_table_deletion(schema)
        replicas = replica_set(schema)
        if replicas is not None:  # the source of a replica added in the last 24 hours stays
            check_source_hold(replicas, database.region, database.now())
    item_count, size_bytes = database.table_statistics(schema)
    index_statistics = database.index_statistics(schema)
    if (schema.extensions.get(CHANGE_LOG) or {}).get("pitr") is not None:
        from dynastore.backups.service import delete_table_keeping_system_backup  # PITR on

        delete_table_keeping_system_backup(database, schema)
    else:
        database.drop_table(schema.name)
    if "replication" in schema.extensions:  # a global table's member: the others forget it
        from dynastore.replication.replica_updates import table_deleted

        table_deleted(database, schema)
    description = table_description.deleted_table_description(
        schema,
        item_count=item_count,
        size_bytes=size_bytes,
        now=database.now(),
        index_statistics=index_statistics,
    )
    return {"TableDescription": description}


CHANGE_LOG = "change_log"
"""dynastore/backups/pitr.py's CHANGE_LOG_EXTENSION (not imported: lazy)."""
