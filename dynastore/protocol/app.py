"""One HTTP request in, one reply out: DynamoDB's JSON 1.0 wire rules.

This module knows no sockets: the server (protocol/server.py) parses HTTP and
hands each complete request to ``Application.handle``, which returns a
``Reply`` (status, content type, body bytes, extra header lines). The server
adds the headers every response carries (request id, CRC32, length).

The checks run in DynamoDB's order (as recorded by dynalite's connection
tests): method and content type (404 ``<UnknownOperationException/>``), JSON
syntax (SerializationException), target (UnknownOperationException),
credentials (MissingAuthenticationToken / IncompleteSignature), empty or
non-object body (SerializationException), then the operation itself.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from dynastore import limits
from dynastore.admin_time import ADMIN_TIME_PATHS, handle_admin_time
from dynastore.errors import (
    DynamoDBError,
    InternalServerError,
    RequestEntityTooLargeException,
    SerializationException,
    UnknownOperationException,
)
from dynastore.faults import handle_admin as handle_faults_admin
from dynastore.ops import ALL_OPERATIONS, dispatch
from dynastore.protocol.authorization import check_credentials_present
from dynastore.protocol.http import APPLICATION_JSON, JSON_1_0, TEXT_PLAIN, Reply
from dynastore.storage.errors import StorageUnavailable
from dynastore.streams_api import dispatch_streams
from dynastore.streams_api.triggers import ADMIN_TRIGGERS_PATH, handle_admin_triggers
from dynastore.throughput import (
    ADMIN_THROUGHPUT_PATHS,
    PROMETHEUS_CONTENT_TYPE,
    handle_admin_metrics,
    prometheus_metrics,
)

if TYPE_CHECKING:
    from dynastore.database import Database

logger = logging.getLogger("dynastore.protocol")

API_TARGET_PREFIX = "DynamoDB_20120810."
STREAMS_TARGET_PREFIX = "DynamoDBStreams_20120810."
"""The DynamoDB Streams API, served on the same endpoint (dynastore.streams_api)."""
ADMIN_PATH_PREFIX = b"/_dynastore/"
"""dynastore's own admin endpoints (docs/admin.md); anything else under the
prefix is 404."""

AdminHandler = Callable[["Database", str, str, "bytes | None"], "tuple[int, Any]"]

#: path prefix -> handler(database, method, path, body) -> (status, JSON-able answer)
ADMIN_ROUTES: dict[bytes, AdminHandler] = {
    b"/_dynastore/faults": handle_faults_admin,
    **{path.encode(): handle_admin_metrics for path in ADMIN_THROUGHPUT_PATHS},
    **{path.encode(): handle_admin_time for path in ADMIN_TIME_PATHS},
    ADMIN_TRIGGERS_PATH.encode(): handle_admin_triggers,
}

ACCEPTED_CONTENT_TYPES = (JSON_1_0, APPLICATION_JSON)

#: ``X-Amz-Target`` header value -> operation name, for every DynamoDB operation.
TARGETS: dict[bytes, str] = {
    (API_TARGET_PREFIX + operation).encode(): operation for operation in ALL_OPERATIONS
}
_STREAMS_TARGET_PREFIX_BYTES = STREAMS_TARGET_PREFIX.encode()

CORS_ALLOW_ANY_ORIGIN = b"Access-Control-Allow-Origin: *\r\n"
CORS_MAX_AGE_SECONDS = 172800


class RequestHandler(Protocol):
    """What the server needs from an application (``Application`` or a wrapper
    around it, e.g. one taking a lock)."""

    def handle(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Reply: ...


#: DynamoDB's answer to anything that is not a JSON POST (or a GET health check).
UNKNOWN_OPERATION_PAGE: Reply = (404, TEXT_PLAIN, b"<UnknownOperationException/>\n", b"")
ADMIN_NOT_FOUND: Reply = (404, APPLICATION_JSON, b'{"message":"Not Found"}', b"")


def response_content_type(request_content_type: bytes | None) -> bytes | None:
    """The content type to answer with, or None when DynamoDB would not
    accept the request's content type. ``application/json; charset=x`` counts
    as ``application/json``; DynamoDB echoes the JSON flavour it was sent."""
    if request_content_type is None:
        return None
    if request_content_type in ACCEPTED_CONTENT_TYPES:
        return request_content_type
    essence = request_content_type.split(b";", 1)[0].strip().lower()
    return essence if essence in ACCEPTED_CONTENT_TYPES else None


def decompress_gzip(body: bytes) -> bytes:
    """Inflate a gzip request body, refusing to produce more than the request
    limit (so a small bomb cannot make the server allocate without bound)."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        inflated = inflater.decompress(body, limits.REQUEST_BODY_MAX_BYTES + 1)
    except zlib.error as error:
        raise SerializationException() from error
    if len(inflated) > limits.REQUEST_BODY_MAX_BYTES or inflater.unconsumed_tail:
        raise RequestEntityTooLargeException()
    if not inflater.eof:
        raise SerializationException()
    return inflated


def _has_credentials_fast(authorization: bytes | None, headers: dict[bytes, bytes]) -> bool:
    """True for the common well-formed SigV4 header, skipping the full check.

    ``find`` rather than ``in``: CPython 3.11's ``bytes in bytes`` first tries
    the operand as an integer and raises and clears a TypeError each time
    (callgrind: ~3% of a GetItem's instructions for these three tests)."""
    return (
        authorization is not None
        and authorization.startswith(b"AWS4-")
        and authorization.find(b"Credential=") != -1
        and authorization.find(b"Signature=") != -1
        and authorization.find(b"SignedHeaders=") != -1
        and (b"x-amz-date" in headers or b"date" in headers)
    )


