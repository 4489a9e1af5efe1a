"""ExportTableToPointInTime, DescribeExport and ListExports (issue 19, section 3).

An export writes its table, as of one time (FULL_EXPORT) or the changes of a
period (INCREMENTAL_EXPORT), into an S3 bucket (dynastore/backups/buckets.py:
a folder, or a real S3-compatible store) in DynamoDB's layout::

    <S3Prefix>/AWSDynamoDB/<export-id>/_started
    <S3Prefix>/AWSDynamoDB/<export-id>/data/<name>.json.gz    (or .ion.gz)
    <S3Prefix>/AWSDynamoDB/<export-id>/manifest-files.json    (+ .md5, .checksum)
    <S3Prefix>/AWSDynamoDB/<export-id>/manifest-summary.json  (+ .md5, .checksum)

The work runs in the background a page per step (``export_step``), like a
backup (dynastore/backups/jobs.py): the job holds a view of the table
(``pitr.hold``) so it reads one point in time however long it takes; each
step reads one page (``pitr.read_page`` / ``read_changes_page``), appends its
lines to the data file being written and stores the job's record (position,
counts, the data files finished). A data file is an object that appears whole
when closed (buckets.py), so a kill -9 loses at most the file being written:
at resume (the server's start, or another server's take-over) the job
rewinds to where that file began and writes it again (under the same name:
it replaces whatever a killed process left there). The
manifests are written last, manifest-summary.json at the very end, so a
visible manifest-summary.json always describes a complete export. An export
whose table went away, or whose bucket refuses a write, ends FAILED with
FailureCode / FailureMessage.

Records: one row each in the namespace's own storage table ``exports``
(pk ``export``, sk the export id ``<14-digit ms>-<8 hex>``, so they sort by
start time), kept after the export ends (DescribeExport, ListExports).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.backups import export_formats, pitr
from dynastore.backups.buckets import BucketError, Buckets, LocalBuckets, buckets_for
from dynastore.backups.errors import pitr_not_enabled
from dynastore.backups.export_errors import (
    client_token_conflict,
    export_not_found,
    export_time_in_future,
    export_time_outside_window,
)
from dynastore.backups.export_formats import DYNAMODB_JSON, NEW_AND_OLD_IMAGES, NEW_IMAGE, DataFile
from dynastore.backups.own_tables import own_table_id
from dynastore.backups.runner import JobKind, JobRunner, Upkeep
from dynastore.errors import DynamoDBError, LimitExceededException, ValidationException
from dynastore.storage.base import Row, SortKeyRange
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

logger = logging.getLogger("dynastore.exports")

EXPORTS_KIND = "exports"
EXPORT_PK = b"export"
IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
FULL_EXPORT = "FULL_EXPORT"
INCREMENTAL_EXPORT = "INCREMENTAL_EXPORT"
DEFAULT_SSE_ALGORITHM = "AES256"
"""What DescribeExport reports when the request named none (S3's default encryption)."""
WATCH_SECONDS = 2.0
MICROSECOND = 1e-6


@dataclass
class ExportRecord:
    export_id: str
    arn: str
    table_name: str
    table_id: str
    """The table's TableId (uuid)."""
    table_arn: str
    start_time: float
    bucket: str
    export_format: str = DYNAMODB_JSON
    export_type: str = FULL_EXPORT
    prefix: str | None = None
    bucket_owner: str | None = None
    sse_algorithm: str = DEFAULT_SSE_ALGORITHM
    sse_kms_key_id: str | None = None
    client_token: str | None = None
    request_digest: str = ""
    export_time: float | None = None
    """FULL_EXPORT: the time the export is as of (None until the view is held)."""
    from_time: float | None = None
    to_time: float | None = None
    view_type: str | None = None
    status: str = IN_PROGRESS
    end_time: float | None = None
    failure_code: str | None = None
    failure_message: str | None = None
    position: list[Any] | None = None
    item_count: int = 0
    billed_bytes: int = 0
    total_items: int = 0
    total_bytes: int = 0
    started_marker: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)
    file_key: str | None = None
    """The data file being written (None between files)."""
    file_start: dict[str, Any] = field(default_factory=dict)
    """position / item_count / billed_bytes where the current file began."""
    local_root: str | None = None
    """Write into folders under this directory instead of the server's
    buckets (``dynastore export --data-dir``)."""

    @property
    def holder(self) -> str:
        return f"export/{self.export_id}"

    @property
    def base_key(self) -> str:
        """``<S3Prefix>/AWSDynamoDB/<export-id>``."""
        prefix = (self.prefix or "").strip("/")
        return f"{prefix}/AWSDynamoDB/{self.export_id}" if prefix else f"AWSDynamoDB/{self.export_id}"

    @property
    def manifest_key(self) -> str:
        return f"{self.base_key}/manifest-summary.json"

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> ExportRecord:
        return cls(**orjson.loads(data))


