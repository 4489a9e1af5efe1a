"""Every DynamoDB limit dynastore enforces, as a named constant.

Sources: the DynamoDB developer guide ("Service, account, and table quotas")
and the API reference. When you add a check against a number, the number
lives here.
"""

from __future__ import annotations

import logging
import os

_logger = logging.getLogger("dynastore.limits")


def overridden(variable: str, default: int) -> int:
    """``default``, or the whole number ``$variable`` gives (at least 0): the
    few limits an operator or a test may change (SQLITE_BULK_MMAP_VARIABLE,
    REDIS_LOG_FOLD_VARIABLE). A value that is not a number is ignored, with a warning."""
    value = os.environ.get(variable)
    if not value:
        return default
    try:
        return max(0, int(value))
    except ValueError:
        _logger.warning("%s=%r is not a whole number; using %d", variable, value, default)
        return default

# --- Requests -------------------------------------------------------------------
REQUEST_BODY_MAX_BYTES = 16 * 1024 * 1024
"""An HTTP request body larger than this is refused before it is read."""

# --- Items and attributes -------------------------------------------------------
ITEM_MAX_BYTES = 400 * 1024
PARTITION_KEY_MAX_BYTES = 2048
SORT_KEY_MAX_BYTES = 1024
NESTING_MAX_DEPTH = 32
ATTRIBUTE_NAME_MAX_BYTES = 65535
KEY_ATTRIBUTE_NAME_MAX_BYTES = 255

# --- Numbers --------------------------------------------------------------------
NUMBER_MAX_SIGNIFICANT_DIGITS = 38
NUMBER_MAX_EXPONENT = 125  # largest magnitude 9.9999999999999999999999999999999999999E+125
NUMBER_MIN_EXPONENT = -130  # smallest positive magnitude 1E-130

# --- Tables ---------------------------------------------------------------------
TABLE_NAME_MIN_LENGTH = 3
TABLE_NAME_MAX_LENGTH = 255
TABLE_NAME_PATTERN = r"[a-zA-Z0-9_.-]+"
INDEX_NAME_MIN_LENGTH = 3
INDEX_NAME_MAX_LENGTH = 255
TABLES_PER_ACCOUNT_REGION = 2500
LIST_TABLES_MAX_LIMIT = 100
TAGS_PER_RESOURCE = 50
TAG_KEY_MAX_LENGTH = 128
TAG_VALUE_MAX_LENGTH = 256
ENDPOINT_CACHE_PERIOD_MINUTES = 1440  # DescribeEndpoints' CachePeriodInMinutes, as the service answers

# --- Secondary indexes (enforced by the index issue) ---------------------------
LOCAL_SECONDARY_INDEXES_PER_TABLE = 5
GLOBAL_SECONDARY_INDEXES_PER_TABLE = 20
GSI_KEY_ATTRIBUTES_MAX = 4  # multi-attribute GSI keys: up to four HASH and four RANGE attributes
PROJECTED_NON_KEY_ATTRIBUTES_PER_TABLE = 100
ITEM_COLLECTION_MAX_BYTES = 10 * 1024 * 1024 * 1024
INDEX_ENTRY_OVERHEAD_BYTES = 100
"""Added to each secondary-index entry's size (developer guide, index storage)."""

# --- Reads ----------------------------------------------------------------------
QUERY_SCAN_PAGE_MAX_BYTES = 1024 * 1024
"""Query and Scan stop reading once this many bytes of items were read."""
SCAN_TOTAL_SEGMENTS_MAX = 1_000_000
BATCH_GET_MAX_KEYS = 100
BATCH_GET_RESPONSE_MAX_BYTES = 16 * 1024 * 1024

# --- Writes ---------------------------------------------------------------------
BATCH_WRITE_MAX_REQUESTS = 25
TRANSACT_MAX_ITEMS = 100
TRANSACT_MAX_BYTES = 4 * 1024 * 1024

