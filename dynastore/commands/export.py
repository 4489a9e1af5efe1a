"""``dynastore export TABLE DIR [--format dynamodb-json|ion] [--at ISO_TIME]``.

Writes the table into ``DIR/AWSDynamoDB/<export-id>/`` in DynamoDB's export
layout (manifest-summary.json, manifest-files.json, data/*.json.gz or
*.ion.gz: dynastore/backups/export_formats.py), with a progress bar (items and
bytes, rate, ETA) and a summary line.

- ``--data-dir D``: opens the data directory (no server may hold it) and runs
  the export engine of ExportTableToPointInTime itself, one page at a time:
  one consistent point in time (``--at``: any second of the PITR window;
  without PITR, the moment the command starts).
- ``--endpoint URL``: reads the table of a running server (or any
  DynamoDB-compatible endpoint) with consistent Scan pages and writes the
  same files here; Scan is not one point in time, and ``--at`` needs
  ``--data-dir`` (or ExportTableToPointInTime itself, which writes into the
  server's buckets).
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from datetime import datetime
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
                        help="the table as of this time (PITR on, inside its window; --data-dir only)")
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
    target.mkdir(parents=True, exist_ok=True)
    export_format = FORMATS[arguments.format]
    try:
        if arguments.data_dir is not None:
            return _over_data_dir(arguments, target, export_format)
        if arguments.at is not None:
            print("dynastore export: --at needs --data-dir (over an endpoint the table is read with Scan)",
                  file=sys.stderr)
            return 2
        return _over_endpoint(arguments, target, export_format)
    except KeyboardInterrupt:
        print("dynastore export: interrupted", file=sys.stderr)
        return 130


def _parse_time(text: str) -> float:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        from datetime import UTC

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


def _over_endpoint(arguments: argparse.Namespace, target: Path, export_format: str) -> int:
    import os

    import boto3
    import orjson
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    from dynastore import limits
    from dynastore.backups import export_formats, exports
    from dynastore.backups.buckets import LocalBuckets

    client = boto3.client(
        "dynamodb", endpoint_url=arguments.endpoint, region_name=arguments.region,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "dynastore"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "dynastore"),
        config=Config(retries={"mode": "standard"}))
    try:
        table = client.describe_table(TableName=arguments.table)["Table"]
    except (ClientError, BotoCoreError) as error:
        print(f"dynastore export: {error}", file=sys.stderr)
        return 1
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
