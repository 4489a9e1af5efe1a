"""ImportTable, DescribeImport, ListImports: a new table from S3 objects.

An import is recorded in a storage table of dynastore's own
(``_dynastore/index/imports``: pk ``import``, sk the import's id
``<14-digit ms>-<8 hex>``, the tail of its ARN, so rows sort by start time;
item a JSON ``ImportRecord``). The table it creates is built as a restore
builds its table (dynastore/backups/restore.py): its storage and its
indexes' are made under names of dynastore's own (``importing/<id>``,
invisible to every API), filled a page per background step through the one
write path (dynastore/write_path.py, so GSI entries follow), and renamed to
the table's name in one transaction with the record going COMPLETED. Each
step writes its page and moves the record on (counts, the object and record
reached) in the same transaction, so after a kill -9 the import resumes
exactly where it stopped; a half-imported table is never visible.

Which objects are read: every object under ``S3KeyPrefix`` in key order,
except that inside a DynamoDB export (``.../AWSDynamoDB/<export id>/...``)
only its ``data/`` files are (so pointing an import at an export's folder
imports it unchanged: the manifests, ``_started`` and checksums are skipped).

Errors in the data (a record that does not parse, a missing key attribute,
a key of the wrong type, an item over 400 KB, an index key of the wrong
type) are counted in ErrorCount and logged where a user can read them:
DynamoDB writes them to CloudWatch Logs (the log group of
CloudWatchLogGroupArn); dynastore logs each (up to IMPORT_LOGGED_ERRORS_MAX)
on the server's log (logger ``dynastore.imports``), and keeps the first
IMPORT_RECORDED_ERRORS_MAX in the import's record, which
``GET /_dynastore/backups/imports`` shows. The import goes on and COMPLETES
with what was valid (docs/import.md). It FAILS, with FailureCode and
FailureMessage, when the bucket cannot be read, no object is found, or a
table of its name was created meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.backups import import_formats
from dynastore.backups.buckets import BucketError, ObjectInfo, buckets_for
from dynastore.backups.import_formats import ParsedRecord
from dynastore.backups.own_tables import own_table_id, own_table_name, own_tables_with_prefix
from dynastore.backups.restore import drop_hidden, publish
from dynastore.backups.runner import JobKind, JobRunner, Upkeep
from dynastore.engine import table_creation, table_settings
from dynastore.engine.schema import TableSchema
from dynastore.errors import (
    DynamoDBError,
    LimitExceededException,
    ResourceInUseException,
    ValidationException,
)
from dynastore.storage.base import Row, RowChange, SortKeyRange
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.imports")

IMPORTS_KIND = "imports"
IMPORT_PK = b"import"
HIDDEN_PREFIX = "importing/"

IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANCELLED = "CANCELLED"

TABLE_CREATION_MEMBERS = ("TableName", "AttributeDefinitions", "KeySchema", "BillingMode", "ProvisionedThroughput",
                          "OnDemandThroughput", "SSESpecification", "GlobalSecondaryIndexes")
"""The members of DynamoDB's TableCreationParameters (API reference)."""

WATCH_SECONDS = 2.0


class ImportNotFoundException(DynamoDBError):
    pass


class ImportConflictException(DynamoDBError):
    pass


IMPORT_CONFLICT_MESSAGE = (
    "There was a conflict when importing from the specified S3 source. This can occur when the "
    "current import conflicts with a previous import request that had the same client token."
)
"""The exception's documented description (API reference); the service's
exact message is unconfirmed (docs/compatibility.md)."""


# --- the record ---------------------------------------------------------------------------