# --- the registry -------------------------------------------------------------------------


def _exports_id(database: Database) -> int:
    return own_table_id(database, EXPORTS_KIND)


def save(database: Database, record: ExportRecord) -> None:
    data = record.to_json()
    sk = record.export_id.encode()
    database.storage.put(_exports_id(database), Row(partition_hash(EXPORT_PK), EXPORT_PK, sk, data, len(data)))


def forget(database: Database, export_id: str) -> None:
    database.storage.delete(_exports_id(database), EXPORT_PK, export_id.encode())


def get(database: Database, export_id: str) -> ExportRecord | None:
    row = database.storage.get(_exports_id(database), EXPORT_PK, export_id.encode())
    return None if row is None else ExportRecord.from_json(row.item)


def records(database: Database, after: str | None = None) -> Iterator[ExportRecord]:
    """Every export of the namespace, oldest first (after the id ``after``)."""
    sort_range = SortKeyRange() if after is None else SortKeyRange(low=after.encode(), low_inclusive=False)
    for row in database.storage.query(_exports_id(database), EXPORT_PK, sort_range):
        yield ExportRecord.from_json(row.item)


def new_export_id(now: float) -> str:
    """DynamoDB's: start time in ms (14 digits) and 8 hex digits."""
    return f"{int(now * 1000):014d}-{secrets.token_hex(4)}"


def export_id_of_arn(arn: Any) -> str | None:
    if not isinstance(arn, str):
        return None
    _, marker, export_id = arn.rpartition("/export/")
    if not marker or len(export_id) != 23 or export_id[14] != "-" or not export_id[:14].isdigit():
        return None
    return export_id


# --- starting an export -----------------------------------------------------------------------


def _find_table(database: Database, table_arn: Any) -> TableSchema:
    from dynastore.backups.service import find_table

    if not isinstance(table_arn, str) or not table_arn.startswith("arn:") or ":table/" not in table_arn:
        raise ValidationException(f"Invalid TableArn: {table_arn}")
    return find_table(database, table_arn)


