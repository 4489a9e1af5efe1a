"""``dynastore import DIR TABLE``: load a folder of CSV, DynamoDB JSON or Ion
files into a new table, with a progress bar and a summary (docs/import.md).

    dynastore import ./dump Music --format dynamodb-json --key Artist:S,SongTitle:S --endpoint URL
    dynastore import ./people.csv-dir People --format csv --key id:N --data-dir ./dynastore-data
    dynastore import s3://my-bucket/exports/ Music --format dynamodb-json --key ... --endpoint URL

- ``--data-dir DIR``: the import runs here, on the data directory (no
  server may hold it), as ImportTable runs on a server: the folder is the
  bucket it reads, the table appears whole when it is done.
- ``--endpoint URL`` with a local folder: any DynamoDB-compatible endpoint.
  The files are read here with ImportTable's readers (the same formats,
  compression and rules) and written with CreateTable and BatchWriteItem
  (the server cannot read this machine's folder).
- ``--endpoint URL`` with ``s3://BUCKET/PREFIX``: ImportTable on the server,
  reading the server's bucket; the bar follows DescribeImport.

Items that cannot be imported (no key, a key of the wrong type, over 400 KB,
a line that does not parse) are counted and the first are shown in the
summary, as ImportTable's ErrorCount; the exit status is 0 when the import
completed (even with such errors), 1 when it failed, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = {"csv": "CSV", "dynamodb-json": "DYNAMODB_JSON", "ion": "ION"}
COMPRESSIONS = {"none": "NONE", "gzip": "GZIP", "zstd": "ZSTD"}
KEY_TYPES = ("S", "N", "B")
BATCH_ITEMS = 25
"""BatchWriteItem's limit of requests per call."""
SHOWN_ERRORS = 10
POLL_SECONDS = 0.5


class UsageError(Exception):
    pass


def add_parser(commands: Any) -> None:
    """Register ``dynastore import`` (called by dynastore/cli.py)."""
    parser = commands.add_parser(
        "import", help="load a folder of CSV / DynamoDB JSON / Ion files into a new table",
        description="Create TABLE and load the files under DIR into it, as ImportTable does.")
    parser.add_argument("source", metavar="DIR", help="a folder of files (every file under it is read; "
                        "inside a DynamoDB export only its data/ files), or s3://BUCKET/PREFIX of the server")
    parser.add_argument("table", metavar="TABLE", help="the table to create (it must not exist)")
    parser.add_argument("--format", required=True, choices=sorted(FORMATS), help="the files' format")
    parser.add_argument("--key", required=True, metavar="PK:T[,SK:T]",
                        help="the table's key: attribute:type, type S, N or B (e.g. pk:S,sk:N)")
    parser.add_argument("--compression", choices=sorted(COMPRESSIONS), default=None,
                        help="the files' compression (default: from the first file's name: .gz, .zst)")
    parser.add_argument("--delimiter", default=None, help="CSV: the delimiter (, by default; also ; : | tab space)")
    parser.add_argument("--header", default=None, metavar="A,B,C",
                        help="CSV: the columns' names, when the files have no header line")
    parser.add_argument("--gsi", action="append", default=[], metavar="NAME=ATTR:T[,ATTR:T]",
                        help="a global secondary index to create (projection ALL); repeatable")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--endpoint", metavar="URL", help="a running server (dynastore or any DynamoDB endpoint)")
    target.add_argument("--data-dir", metavar="DIR", help="a dynastore data directory no server holds")
    parser.add_argument("--region", default="us-east-1", help="the region of the table (%(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (a summary only)")


# --- the request --------------------------------------------------------------------------


def parse_attributes(text: str, option: str) -> list[tuple[str, str]]:
    found = []
    for part in text.split(","):
        name, _, attribute_type = part.strip().rpartition(":")
        if not name or attribute_type not in KEY_TYPES:
            raise UsageError(f"{option}: expected NAME:TYPE with TYPE S, N or B, got {part.strip()!r}")
        found.append((name, attribute_type))
    if not 1 <= len(found) <= 2:
        raise UsageError(f"{option}: a partition key and at most a sort key")
    return found


