"""``dynastore backup`` and ``dynastore restore`` (docs/backups.md).

    dynastore backup TABLE [--name NAME]                 (--endpoint URL | --data-dir DIR)
    dynastore restore BACKUP_ARN NEW_TABLE               (...)
    dynastore restore --table SOURCE (--at TIME | --latest) NEW_TABLE

Each calls DynamoDB's API (CreateBackup, RestoreTableFromBackup,
RestoreTableToPointInTime), follows the job's progress in its record
(GET /_dynastore/backups/jobs) with a bar of items and bytes, rate and ETA,
and ends with a one-line summary (stdout) and exit 0; or with one line
``dynastore: error: <DynamoDB error type>: <message>`` (stderr) and exit 1
when a call is refused or the job fails (a restore FAILED with its reason,
a backup abandoned because its table was deleted meanwhile).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from dynastore.commands.progress import JobProgress
    from dynastore.commands.target import Target

POLL_SECONDS = 0.25
"""How often the jobs' records are read while a job runs."""
BACKUP_NAME_MAX = 255
"""DynamoDB's BackupName: 3-255 characters of [a-zA-Z0-9_.-]."""


def add_parsers(commands: Any) -> None:
    from dynastore.commands.target import add_target_arguments

    backup = commands.add_parser("backup", help="make an on-demand backup of a table, with a progress bar",
                                 description="Make an on-demand backup of TABLE (CreateBackup) and wait "
                                 "until it is AVAILABLE; prints the backup's ARN in the summary.")
    backup.add_argument("table", metavar="TABLE")
    backup.add_argument("--name", default=None, help="the backup's name (default: TABLE-<UTC time>)")
    add_target_arguments(backup)
    backup.set_defaults(run=run_backup)

    restore = commands.add_parser(
        "restore", help="restore a backup (or a table at a point in time) into a new table",
        description="Restore BACKUP_ARN into NEW_TABLE (RestoreTableFromBackup), or with --table the "
        "table SOURCE as it was at --at TIME or --latest (RestoreTableToPointInTime), and wait until "
        "NEW_TABLE is ACTIVE.",
        usage="dynastore restore (BACKUP_ARN | --table SOURCE (--at TIME | --latest)) NEW_TABLE "
        "(--endpoint URL | --data-dir DIR) [options]")
    restore.add_argument("names", nargs="+", metavar="BACKUP_ARN NEW_TABLE")
    restore.add_argument("--table", metavar="SOURCE", default=None,
                         help="restore this table to a point in time instead of a backup")
    when = restore.add_mutually_exclusive_group()
    when.add_argument("--at", metavar="TIME", default=None, type=parse_time,
                      help="ISO 8601 time to restore to (UTC unless it says: 2026-12-03T09:15:00Z)")
    when.add_argument("--latest", action="store_true", help="restore to the latest restorable time")
    add_target_arguments(restore)
    restore.set_defaults(run=run_restore, parser=restore)


def parse_time(text: str) -> datetime:
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def default_backup_name(table: str, now: datetime) -> str:
    suffix = now.strftime("-%Y%m%dT%H%M%SZ")
    return table[: BACKUP_NAME_MAX - len(suffix)] + suffix


# --- running -------------------------------------------------------------------------------


def _guarded(work: Any, arguments: argparse.Namespace) -> int:
    """Open the target, run ``work(target)``; any error: one line, exit 1."""
    from botocore.exceptions import BotoCoreError, ClientError

    from dynastore.commands.progress import fail
    from dynastore.commands.target import JobsUnavailable, open_target
    from dynastore.storage.errors import StorageError

    try:
        target = open_target(arguments)
    except StorageError as error:  # e.g. a server has the data directory open
        return fail(str(error))
    except (ValueError, OSError, BotoCoreError) as error:
        return fail(error)
    try:
        return int(work(target))
    except JobsUnavailable as error:
        return fail(str(error))
    except (ClientError, BotoCoreError, OSError) as error:
        return fail(error)
    except StorageError as error:  # the data directory's store failed (disk full, ...)
        return fail(str(error))
    except KeyboardInterrupt:
        return fail("interrupted (the job goes on: its record says how far it got)")
    finally:
        target.close()


def run_backup(arguments: argparse.Namespace) -> int:
    return _guarded(lambda target: _backup(target, arguments.table, arguments.name), arguments)


