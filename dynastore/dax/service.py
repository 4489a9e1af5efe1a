"""The DAX node's state (caches, attribute lists, counters) and the running
of one decoded request: its method, or DAX's error answer.

Errors reach the client as the DAX clients expect them: an array of DAX's
error codes, the message, and ``[request id, DynamoDB error type, HTTP
status]`` (plus the cancellation reasons of a cancelled transaction). The
clients turn the codes into the same error names boto3 and the JavaScript
SDK give for DynamoDB (``ERROR_CODES``).
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.dax.cache import MISSING, Cache
from dynastore.dax.items import (
    AttributeLists,
    CachedItem,
    KeySchema,
    item_size_estimate,
    plain_get_answer,
    stream_item,
)
from dynastore.dax.methods import (
    BATCH_WRITE_ITEM,
    DELETE_ITEM,
    PUT_ITEM,
    TRANSACT_WRITE_ITEMS,
    UPDATE_ITEM,
)
from dynastore.dax.registry import METHODS
from dynastore.dax.wire import MalformedFrame, put_array_head, put_int, put_text
from dynastore.errors import DynamoDBError, InternalServerError
from dynastore.storage.errors import StorageUnavailable

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.dax")

_SERVICE_ERROR = [4, 37, 38, 39]
ERROR_CODES: dict[str, list[int]] = {
    "ProvisionedThroughputExceededException": [*_SERVICE_ERROR, 40],
    "ResourceNotFoundException": [*_SERVICE_ERROR, 41],
    "ConditionalCheckFailedException": [*_SERVICE_ERROR, 43],
    "ResourceInUseException": [*_SERVICE_ERROR, 45],
    "ValidationException": [*_SERVICE_ERROR, 46],
    "InternalServerError": [*_SERVICE_ERROR, 47],
    "ItemCollectionSizeLimitExceededException": [*_SERVICE_ERROR, 48],
    "LimitExceededException": [*_SERVICE_ERROR, 49],
    "ThrottlingException": [*_SERVICE_ERROR, 50],
    "TransactionCanceledException": [*_SERVICE_ERROR, 58],
    "RequestLimitExceeded": [*_SERVICE_ERROR, 61],
    "AccessDeniedException": [4, 37, 38, 42],
    "UnrecognizedClientException": [4, 23, 31, 33],
    "MissingAuthenticationTokenException": [4, 23, 31, 32],
}
"""DAX's error codes per DynamoDB error; any other error is sent as a
service error with no code of its own, which the clients name by the
DynamoDB error type that travels beside it."""
OTHER_SERVICE_ERROR = [*_SERVICE_ERROR, 0]


WRITE_METHODS = {
    PUT_ITEM: "PutItem", UPDATE_ITEM: "UpdateItem", DELETE_ITEM: "DeleteItem",
    BATCH_WRITE_ITEM: "BatchWriteItem", TRANSACT_WRITE_ITEMS: "TransactWriteItems",
}
"""What a ``readonly`` key may not ask for (docs/security.md)."""


def first_table(arguments: list[Any]) -> str:
    """The first table a write request names (for AccessDeniedException)."""
    first = arguments[0] if arguments else None
    if isinstance(first, dict):
        first = next(iter(first), "*")
    elif isinstance(first, list | tuple):
        first = arguments[1][0] if len(arguments) > 1 and arguments[1] else "*"
    if isinstance(first, bytes | bytearray):
        return bytes(first).decode("utf-8", "replace")
    return str(first)


class Session:
    """One connection's state: the namespace its credentials reach."""

    __slots__ = ("database", "namespace", "local_address", "authorization_error", "key")

    def __init__(self, database: Database, local_address: tuple[str, int]) -> None:
        self.database = database
        self.key: Any = None
        """The connection's access key (``--credentials``), None without."""
        self.namespace = (database.account_id, database.region)
        self.local_address = local_address
        self.authorization_error: DynamoDBError | None = None
        """Why the last authorizeConnection was refused (answers every request)."""


