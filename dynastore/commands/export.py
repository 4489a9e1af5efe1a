"""``dynastore export TABLE DIR [--format dynamodb-json|ion] [--at ISO_TIME]``.

Writes the table into ``DIR/AWSDynamoDB/<export-id>/`` in DynamoDB's export
layout (manifest-summary.json, manifest-files.json, data/*.json.gz or
*.ion.gz: dynastore/backups/export_formats.py), with a progress bar (items and
bytes, rate, ETA) and a summary line.

- ``--data-dir D``: opens the data directory (no server may hold it) and runs
  the export engine of ExportTableToPointInTime itself, one page at a time:
  one consistent point in time (``--at``: any second of the PITR window;
  without PITR, the moment the command starts).
- ``--endpoint URL``: a running server. With PITR on (or ``--at``) the server
  makes the export (ExportTableToPointInTime into ``--bucket``, one point in
  time), the bar follows GET /_dynastore/exports/jobs, and the finished
  folder is copied into DIR when the server's buckets are folders on this
  machine (else the command says where the export is). With PITR off the
  command reads the table with consistent Scan pages (not one point in
  time) and writes the same files itself.
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

FORMATS = {"dynamodb-json": "DYNAMODB_JSON", "ion": "ION"}


def add_parser(commands: Any) -> None:
    """Register ``export`` on the CLI's sub-command parsers."""
    parser = commands.add_parser("export", help="export a table to files in DynamoDB's export format")
    parser.add_argument("table", metavar="TABLE")
    parser.add_argument("directory", metavar="DIR", help="the folder the export goes into (created)")
    parser.add_argument("--format", choices=sorted(FORMATS), default="dynamodb-json")
    parser.add_argument("--at", metavar="ISO_TIME", default=None,
                        help="the table as of this time (PITR on, inside its window)")
    parser.add_argument("--bucket", default="dynastore-exports",
                        help="with --endpoint: the server's bucket the export is made in (%(default)s)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--endpoint", metavar="URL", help="a running server")
    where.add_argument("--data-dir", metavar="DIR", help="a data directory no server holds")
    parser.add_argument("--region", default="us-east-1")


# --- progress ----------------------------------------------------------------------------


class Progress:
    """A progress bar of items and bytes with rate and ETA (rich), or plain
    lines when rich is missing or the output is not a terminal."""

    def __init__(self, label: str, total_items: int, total_bytes: int) -> None:
        self.started = time.monotonic()
        self.items = 0
        self.bytes = 0
        self.total_items = total_items
        self._rich: Any = None
        self._last_line = 0.0
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )
            from rich.progress import Progress as RichProgress
        except ImportError:
            return
        # The bar on stderr, so stdout carries only the summary.
        self._rich = RichProgress(
            TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
            TextColumn("{task.fields[items]} items"), DownloadColumn(), TransferSpeedColumn(),
            TimeRemainingColumn(), transient=False, console=Console(stderr=True))
        self._task = self._rich.add_task(label, total=max(total_bytes, 1), items=0)
        self._rich.start()

    def update(self, items: int, size: int) -> None:
        self.items, self.bytes = items, size
        if self._rich is not None:
            self._rich.update(self._task, completed=size, items=f"{items:,}/{self.total_items:,}")
        elif time.monotonic() - self._last_line >= 1.0:
            self._last_line = time.monotonic()
            print(f"  {items:,} items, {size:,} bytes", file=sys.stderr, flush=True)

    def finish(self) -> float:
        if self._rich is not None:
            self._rich.update(self._task, completed=max(self.bytes, 1), total=max(self.bytes, 1))
            self._rich.stop()
        return time.monotonic() - self.started


def summary_line(table: str, items: int, size: int, files: int, where: Path, seconds: float) -> str:
    rate = items / seconds if seconds > 0 else float(items)
    return (f"exported {items:,} items ({size:,} bytes) of {table} into {where} in {seconds:.1f} s "
            f"({rate:,.0f} items/s), {files} data file{'s' if files != 1 else ''}")


# --- running ------------------------------------------------------------------------------


def run(arguments: argparse.Namespace) -> int:
    target = Path(arguments.directory).resolve()
    export_format = FORMATS[arguments.format]
    try:
        if arguments.data_dir is not None:
            return _over_data_dir(arguments, target, export_format)
        return _over_endpoint(arguments, target, export_format)
    except KeyboardInterrupt:
        print("dynastore export: interrupted", file=sys.stderr)
        return 130