def table_creation(arguments: argparse.Namespace) -> dict[str, Any]:
    key = parse_attributes(arguments.key, "--key")
    definitions = dict(key)
    key_schema = [{"AttributeName": name, "KeyType": kind} for (name, _), kind in zip(key, ("HASH", "RANGE"), strict=False)]
    indexes = []
    for text in arguments.gsi:
        name, equals, attributes = text.partition("=")
        if not equals or not name:
            raise UsageError(f"--gsi: expected NAME=ATTR:T[,ATTR:T], got {text!r}")
        index_key = parse_attributes(attributes, "--gsi")
        definitions.update(index_key)
        indexes.append({"IndexName": name, "Projection": {"ProjectionType": "ALL"},
                        "KeySchema": [{"AttributeName": attribute, "KeyType": kind}
                                      for (attribute, _), kind in zip(index_key, ("HASH", "RANGE"), strict=False)]})
    created: dict[str, Any] = {
        "TableName": arguments.table, "KeySchema": key_schema, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in definitions.items()],
    }
    if indexes:
        created["GlobalSecondaryIndexes"] = indexes
    return created


def format_options(arguments: argparse.Namespace) -> dict[str, Any] | None:
    if arguments.delimiter is None and arguments.header is None:
        return None
    if arguments.format != "csv":
        raise UsageError("--delimiter and --header are for --format csv")
    csv: dict[str, Any] = {}
    if arguments.delimiter is not None:
        delimiter = "\t" if arguments.delimiter in ("tab", "\\t") else arguments.delimiter
        from dynastore.backups.import_formats import CSV_DELIMITERS

        if delimiter not in CSV_DELIMITERS:
            raise UsageError("--delimiter: one of , ; : | tab space")
        csv["Delimiter"] = delimiter
    if arguments.header is not None:
        csv["HeaderList"] = [name.strip() for name in arguments.header.split(",")]
    return {"Csv": csv}


def guess_compression(keys: list[str]) -> str:
    first = keys[0] if keys else ""
    if first.endswith(".gz"):
        return "GZIP"
    if first.endswith((".zst", ".zstd")):
        return "ZSTD"
    return "NONE"


# --- progress --------------------------------------------------------------------------------


class Progress:
    """A rich progress bar on stderr over bytes read (the total is the files'
    size, as stored), with the items imported, their rate, the errors, the
    time spent and left; nothing when ``enabled`` is False or stderr is not
    a terminal."""

    def __init__(self, total_bytes: int | None, enabled: bool) -> None:
        from rich.console import Console

        console = Console(stderr=True)
        self.enabled = enabled and console.is_terminal  # no bar in a log or a pipe: the summary says it all
        self.started = time.monotonic()
        self._bar: Any = None
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("[bold]importing"), BarColumn(), TaskProgressColumn(), DownloadColumn(),
            TransferSpeedColumn(), TextColumn("{task.fields[items]:,} items ({task.fields[rate]:,.0f}/s)"),
            TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(), TextColumn("ETA"),
            TimeRemainingColumn(), transient=False, console=console,
        )
        self._task = self._bar.add_task("import", total=total_bytes, items=0, rate=0.0, errors=0)
        self._bar.start()

    def update(self, done_bytes: int, items: int, errors: int, total_bytes: int | None = None) -> None:
        if self._bar is None:
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        fields: dict[str, Any] = {"completed": done_bytes, "items": items, "rate": items / elapsed,
                                  "errors": errors}
        if total_bytes is not None:
            fields["total"] = total_bytes
        self._bar.update(self._task, **fields)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


@dataclass
class Outcome:
    imported: int = 0
    processed: int = 0
    errors: int = 0
    bytes_read: int = 0
    samples: list[str] = field(default_factory=list)
    failure: str | None = None

    def note_error(self, message: str) -> None:
        self.errors += 1
        if len(self.samples) < SHOWN_ERRORS:
            self.samples.append(message)


def summary(outcome: Outcome, table: str, seconds: float) -> str:
    rate = outcome.imported / seconds if seconds > 0 else 0.0
    lines = [f"{outcome.imported:,} items imported into {table} "
             f"({outcome.processed:,} read, {outcome.errors:,} error{'' if outcome.errors == 1 else 's'}, "
             f"{outcome.bytes_read:,} bytes) in {seconds:.1f} s, {rate:,.0f} items/s"]
    if outcome.samples:
        lines.append("first errors:")
        lines.extend(f"  {sample}" for sample in outcome.samples)
    return "\n".join(lines)


# --- the three ways --------------------------------------------------------------------------


def local_objects(folder: Path) -> list[Any]:
    from dynastore.backups.buckets import ObjectInfo
    from dynastore.backups.imports import selected_objects

    objects = [ObjectInfo(path.relative_to(folder).as_posix(), path.stat().st_size)
               for path in folder.rglob("*") if path.is_file()]
    return selected_objects(sorted(objects))