# --- Expressions ----------------------------------------------------------------
EXPRESSION_MAX_BYTES = 4096
EXPRESSION_ATTRIBUTE_NAME_MAX_BYTES = 255  # a #name placeholder's length
EXPRESSION_ATTRIBUTE_VALUES_MAX_BYTES = 4096 * 1024
EXPRESSION_IN_MAX_OPERANDS = 100
EXPRESSION_MAX_OPERATORS = 300
PROJECTION_EXPRESSION_MAX_BYTES = 4096
EXPRESSION_PARSE_CACHE_ENTRIES = 4096

# --- PartiQL ----------------------------------------------------------------------
PARTIQL_STATEMENT_MAX_BYTES = 8192
"""A statement's length in UTF-8 bytes (the service model caps its characters too)."""
PARTIQL_BATCH_MAX_STATEMENTS = 25
PARTIQL_TRANSACTION_MAX_STATEMENTS = 100
PARTIQL_NEXT_TOKEN_MAX_CHARACTERS = 32768
PARTIQL_PARSE_CACHE_ENTRIES = 4096  # partiql/__init__.py: parsed statements kept
PARTIQL_PARTITION_VALUES_MAX = 50
"""A SELECT's WHERE may fix the partition key to at most this many values
(``IN``, ``OR``): "at max 50 hash attribute values" (developer guide)."""
PARTIQL_DEEP_RECURSION_LIMIT = 100_000  # partiql/__init__.py: a deeply nested 8 KB statement

# --- Capacity -------------------------------------------------------------------
READ_UNIT_BYTES = 4 * 1024
WRITE_UNIT_BYTES = 1024
PARTITION_MAX_READ_UNITS_PER_SECOND = 3000
PARTITION_MAX_WRITE_UNITS_PER_SECOND = 1000
PARTITION_MAX_BYTES = 10 * 1024 * 1024 * 1024
ACCOUNT_MAX_READ_CAPACITY_UNITS = 80000
ACCOUNT_MAX_WRITE_CAPACITY_UNITS = 80000
TABLE_MAX_READ_CAPACITY_UNITS = 40000
TABLE_MAX_WRITE_CAPACITY_UNITS = 40000

# --- Server bounds (not DynamoDB limits, but every queue has one) ------------
HTTP_MAX_PIPELINED_REQUESTS = 128

# --- Bounds of our own and rules measured on the live service (module that uses each) ---
VALIDATION_ERRORS_MAX_LISTED = 10  # ops/shapes.py
TABLE_NAME_CACHE_ENTRIES = 1024  # ops/shapes.py
HTTP_SHUTDOWN_GRACE_SECONDS = 10.0  # protocol/http.py
HTTP_IDLE_CONNECTION_SECONDS = 300  # protocol/http.py
HTTP_STALLED_REQUEST_SECONDS = 60  # protocol/http.py
HTTP_MAX_CONNECTIONS = 4096  # protocol/http.py (each HTTP process)
HTTP_ENGINE_CONNECTIONS = 2  # protocol/engine.py: connections the engine serves itself
HTTP_ACCEPTS_PER_TURN = 64  # protocol/engine.py: connections accepted per turn of the loop
LINK_REPLY_FLUSH_SECONDS = 1e-3  # protocol/engine.py: replies of a long batch leave at least this often
LINK_PENDING_REQUESTS_MAX = 1024  # protocol/engine.py: requests read off the link and not yet run
LINK_SPIN_MAX_SECONDS = 50e-6  # protocol/link.py: the longest busy-wait for the other process
LINK_SPIN_WHEN_ANSWERED_WITHIN_SECONDS = 250e-6  # protocol/link.py: spin only for a side this quick
TRANSACTION_TOKEN_WINDOW_SECONDS = 600.0  # engine/transactions.py
TRANSACTION_CAPACITY_FACTOR = 2  # engine/transactions.py
FAULT_RULES_MAX = 1000  # faults.py
UPDATE_ITEM_OVERHEAD_BYTES = 3  # engine/item_ops.py
UPDATE_ITEM_WRITE_ACTION_BYTES = 19  # engine/item_ops.py
UPDATE_ITEM_CLEAR_ACTION_BYTES = 2  # engine/item_ops.py
EXPRESSION_COMPILED_KEY_MAX_CHARACTERS = 2048  # expressions/cache.py
EXPRESSION_COMPILED_KEY_MAX_NAMES = 32  # expressions/cache.py
EXPRESSION_DEEP_RECURSION_LIMIT = 20_000  # expressions/cache.py