def _parse_time(text: str) -> float:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _namespace(database: Database, region: str) -> Database:
    if region == database.region:
        return database
    from dynastore.namespaces import Namespaces

    return Namespaces.of(database).get(database.account_id, region)


def _over_data_dir(arguments: argparse.Namespace, target: Path, export_format: str) -> int:
    from dynastore.backups import exports
    from dynastore.database import Database
    from dynastore.errors import DynamoDBError

    try:
        opened = Database.open(Path(arguments.data_dir))
    except (OSError, RuntimeError) as error:
        print(f"dynastore export: cannot open {arguments.data_dir}: {error}", file=sys.stderr)
        return 1
    try:
        database = _namespace(opened, arguments.region)
        schema = database.tables.get(arguments.table)
        if schema is None:
            print(f"dynastore export: no table {arguments.table} in {arguments.data_dir}", file=sys.stderr)
            return 1
        request: dict[str, Any] = {"TableArn": schema.arn, "S3Bucket": target.name, "ExportFormat": export_format}
        if arguments.at is not None:
            request["ExportTime"] = _parse_time(arguments.at)
        try:
            record = exports.start_export(database, request, require_pitr=False, local_root=str(target.parent),
                                          run=False)
        except DynamoDBError as error:
            print(f"dynastore export: {type(error).__name__}: {error.message}", file=sys.stderr)
            return 1
        progress = Progress(f"export {schema.name}", record.total_items, record.total_bytes)
        while record.status == exports.IN_PROGRESS:
            record = exports.export_step(database, record)
            progress.update(record.item_count, record.billed_bytes)
        seconds = progress.finish()
        if record.status != exports.COMPLETED:
            print(f"dynastore export: failed: {record.failure_code}: {record.failure_message}", file=sys.stderr)
            return 1
        print(summary_line(schema.name, record.item_count, record.billed_bytes, len(record.files),
                           target / record.base_key, seconds))
        return 0
    finally:
        opened.close()


