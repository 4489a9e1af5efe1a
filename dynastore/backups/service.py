"""The backup and PITR operations, as the ops modules and the CLI call them.

Responses are DynamoDB's shapes (API reference, 2012-08-10): BackupDetails,
BackupDescription (SourceTableDetails, SourceTableFeatureDetails),
BackupSummary, ContinuousBackupsDescription, a restore's TableDescription
with RestoreSummary. Errors: docs/backups.md.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.backups import jobs, pitr, registry, restore, visible
from dynastore.backups.errors import (
    BackupInUseException,
    TableAlreadyExistsException,
    TableInUseException,
    backup_not_found,
)
from dynastore.backups.own_tables import own_table_name
from dynastore.backups.registry import AVAILABLE, CREATING, DELETED, BackupRecord, RestoreRecord
from dynastore.engine import table_description, ttl
from dynastore.engine.schema import TableSchema
from dynastore.engine.streams import STREAM_EXTENSION
from dynastore.engine.table_arns import table_name_from_identifier
from dynastore.engine.table_description import key_schema_description
from dynastore.engine.table_settings import PROVISIONED
from dynastore.errors import TableNotFoundException, ValidationException

if TYPE_CHECKING:
    from dynastore.database import Database

LIST_BACKUPS_MAX_LIMIT = 100


def find_table(database: Database, name_or_arn: Any) -> TableSchema:
    """The table, or DynamoDB's TableNotFoundException ("Table not found: T")
    -- what the backup and PITR calls answer, not ResourceNotFoundException."""
    name = table_name_from_identifier(name_or_arn) if isinstance(name_or_arn, str) else name_or_arn
    schema = database.tables.get(name)
    if schema is None and not database.storage.exclusive and database.refresh_catalogue(check=True):
        schema = database.tables.get(name)
    if schema is None:
        raise TableNotFoundException(f"Table not found: {name}")
    return schema


# --- continuous backups ----------------------------------------------------------------


def continuous_backups_description(database: Database, schema: TableSchema) -> dict[str, Any]:
    status = pitr.pitr_status(database, schema)
    recovery: dict[str, Any] = {"PointInTimeRecoveryStatus": "ENABLED" if status.enabled else "DISABLED"}
    if status.enabled:
        recovery["RecoveryPeriodInDays"] = status.period_days
        recovery["EarliestRestorableDateTime"] = status.earliest
        recovery["LatestRestorableDateTime"] = status.latest
    return {"ContinuousBackupsDescription": {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": recovery,
    }}


def update_continuous_backups(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = find_table(database, request.get("TableName"))
    specification = request.get("PointInTimeRecoverySpecification") or {}
    if specification.get("PointInTimeRecoveryEnabled"):
        period = specification.get("RecoveryPeriodInDays")
        if period is None:
            current = pitr.pitr_status(database, schema)
            period = current.period_days if current.enabled else pitr.RECOVERY_PERIOD_DEFAULT_DAYS
        schema = pitr.enable(database, schema, int(period))
    else:
        schema = pitr.disable(database, schema)
    return continuous_backups_description(database, schema)


# --- backups ---------------------------------------------------------------------------


SYSTEM_BACKUP_SUFFIX = "$DeletedTableBackup"
"""A SYSTEM backup's name: the deleted table's name and this (the developer
guide, "Delete a table with PITR enabled")."""
SYSTEM = "SYSTEM"


def delete_table_keeping_system_backup(database: Database, schema: TableSchema) -> None:
    """DeleteTable of a table with PITR on: DynamoDB keeps a SYSTEM backup of
    it as it was just before the deletion, for 35 days (BackupType SYSTEM,
    BackupExpiryDateTime; API reference, BackupDetails). The table's storage
    becomes the backup's, in the transaction that deletes the table (its
    indexes' storage and its change log go): the backup is AVAILABLE at
    once, whatever the table's size, and a kill -9 leaves the table or the
    backup, never neither."""
    storage = database.storage
    now = database.now()
    backup_id = registry.new_backup_id(now)
    item_count, size_bytes = database.table_statistics(schema)
    log = pitr.change_log(schema)
    source = replace(schema, extensions={key: value for key, value in schema.extensions.items()
                                         if key != pitr.CHANGE_LOG_EXTENSION})
    record = BackupRecord(
        backup_id=backup_id, arn=f"{schema.arn}/backup/{backup_id}", name=schema.name + SYSTEM_BACKUP_SUFFIX,
        table_name=schema.name, table_id=schema.table_uuid, table_arn=schema.arn, created=now,
        source=orjson.loads(source.to_metadata()), items_storage_id=schema.table_id, status=AVAILABLE,
        backup_type=SYSTEM, expires=now + limits.SYSTEM_BACKUP_RETENTION_SECONDS,
        item_count=item_count, size_bytes=size_bytes, total_items=item_count, total_bytes=size_bytes,
    )
    change = registry.backup_change(database, record, backup_id)  # the registry exists before the transaction
    with storage.transaction():
        database.drop_table(schema.name, keep_items_as=database.storage_name(own_table_name(f"backup/{backup_id}")))
        registry.apply(database, change)
        if log is not None:
            storage.drop_table(int(log["storage_id"]))


def expire_system_backups(database: Database) -> int:
    """Delete the SYSTEM backups past their BackupExpiryDateTime (on the
    database clock); returns how many went. Called by the backup calls
    before they answer, so an expired backup is never seen."""
    now = database.now()
    expired = [record for record in registry.backups(database)
               if record.backup_type == SYSTEM and record.expires is not None and record.expires <= now]
    for record in expired:
        _drop_backup(database, record)
    return len(expired)


def _drop_backup(database: Database, record: BackupRecord) -> None:
    storage = database.storage
    with storage.transaction():
        registry.apply(database, registry.backup_change(database, None, record.backup_id))
        try:
            storage.drop_table(record.items_storage_id)
        except KeyError:
            pass


def create_backup(database: Database, request: dict[str, Any]) -> BackupRecord:
    jobs.ensure_resumed(database)
    schema = find_table(database, request.get("TableName"))
    if schema.status != "ACTIVE":
        raise TableInUseException(f"Table is being updated: {schema.name}")
    storage = database.storage
    now = database.now()
    backup_id = registry.new_backup_id(now)
    items_id = storage.create_table(database.storage_name(own_table_name(f"backup/{backup_id}")), b"{}")
    holder = f"backup/{backup_id}"
    at = pitr.hold(database, schema.name, holder)
    schema = database.tables[schema.name]
    total_items, total_bytes = database.table_statistics(schema)
    record = BackupRecord(
        backup_id=backup_id, arn=f"{schema.arn}/backup/{backup_id}", name=str(request.get("BackupName")),
        table_name=schema.name, table_id=schema.table_uuid, table_arn=schema.arn, created=at,
        source=orjson.loads(schema.to_metadata()), items_storage_id=items_id,
        total_items=total_items, total_bytes=total_bytes,
    )
    registry.apply(database, registry.backup_change(database, record, backup_id))
    jobs.add_backup(database, backup_id)
    return record


def backup_details(record: BackupRecord) -> dict[str, Any]:
    details: dict[str, Any] = {"BackupArn": record.arn, "BackupName": record.name}
    if record.status != CREATING:
        details["BackupSizeBytes"] = record.size_bytes
    details["BackupStatus"] = record.status
    details["BackupType"] = record.backup_type
    details["BackupCreationDateTime"] = record.created
    if record.expires is not None:
        details["BackupExpiryDateTime"] = record.expires
    return details


def _source_schema(record: BackupRecord) -> TableSchema:
    return TableSchema.from_metadata(orjson.dumps(record.source))


def backup_description(record: BackupRecord) -> dict[str, Any]:
    schema = _source_schema(record)
    provisioned = schema.billing_mode == PROVISIONED
    source: dict[str, Any] = {
        "TableName": schema.name,
        "TableId": schema.table_uuid,
        "TableArn": schema.arn,
        "TableSizeBytes": record.size_bytes,
        "KeySchema": key_schema_description(schema),
        "TableCreationDateTime": schema.creation_time,
        "ProvisionedThroughput": {
            "ReadCapacityUnits": schema.read_capacity_units if provisioned else 0,
            "WriteCapacityUnits": schema.write_capacity_units if provisioned else 0,
        },
    }
    on_demand = {name: value for name, value in (
        ("MaxReadRequestUnits", schema.on_demand_max_read_units),
        ("MaxWriteRequestUnits", schema.on_demand_max_write_units)) if value is not None}
    if on_demand:
        source["OnDemandThroughput"] = on_demand
    source["ItemCount"] = record.item_count
    source["BillingMode"] = schema.billing_mode
    features: dict[str, Any] = {}
    for member, kind in (("LocalSecondaryIndexes", "LOCAL"), ("GlobalSecondaryIndexes", "GLOBAL")):
        indexes = [index for index in schema.indexes if index.kind == kind]
        if not indexes:
            continue
        entries = []
        for index in indexes:
            described = table_description.index_description(schema, index, (0, 0))
            entry = {"IndexName": index.name, "KeySchema": described["KeySchema"],
                     "Projection": described["Projection"]}
            if kind == "GLOBAL":
                entry["ProvisionedThroughput"] = {
                    "ReadCapacityUnits": index.read_capacity_units if provisioned else 0,
                    "WriteCapacityUnits": index.write_capacity_units if provisioned else 0,
                }
                if "OnDemandThroughput" in described:
                    entry["OnDemandThroughput"] = described["OnDemandThroughput"]
            entries.append(entry)
        features[member] = entries
    stream = schema.extensions.get(STREAM_EXTENSION)
    if stream is not None:
        features["StreamDescription"] = {"StreamEnabled": True, "StreamViewType": stream["view_type"]}
    state = ttl.ttl_state(schema.extensions)
    if state is not None:
        features["TimeToLiveDescription"] = ttl.description(state)
    description: dict[str, Any] = {"BackupDetails": backup_details(record), "SourceTableDetails": source}
    if features:
        description["SourceTableFeatureDetails"] = features
    return description


def find_backup(database: Database, arn: Any) -> BackupRecord:
    expire_system_backups(database)
    backup_id = registry.backup_id_of_arn(arn)
    record = None if backup_id is None else registry.get_backup(database, backup_id)
    if record is None or record.arn != arn:
        raise backup_not_found(str(arn))
    return record


def describe_backup(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    jobs.ensure_resumed(database)
    return {"BackupDescription": backup_description(find_backup(database, request.get("BackupArn")))}


def delete_backup(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    jobs.ensure_resumed(database)
    record = find_backup(database, request.get("BackupArn"))
    if record.status == CREATING:
        raise BackupInUseException(f"Backup is being created: {record.arn}")
    if any(restoring.source_backup_arn == record.arn and restoring.status == registry.IN_PROGRESS
           for restoring in registry.restores(database)):
        raise BackupInUseException(f"Backup is being restored: {record.arn}")
    _drop_backup(database, record)
    return {"BackupDescription": backup_description(replace(record, status=DELETED))}


def list_backups(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    jobs.ensure_resumed(database)
    table = request.get("TableName")
    if isinstance(table, str):
        table = table_name_from_identifier(table)
    limit = int(request.get("Limit") or LIST_BACKUPS_MAX_LIMIT)
    lower = request.get("TimeRangeLowerBound")
    upper = request.get("TimeRangeUpperBound")
    if lower is not None and upper is not None and float(lower) > float(upper):
        raise ValidationException("TimeRangeUpperBound must be greater than TimeRangeLowerBound")
    wanted = request.get("BackupType") or "USER"
    start = request.get("ExclusiveStartBackupArn")
    after = registry.backup_id_of_arn(start) if start is not None else None
    expire_system_backups(database)
    if start is not None and after is None:
        raise ValidationException(f"Invalid ExclusiveStartBackupArn: {start}")
    summaries: list[dict[str, Any]] = []
    last: str | None = None
    for record in registry.backups(database, after):
        if table is not None and record.table_name != table:
            continue
        if wanted != "ALL" and record.backup_type != wanted:
            continue
        if lower is not None and record.created < float(lower):
            continue
        if upper is not None and record.created >= float(upper):
            continue
        if len(summaries) == limit:
            last = summaries[-1]["BackupArn"]
            break
        summary: dict[str, Any] = {
            "TableName": record.table_name, "TableId": record.table_id, "TableArn": record.table_arn,
            "BackupArn": record.arn, "BackupName": record.name,
            "BackupCreationDateTime": record.created,
        }
        if record.expires is not None:
            summary["BackupExpiryDateTime"] = record.expires
        summary["BackupStatus"] = record.status
        summary["BackupType"] = record.backup_type
        if record.status != CREATING:
            summary["BackupSizeBytes"] = record.size_bytes
        summaries.append(summary)
    answer: dict[str, Any] = {"BackupSummaries": summaries}
    if last is not None:
        answer["LastEvaluatedBackupArn"] = last
    return answer


# --- restores --------------------------------------------------------------------------


def _check_target(database: Database, target: str) -> None:
    if target in database.tables or (not database.storage.exclusive and database.refresh_catalogue(check=True)
                                      and target in database.tables):
        raise TableAlreadyExistsException(f"Table already exists: {target}")
    if visible.creating_one(database, target) is not None:  # it exists, CREATING (backups/visible.py)
        raise TableAlreadyExistsException(f"Table already exists: {target}")


def _start_restore(database: Database, source: TableSchema, request: dict[str, Any], *,
                   backup: BackupRecord | None, restore_time: float, holder_at: float | None) -> dict[str, Any]:
    target = str(request.get("TargetTableName"))
    schema = restore.build_schema(database, source, request, target)
    _check_target(database, target)
    restore_id = f"{int(database.now() * 1000):014d}-{secrets.token_hex(4)}"
    if backup is None:
        restore_time = pitr.hold(database, source.name, f"restore/{restore_id}", holder_at)
        total_items, total_bytes = database.table_statistics(database.tables[source.name])
    else:
        total_items, total_bytes = backup.item_count, backup.size_bytes
    hidden = restore.create_hidden(database, schema, restore_id)
    record = RestoreRecord(
        restore_id=restore_id, target=target, schema=orjson.loads(hidden.to_metadata()),
        generation=hidden.generation,
        source_backup_arn=None if backup is None else backup.arn,
        source_table_arn=source.arn, source_table_name=source.name, source_table_id=source.table_uuid,
        restore_time=restore_time, started=database.now(),
        total_items=total_items, total_bytes=total_bytes,
        backup_items_storage_id=None if backup is None else backup.items_storage_id,
    )
    registry.apply(database, registry.restore_change(database, record, restore_id))
    description = visible.restoring_table_description(database, record)
    jobs.add_restore(database, restore_id)
    return {"TableDescription": description}


def restore_from_backup(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    jobs.ensure_resumed(database)
    backup = find_backup(database, request.get("BackupArn"))
    if backup.status == CREATING:
        raise BackupInUseException(f"Backup is being created: {backup.arn}")
    return _start_restore(database, _source_schema(backup), request, backup=backup,
                          restore_time=backup.created, holder_at=None)


def restore_to_point_in_time(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    jobs.ensure_resumed(database)
    name, arn = request.get("SourceTableName"), request.get("SourceTableArn")
    if name is None and arn is None:
        raise ValidationException("Either SourceTableName or SourceTableArn must be provided")
    if name is not None and arn is not None:
        raise ValidationException("Only one of SourceTableName or SourceTableArn may be provided")
    source = find_table(database, name if name is not None else arn)
    latest = request.get("UseLatestRestorableTime")
    when = request.get("RestoreDateTime")
    if latest and when is not None:
        raise ValidationException("Only one of RestoreDateTime or UseLatestRestorableTime may be specified")
    if not latest and when is None:
        raise ValidationException("Either RestoreDateTime or UseLatestRestorableTime must be specified")
    window = pitr.restorable_window(database, source)
    if window is None:
        pitr.check_restorable(database, source, 0.0)  # PointInTimeRecoveryUnavailableException
    assert window is not None
    at = window[1] if latest or when is None else float(when)
    pitr.check_restorable(database, source, at)
    return _start_restore(database, source, request, backup=None, restore_time=at, holder_at=at)


# --- progress (the admin route and the CLI) ----------------------------------------------


def job_progress(database: Database) -> list[dict[str, Any]]:
    """Every backup still CREATING and every restore IN_PROGRESS or FAILED."""
    found: list[dict[str, Any]] = []
    for record in registry.backups(database):
        if record.status == CREATING:
            found.append({"Kind": "backup", "Id": record.backup_id, "Arn": record.arn,
                          "Table": record.table_name, "Status": record.status,
                          "Items": record.item_count, "Bytes": record.size_bytes,
                          "TotalItems": record.total_items, "TotalBytes": record.total_bytes})
    for restoring in registry.restores(database):
        entry = {"Kind": "restore", "Id": restoring.restore_id, "Table": restoring.target,
                 "Status": restoring.status, "Items": restoring.item_count, "Bytes": restoring.size_bytes,
                 "TotalItems": restoring.total_items, "TotalBytes": restoring.total_bytes,
                 "Source": restoring.source_backup_arn or restoring.source_table_arn}
        if restoring.reason is not None:
            entry["Reason"] = restoring.reason
        found.append(entry)
    return found