@dataclass
class ImportRecord:
    import_id: str
    arn: str
    table_name: str
    table_arn: str
    table_id: str
    """The new table's TableId (a uuid)."""
    client_token: str | None
    parameters: dict[str, Any]
    """S3BucketSource, InputFormat, InputFormatOptions, InputCompressionType,
    TableCreationParameters as the request gave them (the description echoes them)."""
    schema: dict[str, Any]
    """The hidden table's TableSchema metadata with its storage ids."""
    generation: int
    started: float
    status: str = IN_PROGRESS
    ended: float | None = None
    processed_items: int = 0
    imported_items: int = 0
    error_count: int = 0
    processed_bytes: int = 0
    total_bytes: int = 0
    total_objects: int = 0
    objects_done: int = 0
    object_key: str | None = None
    """The object being read (None: not started)."""
    object_records: int = 0
    """Records of ``object_key`` already taken."""
    done_bytes: int = 0
    """Size of the objects read to their end."""
    failure_code: str | None = None
    failure_message: str | None = None
    errors: list[str] = field(default_factory=list)
    """The first IMPORT_RECORDED_ERRORS_MAX errors in the data."""

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> ImportRecord:
        return cls(**orjson.loads(data))


def new_import_id(now: float) -> str:
    return f"{int(now * 1000):014d}-{secrets.token_hex(4)}"


_IMPORT_ID = re.compile(r"^[0-9]{14}-[0-9a-f]{8}$")


def import_id_of_arn(arn: Any) -> str | None:
    if not isinstance(arn, str):
        return None
    _, marker, import_id = arn.rpartition("/import/")
    return import_id if marker and _IMPORT_ID.match(import_id) else None


def imports_id(database: Database) -> int:
    return own_table_id(database, IMPORTS_KIND)


def _row(record: ImportRecord) -> Row:
    data = record.to_json()
    return Row(partition_hash(IMPORT_PK), IMPORT_PK, record.import_id.encode(), data, len(data))


def record_change(database: Database, record: ImportRecord) -> RowChange:
    row = _row(record)
    return RowChange(imports_id(database), row.pk, row.sk, row)


def save(database: Database, record: ImportRecord) -> None:
    database.storage.put(imports_id(database), _row(record))


def get_import(database: Database, import_id: str) -> ImportRecord | None:
    row = database.storage.get(imports_id(database), IMPORT_PK, import_id.encode())
    return None if row is None else ImportRecord.from_json(row.item)


def all_imports(database: Database, after: str | None = None) -> Iterator[ImportRecord]:
    """Every import of the namespace, oldest first (after the id ``after``)."""
    sort_range = SortKeyRange() if after is None else SortKeyRange(low=after.encode(), low_inclusive=False)
    for row in database.storage.query(imports_id(database), IMPORT_PK, sort_range):
        yield ImportRecord.from_json(row.item)


def log_group_arn(database: Database) -> str:
    """The log group DynamoDB writes import errors to (dynastore: the server log)."""
    return f"arn:aws:logs:{database.region}:{database.account_id}:log-group:/aws-dynamodb/imports:*"


# --- ImportTable -------------------------------------------------------------------------


