"""Black-box fixtures: a real dynastore server process, real boto3 clients.

Every test that uses ``client`` or ``endpoint`` runs twice, once per
transport (the ``[http]`` and ``[embedded]`` test ids):

- ``http``: one server subprocess (``python -m dynastore serve --in-memory``
  on a free port, every connection through its HTTP front process) for the
  whole session, reached with a boto3 client;
- ``embedded``: one ``dynastore.open(directory)`` database on a scratch data
  directory; ``client`` is its in-process boto3 client (no socket) and
  ``endpoint`` is ``db.serve()``, a real HTTP server on the same database, so
  tests that mix both still see one database.

- ``postgres``: one server subprocess (``python -m dynastore serve --postgres
  URL``) on a database of the session's throwaway PostgreSQL server
  (tests/conftest.py), reached with a boto3 client;
- ``postgres-pair``: two such servers over one database, and a boto3 client
  whose consecutive requests alternate between them (``endpoint`` is the
  first one's URL), so every test also checks that two servers behave as
  one endpoint. Tests of one server's own state (its clock, faults,
  throughput counters, metrics) mark themselves ``one_server``: they run on
  the first server only.

The transports also cover the three stores: ``http`` runs on the in-memory
store (``storage/memory.py``), ``embedded`` on SQLite (``storage/sqlite.py``,
the default store of ``dynastore serve``), ``postgres`` on PostgreSQL
(``storage/postgres/``), so every black-box test runs against each.

``DYNASTORE_TEST_TRANSPORTS=http`` (or ``embedded``, ``postgres``, or a comma
list) runs those only.
``--endpoint URL`` runs the tests over HTTP against any DynamoDB-compatible
endpoint instead (dynalite, moto's server, real DynamoDB) to check that a test
asserts DynamoDB's behaviour.

boto3 is configured with ``parameter_validation=False`` so that the server's
own validation is what answers, and with retries off so an error reaches the
test the first time.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--endpoint",
        default=os.environ.get("DYNASTORE_TEST_ENDPOINT"),
        help="run the API tests against this endpoint instead of a fresh dynastore server",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_log(process: subprocess.Popen[bytes]) -> str:
    log = getattr(process, "log_file", None)
    if log is None:
        return ""
    log.seek(0)
    return str(log.read().decode(errors="replace"))


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"dynastore server exited early with code {process.returncode}:\n{server_log(process)}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("dynastore server did not start listening in time")


def start_server(
    *extra_args: str, environment: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``python -m dynastore serve`` on a free port; returns (process, url)."""
    port = free_port()
    # The log goes to a file, not a pipe: an unread pipe would block a chatty server.
    log_file = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--port", str(port), *extra_args],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(environment or {})},
    )
    process.log_file = log_file  # type: ignore[attr-defined]
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}"


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log = getattr(process, "log_file", None)
    if log is not None:
        log.close()


TRANSPORTS = os.environ.get(
    "DYNASTORE_TEST_TRANSPORTS", "http,embedded,postgres,postgres-pair"
).split(",")


@pytest.fixture(scope="session", params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    if request.param != "http" and request.config.getoption("--endpoint"):
        pytest.skip("--endpoint runs the suite over HTTP only")
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest, transport: str) -> str | None:
    """The database of the ``postgres`` transports' servers (None otherwise)."""
    if not transport.startswith("postgres"):
        return None
    server = request.getfixturevalue("postgres_server")
    return str(server.new_database())


