"""Stream triggers: a table's stream wired to a local HTTP consumer the way a
Lambda function is wired to a DynamoDB stream (dynastore-specific).

A trigger reads its stream in commit order, shard after shard along the
lineage, and POSTs batches of at most ``BatchSize`` records to its ``Url`` as
the Lambda DynamoDB event (``{"Records": [...]}``, each record with
``eventSourceARN`` and Lambda's ``userIdentity`` spelling). A 2xx answer
commits the position (the checkpoint, stored in the database, so a restart
resumes after the last delivered record: nothing skipped, nothing delivered
twice, nothing out of order). Anything else is retried with a growing delay,
up to ``MaxRetries`` times (-1, the default: until it succeeds, as Lambda
retries until the records expire); a batch that exhausts its retries is
skipped and counted.

Definitions and checkpoints live in their own storage table
(``TRIGGERS_STORAGE_NAME``). Delivery runs on the server's event loop
(``TriggerRunner``); each database step is a short synchronous call between
requests, the HTTP exchange is awaited.

Admin routes (``handle_admin_triggers``):

- ``POST /_dynastore/triggers`` ``{"TableName", "Url", "Name"?, "BatchSize"?
  (1..10000, default 100), "MaxRetries"? (-1..10000, default -1),
  "StartingPosition"? ("LATEST" default, or "TRIM_HORIZON")}`` -> 200 {"Trigger": ...}
- ``GET /_dynastore/triggers`` -> 200 {"Triggers": [...]} (with checkpoint and counters)
- ``DELETE /_dynastore/triggers/<name>`` -> 200 {"Deleted": name}
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import orjson

from dynastore import limits
from dynastore.engine import streams
from dynastore.storage.base import Row, SortKeyRange
from dynastore.storage.errors import StorageUnavailable
from dynastore.streams_api.store import TRIGGERS_STORAGE_NAME
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.streams import Shard
    from dynastore.streams_api.store import StreamLog

logger = logging.getLogger("dynastore.triggers")
T = TypeVar("T")

ADMIN_TRIGGERS_PATH = "/_dynastore/triggers"
TRIGGERS_LOCK = "stream-triggers"
"""The lock (Storage.hold_lock) of the one server that delivers."""
TRIGGERS_PK = b"trigger"
BATCH_SIZE_DEFAULT = limits.TRIGGER_BATCH_SIZE_DEFAULT
BATCH_SIZE_MAX = limits.TRIGGER_BATCH_SIZE_MAX
MAX_RETRIES_LIMIT = limits.TRIGGER_MAX_RETRIES_LIMIT
POLL_INTERVAL_SECONDS = limits.TRIGGER_POLL_INTERVAL_SECONDS
REQUEST_TIMEOUT_SECONDS = limits.TRIGGER_REQUEST_TIMEOUT_SECONDS
RETRY_DELAY_SECONDS = limits.TRIGGER_RETRY_DELAY_SECONDS
RETRY_DELAY_MAX_SECONDS = limits.TRIGGER_RETRY_DELAY_MAX_SECONDS


@dataclass
class Trigger:
    name: str
    table_name: str
    stream: str
    url: str
    batch_size: int
    max_retries: int
    shard_id: str
    after: str  # sequence number the checkpoint is at (text: it exceeds 64 bits)
    delivered_batches: int = 0
    delivered_records: int = 0
    failed_attempts: int = 0
    skipped_batches: int = 0
    last_error: str | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "Name": self.name, "TableName": self.table_name, "StreamArn": self.stream,
            "Url": self.url, "BatchSize": self.batch_size, "MaxRetries": self.max_retries,
            "Checkpoint": {"ShardId": self.shard_id, "SequenceNumber": self.after},
            "DeliveredBatches": self.delivered_batches, "DeliveredRecords": self.delivered_records,
            "FailedAttempts": self.failed_attempts, "SkippedBatches": self.skipped_batches,
            "LastError": self.last_error,
        }


class TriggerError(Exception):
    """A refused trigger definition (HTTP 400)."""


class TriggerBook:
    """The triggers of one database, kept in step with their storage table."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.triggers: dict[str, Trigger] = {}
        self.reload()

    def reload(self) -> None:
        """The definitions and checkpoints as stored (on a shared store other
        servers create and delete triggers too)."""
        storage_id = self.database.streams.triggers_storage_id
        triggers: dict[str, Trigger] = {}
        if storage_id is not None:
            for row in self.database.storage.query(storage_id, TRIGGERS_PK, SortKeyRange()):
                trigger = Trigger(**orjson.loads(row.item))
                triggers[trigger.name] = trigger
        self.triggers = triggers

    def save(self, trigger: Trigger) -> None:
        storage = self.database.storage
        if self.database.streams.triggers_storage_id is None:
            self.database.streams.triggers_storage_id = storage.create_table(
                self.database.storage_name(TRIGGERS_STORAGE_NAME), b"{}"
            )
        data = orjson.dumps(asdict(trigger))
        row = Row(partition_hash(TRIGGERS_PK), TRIGGERS_PK, trigger.name.encode(), data, len(data))
        storage.put(self.database.streams.triggers_storage_id, row)
        self.triggers[trigger.name] = trigger

    def delete(self, name: str) -> bool:
        if self.triggers.pop(name, None) is None:
            return False
        storage_id = self.database.streams.triggers_storage_id
        assert storage_id is not None
        self.database.storage.delete(storage_id, TRIGGERS_PK, name.encode())
        return True

    def create(self, definition: dict[str, Any]) -> Trigger:
        table_name = definition.get("TableName")
        schema = self.database.tables.get(table_name) if isinstance(table_name, str) else None
        if schema is None:
            raise TriggerError(f"Table not found: {table_name}")
        current = schema.extensions.get(streams.STREAM_EXTENSION)
        if current is None:
            raise TriggerError(f"Table has no enabled stream: {table_name}")
        url = definition.get("Url")
        if not isinstance(url, str) or urlsplit(url).scheme != "http" or not urlsplit(url).hostname:
            raise TriggerError("Url must be an http:// URL")
        batch_size = _bounded(definition, "BatchSize", BATCH_SIZE_DEFAULT, 1, BATCH_SIZE_MAX)
        max_retries = _bounded(definition, "MaxRetries", -1, -1, MAX_RETRIES_LIMIT)
        name = definition.get("Name") or f"{table_name}-{len(self.triggers) + 1}"
        if not isinstance(name, str) or name in self.triggers or "/" in name:
            raise TriggerError(f"Invalid or duplicate trigger name: {name}")
        log = self.database.streams.by_arn[current["arn"]]
        shard, after = self._start(log, definition.get("StartingPosition", "LATEST"))
        trigger = Trigger(name, schema.name, log.arn, url, batch_size, max_retries, shard.shard_id,
                          streams.format_sequence(after))
        self.save(trigger)
        return trigger

    def _start(self, log: StreamLog, position: Any) -> tuple[Shard, int]:
        store = self.database.streams
        if position == "TRIM_HORIZON":
            first = store.shards(log)[0]
            return first, max(first.start - 1, first.trimmed)
        if position == "LATEST":
            shard = store.shards(log)[-1]
            return shard, store.last_sequence(log)
        raise TriggerError("StartingPosition must be LATEST or TRIM_HORIZON")

    def next_batch(self, trigger: Trigger) -> list[Row]:
        """The records after the checkpoint, following the shard lineage (moving
        the checkpoint to a child shard once its parent is read to the end)."""
        store = self.database.streams
        now = self.database.now()
        log = store.by_arn.get(trigger.stream)
        while log is not None and (shards := store.retained_shards(log, now)):
            shard = next((shard for shard in shards if shard.shard_id == trigger.shard_id), None)
            if shard is None:  # the checkpoint's shard is past retention: resume at the oldest
                shard = shards[0]
                trigger.shard_id = shard.shard_id
                trigger.after = streams.format_sequence(store.horizon(log, shard, now))
            after = max(int(trigger.after), store.horizon(log, shard, now))  # records past retention are skipped
            rows = store.records_after(log, shard, after, trigger.batch_size)
            if rows or not shard.closed:
                return rows
            child = next((child for child in shards if child.parent == shard.shard_id), None)
            if child is None:
                return []  # the stream is disabled and read to its end
            trigger.shard_id, trigger.after = child.shard_id, streams.format_sequence(child.start - 1)
            self.save(trigger)
        return []


