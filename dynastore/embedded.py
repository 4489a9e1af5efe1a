"""Embedded dynastore: real boto3 and aiobotocore clients served in-process,
without sockets.

    import dynastore

    with dynastore.open() as db:            # in memory; dynastore.open(path) for a file store
        client = db.client()                # a real boto3 "dynamodb" client
        table = db.resource().Table("app")  # the resource API works too
        async with db.aio_client() as aio:  # (in a coroutine) an aiobotocore client
            ...

The clients are ordinary boto3 (or aiobotocore) clients: botocore still
serialises every request (so paginators, waiters, batch_writer, TypeSerializer
and the conditions builder behave exactly as against AWS). A ``before-send``
hook -- an event both libraries emit, and whose first answer they take instead
of sending -- hands the serialised HTTP request to the same
``protocol.app.Application`` the server uses, instead of a socket, and turns
its reply into the library's response type. The wire rules, validation and
errors are therefore the server's. aiobotocore is imported only when an aio
client is asked for.

A lock serialises operations, because the engine runs one operation at a
time (docs/adr/0000-execution-model.md) and one database may be shared by
several threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
import zlib
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from dynastore.database import Database
from dynastore.namespaces import Namespaces
from dynastore.protocol.app import Application

EMBEDDED_ENDPOINT = "http://dynastore.embedded"
"""The endpoint URL embedded clients are given; nothing listens there."""

_CLIENT_DEFAULTS: dict[str, Any] = {
    "region_name": "us-east-1",
    "aws_access_key_id": "dynastore",
    "aws_secret_access_key": "dynastore",
}


class _ReplyBody:
    """The ``raw`` object botocore reads a response body from."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