def _digest(request: dict[str, Any]) -> str:
    """What a ClientToken must be reused with (every parameter but itself)."""
    kept = {name: value for name, value in request.items() if name != "ClientToken"}
    return hashlib.sha256(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _same_token(database: Database, token: str, now: float) -> ExportRecord | None:
    for record in records(database):
        if record.client_token == token and now - record.start_time <= limits.EXPORT_CLIENT_TOKEN_SECONDS:
            return record
    return None


def _incremental_period(database: Database, schema: TableSchema, request: dict[str, Any],
                        now: float) -> tuple[float, float, str]:
    specification = request.get("IncrementalExportSpecification") or {}
    from_time = specification.get("ExportFromTime")
    to_time = specification.get("ExportToTime")
    view_type = specification.get("ExportViewType") or NEW_AND_OLD_IMAGES
    if view_type not in (NEW_IMAGE, NEW_AND_OLD_IMAGES):
        raise ValidationException(
            f"1 validation error detected: Value '{view_type}' at 'incrementalExportSpecification.exportViewType' "
            "failed to satisfy constraint: Member must satisfy enum value set: [NEW_AND_OLD_IMAGES, NEW_IMAGE]")
    if from_time is None:
        raise ValidationException("ExportFromTime must be specified for an incremental export")
    start = float(from_time)
    end = now if to_time is None else float(to_time)
    if end > now:
        raise export_time_in_future()
    if start >= end:
        raise ValidationException("ExportFromTime must be before ExportToTime")
    if end - start < limits.EXPORT_INCREMENTAL_MIN_SECONDS:
        raise ValidationException("The incremental export period must be at least 15 minutes")
    if end - start > limits.EXPORT_INCREMENTAL_MAX_SECONDS:
        raise ValidationException("The incremental export period must be at most 24 hours")
    window = pitr.restorable_window(database, schema)
    assert window is not None
    if start < window[0]:
        raise export_time_outside_window()
    return start, end, view_type


def start_export(database: Database, request: dict[str, Any], *, require_pitr: bool = True,
                 local_root: str | None = None, run: bool = True) -> ExportRecord:
    """Begin an export (the checks of ExportTableToPointInTime, the record,
    the held view) and, with ``run``, schedule its background steps."""
    ensure_resumed(database)
    if not database.storage.exclusive:  # PITR may have been turned on through another server
        database.refresh_catalogue(check=True)
    schema = _find_table(database, request.get("TableArn"))
    now = database.now()
    token = request.get("ClientToken")
    digest = _digest(request)
    if isinstance(token, str):
        earlier = _same_token(database, token, now)
        if earlier is not None:
            if earlier.request_digest != digest:
                raise client_token_conflict(token)
            return earlier
    export_type = request.get("ExportType") or FULL_EXPORT
    export_format = request.get("ExportFormat") or DYNAMODB_JSON
    specification = request.get("IncrementalExportSpecification")
    if export_type == FULL_EXPORT and specification is not None:
        raise ValidationException("IncrementalExportSpecification can only be given for an INCREMENTAL_EXPORT")
    if export_type == INCREMENTAL_EXPORT and request.get("ExportTime") is not None:
        raise ValidationException("ExportTime cannot be given for an INCREMENTAL_EXPORT")
    pitr_on = pitr.pitr_enabled(schema)
    if (require_pitr or export_type == INCREMENTAL_EXPORT) and not pitr_on:
        raise pitr_not_enabled(schema.name)
    export_time: float | None = None
    from_time = to_time = None
    view_type = None
    if export_type == INCREMENTAL_EXPORT:
        from_time, to_time, view_type = _incremental_period(database, schema, request, now)
    elif request.get("ExportTime") is not None:
        export_time = float(request["ExportTime"])
        if export_time > now:
            raise export_time_in_future()
        window = pitr.restorable_window(database, schema)
        if window is None:
            raise pitr_not_enabled(schema.name)
        if export_time < window[0]:
            raise export_time_outside_window()
    running = sum(1 for record in records(database) if record.status == IN_PROGRESS)
    if running >= limits.EXPORTS_IN_PROGRESS_MAX:
        raise LimitExceededException(
            f"There are too many concurrent exports in progress: at most {limits.EXPORTS_IN_PROGRESS_MAX}")
    export_id = new_export_id(now)
    total_items, total_bytes = database.table_statistics(schema)
    record = ExportRecord(
        export_id=export_id, arn=f"{schema.arn}/export/{export_id}", table_name=schema.name,
        table_id=schema.table_uuid, table_arn=schema.arn, start_time=now, bucket=str(request.get("S3Bucket")),
        export_format=export_format, export_type=export_type, prefix=request.get("S3Prefix"),
        bucket_owner=request.get("S3BucketOwner"),
        sse_algorithm=request.get("S3SseAlgorithm") or DEFAULT_SSE_ALGORITHM,
        sse_kms_key_id=request.get("S3SseKmsKeyId"), client_token=token if isinstance(token, str) else None,
        request_digest=digest, from_time=from_time, to_time=to_time, view_type=view_type,
        total_items=total_items, total_bytes=total_bytes, local_root=local_root,
    )
    # The record first, then the view: a kill -9 between the two leaves a
    # record without its view, which resume ends FAILED (never a stray hold).
    # The job's lock is taken first, so that another server sharing the store
    # cannot take the half-begun record for a crashed one meanwhile: it steps
    # the job only once this server is gone (the lock goes with it).
    database.storage.hold_lock(database.storage_name(f"export-job/{export_id}"))
    save(database, record)
    try:
        held = pitr.hold(database, schema.name, record.holder, from_time if from_time is not None else export_time)
    except BaseException:
        forget(database, record.export_id)
        raise
    if export_type == FULL_EXPORT:
        record = replace(record, export_time=held)
    else:
        record = replace(record, export_time=to_time)
    save(database, record)
    if run:
        add(database, export_id)
    return record


# --- one step -------------------------------------------------------------------------------


_OPEN: weakref.WeakKeyDictionary[Any, dict[str, DataFile]] = weakref.WeakKeyDictionary()
"""The data file each export of this process is writing: database -> export
id -> file (keyed by the Database itself: a collected one's id() is reused)."""


def _open_files(database: Database) -> dict[str, DataFile]:
    found = _OPEN.get(database)
    if found is None:
        found = _OPEN[database] = {}
    return found


def _buckets(database: Database, record: ExportRecord) -> Buckets:
    if record.local_root is not None:
        return LocalBuckets(Path(record.local_root))
    return buckets_for(database)


def _source(database: Database, record: ExportRecord) -> TableSchema | str:
    """The export's table with its view held, or why the export cannot go on."""
    schema = database.tables.get(record.table_name)
    if schema is None or schema.table_uuid != record.table_id:
        return f"The table {record.table_name} was deleted during the export"
    if record.holder in pitr.holders(schema) or record.export_time is None:
        return schema
    # The hold was lost: two holds or releases of one table's view at the
    # same moment (another export's, a backup's; on a shared store) can
    # overwrite each other's change of the table's definition. While PITR
    # keeps the time readable, hold it again; else the export cannot go on.
    at = record.from_time if record.export_type == INCREMENTAL_EXPORT else record.export_time
    try:
        pitr.hold(database, record.table_name, record.holder, at)
    except DynamoDBError as error:
        return f"The export's view of the table was lost and cannot be held again: {error.message}"
    logger.warning("export %s: its view of %s was lost and is held again", record.export_id, record.table_name)
    return database.tables[record.table_name]


def _keys_of(schema: TableSchema, item: dict[str, Any]) -> dict[str, Any]:
    keys = {schema.partition_key.name: item[schema.partition_key.name]}
    if schema.sort_key is not None:
        keys[schema.sort_key.name] = item[schema.sort_key.name]
    return keys


def _page_lines(database: Database, schema: TableSchema, record: ExportRecord,
                max_rows: int) -> tuple[list[bytes], int, pitr.Position | None]:
    """The next page's lines, the DynamoDB size they stand for, and where to go on."""
    position = pitr.position_from_json(record.position)
    if record.export_type == FULL_EXPORT:
        assert record.export_time is not None
        with database.storage.bulk_reads():
            page = pitr.read_page(database, schema, record.export_time, position, max_rows)
        return ([export_formats.item_line(row.item, record.export_format) for row in page.rows],
                sum(row.size for row in page.rows), page.position)
    assert record.from_time is not None and record.to_time is not None
    log = pitr.change_log(schema)
    started = float(log["started"]) if log is not None else record.from_time
    # DynamoDB's period is [from, to); the log's pages are (since, until].
    since = max(record.from_time - MICROSECOND, started)
    until = record.to_time - MICROSECOND
    with database.storage.bulk_reads():
        changes = pitr.read_changes_page(database, schema, since, until, position, max_rows)
    lines = []
    size = 0
    view_type = record.view_type or NEW_AND_OLD_IMAGES
    for change in changes.changes:
        new = None if change.after is None else change.after.item
        old = None if change.before is None else change.before.item
        image = change.after or change.before
        if new == old or image is None:
            continue  # changed and changed back (or absent at both ends): nothing to tell
        keys = _keys_of(schema, orjson.loads(image.item))
        lines.append(export_formats.change_line(keys, new, old, change.micros, record.export_format, view_type))
        size += (change.after.size if change.after is not None else 0) + (
            change.before.size if change.before is not None and view_type == NEW_AND_OLD_IMAGES else 0)
    return lines, size, changes.position


def _data_key(record: ExportRecord) -> str:
    """The next data file's key: named after the export and the file's
    number, so a file written again after a crash replaces the one a killed
    process may have left (never an unlisted file in data/)."""
    extension = export_formats.EXTENSIONS[record.export_format]
    name = export_formats.data_file_name(f"{record.arn}#{len(record.files)}")
    return f"{record.base_key}/data/{name}{extension}"


def _rewind(record: ExportRecord) -> ExportRecord:
    """The data file being written was lost (a restart): start it again."""
    start = record.file_start
    return replace(record, position=start.get("position"), item_count=int(start.get("item_count", 0)),
                   billed_bytes=int(start.get("billed_bytes", 0)), file_key=None)


def write_manifests(buckets: Buckets, record: ExportRecord, end_time: float) -> None:
    """manifest-files.json, then manifest-summary.json: the summary last, so
    a visible summary always means a complete export."""
    base = record.base_key
    files_body = export_formats.manifest_files_body(record.files)
    files_key = f"{base}/manifest-files.json"
    export_formats.write_object(buckets, record.bucket, files_key, files_body)
    checksum = export_formats.checksum_of(files_body)
    export_formats.write_object(buckets, record.bucket, f"{base}/manifest-files.md5", checksum)
    export_formats.write_object(buckets, record.bucket, f"{base}/manifest-files.checksum", checksum)
    summary: dict[str, Any] = {
        "version": export_formats.MANIFEST_VERSION,
        "exportArn": record.arn,
        "startTime": export_formats.iso_time(record.start_time),
        "endTime": export_formats.iso_time(end_time),
        "tableArn": record.table_arn,
        "tableId": record.table_id,
    }
    if record.export_type == FULL_EXPORT:
        assert record.export_time is not None
        summary["exportTime"] = export_formats.iso_time(record.export_time)
    else:
        assert record.from_time is not None and record.to_time is not None
        summary["exportFromTime"] = export_formats.iso_time(record.from_time)
        summary["exportToTime"] = export_formats.iso_time(record.to_time)
        summary["exportViewType"] = record.view_type
    summary.update({
        "s3Bucket": record.bucket,
        "s3Prefix": record.prefix,
        "s3SseAlgorithm": record.sse_algorithm,
        "s3SseKmsKeyId": record.sse_kms_key_id,
        "manifestFilesS3Key": files_key,
        "billedSizeBytes": record.billed_bytes,
        "itemCount": record.item_count,
        "outputFormat": record.export_format,
        "exportType": record.export_type,
    })
    summary_body = orjson.dumps(summary)
    checksum = export_formats.checksum_of(summary_body)
    export_formats.write_object(buckets, record.bucket, f"{base}/manifest-summary.md5", checksum)
    export_formats.write_object(buckets, record.bucket, f"{base}/manifest-summary.checksum", checksum)
    export_formats.write_object(buckets, record.bucket, record.manifest_key, summary_body)


def fail(database: Database, record: ExportRecord, code: str, message: str) -> ExportRecord:
    """End the export FAILED: its data file goes, its view is released."""
    logger.warning("export %s of %s failed: %s: %s", record.export_id, record.table_name, code, message)
    current = _open_files(database).pop(record.export_id, None)
    if current is not None:
        current.abandon()
    record = replace(record, status=FAILED, failure_code=code, failure_message=message,
                     end_time=database.now(), file_key=None)
    save(database, record)
    pitr.release(database, record.table_name, record.holder)
    return record


def export_step(database: Database, record: ExportRecord, max_rows: int | None = None) -> ExportRecord:
    """Write one page (``max_rows`` items, default EXPORT_PAGE_ROWS); returns
    the record as it is now."""
    max_rows = max_rows or limits.EXPORT_PAGE_ROWS
    key = record.export_id
    open_files = _open_files(database)
    source = _source(database, record)
    if isinstance(source, str):
        return fail(database, record, "TableNotFound" if "deleted" in source else "InternalError", source)
    if record.export_time is None:
        return fail(database, record, "InternalError", "the export was interrupted before it began")
    current = open_files.get(key)
    if current is None and record.file_key is not None:
        record = _rewind(record)
    buckets = _buckets(database, record)
    try:
        if not record.started_marker:
            export_formats.write_object(buckets, record.bucket, f"{record.base_key}/_started", b"")
            record = replace(record, started_marker=True)
        if current is None:
            current = DataFile(buckets, record.bucket, _data_key(record))
            open_files[key] = current
            record = replace(record, file_key=current.key, file_start={
                "position": record.position, "item_count": record.item_count,
                "billed_bytes": record.billed_bytes})
        lines, size, position = _page_lines(database, source, record, max_rows)
        current.write_lines(lines)
        record = replace(record, position=pitr.position_to_json(position),
                         item_count=record.item_count + len(lines), billed_bytes=record.billed_bytes + size)
        done = position is None
        if done or current.raw_bytes >= limits.EXPORT_DATA_FILE_BYTES:
            open_files.pop(key, None)
            entry = current.close()
            record = replace(record, files=[*record.files, entry], file_key=None, file_start={})
        if done:
            end_time = database.now()
            write_manifests(buckets, record, end_time)
            record = replace(record, status=COMPLETED, end_time=end_time)
    except BucketError as error:
        # DynamoDB prefixes S3's code (S3NoSuchBucket, S3AccessDenied: moto's
        # export says the same; unconfirmed on the service).
        return fail(database, record, f"S3{error.code}", error.message)
    except OSError as error:
        return fail(database, record, "S3Error", str(error))
    save(database, record)
    if record.status != IN_PROGRESS:
        pitr.release(database, record.table_name, record.holder)
        logger.info("export %s of %s done: %d items in %d files", record.export_id, record.table_name,
                    record.item_count, len(record.files))
    return record


# --- running the jobs (dynastore/backups/runner.py) ------------------------------------------


STEP_ATTEMPTS = 5
"""A step that fails this many times in a row (a bug, not the store being
away) ends its export FAILED with the error, rather than retrying forever."""


def _load(database: Database, export_id: str) -> ExportRecord | None:
    record = get(database, export_id)
    return record if record is not None and record.status == IN_PROGRESS else None


def _advance(database: Database, record: ExportRecord) -> bool:
    return export_step(database, record).status == IN_PROGRESS


def _give_up(database: Database, record: ExportRecord, error: Exception) -> None:
    fail(database, record, "InternalError", f"{type(error).__name__}: {error}")


RUNNER = JobRunner("exports", [JobKind(
    "export", lambda database: [record.export_id for record in records(database) if record.status == IN_PROGRESS],
    _load, _advance, _give_up)], logger, attempts=STEP_ATTEMPTS)


def step(database: Database) -> bool | None:
    """One step of one unfinished export (``JobRunner.step``)."""
    return RUNNER.step(database)


def resume(database: Database) -> None:
    RUNNER.resume(database)


def ensure_resumed(database: Database) -> None:
    RUNNER.ensure_resumed(database)


def add(database: Database, export_id: str) -> None:
    RUNNER.add(database, "export", export_id)


def run_to_end(database: Database) -> None:
    """Every unfinished export, to its end (no loop: the embedded database,
    a command). A step to retry is retried at once, STEP_ATTEMPTS times at most."""
    RUNNER.run_to_end(database)


class ExportJobs(Upkeep):
    """A server's exports for one namespace: resume at start; on a shared
    store look again every WATCH_SECONDS (a dead server's exports)."""

    logger = logger

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = WATCH_SECONDS) -> None:
        super().__init__(database, loop, interval)

    def look(self) -> None:
        self.database.refresh_catalogue()
        resume(self.database)


