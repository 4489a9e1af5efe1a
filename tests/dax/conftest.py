"""Black-box fixtures for the DAX endpoint: one real server process
(``python -m dynastore serve --in-memory --dax-port P``), Amazon's own Python
DAX client (``amazon-dax-client``) on ``dax://127.0.0.1:P``, and a boto3
client on the same server's HTTP endpoint for writes made around DAX.

The DAX client's retries are off, so an error reaches the test the first
time (the DAX clients retry most errors by default).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import orjson
import pytest
from botocore.config import Config

amazondax = pytest.importorskip("amazondax")


def _give_the_dax_client_its_own_random() -> None:
    """The DAX client's threads (endpoint refresh, retries, route choice) call
    the global ``random`` module. Hypothesis tests running later in the same
    worker process see its state move under them and fail as "Do not use the
    random module inside strategies" (seen in CI even with the client closed
    per module). The client's modules get a private generator instead."""
    import importlib
    import random

    for name in ("amazondax.EndpointRefresher", "amazondax.RetryHandler", "amazondax.ClusterUtil",
                 "amazondax.router.RouterUtils"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module, "random", None) is random:
            module.random = random.Random()  # type: ignore[attr-defined]


_give_the_dax_client_its_own_random()

REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DaxServerProcess:
    """A dynastore server with its HTTP and DAX endpoints."""

    def __init__(self, *extra: str, environment: dict[str, str] | None = None) -> None:
        self.scheme = "https" if "--tls-cert" in extra else "http"
        self.http_port = free_port()
        self.dax_port = free_port()
        self.log = tempfile.TemporaryFile()
        store = [] if "--postgres" in extra or "--data-dir" in extra else ["--in-memory"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dynastore", "serve", *store, "--port", str(self.http_port),
             "--dax-port", str(self.dax_port), *extra],
            stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **(environment or {})},
        )
        try:
            self.wait_for(self.http_port)
            self.wait_for(self.dax_port)
        except BaseException:
            self.stop()
            raise

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.http_port}"

    @property
    def dax_url(self) -> str:
        return f"{'daxs' if self.scheme == 'https' else 'dax'}://127.0.0.1:{self.dax_port}"

    def wait_for(self, port: int, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dynastore exited early:\n{self.output()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"dynastore did not listen on {port}:\n{self.output()}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def admin(self, path: str, body: Any = None) -> Any:
        data = None if body is None else orjson.dumps(body)
        request = urllib.request.Request(self.endpoint + path, data=data, method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = response.read()
        return payload if path.endswith("prometheus") else orjson.loads(payload)

    def stop(self) -> None:
        if self.log.closed:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


@pytest.fixture(scope="session")
def dax_server() -> Iterator[DaxServerProcess]:
    server = DaxServerProcess()
    try:
        yield server
    finally:
        server.stop()


def dax_client(url: str, **options: Any) -> Any:
    return amazondax.AmazonDaxClient(
        endpoint_url=url, region_name=REGION, aws_access_key_id="any", aws_secret_access_key="any",
        config=Config(retries={"max_attempts": 0}, connect_timeout=5, read_timeout=10), **options,
    )


@pytest.fixture(scope="module")
def dax(dax_server: DaxServerProcess) -> Iterator[Any]:
    """Module-scoped: the client's background threads (discovery, health
    checks) draw from the global ``random``, which Hypothesis tests of other
    modules in the same worker process would see as theirs."""
    client = dax_client(dax_server.dax_url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def ddb(dax_server: DaxServerProcess) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=dax_server.endpoint, region_name=REGION,
        aws_access_key_id="any", aws_secret_access_key="any",
        config=Config(parameter_validation=False, retries={"max_attempts": 0}),
    )


def create_table(ddb: Any, sort_type: str | None = "N", hash_type: str = "S", **extra: Any) -> str:
    name = f"dax-{uuid.uuid4().hex[:12]}"
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    definitions = [{"AttributeName": "pk", "AttributeType": hash_type}]
    if sort_type is not None:
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        definitions.append({"AttributeName": "sk", "AttributeType": sort_type})
    definitions += extra.pop("ExtraDefinitions", [])
    ddb.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=definitions,
                     BillingMode="PAY_PER_REQUEST", **extra)
    return name


@pytest.fixture
def table(ddb: Any) -> str:
    """A table keyed by pk (S) and sk (N)."""
    return create_table(ddb)


@pytest.fixture
def hash_table(ddb: Any) -> str:
    """A table keyed by pk (S) alone."""
    return create_table(ddb, sort_type=None)


def unique() -> str:
    return uuid.uuid4().hex