def _parameters(request: dict[str, Any]) -> dict[str, Any]:
    """The request's import parameters, checked (what ClientToken compares)."""
    source = request.get("S3BucketSource")
    if not isinstance(source, dict) or not isinstance(source.get("S3Bucket"), str) or not source["S3Bucket"]:
        raise ValidationException("S3BucketSource.S3Bucket must be provided")
    input_format = request.get("InputFormat")
    if input_format not in import_formats.INPUT_FORMATS:
        raise ValidationException(
            f"1 validation error detected: Value '{input_format}' at 'inputFormat' failed to satisfy "
            "constraint: Member must satisfy enum value set: [DYNAMODB_JSON, ION, CSV]")
    compression = request.get("InputCompressionType") or import_formats.NONE
    if compression not in import_formats.COMPRESSION_TYPES:
        raise ValidationException(
            f"1 validation error detected: Value '{compression}' at 'inputCompressionType' failed to "
            "satisfy constraint: Member must satisfy enum value set: [GZIP, ZSTD, NONE]")
    options = request.get("InputFormatOptions")
    csv_options = (options or {}).get("Csv") if isinstance(options, dict) else None
    if csv_options is not None:
        if input_format != import_formats.CSV:
            raise ValidationException("InputFormatOptions.Csv can only be specified with InputFormat CSV")
        delimiter = csv_options.get("Delimiter")
        if delimiter is not None and delimiter not in import_formats.CSV_DELIMITERS:
            raise ValidationException(
                f"1 validation error detected: Value '{delimiter}' at 'inputFormatOptions.csv.delimiter' "
                "failed to satisfy constraint: Member must satisfy regular expression pattern: [,;:|\\t ]")
        headers = csv_options.get("HeaderList")
        if headers is not None and (not isinstance(headers, list) or not headers
                                    or len(headers) > limits.IMPORT_CSV_HEADERS_MAX
                                    or not all(isinstance(h, str) and h for h in headers)):
            raise ValidationException(
                "InputFormatOptions.Csv.HeaderList must hold 1 to "
                f"{limits.IMPORT_CSV_HEADERS_MAX} non-empty column names")
    creation = request.get("TableCreationParameters")
    if not isinstance(creation, dict):
        raise ValidationException(
            "1 validation error detected: Value null at 'tableCreationParameters' failed to satisfy "
            "constraint: Member must not be null")
    parameters: dict[str, Any] = {
        "S3BucketSource": {key: source[key] for key in ("S3BucketOwner", "S3Bucket", "S3KeyPrefix") if key in source},
        "InputFormat": input_format,
        "InputCompressionType": compression,
        # Only what TableCreationParameters has: an LSI, a stream or tags
        # cannot be asked for here (the member is not in the API).
        "TableCreationParameters": {key: creation[key] for key in TABLE_CREATION_MEMBERS if key in creation},
    }
    if options is not None:
        parameters["InputFormatOptions"] = options
    return parameters


def _build_schema(database: Database, creation: dict[str, Any], table_uuid: str) -> TableSchema:
    name = creation.get("TableName")
    request = {key: value for key, value in creation.items() if value is not None}
    request.setdefault("BillingMode", "PROVISIONED")
    return table_creation.build_table_schema(
        request,
        table_uuid=table_uuid,
        arn=database.table_arn(str(name)),
        region=database.region,
        now=database.now(),
        reserved=table_settings.reserved_capacity(database.tables.values()),
    )


def _existing_for_token(database: Database, token: str | None) -> ImportRecord | None:
    if token is None:
        return None
    horizon = database.now() - limits.IMPORT_CLIENT_TOKEN_SECONDS
    for record in all_imports(database):
        if record.client_token == token and (record.ended is None or record.ended >= horizon):
            return record
    return None