@pytest.fixture(scope="session")
def second_endpoint(transport: str, postgres_url: str | None, endpoint: str) -> Iterator[str | None]:
    """The second server of ``postgres-pair`` (None for other transports)."""
    if transport != "postgres-pair":
        yield None
        return
    assert postgres_url is not None
    process, url = start_server("--postgres", postgres_url,
                                environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    try:
        yield url
    finally:
        stop_server(process)


ALTERNATING = {"on": True}
"""Off while a ``one_server`` test runs: the pair's client then stays on the first server."""


@pytest.fixture(autouse=True)
def _one_server(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked ``one_server`` checks one server's own state (its
    clock, fault rules, counters): on postgres-pair its requests all go to
    the first server."""
    if request.node.get_closest_marker("one_server") is None:
        yield
        return
    ALTERNATING["on"] = False
    try:
        yield
    finally:
        ALTERNATING["on"] = True


def alternate_endpoints(client: Any, endpoints: list[str]) -> Any:
    """Send ``client``'s consecutive requests to each of ``endpoints`` in
    turn (the signature is not checked, so rewriting the URL is enough)."""
    turn = itertools.count()
    first = endpoints[0]

    def redirect(request: Any, **_: Any) -> None:
        if not ALTERNATING["on"]:
            return
        target = endpoints[next(turn) % len(endpoints)]
        if request.url.startswith(first):
            request.url = target + request.url[len(first):]

    client.meta.events.register_first("before-send.*.*", redirect)
    return client


@pytest.fixture(scope="session")
def embedded_database(transport: str) -> Iterator[Any]:
    """The session's embedded database (None for the http transport)."""
    if transport != "embedded":
        yield None
        return
    import dynastore

    directory = tempfile.mkdtemp(prefix="dynastore-api-")
    database = dynastore.open(directory)
    try:
        yield database
    finally:
        database.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def endpoint(
    request: pytest.FixtureRequest, transport: str, embedded_database: Any, postgres_url: str | None
) -> Iterator[str]:
    if embedded_database is not None:
        yield embedded_database.serve().endpoint_url
        return
    given = request.config.getoption("--endpoint")
    if given:
        yield given
        return
    if postgres_url is not None:  # the postgres transports (the pair's second server: second_endpoint)
        process, url = start_server("--postgres", postgres_url,
                                    environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
        try:
            yield url
        finally:
            stop_server(process)
        return
    # Every connection through the HTTP front process (the engine serves its
    # own first connections otherwise, and this suite's clients hold one or
    # two): the front's path is the one a loaded server takes (ADR 0003).
    process, url = start_server("--in-memory", environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    try:
        yield url
    finally:
        stop_server(process)


def make_client(endpoint_url: str, service: str = "dynamodb") -> Any:
    return boto3.client(
        service,
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        config=TEST_CLIENT_CONFIG,
    )


TEST_CLIENT_CONFIG = Config(parameter_validation=False, retries={"total_max_attempts": 1})


@pytest.fixture(scope="session")
def client(endpoint: str, embedded_database: Any, second_endpoint: str | None) -> Any:
    """A boto3 DynamoDB client with parameter validation off (in-process for
    the embedded transport; alternating between the two servers of
    postgres-pair)."""
    if embedded_database is not None:
        return embedded_database.client(config=TEST_CLIENT_CONFIG)
    if second_endpoint is not None:
        return alternate_endpoints(make_client(endpoint), [endpoint, second_endpoint])
    return make_client(endpoint)


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """Random names, so tests never collide and can share a server."""

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{uuid.uuid4().hex[:12]}"

    return make


@pytest.fixture
def make_table(client: Any, unique_name: Callable[[str], str]) -> Iterator[Callable[..., str]]:
    """``make_table(pk=("pk", "S"), sk=("sk", "S") or None, **extra_create_args)``
    creates a PAY_PER_REQUEST table with a random name and returns the name;
    every table is deleted at the end of the test."""
    created: list[str] = []

    def make(
        pk: tuple[str, str] = ("pk", "S"),
        sk: tuple[str, str] | None = ("sk", "S"),
        **extra: Any,
    ) -> str:
        name = unique_name("table")
        key_schema = [{"AttributeName": pk[0], "KeyType": "HASH"}]
        definitions = [{"AttributeName": pk[0], "AttributeType": pk[1]}]
        if sk is not None:
            key_schema.append({"AttributeName": sk[0], "KeyType": "RANGE"})
            definitions.append({"AttributeName": sk[0], "AttributeType": sk[1]})
        arguments: dict[str, Any] = {
            "TableName": name,
            "KeySchema": key_schema,
            "AttributeDefinitions": definitions,
            "BillingMode": "PAY_PER_REQUEST",
        }
        arguments.update(extra)
        client.create_table(**arguments)
        client.get_waiter("table_exists").wait(
            TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
        )
        created.append(name)
        return name

    yield make
    for name in created:
        try:
            client.delete_table(TableName=name)
        except client.exceptions.ResourceNotFoundException:
            pass


@pytest.fixture(scope="module")
def address(endpoint: str) -> tuple[str, int]:
    """(host, port) of ``endpoint``, for tests that speak raw HTTP to it."""
    parts = urlsplit(endpoint)
    return parts.hostname or "127.0.0.1", parts.port or 80
