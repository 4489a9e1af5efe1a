"""One HTTP request in, one reply out: DynamoDB's JSON 1.0 wire rules.

This module knows no sockets: the server (protocol/server.py) parses HTTP and
hands each complete request to ``Application.handle``, which returns a
``Reply`` (status, content type, body bytes, extra header lines). The server
adds the headers every response carries (request id, CRC32, length).

The checks run in DynamoDB's order (as recorded by dynalite's connection
tests): method and content type (404 ``<UnknownOperationException/>``), JSON
syntax (SerializationException), target (UnknownOperationException),
credentials (MissingAuthenticationToken / IncompleteSignature, and with
``--credentials`` the signature itself: protocol/sigv4.py), empty or
non-object body (SerializationException), then the operation itself.

Which Database a request reaches is its namespace (dynastore/namespaces.py):
the account of its access key (000000000000 without ``--credentials``) and
the region of its SigV4 credential scope.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from dynastore import limits
from dynastore.admin_time import ADMIN_TIME_PATHS, handle_admin_time
from dynastore.backups.admin import ADMIN_JOBS_PATH, handle_admin_jobs
from dynastore.backups.export_admin import ADMIN_EXPORT_JOBS_PATH, handle_admin_export_jobs
from dynastore.backups.import_admin import ADMIN_IMPORTS_PATH, handle_admin_imports
from dynastore.dax.admin import ADMIN_DAX_PATH, dax_prometheus, handle_admin_dax, with_dax_metrics
from dynastore.engine.namespaces import DEFAULT_ACCOUNT_ID, DEFAULT_REGION
from dynastore.errors import (
    AccessDeniedException,
    DynamoDBError,
    InternalServerError,
    InvalidSignatureException,
    LimitExceededException,
    RequestEntityTooLargeException,
    SerializationException,
    UnknownOperationException,
)
from dynastore.faults import handle_admin as handle_faults_admin
from dynastore.namespaces import Namespaces, TooManyNamespaces
from dynastore.ops import ALL_OPERATIONS, READ_OPERATIONS, dispatch, reads_only
from dynastore.protocol.authorization import check_credentials_present
from dynastore.protocol.http import APPLICATION_JSON, JSON_1_0, TEXT_PLAIN, Reply
from dynastore.protocol.sigv4 import Caller, SignatureVerifier, credential_scope_region
from dynastore.redis.admin import ADMIN_REDIS_PATH, handle_admin_redis
from dynastore.replication.admin import ADMIN_REPLICATION_PATH, handle_admin_replication
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
    ADMIN_JOBS_PATH.encode(): handle_admin_jobs,
    ADMIN_EXPORT_JOBS_PATH.encode(): handle_admin_export_jobs,
    ADMIN_IMPORTS_PATH.encode(): handle_admin_imports,
    ADMIN_DAX_PATH.encode(): handle_admin_dax,  # the DAX endpoint's figures and cache flush (docs/dax.md)
    ADMIN_REPLICATION_PATH.encode(): handle_admin_replication,
    ADMIN_REDIS_PATH.encode(): handle_admin_redis,  # the Redis protocol's (dynastore/redis/admin.py)
}

IDENTITY_PATH = b"/_dynastore/identity"
"""Who the request's key is and which regions its account has tables in (the
console's sign-in and region picker); any verified key may ask."""

ACCEPTED_CONTENT_TYPES = (JSON_1_0, APPLICATION_JSON)

#: ``X-Amz-Target`` header value -> operation name, for every DynamoDB operation.
TARGETS: dict[bytes, str] = {
    (API_TARGET_PREFIX + operation).encode(): operation for operation in ALL_OPERATIONS
}
_STREAMS_TARGET_PREFIX_BYTES = STREAMS_TARGET_PREFIX.encode()

CORS_ALLOW_ANY_ORIGIN = b"Access-Control-Allow-Origin: *\r\n"
CORS_EXPOSE_HEADERS = (
    b"Access-Control-Expose-Headers: x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date\r\n"
)
"""The headers DynamoDB lets a browser's script read (a capture of
dynamodb.us-east-1.amazonaws.com's preflight answer, AllanZhengYP/cors-test;
x-amz-crc32 is not among them, which is why aws-sdk-js cannot check it in
browsers: aws/aws-sdk-js#1614)."""
CORS_ON_RESPONSE = CORS_ALLOW_ANY_ORIGIN + CORS_EXPOSE_HEADERS
"""What every reply to a request with an Origin header carries (but a preflight's)."""
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