def import_table(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    ensure_resumed(database)
    parameters = _parameters(request)
    token = request.get("ClientToken")
    previous = _existing_for_token(database, token)
    if previous is not None:
        if previous.parameters != parameters:
            raise ImportConflictException(IMPORT_CONFLICT_MESSAGE)
        return {"ImportTableDescription": import_description(database, previous)}
    import uuid

    table_uuid = str(uuid.uuid4())
    schema = _build_schema(database, parameters["TableCreationParameters"], table_uuid)
    name = schema.name
    if name in database.tables or (not database.storage.exclusive and database.refresh_catalogue(check=True)
                                    and name in database.tables):
        raise ResourceInUseException(f"Table already exists: {name}")
    in_progress = [record for record in all_imports(database) if record.status == IN_PROGRESS]
    from dynastore.backups.visible import creating_one  # a table being restored or imported exists

    if creating_one(database, name) is not None:
        raise ResourceInUseException(f"Table already exists: {name}")
    if len(in_progress) >= limits.IMPORT_IN_PROGRESS_MAX:
        raise LimitExceededException(
            f"Subscriber limit exceeded: Only {limits.IMPORT_IN_PROGRESS_MAX} import operations "
            "can be in progress at a time")
    now = database.now()
    import_id = new_import_id(now)
    hidden = create_hidden(database, schema, import_id)
    record = ImportRecord(
        import_id=import_id, arn=f"{schema.arn}/import/{import_id}", table_name=name, table_arn=schema.arn,
        table_id=table_uuid, client_token=token if isinstance(token, str) else None, parameters=parameters,
        schema=orjson.loads(hidden.to_metadata()), generation=hidden.generation, started=now,
    )
    save(database, record)
    logger.info("import %s into %s from s3://%s/%s started", record.arn, name,
                parameters["S3BucketSource"]["S3Bucket"], parameters["S3BucketSource"].get("S3KeyPrefix", ""))
    add_import(database, import_id)
    return {"ImportTableDescription": import_description(database, record)}


def create_hidden(database: Database, schema: TableSchema, import_id: str) -> TableSchema:
    """Storage for the new table and its indexes under names of dynastore's own."""
    storage = database.storage
    base = HIDDEN_PREFIX + import_id
    with storage.transaction():
        table_id = storage.create_table(database.storage_name(own_table_name(base)), b"{}")
        indexes = tuple(
            replace(index, storage_id=storage.create_table(
                database.storage_name(own_table_name(f"{base}/i/{index.name}")), b"{}"))
            for index in schema.indexes
        )
        hidden = replace(schema, table_id=table_id, indexes=indexes, status="CREATING")
        generation = storage.update_table_metadata(table_id, hidden.to_metadata())
    return replace(hidden, generation=generation)


# --- descriptions ------------------------------------------------------------------------


def import_description(database: Database, record: ImportRecord) -> dict[str, Any]:
    parameters = record.parameters
    description: dict[str, Any] = {
        "ImportArn": record.arn,
        "ImportStatus": record.status,
        "TableArn": record.table_arn,
        "TableId": record.table_id,
    }
    if record.client_token is not None:
        description["ClientToken"] = record.client_token
    description["S3BucketSource"] = parameters["S3BucketSource"]
    description["ErrorCount"] = record.error_count
    description["CloudWatchLogGroupArn"] = log_group_arn(database)
    description["InputFormat"] = parameters["InputFormat"]
    if "InputFormatOptions" in parameters:
        description["InputFormatOptions"] = parameters["InputFormatOptions"]
    description["InputCompressionType"] = parameters["InputCompressionType"]
    description["TableCreationParameters"] = parameters["TableCreationParameters"]
    description["StartTime"] = record.started
    if record.ended is not None:
        description["EndTime"] = record.ended
    description["ProcessedSizeBytes"] = record.processed_bytes
    description["ProcessedItemCount"] = record.processed_items
    description["ImportedItemCount"] = record.imported_items
    if record.failure_code is not None:
        description["FailureCode"] = record.failure_code
    if record.failure_message is not None:
        description["FailureMessage"] = record.failure_message
    return description


def import_summary(database: Database, record: ImportRecord) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "ImportArn": record.arn,
        "ImportStatus": record.status,
        "TableArn": record.table_arn,
        "S3BucketSource": record.parameters["S3BucketSource"],
        "CloudWatchLogGroupArn": log_group_arn(database),
        "InputFormat": record.parameters["InputFormat"],
        "StartTime": record.started,
    }
    if record.ended is not None:
        summary["EndTime"] = record.ended
    return summary


def find_import(database: Database, arn: Any) -> ImportRecord:
    import_id = import_id_of_arn(arn)
    record = None if import_id is None else get_import(database, import_id)
    if record is None or record.arn != arn:
        raise ImportNotFoundException(f"Import not found: {arn}")
    return record


