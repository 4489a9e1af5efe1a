"""DescribeTable: the table's definition with its current item count and size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine import table_arns, table_description
from dynastore.errors import ResourceNotFoundException
from dynastore.workers.backfill import resume_backfills

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    # TableName may also be the table's ARN.
    try:
        schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    except ResourceNotFoundException:
        name = table_arns.table_name_from_identifier(request.get("TableName", ""))
        from dynastore.backups.visible import describe_creating  # restored/imported: CREATING

        creating = describe_creating(database, name) if isinstance(name, str) else None
        if creating is None:
            raise
        return {"Table": creating}
    resume_backfills(database, schema)
    if REPLICATION in schema.extensions:  # a replica still being filled: its job runs
        from dynastore.replication.backfill import resume_replica_backfills

        resume_replica_backfills(database)
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
    if REPLICATION in schema.extensions:  # a global table (dynastore/replication/)
        from dynastore.replication.replicas import describe_replication

        describe_replication(database, schema, description)
    if RESTORE_SUMMARY in schema.extensions:  # a restored table keeps its RestoreSummary
        description["RestoreSummary"] = dict(schema.extensions[RESTORE_SUMMARY])
    return {"Table": description}


RESTORE_SUMMARY = "restore_summary"
REPLICATION = "replication"
"""dynastore/replication/replicas.py's REPLICATION_EXTENSION (not imported: lazy)."""
"""dynastore/backups/visible.py's RESTORE_SUMMARY_EXTENSION (not imported: lazy)."""