# --- Streams, TTL, background jobs, throughput model, console (module that uses each) ---
STREAM_RETENTION_SECONDS = 24 * 3600  # engine/streams.py
STREAM_SHARD_MAX_RECORDS = 1000  # engine/streams.py
STREAM_SHARD_MAX_AGE_SECONDS = 4 * 3600  # engine/streams.py
STREAM_ITERATOR_LIFETIME_SECONDS = 15 * 60  # engine/streams.py
GET_RECORDS_MAX_LIMIT = 1000  # engine/streams.py
GET_RECORDS_MAX_BYTES = 1 << 20  # engine/streams.py
DESCRIBE_STREAM_MAX_LIMIT = 100  # engine/streams.py
LIST_STREAMS_MAX_LIMIT = 100  # engine/streams.py
TTL_CHANGE_COOLDOWN_SECONDS = 1860  # engine/ttl.py
TTL_MAX_PAST_SECONDS = 5 * 365 * 24 * 3600  # engine/ttl.py
TTL_SWEEP_INTERVAL_SECONDS = 1.0  # workers/ttl_sweeper.py
TTL_SWEEP_MAX_ITEMS = 256  # workers/ttl_sweeper.py
TTL_SWEEP_ROWS_PER_ITEM = 16  # workers/ttl_sweeper.py
TTL_SWEEP_STREAM_TRIM_ROWS_PER_ITEM = 4  # workers/ttl_sweeper.py
BACKFILL_BATCH_ROWS = 256  # workers/backfill.py
THROUGHPUT_BURST_SECONDS = 300.0  # engine/throughput.py
ON_DEMAND_PEAK_FACTOR = 2.0  # engine/throughput.py
CONTROL_PLANE_REQUESTS_PER_SECOND = 2500.0  # engine/throughput.py
THROUGHPUT_KEY_STATS_MAX = 10_000  # throughput/state.py
THROUGHPUT_TOP_KEYS = 10  # throughput/reporting.py
THROUGHPUT_TOP_KEYS_MINUTES = 60  # engine/top_keys.py: minute buckets kept per rule
THROUGHPUT_TOP_KEYS_PER_MINUTE = 200  # engine/top_keys.py: distinct keys per bucket at most
THROUGHPUT_TOP_KEYS_WINDOWS_MINUTES = (1, 5, 60)  # engine/top_keys.py: windows reported
THROUGHPUT_PROMETHEUS_TOP_KEYS = 5  # throughput/prometheus.py: keys per rule in the Prometheus text
THROUGHPUT_TARGET_CACHE_MAX = 65_536  # throughput/targets.py
THROUGHPUT_SIZE_RECHECK_SECONDS = 60.0  # throughput/state.py
TRIGGER_BATCH_SIZE_DEFAULT = 100  # streams_api/triggers.py
TRIGGER_BATCH_SIZE_MAX = 10_000  # streams_api/triggers.py
TRIGGER_MAX_RETRIES_LIMIT = 10_000  # streams_api/triggers.py
TRIGGER_POLL_INTERVAL_SECONDS = 0.25  # streams_api/triggers.py
TRIGGER_REQUEST_TIMEOUT_SECONDS = 10.0  # streams_api/triggers.py
TRIGGER_RETRY_DELAY_SECONDS = 0.5  # streams_api/triggers.py
TRIGGER_RETRY_DELAY_MAX_SECONDS = 30.0  # streams_api/triggers.py
PENDING_INDEX_WRITES_MAX = 100_000  # database.py
GSI_OUTBOX_BATCH_ROWS = 1000  # database.py: lagged GSI writes applied per propagation call
REPLICATION_BATCH_ROWS = 500  # replication/replicator.py: queued writes applied per source region and pass
REPLICATION_PENDING_COUNT_MAX = 100_000  # replication/replicator.py: queued writes counted for the admin route (a bound on one look)
WRITE_CONFLICT_ATTEMPTS = 20  # write_path.py: reads and commits of one write before it gives up
WRITE_OPTIMISTIC_ATTEMPTS = 2  # write_path.py: conflicts a single-item or batch write takes before it locks its rows
WRITE_CONFLICT_BACKOFF_SECONDS = 0.0005  # write_path.py: the random pause before retry n is at most n times this
POSTGRES_PIPELINE_CONNECTIONS = 2  # storage/postgres/pipeline.py: connections a server's batches go out on
POSTGRES_IDLE_GREENLETS_MAX = 256  # storage/postgres/pipeline.py: finished request greenlets kept for
# reuse (each keeps its ~16 KB frame stack; one per request in flight at the peak, up to this)
POSTGRES_RESERVED_CONNECTIONS = 16  # storage/postgres/pipeline.py: transactions over several round trips at once
POSTGRES_BATCH_MAX_CALLS = 256  # storage/postgres/pipeline.py: calls in one pipelined batch
POSTGRES_MIN_EXTRA_BATCH_CALLS = 8  # storage/postgres/pipeline.py: calls a second batch waits for while one is out
POSTGRES_CALL_TIMEOUT_SECONDS = 30.0  # storage/postgres/pipeline.py: a statement unanswered this long fails its connection
CONTRIBUTOR_INSIGHTS_MAX_RESULTS = 100  # ops/list_contributor_insights.py
CONSOLE_PROXY_BODY_MAX_BYTES = 16 * 1024 * 1024  # console/app.py
CONSOLE_REMOTE_TIMEOUT_SECONDS = 60.0  # console/proxy.py
CONSOLE_FILE_IMPORT_MAX_BYTES = 4 * 1024 * 1024  # console/app.py: a file imported from the browser
CONSOLE_EXPORT_DOWNLOAD_MAX_BYTES = 16 * 1024 * 1024  # console/exports_download.py: one export file downloaded
SIGV4_SIGNING_KEY_CACHE_ENTRIES = 1024  # protocol/sigv4.py: derived signing keys kept (key, day, region, service)
SIGV4_CLOCK_SKEW_SECONDS = 15 * 60  # protocol/sigv4.py: a signature's date may be this far from the wall clock
SIGV4_PRESIGNED_EXPIRES_MAX_SECONDS = 7 * 24 * 3600  # protocol/sigv4.py: the largest X-Amz-Expires
NAMESPACES_MAX = 1000  # namespaces.py: (account, region) namespaces one store keeps open (a bound on what clients can make)
HTTP_COMPRESSION_MIN_BYTES = 4096  # protocol/http.py: DynamoDB compresses a response body this large when asked (Accept-Encoding)
HTTP_COMPRESSION_LEVEL = 1  # protocol/http.py: zlib level of compressed responses (JSON compresses well at 1; 6 costs ~40% more)
HTTP_REQUEST_LINE_MAX_BYTES = 16 * 1024  # protocol/http.py: DynamoDB answers 400 to a longer request target
HTTP_HEADER_MAX_BYTES = 16 * 1024  # protocol/http.py: DynamoDB answers 400 to a larger header block (its lines' bytes: name, ': ', value, CRLF)
HTTP_REQUEST_HEAD_MAX_BYTES = HTTP_REQUEST_LINE_MAX_BYTES + HTTP_HEADER_MAX_BYTES + 64  # protocol/http.py: a head trickling in is refused past this (the line's method and version, the final CRLF)
HTTP_ACCEPT_ENCODING_CACHE_ENTRIES = 256  # protocol/http.py: parsed Accept-Encoding values kept
HTTP_HEALTH_BODY_CACHE_ENTRIES = 64  # protocol/app.py: health-check answers kept, one per region asked
LINK_REPLY_MAX_BYTES = 256 * 1024 * 1024  # protocol/link.py: a reply frame from the engine larger than this means a corrupt link (BatchGetItem: 16 MB of items, up to ~6x as JSON)