def _backup(target: Target, table: str, name: str | None) -> int:
    from datetime import UTC, datetime

    from dynastore.commands.progress import JobProgress, fail

    name = name or default_backup_name(table, datetime.now(UTC))
    arn = target.client.create_backup(TableName=table, BackupName=name)["BackupDetails"]["BackupArn"]
    def creating() -> bool:
        try:
            details = target.client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
        except target.client.exceptions.BackupNotFoundException:
            return False
        return bool(details["BackupStatus"] == "CREATING")

    with JobProgress(f"Backing up {table}") as progress:
        _follow(target, progress, lambda job: job["Kind"] == "backup" and job.get("Arn") == arn, creating)
        try:
            described = target.client.describe_backup(BackupArn=arn)["BackupDescription"]
        except target.client.exceptions.BackupNotFoundException:
            progress.__exit__(None, None, None)
            return fail(f"the backup {arn} was abandoned: its table was deleted before the copy was done")
        details = described["BackupDetails"]
        progress.done(f"Backup {arn} ({details['BackupName']}) of {table} is {details['BackupStatus']}",
                      items=int(described["SourceTableDetails"].get("ItemCount", 0)),
                      size_bytes=int(details.get("BackupSizeBytes", 0)))
    return 0


def run_restore(arguments: argparse.Namespace) -> int:
    names: list[str] = arguments.names
    parser: argparse.ArgumentParser = arguments.parser
    if arguments.table is not None:
        if len(names) != 1:
            parser.error("with --table, give only NEW_TABLE")
        if arguments.at is None and not arguments.latest:
            parser.error("with --table, give --at TIME or --latest")
        request: dict[str, Any] = {"SourceTableName": arguments.table, "TargetTableName": names[0]}
        if arguments.latest:
            request["UseLatestRestorableTime"] = True
        else:
            request["RestoreDateTime"] = arguments.at
        source = f"{arguments.table} at {'the latest time' if arguments.latest else arguments.at.isoformat()}"
    else:
        if len(names) != 2:
            parser.error("give BACKUP_ARN and NEW_TABLE (or --table SOURCE and NEW_TABLE)")
        if arguments.at is not None or arguments.latest:
            parser.error("--at and --latest go with --table")
        request = {"BackupArn": names[0], "TargetTableName": names[1]}
        source = names[0]
    return _guarded(lambda target: _restore(target, request, source), arguments)


def _restore(target: Target, request: dict[str, Any], source: str) -> int:
    from dynastore.commands.progress import JobProgress, fail
    from dynastore.commands.target import JobsUnavailable

    new_table = request["TargetTableName"]

    def ours(job: dict[str, Any]) -> bool:
        return bool(job["Kind"] == "restore" and job.get("Table") == new_table)

    try:
        earlier = {job["Id"] for job in target.jobs() if ours(job)}
    except JobsUnavailable:
        earlier = set()  # _follow says so, and waits on DescribeTable instead
    if "BackupArn" in request:
        target.client.restore_table_from_backup(**request)
    else:
        target.client.restore_table_to_point_in_time(**request)

    def creating() -> bool:
        try:
            return bool(target.client.describe_table(TableName=new_table)["Table"]["TableStatus"] == "CREATING")
        except target.client.exceptions.ResourceNotFoundException:
            return False

    with JobProgress(f"Restoring {new_table}") as progress:
        job = _follow(target, progress, lambda job: ours(job) and job["Id"] not in earlier, creating)
        if job is not None:  # it ended FAILED
            progress.__exit__(None, None, None)
            return fail(f"the restore into {new_table} FAILED: {job.get('Reason', 'no reason given')}")
        try:
            table = target.client.describe_table(TableName=new_table)["Table"]
        except target.client.exceptions.ResourceNotFoundException:
            progress.__exit__(None, None, None)
            return fail(f"the restore into {new_table} FAILED (GET /_dynastore/backups/jobs says why)")
        progress.done(f"Restored {source} into {new_table} ({table['TableStatus']})",
                      items=int(table.get("ItemCount", 0)), size_bytes=int(table.get("TableSizeBytes", 0)))
    return 0


def _follow(target: Target, progress: JobProgress, is_ours: Any, creating: Any) -> dict[str, Any] | None:
    """Update the bar from the job's record until it is gone (done: None) or
    says FAILED (returned). When the jobs' route refuses the key (it needs
    an admin key under ``serve --credentials``), say so once and wait on
    ``creating()`` (DescribeBackup / DescribeTable) instead, without a bar."""
    import sys

    from dynastore.commands.target import JobsUnavailable

    while True:
        try:
            jobs = target.jobs()
        except JobsUnavailable as refused:
            print(f"dynastore: no progress to show ({refused}); waiting for the job to end", file=sys.stderr)
            while creating():
                target.pause(POLL_SECONDS)
            return None
        job = next((job for job in jobs if is_ours(job)), None)
        if job is None:
            return None
        if job.get("Status") == "FAILED":
            return job
        progress.update(items=int(job.get("Items", 0)), size_bytes=int(job.get("Bytes", 0)),
                        total_items=job.get("TotalItems"), total_bytes=job.get("TotalBytes"))
        target.pause(POLL_SECONDS)