def describe_import(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    ensure_resumed(database)
    return {"ImportTableDescription": import_description(database, find_import(database, request.get("ImportArn")))}


_TOKEN_MIN_HEX = 112


def _next_token(import_id: str) -> str:
    """ListImports' NextToken is hex, 112 to 1024 characters, in blocks of 16
    (the API's pattern ``([0-9a-f]{16})+``): the id's bytes, padded with 00."""
    encoded = import_id.encode().hex()
    width = max(_TOKEN_MIN_HEX, -(-len(encoded) // 16) * 16)
    return encoded.ljust(width, "0")


def _after_of_token(token: Any) -> str:
    if not isinstance(token, str) or len(token) % 2:
        raise ValidationException(f"Invalid NextToken: {token}")
    try:
        raw = bytes.fromhex(token)
    except ValueError:
        raise ValidationException(f"Invalid NextToken: {token}") from None
    after = raw.rstrip(b"\0").decode("ascii", "replace")
    if not _IMPORT_ID.match(after):
        raise ValidationException(f"Invalid NextToken: {token}")
    return after


def list_imports(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    ensure_resumed(database)
    page_size = request.get("PageSize")
    if page_size is None:
        page_size = limits.LIST_IMPORTS_PAGE_SIZE_MAX
    if not isinstance(page_size, int) or not 1 <= page_size <= limits.LIST_IMPORTS_PAGE_SIZE_MAX:
        raise ValidationException(
            f"1 validation error detected: Value '{page_size}' at 'pageSize' failed to satisfy constraint: "
            f"Member must have value less than or equal to {limits.LIST_IMPORTS_PAGE_SIZE_MAX}")
    table_arn = request.get("TableArn")
    token = request.get("NextToken")
    after = _after_of_token(token) if token is not None else None
    summaries: list[dict[str, Any]] = []
    more = False
    last: str | None = None
    for record in all_imports(database, after):
        if table_arn is not None and record.table_arn != table_arn:
            continue
        if len(summaries) == page_size:
            more = True
            break
        summaries.append(import_summary(database, record))
        last = record.import_id
    answer: dict[str, Any] = {"ImportSummaryList": summaries}
    if more and last is not None:
        answer["NextToken"] = _next_token(last)
    return answer


# --- reading the source a page at a time ----------------------------------------------------


_EXPORT_PART = re.compile(r"(?:^|/)AWSDynamoDB/[^/]+/")


def selected_objects(objects: list[ObjectInfo]) -> list[ObjectInfo]:
    """The objects an import reads (module docstring)."""
    chosen = []
    for info in objects:
        if info.key.endswith("/"):
            continue  # a "folder" made by a console
        match = _EXPORT_PART.search(info.key)
        if match is not None and not info.key[match.end():].startswith("data/"):
            continue  # an export's manifest, _started, checksum
        chosen.append(info)
    return chosen


class _Source:
    """An import's objects, open where the record says it got to; kept
    between steps in this process (reopened and skipped forward after a
    restart). Holds one decompressor and one record at a time."""

    def __init__(self, database: Database, record: ImportRecord) -> None:
        parameters = record.parameters
        source = parameters["S3BucketSource"]
        self.bucket = source["S3Bucket"]
        self.buckets = buckets_for(database)
        listed = list(self.buckets.list_objects(self.bucket, source.get("S3KeyPrefix") or ""))
        self.objects = selected_objects(listed)
        self.total_bytes = sum(info.size for info in self.objects)
        self.format = parameters["InputFormat"]
        self.compression = parameters["InputCompressionType"]
        self.csv_options = (parameters.get("InputFormatOptions") or {}).get("Csv")
        schema = TableSchema.from_metadata(orjson.dumps(record.schema))
        self.typed = {definition.name: definition.type for definition in schema.attribute_definitions}
        self.index = 0
        if record.object_key is not None:
            self.index = next((i for i, info in enumerate(self.objects) if info.key >= record.object_key),
                              len(self.objects))
        self.records_taken = 0
        self._stack: ExitStack | None = None
        self._counter: import_formats.CountingReader | None = None
        self._records: Iterator[ParsedRecord] | None = None
        self.position_key = record.object_key
        self.position_records = record.object_records
        self.done_bytes = record.done_bytes
        self.objects_done = record.objects_done
        self.pending_errors: list[str] = []
        if record.object_key is not None and self.index < len(self.objects) \
                and self.objects[self.index].key == record.object_key:
            self._open()
            for _ in range(record.object_records):
                if self._next_of_object() is None:
                    break

    @property
    def current(self) -> ObjectInfo | None:
        return self.objects[self.index] if self.index < len(self.objects) else None

    def _open(self) -> None:
        info = self.objects[self.index]
        stack = ExitStack()
        try:
            raw = stack.enter_context(self.buckets.open_read(self.bucket, info.key))
            self._counter = import_formats.CountingReader(raw)
            stream = import_formats.decompressed(self._counter, self.compression)
            self._records = import_formats.records(stream, self.format, self.csv_options, self.typed)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        self.records_taken = 0
        self.position_key = info.key
        self.position_records = 0

    def _next_of_object(self) -> ParsedRecord | None:
        assert self._records is not None
        record = next(self._records, None)
        if record is not None:
            self.records_taken += 1
            self.position_records = self.records_taken
        return record

    def _finish_object(self) -> None:
        info = self.objects[self.index]
        if self._stack is not None:
            self._stack.close()
        self._stack = self._counter = self._records = None
        self.done_bytes += info.size
        self.objects_done += 1
        self.index += 1
        nxt = self.current
        self.position_key = nxt.key if nxt is not None else info.key + "\0"
        self.position_records = 0

    def next(self) -> tuple[ParsedRecord, str] | None:
        """The next record and its object's key; None at the end of the last object."""
        while self.current is not None:
            key = self.current.key
            try:
                if self._records is None:
                    self._open()
                record = self._next_of_object()
            except BucketError as error:
                self.pending_errors.append(f"s3://{self.bucket}/{key}: {error.code}: {error.message}")
                self._finish_object()
                continue
            except (OSError, EOFError, ValueError) as error:  # bad compression, a zstd error
                self.pending_errors.append(f"s3://{self.bucket}/{key}: cannot be read ({error}); "
                                           "the rest of the object is skipped")
                self._finish_object()
                continue
            except Exception as error:  # zstandard.ZstdError is not an OSError
                self.pending_errors.append(f"s3://{self.bucket}/{key}: cannot be read ({error}); "
                                           "the rest of the object is skipped")
                self._finish_object()
                continue
            if record is None:
                self._finish_object()
                continue
            return record, key
        return None

    def processed_bytes(self) -> int:
        return self.done_bytes + (self._counter.count if self._counter is not None else 0)

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


_SOURCES: weakref.WeakKeyDictionary[Any, dict[str, tuple[_Source, int]]] = weakref.WeakKeyDictionary()
"""database -> import id -> (the open source, ProcessedItemCount it is at):
reused by the next step when the record is where it left it. Keyed by the
Database itself: a collected one's id() can be a new one's."""


def _source_for(database: Database, record: ImportRecord) -> _Source:
    sources = _SOURCES.setdefault(database, {})
    cached = sources.get(record.import_id)
    if cached is not None and cached[1] == record.processed_items:
        return cached[0]
    if cached is not None:
        cached[0].close()
    source = _Source(database, record)
    sources[record.import_id] = (source, record.processed_items)
    return source


def _drop_source(database: Database, import_id: str) -> None:
    cached = _SOURCES.get(database, {}).pop(import_id, None)
    if cached is not None:
        cached[0].close()


# --- one step ------------------------------------------------------------------------------


def _checked(schema: TableSchema, raw: dict[str, Any]) -> Row | str:
    """The item's row, or why DynamoDB would not import it."""
    from dynastore.engine.item_ops import check_item_key, check_item_size
    from dynastore.engine.rows import row_for
    from dynastore.types.attribute_value import validate_item

    try:
        item = validate_item(raw)
        size = check_item_size(item)
        check_item_key(schema, item)
        return row_for(schema, item, size)
    except DynamoDBError as error:
        return error.message or type(error).__name__


def _note_error(record: ImportRecord, message: str) -> None:
    record.error_count += 1
    if record.error_count <= limits.IMPORT_LOGGED_ERRORS_MAX:
        logger.warning("import %s: %s", record.arn, message)
    if len(record.errors) < limits.IMPORT_RECORDED_ERRORS_MAX:
        record.errors.append(message)


STEP_LISTENERS: list[Callable[[ImportRecord], None]] = []
"""Called with the record after each step (``dynastore import --data-dir``'s progress bar)."""


def import_step(database: Database, record: ImportRecord) -> ImportRecord:
    try:
        record = _import_step(database, record)
    except BaseException:
        # The open source has read past what the record says: the next step
        # opens it again where the record is.
        _drop_source(database, record.import_id)
        raise
    for listener in STEP_LISTENERS:
        listener(record)
    return record


def _import_step(database: Database, record: ImportRecord) -> ImportRecord:
    """Import one page (and publish the table after the last); returns the record as it is now."""
    from dynastore import write_path

    schema = replace(TableSchema.from_metadata(orjson.dumps(record.schema)), generation=record.generation)
    try:
        source = _source_for(database, record)
    except BucketError as error:
        return fail_import(database, record, schema, error.code, error.message)
    if record.total_objects == 0 and not source.objects:
        bucket_source = record.parameters["S3BucketSource"]
        return fail_import(database, record, schema, "NoSuchKey",
                           f"No objects found under s3://{bucket_source['S3Bucket']}/"
                           f"{bucket_source.get('S3KeyPrefix', '')}")
    record = replace(record, errors=list(record.errors), total_objects=len(source.objects),
                     total_bytes=source.total_bytes)
    rows: dict[tuple[bytes, bytes], Row] = {}
    where: dict[tuple[bytes, bytes], str] = {}
    page_bytes = 0
    finished = False
    taken_here = 0
    replaced = 0
    while taken_here < limits.IMPORT_PAGE_ITEMS and page_bytes < limits.IMPORT_PAGE_BYTES:
        taken = source.next()
        for message in source.pending_errors:
            _note_error(record, message)
        source.pending_errors.clear()
        if taken is None:
            finished = True
            break
        parsed, key = taken
        taken_here += 1
        record.processed_items += 1
        if parsed.item is None:
            _note_error(record, f"s3://{source.bucket}/{key} line {parsed.line}: {parsed.error}")
            continue
        location = f"s3://{source.bucket}/{key} line {parsed.line}"
        checked = _checked(schema, parsed.item)
        if isinstance(checked, str):
            _note_error(record, f"{location}: {checked}")
            continue
        # The same key twice: the later item wins, as a second PutItem would
        # (and both count as imported).
        if rows.pop((checked.pk, checked.sk), None) is not None:
            replaced += 1
        rows[(checked.pk, checked.sk)] = checked
        where[(checked.pk, checked.sk)] = location
        page_bytes += checked.size
    record.processed_bytes = source.processed_bytes()
    record.object_key, record.object_records = source.position_key, source.position_records
    record.done_bytes, record.objects_done = source.done_bytes, source.objects_done
    page = list(rows.values())
    reads_old = bool(schema.indexes)  # an item replaced by a later page must lose its index entries
    while True:
        # The record moves on with its page; the last page is followed by
        # the publication (its own transaction, which a restart redoes).
        written_record = replace(record, imported_items=record.imported_items + len(page) + replaced)
        targets = [write_path.Target(schema.table_id, row.pk, row.sk, schema, reads_old=reads_old) for row in page]
        record_row = _row(written_record)
        targets.append(write_path.Target(imports_id(database), record_row.pk, record_row.sk, None, reads_old=False))
        decisions: list[Any] = [*page, record_row]
        try:
            write_path.write(database, targets, _constant(decisions),
                             conflicts=write_path.RETRY_ALL, index_lag=False)
        except write_path.InvalidChange as refused:
            bad = page.pop(refused.position)
            _note_error(record, f"{where[(bad.pk, bad.sk)]}: {refused.error.message}")
            continue
        break
    _SOURCES.setdefault(database, {})[record.import_id] = (source, record.processed_items)
    if not finished:
        return written_record
    return _complete(database, written_record, schema)


def _constant(decisions: list[Any]) -> Callable[[list[Row | None], frozenset[int]], list[Any]]:
    """A ``decide`` for rows written as they are (the rows they replace do not matter)."""
    return lambda _rows, _conflicted: decisions


def _complete(database: Database, record: ImportRecord, schema: TableSchema) -> ImportRecord:
    _drop_source(database, record.import_id)
    if record.table_name in database.tables or (not database.storage.exclusive
                                                 and database.refresh_catalogue(check=True)
                                                 and record.table_name in database.tables):
        return fail_import(database, record, schema, "ResourceInUseException",
                           f"A table named {record.table_name} was created during the import")
    done = replace(record, status=COMPLETED, ended=database.now())
    publish(database, schema, [record_change(database, done)])
    logger.info("import %s into %s done: %d items imported, %d errors, %d bytes read",
                done.arn, done.table_name, done.imported_items, done.error_count, done.processed_bytes)
    return done


def fail_import(database: Database, record: ImportRecord, schema: TableSchema, code: str,
                message: str) -> ImportRecord:
    """End an import FAILED: its hidden table goes."""
    _drop_source(database, record.import_id)
    logger.warning("import %s into %s failed: %s: %s", record.arn, record.table_name, code, message)
    record = replace(record, status=FAILED, ended=database.now(), failure_code=code, failure_message=message)
    drop_hidden(database, schema)
    save(database, record)
    return record


# --- running the jobs (dynastore/backups/runner.py) ------------------------------------------


def _load(database: Database, import_id: str) -> ImportRecord | None:
    record = get_import(database, import_id)
    if record is None or record.status != IN_PROGRESS:
        _drop_source(database, import_id)
        return None
    return record


def _advance(database: Database, record: ImportRecord) -> bool:
    return import_step(database, record).status == IN_PROGRESS


RUNNER = JobRunner("imports", [JobKind(
    "import", lambda database: [record.import_id for record in all_imports(database)
                                if record.status == IN_PROGRESS],
    _load, _advance)], logger)


def step(database: Database) -> bool | None:
    """One step of one unfinished import (``JobRunner.step``)."""
    return RUNNER.step(database)


def resume(database: Database) -> None:
    """Find the imports the store holds IN_PROGRESS (after a restart) and run them."""
    RUNNER.resume(database)


def ensure_resumed(database: Database) -> None:
    RUNNER.ensure_resumed(database)


def add_import(database: Database, import_id: str) -> None:
    RUNNER.add(database, "import", import_id)


def cleanup(database: Database) -> int:
    """Hidden tables no import in progress owns (a kill -9 between creating
    them and recording the import). Only on an exclusive store, at start:
    nothing else can be between those two steps then."""
    if not database.storage.exclusive:
        return 0
    known = {record.import_id for record in all_imports(database) if record.status == IN_PROGRESS}
    removed = 0
    for kind, storage_id in own_tables_with_prefix(database, HIDDEN_PREFIX):
        if kind[len(HIDDEN_PREFIX):].split("/")[0] not in known:
            database.storage.drop_table(storage_id)
            removed += 1
    return removed


class ImportJobs(Upkeep):
    """A server's upkeep of one namespace's imports: at start resume the
    unfinished ones and clean up; on a shared store look again every
    WATCH_SECONDS (to take over those of a server that died)."""

    logger = logger

    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop,
                 interval: float = WATCH_SECONDS) -> None:
        super().__init__(database, loop, interval)

    def look(self) -> None:
        database = self.database
        first = not RUNNER.pending(database).resumed
        if first:
            cleanup(database)
        if first or not database.storage.exclusive:
            resume(database)


# --- progress (the admin route and the command) ----------------------------------------------


def import_progress(database: Database) -> list[dict[str, Any]]:
    """Every import of the namespace, newest first, with its progress and first errors."""
    found = []
    for record in all_imports(database):
        entry: dict[str, Any] = {
            "Kind": "import", "Id": record.import_id, "Arn": record.arn, "Table": record.table_name,
            "Status": record.status, "Items": record.processed_items, "ImportedItems": record.imported_items,
            "Errors": record.error_count, "Bytes": record.processed_bytes, "TotalBytes": record.total_bytes,
            "Objects": record.objects_done, "TotalObjects": record.total_objects,
            "StartTime": record.started, "ErrorSamples": record.errors,
        }
        if record.ended is not None:
            entry["EndTime"] = record.ended
        if record.failure_code is not None:
            entry["FailureCode"] = record.failure_code
            entry["FailureMessage"] = record.failure_message
        found.append(entry)
    found.reverse()
    return found