# --- Exports (ExportTableToPointInTime; dynastore/backups/exports.py) -------------
EXPORTS_IN_PROGRESS_MAX = 300
"""Concurrent exports per account and region (developer guide, quotas: "up to
300 concurrent export tasks")."""
EXPORT_INCREMENTAL_MIN_SECONDS = 15 * 60
EXPORT_INCREMENTAL_MAX_SECONDS = 24 * 60 * 60
"""An incremental export's period: 15 minutes to 24 hours."""
EXPORT_CLIENT_TOKEN_SECONDS = 8 * 60 * 60
"""How long a ClientToken makes ExportTableToPointInTime idempotent."""
LIST_EXPORTS_MAX_RESULTS = 25
EXPORT_PAGE_ROWS = 1000
"""Items one background step of an export reads and writes."""
EXPORT_DATA_FILE_BYTES = 64 * 1024 * 1024
"""A data file is closed (and the next begun) once this many bytes of lines,
before compression, went into it (dynastore's choice: DynamoDB's sizes vary)."""
# ImportTable (dynastore/backups/imports.py, docs/import.md)
IMPORT_PAGE_ITEMS = 1000  # records one background step of an import reads (and items it writes)
IMPORT_PAGE_BYTES = 4 * 1024 * 1024  # a step stops early once its items reach this size (memory per step)
IMPORT_IN_PROGRESS_MAX = 50  # DynamoDB's quota: imports in progress at a time per account and region
IMPORT_CLIENT_TOKEN_SECONDS = 8 * 3600  # ImportTable's ClientToken: the idempotency window after the import ends
IMPORT_CSV_HEADERS_MAX = 255  # InputFormatOptions.Csv.HeaderList: at most this many columns (API reference)
IMPORT_LOGGED_ERRORS_MAX = 10_000  # errors in the data of one import written to the server log (then only counted)
IMPORT_RECORDED_ERRORS_MAX = 20  # errors kept in the import's record (GET /_dynastore/backups/imports)
LIST_IMPORTS_PAGE_SIZE_MAX = 25  # ListImports' PageSize: 1-25 (API reference); also its default