class Application:
    """Turns requests into replies against one Database."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.health_body = f"healthy: dynamodb.{database.region}.amazonaws.com ".encode()

    def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """The reply to one request; never raises."""
        if url.startswith(ADMIN_PATH_PREFIX):
            reply = self.handle_admin(method, url, body)
        elif method == b"POST":
            reply = self.handle_api_call(url, headers, body)
        else:
            reply = self.handle_other(method, headers)
        if b"origin" in headers and not reply[3]:
            return (reply[0], reply[1], reply[2], CORS_ALLOW_ANY_ORIGIN)
        return reply

    def handle_admin(self, method: bytes, url: bytes, body: bytes) -> Reply:
        """``/_dynastore/...``: JSON in, JSON out, no DynamoDB wire rules."""
        path, _, query = url.partition(b"?")
        handler = next(
            (handler for prefix, handler in ADMIN_ROUTES.items()
             if path == prefix or path.startswith(prefix + b"/")),
            None,
        )
        if handler is None:
            return ADMIN_NOT_FOUND
        try:
            if handler is handle_admin_metrics and method == b"GET" and b"format=prometheus" in query:
                return (200, PROMETHEUS_CONTENT_TYPE.encode(), prometheus_metrics(self.database), b"")
            status, answer = handler(
                self.database, method.decode("latin-1"), path.decode("latin-1"), body or None
            )
        except Exception:
            logger.exception("internal error in the admin API at %r", url)
            return (500, APPLICATION_JSON, b'{"message":"Internal server error"}', b"")
        return (status, APPLICATION_JSON, orjson.dumps(answer), b"")

    def handle_other(self, method: bytes, headers: dict[bytes, bytes]) -> Reply:
        if method == b"OPTIONS" and b"origin" in headers:
            return cors_preflight(headers)
        if method == b"GET" or method == b"HEAD":
            return (200, TEXT_PLAIN, self.health_body, b"")
        return UNKNOWN_OPERATION_PAGE

    def handle_api_call(self, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        content_type = response_content_type(headers.get(b"content-type"))
        if content_type is None:
            if body:
                return UNKNOWN_OPERATION_PAGE
            content_type = APPLICATION_JSON
        try:
            payload = self.call(url, headers, body)
        except DynamoDBError as error:
            return (error.status, content_type, orjson.dumps(error.to_wire()), b"")
        except StorageUnavailable as error:
            # PostgreSQL restarting, a dropped connection: the request was not
            # applied (or its outcome is unknown) and SDKs retry a 500; the
            # next request reconnects.
            logger.warning("%s answered InternalServerError: %s", headers.get(b"x-amz-target"), error)
            internal = InternalServerError()
            return (internal.status, content_type, orjson.dumps(internal.to_wire()), b"")
        except Exception:
            logger.exception("internal error while handling %s", headers.get(b"x-amz-target"))
            internal = InternalServerError()
            return (internal.status, content_type, orjson.dumps(internal.to_wire()), b"")
        return (200, content_type, payload, b"")

    def call(self, url: bytes, headers: dict[bytes, bytes], body: bytes) -> bytes:
        """Decode, authenticate and run one API call; returns the response body."""
        encoding = headers.get(b"content-encoding")
        if encoding is not None and encoding.strip().lower() == b"gzip":
            body = decompress_gzip(body)
        try:
            request = orjson.loads(body) if body else None
        except orjson.JSONDecodeError as error:
            raise SerializationException() from error
        target = headers.get(b"x-amz-target", b"")
        operation = TARGETS.get(target)
        streams_operation = None
        if operation is None:
            if not target.startswith(_STREAMS_TARGET_PREFIX_BYTES):
                raise UnknownOperationException()
            streams_operation = target[len(_STREAMS_TARGET_PREFIX_BYTES):].decode("latin-1")
        authorization = headers.get(b"authorization")
        if not _has_credentials_fast(authorization, headers):
            query = url.partition(b"?")[2]
            has_date = b"x-amz-date" in headers or b"date" in headers
            check_credentials_present(authorization, has_date, query)
        if type(request) is not dict:
            raise SerializationException()
        if streams_operation is not None:
            result = dispatch_streams(self.database, streams_operation, request)
        else:
            assert operation is not None
            result = dispatch(self.database, operation, request)
        return result if type(result) is bytes else orjson.dumps(result)


def cors_preflight(headers: dict[bytes, bytes]) -> Reply:
    """DynamoDB answers a browser's preflight for any origin."""
    lines = [CORS_ALLOW_ANY_ORIGIN]
    requested_headers = headers.get(b"access-control-request-headers")
    if requested_headers is not None:
        lines.append(b"Access-Control-Allow-Headers: " + requested_headers + b"\r\n")
    requested_method = headers.get(b"access-control-request-method")
    if requested_method is not None:
        lines.append(b"Access-Control-Allow-Methods: " + requested_method + b"\r\n")
    lines.append(b"Access-Control-Max-Age: %d\r\n" % CORS_MAX_AGE_SECONDS)
    return (200, TEXT_PLAIN, b"", b"".join(lines))