class DaxService:
    """What one DAX endpoint keeps: its caches, attribute lists and counters."""

    def __init__(self, database: Database, item_ttl_ms: float = limits.DAX_ITEM_TTL_MS_DEFAULT,
                 query_ttl_ms: float = limits.DAX_QUERY_TTL_MS_DEFAULT,
                 cache_max_bytes: int = limits.DAX_CACHE_MAX_BYTES) -> None:
        self.database = database
        self.item_cache = Cache("item", item_ttl_ms / 1000, cache_max_bytes, zero_ttl_keeps=True)
        self.query_cache = Cache("query", query_ttl_ms / 1000, cache_max_bytes)
        self.lists = AttributeLists()
        self.hostname: str | None = None
        self.url = ""
        """dax://HOST:PORT (daxs:// over TLS), once listening."""
        self.requests: dict[str, int] = {}
        """method name -> requests answered"""
        self.errors = 0
        self.fast_gets = 0
        """GetItems the item cache answered before any decoding (counted in ``requests``)."""
        self.connections = 0
        self.malformed_frames = 0

    def cache_item(self, key: Any, item: dict[str, Any] | None, schema: KeySchema) -> None:
        if not self.item_cache.enabled:
            return
        encoded = None if item is None else stream_item(item, schema, self.lists)
        entry = CachedItem(item, plain_get_answer(encoded))
        self.item_cache.put(key, entry, item_size_estimate(encoded) * 2 + len(key[2]), self.database.now())

    def cached_query_answer(self, session: Session, raw: bytes, name: str) -> bytes | None:
        """The query cache's answer to exactly these request bytes (a hit),
        else None (not counted: the full path then runs)."""
        answer = self.query_cache.get((session.namespace, raw), self.database.now(), count_miss=False)
        if answer is MISSING:
            return None
        self.requests[name] = self.requests.get(name, 0) + 1
        return answer  # type: ignore[no-any-return]

    def cached_get_answer(self, session: Session, table: str, key_bytes: bytes) -> bytes | None:
        """The answer to a plain eventually consistent GetItem the item cache
        holds (a hit), else None (not counted: the full path then runs)."""
        entry = self.item_cache.get((session.namespace, table, key_bytes), self.database.now(), count_miss=False)
        if entry is MISSING:
            return None
        self.fast_gets += 1
        return entry.answer  # type: ignore[no-any-return]

    def cache_query(self, key: Any, answer: bytes) -> None:
        self.query_cache.put(key, answer, len(answer) + len(key[1]) + limits.DAX_CACHE_ENTRY_OVERHEAD_BYTES,
                             self.database.now())

    def flush(self) -> dict[str, int]:
        return {"item": self.item_cache.flush(), "query": self.query_cache.flush()}

    def statistics(self) -> dict[str, Any]:
        return {
            "itemCache": self.item_cache.statistics(),
            "queryCache": self.query_cache.statistics(),
            "attributeLists": len(self.lists),
            "connections": self.connections,
            "requests": self.request_counts(),
            "errors": self.errors,
            "malformedFrames": self.malformed_frames,
        }

    def request_counts(self) -> dict[str, int]:
        counts = dict(self.requests)
        if self.fast_gets:
            counts["get_item"] = counts.get("get_item", 0) + self.fast_gets
        return counts

    def run(self, session: Session, method_id: int, arguments: list[Any], raw: bytes) -> bytes:
        """The answer to one request (never raises but MalformedFrame, which
        closes the connection)."""
        method = METHODS[method_id]
        name = method.__name__
        self.requests[name] = self.requests.get(name, 0) + 1
        try:
            if session.authorization_error is not None:
                raise session.authorization_error
            if method_id in WRITE_METHODS and session.key is not None and session.key.readonly:
                from dynastore.dax.authorization import write_refused

                raise write_refused(session, WRITE_METHODS[method_id], first_table(arguments))
            return method(self, session, arguments, raw)
        except MalformedFrame:
            raise
        except DynamoDBError as error:
            self.errors += 1
            return error_answer(error)
        except StorageUnavailable as error:
            logger.warning("DAX %s answered InternalServerError: %s", name, error)
            self.errors += 1
            return error_answer(InternalServerError())
        except Exception:
            logger.exception("internal error in DAX %s", name)
            self.errors += 1
            return error_answer(InternalServerError())


def error_answer(error: DynamoDBError) -> bytes:
    """DAX's error answer: codes, message, [request id, type, status, reasons]."""
    name = error.type_name()
    out = bytearray()
    codes = ERROR_CODES.get(name, OTHER_SERVICE_ERROR)
    put_array_head(out, len(codes))
    for code in codes:
        put_int(out, code)
    put_text(out, error.message or "")
    reasons: bytes | None = getattr(error, "dax_reasons", None)  # methods.transact_write_items
    put_array_head(out, 4 if reasons is not None else 3)
    put_text(out, str(uuid.uuid4()))
    put_text(out, name)
    put_int(out, error.status)
    if reasons is not None:
        out += reasons
    return bytes(out)


INTERNAL_ERROR_ANSWER = error_answer(InternalServerError())