# --- the responses -----------------------------------------------------------------------------


def description(record: ExportRecord) -> dict[str, Any]:
    """DynamoDB's ExportDescription."""
    answer: dict[str, Any] = {"ExportArn": record.arn, "ExportStatus": record.status,
                              "StartTime": record.start_time}
    if record.end_time is not None:
        answer["EndTime"] = record.end_time
    if record.status == COMPLETED:
        answer["ExportManifest"] = record.manifest_key
    answer["TableArn"] = record.table_arn
    answer["TableId"] = record.table_id
    if record.export_type == FULL_EXPORT and record.export_time is not None:
        answer["ExportTime"] = record.export_time
    if record.client_token is not None:
        answer["ClientToken"] = record.client_token
    answer["S3Bucket"] = record.bucket
    if record.bucket_owner is not None:
        answer["S3BucketOwner"] = record.bucket_owner
    if record.prefix is not None:
        answer["S3Prefix"] = record.prefix
    answer["S3SseAlgorithm"] = record.sse_algorithm
    if record.sse_kms_key_id is not None:
        answer["S3SseKmsKeyId"] = record.sse_kms_key_id
    if record.failure_code is not None:
        answer["FailureCode"] = record.failure_code
        answer["FailureMessage"] = record.failure_message
    answer["ExportFormat"] = record.export_format
    if record.status == COMPLETED:
        answer["BilledSizeBytes"] = record.billed_bytes
        answer["ItemCount"] = record.item_count
    answer["ExportType"] = record.export_type
    if record.export_type == INCREMENTAL_EXPORT:
        answer["IncrementalExportSpecification"] = {
            "ExportFromTime": record.from_time, "ExportToTime": record.to_time,
            "ExportViewType": record.view_type}
    return answer