GZIP_MEMBER_START = b"\x1f\x8b\x08"
"""The first bytes of a gzip member (RFC 1952: ID1, ID2, CM=deflate)."""
GZIP_WBITS = 16 + zlib.MAX_WBITS
DEFLATE_WBITS = zlib.MAX_WBITS
"""deflate as HTTP means it: the zlib format (RFC 1950), as DynamoDB reads it."""


def decode_request_body(body: bytes, content_encoding: bytes) -> bytes:
    """The request body its Content-Encoding describes. DynamoDB takes gzip
    (the SDKs' request compression) and deflate (ScyllaDB's
    test_compressed_request.py and PR 27917, run against the service); an
    empty header means no coding. A body that does not decode, and any other
    coding (``br``, ``identity``, ``gzip, gzip``...), is a
    SerializationException here, where DynamoDB answers 500
    InternalServerError (docs/compatibility.md: no 5xx for bad input)."""
    coding = content_encoding.strip().lower()
    if coding == b"gzip":
        return inflate(body, GZIP_WBITS, GZIP_MEMBER_START)
    if coding == b"deflate":
        return inflate(body, DEFLATE_WBITS, None)
    if not coding:
        return body
    raise SerializationException()


def inflate(body: bytes, wbits: int, next_member_start: bytes | None) -> bytes:
    """Inflate a compressed request body, refusing to produce more than the
    request limit (so a small bomb cannot make the server allocate without
    bound).

    As DynamoDB does (ScyllaDB's test_compressed_request.py, against the
    service): several gzip members one after the other are one body
    (``next_member_start``; deflate has no such rule, and DynamoDB does not
    join two zlib streams), and bytes after the last member that do not
    begin another one are ignored."""
    pieces: list[bytes] = []
    inflated_bytes = 0
    data = body
    while True:
        inflater = zlib.decompressobj(wbits=wbits)
        try:
            inflated = inflater.decompress(data, limits.REQUEST_BODY_MAX_BYTES + 1 - inflated_bytes)
        except zlib.error as error:
            raise SerializationException() from error
        inflated_bytes += len(inflated)
        if inflated_bytes > limits.REQUEST_BODY_MAX_BYTES or inflater.unconsumed_tail:
            raise RequestEntityTooLargeException()
        if not inflater.eof:
            raise SerializationException()
        pieces.append(inflated)
        data = inflater.unused_data
        if next_member_start is None or not data.startswith(next_member_start):
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)


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
    """Turns requests into replies against the namespaces of one store.

    ``database`` is the default namespace's Database; with a ``verifier``
    (``dynastore serve --credentials``) every request must be signed by one
    of its keys, and reaches the namespace of that key's account."""

    def __init__(self, database: Database, verifier: SignatureVerifier | None = None) -> None:
        self.database = database
        self.namespaces = Namespaces.of(database)
        self.verifier = verifier
        self.health_bodies: dict[str, bytes] = {}
        """Region -> the health check's answer naming its endpoint (bounded)."""

    def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """The reply to one request; never raises."""
        if url.startswith(ADMIN_PATH_PREFIX):
            return self.handle_admin(method, url, headers, body)  # never for other sites: no CORS
        if method == b"POST":
            reply = self.handle_api_call(url, headers, body)
        else:
            reply = self.handle_other(method, url, headers)
        if b"origin" in headers and method != b"OPTIONS":
            return (reply[0], reply[1], reply[2], reply[3] + CORS_ON_RESPONSE)
        return reply

    def handle_admin(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        """``/_dynastore/...``: JSON in, JSON out, no DynamoDB wire rules.
        A browser page of another site is refused (no CSRF); with
        credentials the request must be signed, by an ``admin`` key but for
        the identity route; it reaches the namespace it is signed for."""
        path, _, query = url.partition(b"?")
        if _cross_site(headers):
            return ADMIN_CROSS_SITE
        try:
            caller = self.admin_caller(method, url, headers, body, path == IDENTITY_PATH)
        except DynamoDBError as error:
            return (error.status, APPLICATION_JSON, orjson.dumps(error.to_wire()), b"")
        database = self.database_of(caller, headers.get(b"authorization"), query)
        if path == IDENTITY_PATH:
            return (200, APPLICATION_JSON, orjson.dumps(self.identity(caller, database)), b"")
        handler = next(
            (handler for prefix, handler in ADMIN_ROUTES.items()
             if path == prefix or path.startswith(prefix + b"/")),
            None,
        )
        if handler is None:
            return ADMIN_NOT_FOUND
        try:
            if handler is handle_admin_metrics and method == b"GET" and b"format=prometheus" in query:
                metrics = prometheus_metrics(database) + dax_prometheus(database)
                return (200, PROMETHEUS_CONTENT_TYPE.encode(), metrics, b"")
            status, answer = handler(
                database, method.decode("latin-1"), path.decode("latin-1"), body or None
            )
            if handler is handle_admin_metrics and status == 200 and method == b"GET":
                answer = with_dax_metrics(database, answer)
        except Exception:
            logger.exception("internal error in the admin API at %r", url)
            return (500, APPLICATION_JSON, b'{"message":"Internal server error"}', b"")
        if type(answer) is bytes:  # a route's Prometheus text
            return (status, PROMETHEUS_CONTENT_TYPE.encode(), answer, b"")
        return (status, APPLICATION_JSON, orjson.dumps(answer), b"")

    def admin_caller(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes, any_key: bool
    ) -> Caller | None:
        """Who signed an admin request (None without credentials configured)."""
        if self.verifier is None:
            return None
        caller = self.verifier.verify(method, url, headers, body)
        if not any_key and not caller.key.admin:
            raise AccessDeniedException(
                f"User: {_user_arn(caller)} is not authorized to call dynastore's admin routes: "
                "its access key has no admin flag (docs/security.md)"
            )
        return caller

    def identity(self, caller: Caller | None, database: Database) -> dict[str, Any]:
        account = caller.key.account_id if caller is not None else DEFAULT_ACCOUNT_ID
        regions = set(self.namespaces.regions_with_tables(account)) | {database.region}
        return {
            "account": account,
            "accessKeyId": caller.key.access_key_id if caller is not None else None,
            "readonly": caller.key.readonly if caller is not None else False,
            "admin": caller.key.admin if caller is not None else True,
            "region": database.region,
            "regions": sorted(regions),
            "singleRegion": self.namespaces.single_region,
        }

    def database_of(
        self, caller: Caller | None, authorization: bytes | None, query: bytes, region: str | None = None
    ) -> Database:
        """The namespace a request reaches: its key's account (the default
        one without credentials) in the region of its credential scope
        (``region`` when the caller has worked it out: ``request_region``)."""
        account = caller.key.account_id if caller is not None else DEFAULT_ACCOUNT_ID
        if region is None:
            region = request_region(caller, authorization, query)
        try:
            return self.namespaces.get(account, region)
        except ValueError as error:  # not a region name dynastore can keep tables under
            raise InvalidSignatureException(str(error)) from None
        except TooManyNamespaces as error:
            raise LimitExceededException(str(error)) from None

    def handle_other(self, method: bytes, url: bytes, headers: dict[bytes, bytes]) -> Reply:
        if method == b"OPTIONS" and b"origin" in headers:
            return cors_preflight(headers)
        if method == b"GET" or method == b"HEAD":
            return (200, TEXT_PLAIN, self.health_body(url, headers), b"")
        return UNKNOWN_OPERATION_PAGE

    def health_body(self, url: bytes, headers: dict[bytes, bytes]) -> bytes:
        """DynamoDB's health answer names the regional endpoint asked,
        ``healthy: dynamodb.REGION.amazonaws.com `` (trailing space and all):
        the region of the request's credential scope if it is signed, else
        the one its Host names (``dynamodb.REGION.amazonaws.com``), else the
        server's default region."""
        region = (
            credential_scope_region(headers.get(b"authorization"), url.partition(b"?")[2])
            or host_region(headers.get(b"host"))
            or self.database.region
        )
        body = self.health_bodies.get(region)
        if body is None:
            body = f"healthy: dynamodb.{region}.amazonaws.com ".encode()
            if len(self.health_bodies) >= limits.HTTP_HEALTH_BODY_CACHE_ENTRIES:
                self.health_bodies.clear()
            self.health_bodies[region] = body
        return body

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
        raw_body = body  # what the signature's payload hash covers
        encoding = headers.get(b"content-encoding")
        if encoding is not None:
            body = decode_request_body(body, encoding)
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
        database, region = self.authorize(url, headers, raw_body, operation, request)
        if type(request) is not dict:
            raise SerializationException()
        if streams_operation is not None:
            result = dispatch_streams(database, streams_operation, request)
        else:
            assert operation is not None
            result = dispatch(database, operation, request, region)
        return result if type(result) is bytes else orjson.dumps(result)

    def authorize(
        self, url: bytes, headers: dict[bytes, bytes], body: bytes, operation: str | None, request: Any
    ) -> tuple[Database, str]:
        """Check the request's credentials (and with a verifier, its
        signature and the key's rights); returns the namespace it reaches
        and the region it was signed for."""
        authorization = headers.get(b"authorization")
        verifier = self.verifier
        if verifier is None:
            query = b""
            if not _has_credentials_fast(authorization, headers):
                query = url.partition(b"?")[2]
                has_date = b"x-amz-date" in headers or b"date" in headers
                check_credentials_present(authorization, has_date, query)
            region = request_region(None, authorization, query)
            return self.database_of(None, authorization, query, region), region
        caller = verifier.verify(b"POST", url, headers, body)
        database = self.database_of(caller, authorization, b"", caller.region)
        if caller.key.readonly and operation is not None and operation not in READ_OPERATIONS and (
            not reads_only(operation, request)  # PartiQL SELECTs (ops.reads_only)
        ):
            raise access_denied(caller, operation, database, request)
        return database, caller.region


ADMIN_CROSS_SITE: Reply = (
    403, APPLICATION_JSON, b'{"message":"cross-origin request refused"}', b""
)


def request_region(caller: Caller | None, authorization: bytes | None, query: bytes) -> str:
    """The region a request was signed for: its verified caller's, else its
    credential scope's (header or presigned query), else the default."""
    if caller is not None:
        return caller.region
    return credential_scope_region(authorization, query) or DEFAULT_REGION


def _cross_site(headers: dict[bytes, bytes]) -> bool:
    """True when a browser sent the request from a page of another site
    (its Origin names another host than the request's Host)."""
    origin = headers.get(b"origin")
    if origin is None:
        return False
    if origin == b"null":  # a sandboxed frame or a local file: no site of ours
        return True
    host = origin.partition(b"://")[2].split(b"/", 1)[0].lower()
    return host != headers.get(b"host", b"").lower()


def _user_arn(caller: Caller) -> str:
    """The principal DynamoDB names in AccessDeniedException: dynastore's
    keys belong to no IAM user, so the access key id stands in for its name."""
    return f"arn:aws:iam::{caller.key.account_id}:user/{caller.key.access_key_id}"


def access_denied(caller: Caller, operation: str, database: Database, request: Any) -> AccessDeniedException:
    """A ``readonly`` key asked for a write: DynamoDB's words for a missing
    IAM permission, naming the first table the request writes."""
    resource = database.table_arn(_first_table(request))
    return AccessDeniedException(
        f"User: {_user_arn(caller)} is not authorized to perform: dynamodb:{operation} on resource: "
        f"{resource} because no identity-based policy allows the dynamodb:{operation} action"
    )


def _first_table(request: Any) -> str:
    if not isinstance(request, dict):
        return "*"
    name = request.get("TableName")
    if isinstance(name, str):
        return name.rsplit("/", 1)[-1] if name.startswith("arn:") else name
    for items in (request.get("RequestItems"), request.get("TransactItems")):
        if isinstance(items, dict) and items:
            return str(next(iter(items)))
        if isinstance(items, list) and items and isinstance(items[0], dict):
            action = next(iter(items[0].values()), None)
            if isinstance(action, dict) and isinstance(action.get("TableName"), str):
                return str(action["TableName"])
    return "*"


def host_region(host: bytes | None) -> str | None:
    """The region a Host header of DynamoDB's regional form names
    (``dynamodb.eu-west-1.amazonaws.com[:port]``), else None."""
    if host is None:
        return None
    name = host.partition(b":")[0].lower()
    if not (name.startswith(b"dynamodb.") and name.endswith(b".amazonaws.com")):
        return None
    region = name[len(b"dynamodb."):-len(b".amazonaws.com")]
    if not 0 < len(region) <= 64 or not region.replace(b"-", b"a").isalnum():
        return None  # REGION_PATTERN, in bytes operations
    return region.decode("ascii")


def cors_preflight(headers: dict[bytes, bytes]) -> Reply:
    """DynamoDB answers a browser's preflight for any origin: it allows
    the headers and the method asked for, exposes its own headers, and
    sends no body, no Content-Type and no x-amz-crc32 (the empty content
    type here: http.BARE_RESPONSE_HEAD)."""
    lines = [CORS_ALLOW_ANY_ORIGIN]
    requested_headers = headers.get(b"access-control-request-headers")
    if requested_headers is not None:
        lines.append(b"Access-Control-Allow-Headers: " + requested_headers + b"\r\n")
    requested_method = headers.get(b"access-control-request-method")
    if requested_method is not None:
        lines.append(b"Access-Control-Allow-Methods: " + requested_method + b"\r\n")
    lines.append(CORS_EXPOSE_HEADERS)
    lines.append(b"Access-Control-Max-Age: %d\r\n" % CORS_MAX_AGE_SECONDS)
    return (200, b"", b"", b"".join(lines))