# --- Point-in-time recovery (dynastore/backups/pitr.py, docs/backups.md) ----------
PITR_RECOVERY_PERIOD_DEFAULT_DAYS = 35  # RecoveryPeriodInDays when not given (API reference)
PITR_RECOVERY_PERIOD_MIN_DAYS = 1
PITR_RECOVERY_PERIOD_MAX_DAYS = 35
PITR_LATEST_RESTORABLE_LAG_SECONDS = 5 * 60
"""LatestRestorableDateTime is this far behind the database clock's now
(API reference, PointInTimeRecoveryDescription: "typically 5 minutes before
the current time"), and RestoreTableToPointInTime takes no later time."""
SYSTEM_BACKUP_RETENTION_SECONDS = 35 * 24 * 3600
"""A SYSTEM backup (the one DeleteTable makes of a table with PITR on) is
kept 35 days (its BackupExpiryDateTime), then deleted."""

# --- Memory of background jobs (docs/backups.md, "Memory") ------------------------
SQLITE_BULK_MMAP_BYTES = 0
"""How much of the SQLite file the background jobs' own connection maps
(storage/sqlite.py, ``bulk_reads``): none, so a backup, export or restore
reading a whole table reads it with pread into a page cache of its own
(SQLITE_BULK_CACHE_KIB) and adds no mapped pages to the server's RSS. The
serving connection keeps its mapping (MMAP_SIZE_BYTES there)."""
SQLITE_BULK_MMAP_VARIABLE = "DYNASTORE_BULK_MMAP_BYTES"
"""Environment override of SQLITE_BULK_MMAP_BYTES (bytes; 0: no mapping)."""
SQLITE_BULK_CACHE_KIB = 2 * 1024
"""The page cache of the background jobs' connection: a page of a job is
~1 MB of items, and each is read once."""