def _wire(value: Any) -> Any:
    """A boto3 attribute value back to DynamoDB JSON (binary as base64)."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64encode(bytes(inner)).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(bytes(element)).decode() for element in inner]}
    if kind == "L":
        return {"L": [_wire(element) for element in inner]}
    if kind == "M":
        return {"M": {name: _wire(element) for name, element in inner.items()}}
    return {kind: inner}


def _client(arguments: argparse.Namespace) -> Any:
    import os

    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodb", endpoint_url=arguments.endpoint, region_name=arguments.region,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "dynastore"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "dynastore"),
        config=Config(retries={"mode": "standard"}))


def _over_endpoint(arguments: argparse.Namespace, target: Path, export_format: str) -> int:
    """PITR on (or --at): the server exports (ExportTableToPointInTime, one
    point in time) and the finished folder is copied here when the server's
    buckets are folders on this machine; PITR off: Scan pages, written here."""
    from botocore.exceptions import BotoCoreError, ClientError

    client = _client(arguments)
    try:
        table = client.describe_table(TableName=arguments.table)["Table"]
        recovery = client.describe_continuous_backups(TableName=arguments.table)[
            "ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
    except (ClientError, BotoCoreError) as error:
        print(f"dynastore export: {error}", file=sys.stderr)
        return 1
    if recovery.get("PointInTimeRecoveryStatus") == "ENABLED" or arguments.at is not None:
        return _server_export(arguments, client, table, target, export_format)
    print("dynastore export: point-in-time recovery is off: reading the table with Scan "
          "(not one point in time)", file=sys.stderr)
    return _scan_export(arguments, client, table, target, export_format)


def _admin_jobs(endpoint: str) -> dict[str, Any]:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{endpoint.rstrip('/')}/_dynastore/exports/jobs", timeout=30) as reply:
        answer: dict[str, Any] = json.loads(reply.read())
        return answer


def _server_export(arguments: argparse.Namespace, client: Any, table: dict[str, Any], target: Path,
                   export_format: str) -> int:
    import shutil

    from botocore.exceptions import BotoCoreError, ClientError

    request: dict[str, Any] = {"TableArn": table["TableArn"], "S3Bucket": arguments.bucket,
                               "ExportFormat": export_format}
    if arguments.at is not None:
        request["ExportTime"] = datetime.fromtimestamp(_parse_time(arguments.at), tz=UTC)
    try:
        started = client.export_table_to_point_in_time(**request)["ExportDescription"]
    except (ClientError, BotoCoreError) as error:
        print(f"dynastore export: {error}", file=sys.stderr)
        return 1
    arn = started["ExportArn"]
    export_id = arn.rpartition("/export/")[2]
    progress = Progress(f"export {table['TableName']}", int(table.get("ItemCount", 0)),
                        int(table.get("TableSizeBytes", 0)))
    buckets: dict[str, Any] = {}
    while True:
        description = client.describe_export(ExportArn=arn)["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS":
            break
        try:
            answer = _admin_jobs(arguments.endpoint)
        except OSError:  # not a dynastore server, or no admin access: no progress
            answer = {}
        buckets = answer.get("Buckets", buckets)
        for job in answer.get("Jobs", ()):
            if job.get("Id") == export_id:
                progress.update(int(job["Items"]), int(job["Bytes"]))
        time.sleep(0.2)
    if description["ExportStatus"] != "COMPLETED":
        progress.finish()
        print(f"dynastore export: failed: {description.get('FailureCode')}: {description.get('FailureMessage')}",
              file=sys.stderr)
        return 1
    progress.update(int(description["ItemCount"]), int(description["BilledSizeBytes"]))
    seconds = progress.finish()
    if not buckets:
        try:
            buckets = _admin_jobs(arguments.endpoint).get("Buckets", {})
        except OSError:
            buckets = {}
    base = description["ExportManifest"].rpartition("/")[0]
    source = Path(str(buckets.get("Folder", ""))) / arguments.bucket / base
    files = sum(1 for _ in source.glob("data/*.gz")) if source.is_dir() else 0
    if "Folder" not in buckets or not source.is_dir():
        print(summary_line(table["TableName"], int(description["ItemCount"]), int(description["BilledSizeBytes"]),
                           files, Path(f"s3://{arguments.bucket}/{base}"), seconds))
        print(f"dynastore export: the server's buckets are not folders on this machine: the export stays in "
              f"bucket {arguments.bucket} at {base}", file=sys.stderr)
        return 0
    destination = target / base
    shutil.copytree(source, destination, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".partial-*"))
    print(summary_line(table["TableName"], int(description["ItemCount"]), int(description["BilledSizeBytes"]),
                       files, destination, seconds))
    return 0


def _scan_export(arguments: argparse.Namespace, client: Any, table: dict[str, Any], target: Path,
                 export_format: str) -> int:
    import orjson
    from botocore.exceptions import BotoCoreError, ClientError

    from dynastore import limits
    from dynastore.backups import export_formats, exports
    from dynastore.backups.buckets import LocalBuckets

    now = time.time()
    export_id = exports.new_export_id(now)
    record = exports.ExportRecord(
        export_id=export_id, arn=f"{table['TableArn']}/export/{export_id}", table_name=table["TableName"],
        table_id=table.get("TableId", ""), table_arn=table["TableArn"], start_time=now, bucket=target.name,
        export_format=export_format, export_time=now)
    buckets = LocalBuckets(target.parent)
    progress = Progress(f"export {table['TableName']}", int(table.get("ItemCount", 0)),
                        int(table.get("TableSizeBytes", 0)))
    current: export_formats.DataFile | None = None
    files: list[dict[str, Any]] = []
    items = size = 0
    scan: dict[str, Any] = {"TableName": arguments.table, "ConsistentRead": True}
    try:
        while True:
            page = client.scan(**scan)
            if current is None:
                key = f"{record.base_key}/data/{export_formats.data_file_name()}{export_formats.EXTENSIONS[export_format]}"
                current = export_formats.DataFile(buckets, record.bucket, key)
            lines = []
            for item in page.get("Items", []):
                body = orjson.dumps({name: _wire(value) for name, value in item.items()})
                lines.append(export_formats.item_line(body, export_format))
                size += len(body)
            current.write_lines(lines)
            items += len(lines)
            progress.update(items, size)
            last = "LastEvaluatedKey" not in page
            if last or current.raw_bytes >= limits.EXPORT_DATA_FILE_BYTES:
                files.append(current.close())
                current = None
            if last:
                break
            scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    except (ClientError, BotoCoreError) as error:
        if current is not None:
            current.abandon()
        progress.finish()
        print(f"dynastore export: {error}", file=sys.stderr)
        return 1
    from dataclasses import replace

    record = replace(record, files=files, item_count=items, billed_bytes=size)
    exports.write_manifests(buckets, record, time.time())
    seconds = progress.finish()
    print(summary_line(record.table_name, items, size, len(files), target / record.base_key, seconds))
    return 0