def _bounded(definition: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = definition.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TriggerError(f"{name} must be an integer from {low} to {high}")
    return value


_books: weakref.WeakKeyDictionary[Database, TriggerBook] = weakref.WeakKeyDictionary()


def trigger_book(database: Database) -> TriggerBook:
    book = _books.get(database)
    if book is None:
        book = _books[database] = TriggerBook(database)
    return book


def lambda_event(rows: list[Row], stream_arn: str) -> bytes:
    """The Lambda DynamoDB event for a batch of stored GetRecords records."""
    records = []
    for row in rows:
        record = orjson.loads(row.item)
        identity = record.pop("userIdentity", None)
        record["eventSourceARN"] = stream_arn
        if identity is not None:
            record["userIdentity"] = {"type": identity["Type"], "principalId": identity["PrincipalId"]}
        records.append(record)
    return orjson.dumps({"Records": records})


async def post_json(url: str, body: bytes, timeout: float = REQUEST_TIMEOUT_SECONDS) -> int:
    """POST ``body`` to ``url`` (plain HTTP/1.1); returns the status code."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    try:
        head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        writer.write(head.encode() + body)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), timeout)
        return int(status_line.split()[1])
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass


class TriggerRunner:
    """Delivers every trigger's batches on an event loop, one batch per trigger
    per round; a failing consumer delays only its own trigger."""

    def __init__(self, database: Database, poll_interval: float = POLL_INTERVAL_SECONDS,
                 retry_delay: float = RETRY_DELAY_SECONDS) -> None:
        self.database = database
        self.poll_interval = poll_interval
        self.retry_delay = retry_delay
        self._not_before: dict[str, tuple[float, int]] = {}  # name -> (monotonic time, attempts)
        self._task: asyncio.Task[None] | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> TriggerRunner:
        self._task = loop.create_task(self.run())
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def run(self) -> None:
        while True:
            try:
                delivered = await self.run_once()
            except StorageUnavailable as error:  # PostgreSQL restarting: the next round retries
                logger.warning("stream trigger round skipped: %s", error)
                delivered = 0
            except Exception:  # a bug: logged, and the next round retries
                logger.exception("stream trigger round failed")
                delivered = 0
            if delivered == 0:
                await asyncio.sleep(self.poll_interval)

    async def run_once(self) -> int:
        """One round; returns the number of batches delivered. Only the server
        holding the triggers' lock delivers (each batch once across servers);
        on a shared store it reads the definitions and checkpoints afresh."""
        database = self.database
        if not database.storage.hold_lock(database.storage_name(TRIGGERS_LOCK)):
            return 0
        book = trigger_book(database)
        if not database.storage.exclusive:
            await self._store(book.reload)
        delivered = 0
        for trigger in list(book.triggers.values()):
            waiting = self._not_before.get(trigger.name)
            if waiting is not None and waiting[0] > time.monotonic():
                continue
            rows = await self._store(book.next_batch, trigger)
            if rows:
                delivered += await self._deliver(book, trigger, rows)
        return delivered

    async def _deliver(self, book: TriggerBook, trigger: Trigger, rows: list[Row]) -> int:
        try:
            status = await post_json(trigger.url, lambda_event(rows, trigger.stream))
            error = None if 200 <= status < 300 else f"HTTP {status}"
        except (TimeoutError, OSError, ValueError, IndexError) as failure:
            error = f"{type(failure).__name__}: {failure}"
        if book.triggers.get(trigger.name) is not trigger:
            return 0  # deleted while the request was in flight
        if error is None:
            trigger.delivered_batches += 1
            trigger.delivered_records += len(rows)
        else:
            trigger.failed_attempts += 1
            trigger.last_error = error
            attempts = self._not_before.get(trigger.name, (0.0, 0))[1] + 1
            if trigger.max_retries < 0 or attempts <= trigger.max_retries:
                delay = min(self.retry_delay * 2 ** (attempts - 1), RETRY_DELAY_MAX_SECONDS)
                self._not_before[trigger.name] = (time.monotonic() + delay, attempts)
                await self._store(book.save, trigger)
                return 0
            trigger.skipped_batches += 1
            logger.warning("trigger %s skipped %d records after %d attempts", trigger.name, len(rows), attempts)
        self._not_before.pop(trigger.name, None)
        trigger.after = rows[-1].sk.decode()
        await self._store(book.save, trigger)
        return 1

    async def _store(self, step: Callable[..., T], *arguments: Any) -> T:
        """Run a step that uses the store: on a server over PostgreSQL in a
        greenlet of its own (it parks on its reads; the event loop never
        blocks on the database), elsewhere right here."""
        spawn = self.database.background_spawn
        if spawn is None:
            return step(*arguments)
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def run() -> None:
            try:
                result = step(*arguments)
            except BaseException as error:  # delivered to the awaiting round
                if not done.done():
                    done.set_exception(error)
                return
            if not done.done():
                done.set_result(result)

        spawn(run)
        return await done


def handle_admin_triggers(
    database: Database, method: str, path: str, body: bytes | dict[str, Any] | None
) -> tuple[int, dict[str, Any]]:
    path = path.split("?", 1)[0].rstrip("/")
    book = trigger_book(database)
    if path == ADMIN_TRIGGERS_PATH:
        if method == "GET":
            return 200, {"Triggers": [trigger.describe() for trigger in book.triggers.values()]}
        if method != "POST":
            return 405, {"message": "Method Not Allowed"}
        try:
            definition = body if isinstance(body, dict) else orjson.loads(body or b"{}")
            if not isinstance(definition, dict):
                raise TriggerError("The body must be a JSON object")
            return 200, {"Trigger": book.create(definition).describe()}
        except (TriggerError, orjson.JSONDecodeError) as error:
            return 400, {"message": str(error)}
    prefix = ADMIN_TRIGGERS_PATH + "/"
    if not path.startswith(prefix):
        return 404, {"message": "Not Found"}
    name = path[len(prefix):]
    if method != "DELETE":
        return 405, {"message": "Method Not Allowed"}
    if not book.delete(name):
        return 404, {"message": f"No trigger {name}"}
    return 200, {"Deleted": name}