# --- the Redis protocol (dynastore/redis/, docs/redis.md) --------------------------
REDIS_BULK_MAX_BYTES = 512 * 1024 * 1024
"""Redis's proto-max-bulk-len: a longer bulk string closes the connection."""
REDIS_MULTIBULK_MAX_ITEMS = 1024 * 1024
"""Arguments in one command (Redis refuses a longer multibulk as a protocol error)."""
REDIS_INLINE_MAX_BYTES = 64 * 1024
"""An inline command, or a count line, longer than this closes the connection."""
REDIS_PARSER_COMPACT_BYTES = 64 * 1024
"""Consumed bytes the request parser keeps before moving the rest to the front."""
REDIS_STRING_MAX_BYTES = 512 * 1024 * 1024
"""The largest string value (SETRANGE, APPEND: 'string exceeds maximum allowed size')."""
REDIS_DATABASES = 16
"""SELECT 0..15."""
REDIS_LOG_FOLD_BYTES = 32 * 1024 * 1024
"""Bytes of change records the keyspace's log takes before they are folded
into the key rows (docs/adr/0011-redis-change-log.md): it bounds the log
and the start-up replay (Redis rewrites its AOF past 64 MB)."""
REDIS_LOG_FOLD_ROWS = 262_144
"""Distinct rows changed since the last fold that start one too: it bounds
the memory that remembers them (about 200 bytes a row, so 50 MiB;
measured with tracemalloc)."""
REDIS_LOG_FOLD_VARIABLE = "DYNASTORE_REDIS_LOG_FOLD_BYTES"
"""Environment override of REDIS_LOG_FOLD_BYTES (tests fold small logs)."""
REDIS_LOG_FOLD_STEP_ROWS = 64
"""Key rows a flush folds at least while a fold runs (and at least twice its
own changes, so folding outpaces any write rate): a bounded step per turn.
A row written at random costs SQLite about as much as a command (15 us), so
a turn of 50 commands runs about twice as long while a fold runs."""
REDIS_LOG_RECORD_BYTES = 1024 * 1024
"""A flush's changes go in log rows of about this size at most (one change
larger than it gets a row of its own)."""
REDIS_SCAN_COUNT_DEFAULT = 10
REDIS_EXPIRE_SWEEP_SECONDS = 0.1
"""How often the active expiry sweep runs (Redis: hz 10)."""
REDIS_EXPIRE_SWEEP_KEYS = 200
"""Keys with a TTL the sweep looks at per run (a bounded step between requests)."""
REDIS_REPLY_HIGH_WATER_BYTES = 8 << 20
"""Replies a client has not read beyond this pause reading its commands."""
REDIS_MAX_CLIENTS = 10_000
"""Redis's maxclients default."""
REDIS_PUBSUB_QUEUE_BYTES = 32 << 20
"""A subscriber this far behind is disconnected (client-output-buffer-limit pubsub)."""
REDIS_HOT_KEYS_TRACKED = 10_000
"""Keys whose operations are counted for the hot-key view (the cold half is dropped past it)."""
REDIS_COMMAND_SPELLINGS_CACHED = 4096
"""Distinct spellings of command names (GET, get...) the dispatcher remembers."""