def import_on_data_dir(arguments: argparse.Namespace, request: dict[str, Any], folder: Path) -> Outcome:
    """ImportTable itself, on the data directory (the folder is the bucket)."""
    import dynastore
    from dynastore.backups import buckets, imports
    from dynastore.backups.imports import ImportRecord

    embedded = dynastore.open(Path(arguments.data_dir), region=arguments.region)
    try:
        database = embedded.database
        buckets.configure(database.storage, buckets.LocalBuckets(folder.parent))
        request["S3BucketSource"] = {"S3Bucket": folder.name}
        total = sum(info.size for info in local_objects(folder))
        progress = Progress(total, not arguments.no_progress)
        last: list[ImportRecord] = []

        def follow(record: ImportRecord) -> None:
            last[:] = [record]
            progress.update(record.processed_bytes, record.imported_items, record.error_count)

        imports.STEP_LISTENERS.append(follow)
        try:
            description = imports.import_table(database, request)["ImportTableDescription"]
        finally:
            imports.STEP_LISTENERS.remove(follow)
            progress.close()
        record = imports.find_import(database, description["ImportArn"])
        outcome = Outcome(record.imported_items, record.processed_items, record.error_count,
                          record.processed_bytes, list(record.errors[:SHOWN_ERRORS]))
        if record.status != imports.COMPLETED:
            outcome.failure = f"{record.failure_code}: {record.failure_message}"
        return outcome
    finally:
        embedded.close()


def make_client(arguments: argparse.Namespace) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", endpoint_url=arguments.endpoint, region_name=arguments.region,
                        config=Config(retries={"max_attempts": 10, "mode": "adaptive"}))


def import_from_server_bucket(arguments: argparse.Namespace, request: dict[str, Any], source: str) -> Outcome:
    """ImportTable on the server, from its bucket; the bar follows DescribeImport."""
    bucket, _, prefix = source[len("s3://"):].partition("/")
    request["S3BucketSource"] = {"S3Bucket": bucket, "S3KeyPrefix": prefix}
    client = make_client(arguments)
    arn = client.import_table(**request)["ImportTableDescription"]["ImportArn"]
    progress = Progress(None, not arguments.no_progress)
    try:
        while True:
            described = client.describe_import(ImportArn=arn)["ImportTableDescription"]
            progress.update(described.get("ProcessedSizeBytes", 0), described.get("ImportedItemCount", 0),
                            described.get("ErrorCount", 0), total_bytes_of(arguments.endpoint, arn))
            if described["ImportStatus"] != "IN_PROGRESS":
                break
            time.sleep(POLL_SECONDS)
    finally:
        progress.close()
    outcome = Outcome(described.get("ImportedItemCount", 0), described.get("ProcessedItemCount", 0),
                      described.get("ErrorCount", 0), described.get("ProcessedSizeBytes", 0))
    if described["ImportStatus"] != "COMPLETED":
        outcome.failure = f"{described.get('FailureCode')}: {described.get('FailureMessage')}"
    return outcome


def total_bytes_of(endpoint: str, arn: str) -> int | None:
    """The size of the import's objects, from a dynastore server's
    ``GET /_dynastore/backups/imports`` (None elsewhere: the bar has no total)."""
    import json
    import urllib.request

    try:
        with urllib.request.urlopen(f"{endpoint.rstrip('/')}/_dynastore/backups/imports",
                                    timeout=POLL_SECONDS * 4) as answer:
            jobs = json.loads(answer.read()).get("Imports", [])
    except (OSError, ValueError):
        return None
    total = next((job.get("TotalBytes") for job in jobs if job.get("Arn") == arn), None)
    return int(total) if isinstance(total, int) and total > 0 else None