class _AsyncReplyBody:
    """The ``raw`` object aiobotocore reads a response body from (``await raw.read()``)."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def read(self, *_: Any) -> bytes:
        return self._body


def _request_parts(request: Any) -> tuple[bytes, bytes, dict[bytes, bytes], bytes]:
    """A botocore ``AWSPreparedRequest`` as the (method, path?query, headers,
    body) that ``Application.handle`` takes, as the HTTP server would pass them."""
    headers = {
        name.lower().encode("latin-1"): (value if isinstance(value, bytes) else value.encode("latin-1"))
        for name, value in request.headers.items()
    }
    raw_body: Any = request.body or b""
    if isinstance(raw_body, str):
        raw_body = raw_body.encode("utf-8")
    elif not isinstance(raw_body, bytes):
        raw_body = raw_body.read()
    split = urlsplit(request.url)
    url = (split.path or "/") + ("?" + split.query if split.query else "")
    return request.method.encode("ascii"), url.encode("latin-1"), headers, raw_body


def _reply_headers(content_type: bytes, body: bytes) -> dict[str, str]:
    """The headers DynamoDB sends; the CRC32 one is checked by both botocore
    and aiobotocore before they parse the body."""
    return {
        "Content-Type": content_type.decode("latin-1"),
        "Content-Length": str(len(body)),
        "x-amzn-RequestId": uuid.uuid4().hex,
        "x-amz-crc32": str(zlib.crc32(body)),
    }


class EmbeddedDatabase:
    """An open embedded database and the boto3 / aiobotocore clients bound to it."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._application = Application(database)
        self._lock = threading.Lock()
        self._closed = False
        self._servers: list[BackgroundServer | BackgroundRedis] = []
        self._redis: BackgroundRedis | None = None

    # --- clients -----------------------------------------------------------------
    def client(self, **client_options: Any) -> Any:
        """A boto3 ``dynamodb`` client whose requests this database serves."""
        return self._bind(self._session().client("dynamodb", **self._options(client_options)))

    def resource(self, **resource_options: Any) -> Any:
        """A boto3 ``dynamodb`` service resource bound to this database."""
        resource = self._session().resource("dynamodb", **self._options(resource_options))
        self._bind(resource.meta.client)
        return resource

    def streams_client(self, **client_options: Any) -> Any:
        """A boto3 ``dynamodbstreams`` client bound to this database."""
        return self._bind(
            self._session().client("dynamodbstreams", **self._options(client_options))
        )

    # --- aiobotocore clients (aiobotocore is imported only when these are used) --
    def aio_client(self, **client_options: Any) -> AbstractAsyncContextManager[Any]:
        """An aiobotocore ``dynamodb`` client whose requests this database
        serves, as aiobotocore hands out clients: ``async with db.aio_client()
        as client:``. aiobotocore serialises and parses every request as for
        AWS, so its paginators, waiters and error classes behave unchanged."""
        return self._aio_client("dynamodb", client_options)

    def aio_streams_client(self, **client_options: Any) -> AbstractAsyncContextManager[Any]:
        """An aiobotocore ``dynamodbstreams`` client bound to this database."""
        return self._aio_client("dynamodbstreams", client_options)

    @contextlib.asynccontextmanager
    async def _aio_client(self, service: str, given: dict[str, Any]) -> AsyncIterator[Any]:
        session = _shared_aio_session()
        async with session.create_client(service, **self._options(given)) as client:
            # The hook answers before aiobotocore's HTTP session would send, so
            # that session never opens a connection (nor an aiohttp session).
            client.meta.events.register_first("before-send", self._send_async)
            yield client

    # --- sessions, for code that makes its own clients --------------------------
    def session(self) -> Any:
        """A boto3 session whose ``dynamodb`` and ``dynamodbstreams`` clients and
        resources this database serves, for application code that is handed a
        session and creates its clients itself (``session.client("dynamodb")``).
        Clients of other services from it would go to AWS: it is not a mock."""
        session, core = _new_boto3_session()
        _bind_session(core, _shared_core_session(), self._send)
        return session

    def aio_session(self) -> Any:
        """The aiobotocore counterpart of ``session()``: ``async with
        db.aio_session().create_client("dynamodb") as client:``."""
        session = _aiobotocore_session_module().AioSession()
        _bind_session(session, _shared_aio_session(), self._send_async)
        return session

    def _session(self) -> Any:
        return _shared_session()

    def _options(self, given: dict[str, Any]) -> dict[str, Any]:
        options = dict(_CLIENT_DEFAULTS)
        options["endpoint_url"] = EMBEDDED_ENDPOINT
        options.update(given)
        return options

    def _bind(self, client: Any) -> Any:
        client.meta.events.register_first("before-send", self._send)
        return client

    # --- the in-process transport ------------------------------------------------
    def _send(self, request: Any, **_: Any) -> Any:
        """boto3's ``before-send`` hook: answer the serialised request in-process."""
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]

        method, url, headers, body = _request_parts(request)
        status, content_type, reply_body, _extra = self.handle_locked(method, url, headers, body)
        return AWSResponse(
            request.url, status, _reply_headers(content_type, reply_body), _ReplyBody(reply_body)
        )

    async def _send_async(self, request: Any, **_: Any) -> Any:
        """aiobotocore's ``before-send`` hook (its emitter awaits coroutines):
        the same answer, wrapped in the response type aiobotocore reads with
        ``await``."""
        from aiobotocore.awsrequest import AioAWSResponse  # type: ignore[import-untyped]

        method, url, headers, body = _request_parts(request)
        status, content_type, reply_body, _extra = await self._handle_async(method, url, headers, body)
        return AioAWSResponse(
            request.url, status, _reply_headers(content_type, reply_body), _AsyncReplyBody(reply_body)
        )

    async def _handle_async(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> tuple[int, bytes, bytes, bytes]:
        """Serve on the event loop when the lock is free (the usual case: no
        thread hop, so an async test pays what a sync one does); when another
        thread holds it, wait in a worker thread so the loop is not blocked."""
        if self._lock.acquire(blocking=False):
            try:
                return self._handle(method, url, headers, body)
            finally:
                self._lock.release()
        return await asyncio.to_thread(self.handle_locked, method, url, headers, body)

    def _handle(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> tuple[int, bytes, bytes, bytes]:
        """``Application.handle``, refused once closed; the caller holds the lock."""
        if self._closed:
            raise RuntimeError("this dynastore database is closed")
        return self._application.handle(method, url, headers, body)

    # --- administrative controls (the same as the server's /_dynastore/ routes) --
    @property
    def faults(self) -> Any:
        """The fault-rule registry (docs/faults.md): ``db.faults.add(...)``,
        ``.rules()``, ``.clear()`` -- the embedded face of /_dynastore/faults."""
        return self.database.faults

    @property
    def gsi_lag_seconds(self) -> float:
        """How long a write takes to reach global secondary indexes (0: at once)."""
        return float(self.database.gsi_lag_seconds)

    @gsi_lag_seconds.setter
    def gsi_lag_seconds(self, seconds: float) -> None:
        with self._lock:
            for namespace in self._namespaces():
                namespace.gsi_lag_seconds = max(0.0, seconds)

    def advance_clock(self, seconds: float) -> float:
        """Move this database's clock forward (TTL expiry, stream retention,
        throughput buckets, idempotency windows); returns the new epoch time.
        The embedded face of POST /_dynastore/clock."""
        from dynastore.clock import advance_clock

        with self._lock:
            return advance_clock(self.database, seconds)

    def sweep_ttl(self) -> int:
        """Run the TTL sweeper until every item expired by now is deleted (the
        server runs it in the background); returns how many were deleted."""
        from dynastore.workers.ttl_sweeper import sweep_all

        with self._lock:
            return sum(sweep_all(namespace) for namespace in self._namespaces())

    def _namespaces(self) -> list[Database]:
        """The Databases of every (account, region) this store has opened
        (dynastore/namespaces.py); ``self.database`` is the default one's."""
        return Namespaces.of(self.database).all()

    def set_throughput(self, mode: str, table_name: str | None = None) -> Any:
        """Switch the capacity model to ``"enforce"``, ``"observe"`` or
        ``"off"`` (for one table with ``table_name``) while the database is
        open -- ``open(throughput=...)`` only sets it at the start. The
        embedded face of POST /_dynastore/throughput, so its checks apply."""
        body: dict[str, Any] = {"Mode": mode}
        if table_name is not None:
            body["TableName"] = table_name
        status, answer = self.admin("POST", "/_dynastore/throughput", body)
        if status != 200:
            raise ValueError(answer["message"])
        return answer

    def metrics(self) -> Any:
        """Consumed capacity, throttles and hot keys per table, index and
        partition (docs/throughput.md) -- the answer of GET /_dynastore/metrics."""
        return self.admin("GET", "/_dynastore/metrics")[1]

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """Call one of the server's ``/_dynastore/...`` admin routes in-process
        (same handlers, same answers): e.g. ``db.admin("POST", "/_dynastore/faults", {...})``."""
        import orjson

        payload = orjson.dumps(body) if body is not None else b""
        headers = {b"content-type": b"application/json"}
        status, _, reply, _ = self.handle_locked(
            method.encode("ascii"), path.encode("utf-8"), headers, payload
        )
        return status, (orjson.loads(reply) if reply else None)

    # --- a real HTTP endpoint on the same database ------------------------------
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> BackgroundServer:
        """Serve this database over HTTP from a background thread (port 0 picks a
        free port); for code that needs an endpoint URL. Stop it with ``stop()``;
        ``close()`` stops every server it started."""
        server = BackgroundServer(self, host, port)
        self._servers.append(server)
        return server

    def redis(self, **client_options: Any) -> Any:
        """A redis-py client of this database's Redis keyspace (docs/redis.md):
        the Redis protocol served from a background thread on a loopback port
        (started on first use), its commands under this database's lock.
        ``client_options`` go to ``redis.Redis`` (``protocol=3``,
        ``decode_responses=True``...)."""
        import redis

        if self._redis is None:
            self._redis = BackgroundRedis(self)
            self._servers.append(self._redis)
        return redis.Redis(host=self._redis.host, port=self._redis.port, **client_options)

    def handle_locked(
        self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> tuple[int, bytes, bytes, bytes]:
        """``Application.handle`` under this database's lock (for the HTTP
        thread and the in-process clients)."""
        with self._lock:
            return self._handle(method, url, headers, body)

    # --- lifecycle ---------------------------------------------------------------
    def close(self) -> None:
        for server in self._servers:
            server.stop()
        self._servers.clear()
        with self._lock:
            if not self._closed:
                self._closed = True
                self.database.close()

    def __enter__(self) -> EmbeddedDatabase:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


_SESSION_LOCK = threading.Lock()
_SESSION: Any = None
_CORE_SESSION: Any = None


def _new_boto3_session() -> tuple[Any, Any]:
    """A new boto3 session and the botocore session under it (imported here,
    lazily: the server does not need boto3)."""
    import boto3  # type: ignore[import-untyped]
    import botocore.session  # type: ignore[import-untyped]

    core = botocore.session.Session()
    return boto3.session.Session(botocore_session=core), core


def _shared_session() -> Any:
    """One boto3 session per process: botocore then loads and parses the
    DynamoDB service model once, so a new database's client costs
    milliseconds instead of the ~0.5 s a cold session takes."""
    global _SESSION, _CORE_SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            _SESSION, _CORE_SESSION = _new_boto3_session()
        return _SESSION


def _shared_core_session() -> Any:
    """The botocore session under ``_shared_session()`` (its model loader is shared)."""
    _shared_session()
    return _CORE_SESSION


#: the service ids (hyphenised) whose requests a bound session's clients send here
_SERVED_SERVICE_IDS = ("dynamodb", "dynamodb-streams")


def _bind_session(session: Any, shared: Any, send: Any) -> None:
    """Make a botocore (or aiobotocore) session's DynamoDB clients ours: the
    ``before-send`` hook on the session reaches every client made from it
    (clients copy the session's handlers), the dummy credentials and region
    spare the credential chain, and the shared model loader spares the
    ~0.2 s of re-reading the service model for each new session."""
    session.register_component("data_loader", shared.get_component("data_loader"))
    session.set_credentials(_CLIENT_DEFAULTS["aws_access_key_id"], _CLIENT_DEFAULTS["aws_secret_access_key"])
    session.set_config_variable("region", _CLIENT_DEFAULTS["region_name"])
    for service_id in _SERVED_SERVICE_IDS:
        session.register(f"before-send.{service_id}", send)


_AIO_SESSION: Any = None


def _shared_aio_session() -> Any:
    """One aiobotocore session per process, for the reason ``_shared_session``
    gives. It holds no event-loop state (clients made from it do, and each
    lives inside one ``async with``), so clients on different loops may share it."""
    global _AIO_SESSION
    with _SESSION_LOCK:
        if _AIO_SESSION is None:
            _AIO_SESSION = _aiobotocore_session_module().get_session()
        return _AIO_SESSION


def _aiobotocore_session_module() -> Any:
    """``aiobotocore.session``, imported only when an aio client is asked for
    (aiobotocore is optional), with the install command when it is missing."""
    try:
        import aiobotocore.session  # type: ignore[import-untyped]
    except ImportError as missing:
        raise ImportError(
            "the embedded aiobotocore clients need aiobotocore: pip install 'dynastore[aio]'"
        ) from missing
    return aiobotocore.session


class _LoopThread:
    """A server on its own event loop in a daemon thread: started before
    ``__init__`` returns (a failure to listen is raised there), stopped by
    ``stop``. Subclasses set ``_server`` and say how it starts."""

    _server: Any
    host: str
    port: int

    def _start_thread(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(started, failure), name=name, daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]

    def _start_server(self) -> Coroutine[Any, Any, tuple[str, int]]:
        raise NotImplementedError

    def _run(self, started: threading.Event, failure: list[BaseException]) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.host, self.port = self._loop.run_until_complete(self._start_server())
        except BaseException as error:  # reported to the caller of __init__
            failure.append(error)
            started.set()
            return
        started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._server.stop())
        self._loop.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)


class BackgroundServer(_LoopThread):
    """dynastore's HTTP server on its own event loop in a daemon thread,
    serving an EmbeddedDatabase (its requests take the database's lock)."""

    def __init__(self, embedded: EmbeddedDatabase, host: str, port: int) -> None:
        from dynastore.protocol.server import Server

        self._server = Server(embedded.database, host, port)
        # Requests from this thread and from in-process clients share one lock.
        self._server.application = _LockedApplication(embedded)
        self._start_thread("dynastore-server")

    def _start_server(self) -> Coroutine[Any, Any, tuple[str, int]]:
        return self._server.start()  # type: ignore[no-any-return]

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"


class BackgroundRedis(_LoopThread):
    """The Redis protocol (dynastore/redis/) on its own event loop in a daemon
    thread, over an EmbeddedDatabase (its commands take the database's lock)."""

    def __init__(self, embedded: EmbeddedDatabase, host: str = "127.0.0.1", port: int = 0) -> None:
        from dynastore.redis.server import RedisServer

        with embedded._lock:
            self._server = RedisServer(embedded.database, lock=embedded._lock)
        self.host, self.port = host, port
        self._start_thread("dynastore-redis")

    def _start_server(self) -> Coroutine[Any, Any, tuple[str, int]]:
        return self._server.start(self.host, self.port)  # type: ignore[no-any-return]


class _LockedApplication:
    def __init__(self, embedded: EmbeddedDatabase) -> None:
        self.handle = embedded.handle_locked


def open(  # noqa: A001
    path: str | Path | None = None, *, throughput: str | None = None, legacy_global_tables: bool = False,
    **options: Any,
) -> EmbeddedDatabase:
    """Open an embedded database: in memory when ``path`` is None, else the
    durable SQLite store in directory ``path`` (created when missing).
    ``throughput="enforce"`` (or ``"observe"``) switches on the capacity
    model (docs/throughput.md), like ``dynastore serve --throughput enforce``;
    ``legacy_global_tables=True`` makes the 2017.11.29 global-table calls work,
    like ``dynastore serve --legacy-global-tables`` (docs/global-tables.md)."""
    database = Database.open(path, **options)
    if legacy_global_tables:  # the working 2017.11.29 API (docs/global-tables.md)
        from dynastore.replication.legacy import enable as enable_legacy

        enable_legacy(database)
    if throughput not in (None, "off"):
        from dynastore.throughput import enable

        mode = throughput
        Namespaces.of(database).on_open(lambda namespace: enable(namespace, mode))
    return EmbeddedDatabase(database)