# --- DAX endpoint (dynastore/dax/, docs/dax.md) ------------------------------------
DAX_DEFAULT_PORT = 8111  # the port DAX clients assume for dax:// (daxs:// assumes 9111)
DAX_ITEM_TTL_MS_DEFAULT = 5 * 60 * 1000  # DAX's default item cache TTL: 5 minutes
DAX_QUERY_TTL_MS_DEFAULT = 5 * 60 * 1000  # DAX's default query cache TTL: 5 minutes
DAX_CACHE_MAX_BYTES = 256 * 1024 * 1024  # each of the two caches' LRU bound (also $DYNASTORE_DAX_CACHE_MAX_BYTES)
DAX_CACHE_ENTRY_OVERHEAD_BYTES = 128  # what a cache entry costs beside its encoded bytes (key, bookkeeping)
DAX_REQUEST_MAX_BYTES = 20 * 1024 * 1024  # a DAX request larger than this closes its connection (16 MB of items and room for framing)
DAX_ATTRIBUTE_LISTS_MAX = 1_000_000  # distinct attribute name lists the node defines (ids are never reused)
DAX_MAX_CONNECTIONS = 1024  # connections the DAX endpoint holds at once; more are closed on arrival
CATALOGUE_CHANGE_ATTEMPTS = 12
"""How often an operation runs on a reloaded catalogue when its commit or
its change of a table's definition was refused because another server (or
request) changed the table first (each catalogue write is a compare-and-set
on the table's generation: Database.update_table, ops/__init__.py). Then
InternalServerError, which every SDK retries."""
CATALOGUE_CHANGE_BACKOFF_SECONDS = 0.002  # ops/__init__.py: the random pause before retry n is at most n times this
PITR_SETTINGS_ATTEMPTS = 12
"""How often a change of a table's PITR settings or held views is tried
when other servers keep changing the table's definition first (each try a
compare-and-set on its generation: dynastore/backups/pitr.py)."""
PITR_SETTINGS_RETRY_SECONDS = 0.01  # the pause before the n-th retry: random, at most n times this
REDIS_HOT_KEY_OPERATIONS_PER_SECOND = 1000
"""A key above this many operations a second gets the console's hint to shard it."""
REDIS_BIG_VALUE_BYTES = 1 << 20
"""A value this large gets the console's big-value warning (the guide: keep values small)."""
REDIS_BIG_VALUE_ELEMENTS = 10_000
"""A hash, list, set, sorted set or stream with this many elements gets the warning too."""
REDIS_ADMIN_KEYS_PAGE_MAX = 1000
"""Keys one page of POST /_dynastore/redis/keys lists at most."""
REDIS_ADMIN_HOT_KEYS = 20
"""Hottest and biggest keys GET /_dynastore/redis reports."""
DAX_STALLED_REQUEST_SECONDS = 30  # a DAX connection holding a half-sent request this long is closed
REDIS_HOT_KEY_WINDOW_SECONDS = 10.0
"""The hot-key view's rates cover the current and the previous window of this length."""
REDIS_LEASE_POLL_SECONDS = 0.5
"""On a shared store (PostgreSQL), how often a standby server asks for the
Redis keyspace's lease (redis/lease.py): the longest a take-over waits
after the owner's session ended."""
REDIS_LEASE_POLL_MAX_SECONDS = 4.0
"""A standby that cannot reach the store asks less often, doubling up to
this (the lock's connection attempt blocks the loop up to its timeout)."""
REDIS_LEASE_CHECK_SECONDS = 1.0
"""How often the owner reads the lease row to see that it still owns the
keyspace (its writes are fenced by the row at every commit regardless)."""
REDIS_STOP_COMMIT_SECONDS = 5.0
"""A stopping server over PostgreSQL waits this long at most for its last
commit of Redis rows (and sends its replies) before it closes the clients."""