def import_through_endpoint(arguments: argparse.Namespace, request: dict[str, Any], folder: Path) -> Outcome:
    """The files read here, the items written with BatchWriteItem."""
    from dynastore.backups import import_formats

    client = make_client(arguments)
    creation = request["TableCreationParameters"]
    client.create_table(**creation)
    client.get_waiter("table_exists").wait(TableName=arguments.table, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    typed = {d["AttributeName"]: d["AttributeType"] for d in creation["AttributeDefinitions"]}
    key_names = [element["AttributeName"] for element in creation["KeySchema"]]
    objects = local_objects(folder)
    outcome = Outcome()
    progress = Progress(sum(info.size for info in objects), not arguments.no_progress)
    writer = _BatchWriter(client, arguments.table, key_names, outcome)
    csv_options = (request.get("InputFormatOptions") or {}).get("Csv")
    try:
        for info in objects:
            with (folder / info.key).open("rb") as raw:
                counter = import_formats.CountingReader(raw)
                stream = import_formats.decompressed(counter, request["InputCompressionType"])
                try:
                    for parsed in import_formats.records(stream, request["InputFormat"], csv_options, typed):
                        outcome.processed += 1
                        where = f"{info.key} line {parsed.line}"
                        if parsed.item is None:
                            outcome.note_error(f"{where}: {parsed.error}")
                        else:
                            writer.add(parsed.item, where)
                        progress.update(outcome.bytes_read + counter.count, outcome.imported + writer.pending,
                                        outcome.errors)
                except Exception as error:  # a corrupt compressed file: the rest of it is skipped
                    outcome.note_error(f"{info.key}: cannot be read ({error})")
            outcome.bytes_read += info.size
        writer.flush()
        progress.update(outcome.bytes_read, outcome.imported, outcome.errors)
    finally:
        progress.close()
    return outcome


class _BatchWriter:
    """Items in BatchWriteItem calls of 25 (a repeated key starts a new call:
    the later item wins); a call DynamoDB refuses is retried item by item so
    the bad ones are counted as errors."""

    def __init__(self, client: Any, table: str, key_names: list[str], outcome: Outcome) -> None:
        self.client = client
        self.table = table
        self.key_names = key_names
        self.outcome = outcome
        self.batch: list[tuple[dict[str, Any], str]] = []
        self.keys: set[str] = set()

    @property
    def pending(self) -> int:
        return len(self.batch)

    def add(self, item: dict[str, Any], where: str) -> None:
        import orjson

        key = orjson.dumps([item.get(name) for name in self.key_names]).decode()
        if key in self.keys:
            self.flush()
        self.batch.append((item, where))
        self.keys.add(key)
        if len(self.batch) == BATCH_ITEMS:
            self.flush()

    def flush(self) -> None:
        if not self.batch:
            return
        batch, self.batch, self.keys = self.batch, [], set()
        requests = [{"PutRequest": {"Item": item}} for item, _ in batch]
        try:
            self._write(requests)
            self.outcome.imported += len(batch)
        except self.client.exceptions.ClientError:
            for item, where in batch:
                try:
                    self.client.put_item(TableName=self.table, Item=item)
                    self.outcome.imported += 1
                except self.client.exceptions.ClientError as error:
                    self.outcome.note_error(f"{where}: {error.response['Error'].get('Message', error)}")

    def _write(self, requests: list[dict[str, Any]]) -> None:
        pause = 0.05
        while requests:
            answer = self.client.batch_write_item(RequestItems={self.table: requests})
            requests = answer.get("UnprocessedItems", {}).get(self.table, [])
            if requests:
                time.sleep(pause)
                pause = min(pause * 2, 2.0)


# --- the command -------------------------------------------------------------------------------


def run(arguments: argparse.Namespace) -> int:
    try:
        request, folder = _request(arguments)
    except UsageError as error:
        print(f"dynastore import: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        if arguments.data_dir is not None:
            if folder is None:
                raise UsageError("--data-dir reads a local folder, not s3://")
            outcome = import_on_data_dir(arguments, request, folder)
        elif folder is None:
            outcome = import_from_server_bucket(arguments, request, arguments.source)
        else:
            outcome = import_through_endpoint(arguments, request, folder)
    except UsageError as error:
        print(f"dynastore import: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # the server's refusal (a table that exists...), a lost connection
        message = getattr(error, "message", None) or str(error)
        print(f"dynastore import: {type(error).__name__}: {message}", file=sys.stderr)
        return 1
    print(summary(outcome, arguments.table, time.monotonic() - started))
    if outcome.failure is not None:
        print(f"dynastore import: the import failed: {outcome.failure}", file=sys.stderr)
        return 1
    return 0


def _request(arguments: argparse.Namespace) -> tuple[dict[str, Any], Path | None]:
    folder: Path | None = None
    keys: list[str] = []
    if not arguments.source.startswith("s3://"):
        folder = Path(arguments.source).resolve()
        if not folder.is_dir():
            raise UsageError(f"{arguments.source} is not a folder")
        keys = [info.key for info in local_objects(folder)]
    request: dict[str, Any] = {
        "InputFormat": FORMATS[arguments.format],
        "TableCreationParameters": table_creation(arguments),
    }
    options = format_options(arguments)
    if options is not None:
        request["InputFormatOptions"] = options
    request["InputCompressionType"] = (COMPRESSIONS[arguments.compression] if arguments.compression
                                       else guess_compression(keys))
    return request, folder