def find(database: Database, arn: Any) -> ExportRecord:
    export_id = export_id_of_arn(arn)
    record = None if export_id is None else get(database, export_id)
    if record is None or record.arn != arn:
        raise export_not_found(str(arn))
    return record


def describe_export(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    ensure_resumed(database)
    return {"ExportDescription": description(find(database, request.get("ExportArn")))}


def list_exports(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    ensure_resumed(database)
    table_arn = request.get("TableArn")
    limit = int(request.get("MaxResults") or limits.LIST_EXPORTS_MAX_RESULTS)
    token = request.get("NextToken")
    after = None
    if token is not None:
        after = export_id_of_arn(f"x/export/{token}")
        if after is None:
            raise ValidationException(f"Invalid NextToken: {token}")
    summaries: list[dict[str, Any]] = []
    last: str | None = None
    for record in records(database, after):
        if table_arn is not None and record.table_arn != table_arn:
            continue
        if len(summaries) == limit:
            last = summaries[-1]["ExportArn"].rpartition("/export/")[2]
            break
        summaries.append({"ExportArn": record.arn, "ExportStatus": record.status,
                          "ExportType": record.export_type})
    answer: dict[str, Any] = {"ExportSummaries": summaries}
    if last is not None:
        answer["NextToken"] = last
    return answer


def job_progress(database: Database) -> list[dict[str, Any]]:
    """Every export still IN_PROGRESS, with items and bytes done (the admin route)."""
    found = []
    for record in records(database):
        if record.status == IN_PROGRESS:
            found.append({"Kind": "export", "Id": record.export_id, "Arn": record.arn,
                          "Table": record.table_name, "Status": record.status,
                          "Items": record.item_count, "Bytes": record.billed_bytes,
                          "TotalItems": record.total_items, "TotalBytes": record.total_bytes,
                          "Files": len(record.files)})
    return found
