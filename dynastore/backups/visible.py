"""What the control plane sees of a table being built by a restore or an
import (DynamoDB's behaviour, API reference: RestoreTableFromBackup,
RestoreTableToPointInTime, RestoreSummary, ImportTable).

While a restore runs, its target table exists for DescribeTable and
ListTables with TableStatus CREATING and a RestoreSummary (SourceBackupArn
for a backup's restore, SourceTableArn, RestoreDateTime, RestoreInProgress
true); CreateTable with its name gets ResourceInUseException and another
restore TableAlreadyExistsException, as for any table that exists; reads and
writes get the data plane's ResourceNotFoundException, since the table
cannot be used yet (it is built under names of dynastore's own,
dynastore/backups/restore.py). Once ACTIVE the table keeps its
RestoreSummary, RestoreInProgress false (``RESTORE_SUMMARY_EXTENSION``).

An ImportTable's table is shown the same way while its import is
IN_PROGRESS (dynastore/backups/imports.py): CREATING, empty, without a
RestoreSummary (TableDescription has no member for an import); ACTIVE once
COMPLETED, gone when FAILED. ``creating`` is the one question the
operations ask: every table a restore or an import is building.

The operations' modules call in here only after a miss (DescribeTable) or
for one query of the restores' registry (ListTables, CreateTable), importing
this package lazily so a server's start imports none of it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.backups import registry
from dynastore.backups.own_tables import existing_own_table_id
from dynastore.backups.registry import IN_PROGRESS, RestoreRecord
from dynastore.engine import table_description
from dynastore.engine.schema import TableSchema
from dynastore.storage.base import SortKeyRange

if TYPE_CHECKING:
    from dynastore.backups.imports import ImportRecord
    from dynastore.database import Database

RESTORE_SUMMARY_EXTENSION = "restore_summary"
"""``TableSchema.extensions`` key of a restored table: its RestoreSummary."""


def restore_summary(record: RestoreRecord, in_progress: bool) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    if record.source_backup_arn is not None:
        summary["SourceBackupArn"] = record.source_backup_arn
    summary["SourceTableArn"] = record.source_table_arn
    summary["RestoreDateTime"] = record.restore_time
    summary["RestoreInProgress"] = in_progress
    return summary


def restoring_table_description(database: Database, record: RestoreRecord) -> dict[str, Any]:
    """The target's TableDescription while the restore runs: CREATING, empty."""
    schema = replace(TableSchema.from_metadata(orjson.dumps(record.schema)), status="CREATING")
    description = table_description.table_description(schema, item_count=0, size_bytes=0, now=database.now())
    description["TableStatus"] = "CREATING"
    for index in description.get("GlobalSecondaryIndexes", ()):
        index["IndexStatus"] = "CREATING"
    description["RestoreSummary"] = restore_summary(record, in_progress=True)
    return description


def importing_table_description(database: Database, record: ImportRecord) -> dict[str, Any]:
    """The new table's TableDescription while its import runs: CREATING, empty."""
    schema = replace(TableSchema.from_metadata(orjson.dumps(record.schema)), status="CREATING")
    description = table_description.table_description(schema, item_count=0, size_bytes=0, now=database.now())
    description["TableStatus"] = "CREATING"
    for index in description.get("GlobalSecondaryIndexes", ()):
        index["IndexStatus"] = "CREATING"
    return description


def in_progress(database: Database) -> dict[str, RestoreRecord]:
    """Target table name -> its restore, for every restore in progress (a
    read: a store that never restored anything has no registry yet)."""
    table_id = existing_own_table_id(database, registry.RESTORES_KIND)
    if table_id is None:
        return {}
    found = {}
    for row in database.storage.query(table_id, registry.RESTORE_PK, SortKeyRange()):
        record = RestoreRecord.from_json(row.item)
        if record.status == IN_PROGRESS:
            found[record.target] = record
    return found


def imports_in_progress(database: Database) -> dict[str, ImportRecord]:
    """Table name -> its import, for every import in progress (a read, as ``in_progress``)."""
    from dynastore.backups import imports

    table_id = existing_own_table_id(database, imports.IMPORTS_KIND)
    if table_id is None:
        return {}
    found = {}
    for row in database.storage.query(table_id, imports.IMPORT_PK, SortKeyRange()):
        record = imports.ImportRecord.from_json(row.item)
        if record.status == imports.IN_PROGRESS:
            found[record.table_name] = record
    return found


def creating(database: Database) -> dict[str, RestoreRecord | ImportRecord]:
    """Every table a restore or an import is building (CREATING), by name."""
    found: dict[str, RestoreRecord | ImportRecord] = dict(imports_in_progress(database))
    found.update(in_progress(database))
    return found


def creating_one(database: Database, name: str) -> RestoreRecord | ImportRecord | None:
    """The restore or import building table ``name`` (None: none is)."""
    return creating(database).get(name)


def description_of(database: Database, record: RestoreRecord | ImportRecord) -> dict[str, Any]:
    if isinstance(record, RestoreRecord):
        return restoring_table_description(database, record)
    return importing_table_description(database, record)


def describe_creating(database: Database, name: str) -> dict[str, Any] | None:
    """DescribeTable's ``Table`` for a table being restored or imported (None: none is)."""
    record = creating_one(database, name)
    return None if record is None else description_of(database, record)


def summary_of(schema: TableSchema) -> dict[str, Any] | None:
    """A restored table's RestoreSummary (None: it was not restored)."""
    found = schema.extensions.get(RESTORE_SUMMARY_EXTENSION)
    return None if found is None else dict(found)
