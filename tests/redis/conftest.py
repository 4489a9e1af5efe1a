"""Redis fixtures: a real ``dynastore serve --redis-port`` process, redis-py
clients over a real socket, and Debian's redis-server beside it to compare
replies byte for byte (skipped without it, required under CI=true)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.api.conftest import free_port


class Served:
    """A dynastore server process with its Redis port."""

    def __init__(self, process: subprocess.Popen[bytes], http_port: int, redis_port: int,
                 log: tempfile._TemporaryFileWrapper[bytes]) -> None:
        self.process = process
        self.http_port = http_port
        self.redis_port = redis_port
        self.log = log
        self.final_output = ""

    def client(self, **options: object) -> redis.Redis:
        return redis.Redis(port=self.redis_port, socket_timeout=10, **options)  # type: ignore[arg-type]

    def output(self) -> str:
        if self.log.closed:  # stopped: what it printed was kept
            return self.final_output
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self.log.closed:  # an unclosed log warns at collection, inside some later test
            self.final_output = self.output()
            self.log.close()


def wait_for(port: int, process: subprocess.Popen[bytes] | None, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited early with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on port {port}")


def start_dynastore(*store: str, environment: dict[str, str] | None = None,
                    redis_port: int | None = None) -> Served:
    http_port = free_port()
    redis_port = redis_port or free_port()
    log = tempfile.NamedTemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--port", str(http_port),
         "--redis-port", str(redis_port), *store],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(environment or {})},
    )
    try:
        wait_for(redis_port, process)
    except RuntimeError:
        log.seek(0)
        output = log.read().decode(errors="replace")
        log.close()
        raise RuntimeError(output) from None
    return Served(process, http_port, redis_port, log)


@pytest.fixture(scope="session")
def served() -> Iterator[Served]:
    server = start_dynastore("--in-memory")
    yield server
    server.stop()


@pytest.fixture
def r(served: Served) -> Iterator[redis.Redis]:
    client = served.client()
    yield client
    client.close()


@pytest.fixture
def key() -> str:
    return f"test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dynastore-redis-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


@pytest.fixture(scope="session")
def real_redis_port() -> Iterator[int]:
    binary = redis_server_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed, and CI=true requires the comparison tests")
        pytest.skip("redis-server (Debian's redis-server) is not installed")
    port = free_port()
    directory = tempfile.mkdtemp(prefix="real-redis-")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", directory, "--daemonize", "no", "--logfile", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_for(port, process)
    yield port
    process.terminate()
    process.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)


def encode_command(*arguments: bytes | str | int) -> bytes:
    parts = [b"*%d\r\n" % len(arguments)]
    for argument in arguments:
        data = argument if isinstance(argument, bytes) else str(argument).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class RawConnection:
    """A plain socket speaking RESP: what went over the wire, byte for byte."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def call(self, *arguments: bytes | str | int) -> bytes:
        """Send one command; return its complete reply's bytes."""
        self.sock.sendall(encode_command(*arguments))
        return self.read_reply()

    def read_reply(self) -> bytes:
        buffer = self.buffer
        while True:
            end = _reply_end(bytes(buffer), 0)
            if end is not None:
                reply = bytes(buffer[:end])
                del buffer[:end]
                return reply
            chunk = self.sock.recv(65536)
            if not chunk:
                return bytes(buffer)
            buffer += chunk

    def close(self) -> None:
        self.sock.close()


def _reply_end(data: bytes, position: int) -> int | None:
    """Where the reply that starts at ``position`` ends, None if incomplete."""
    end = data.find(b"\r\n", position)
    if end < 0:
        return None
    kind = data[position:position + 1]
    header = data[position + 1:end]
    if kind in (b"+", b"-", b":", b"_", b",", b"#", b"("):
        return end + 2
    if kind in (b"$", b"=", b"!"):
        length = int(header)
        if length < 0:
            return end + 2
        total = end + 2 + length + 2
        return total if len(data) >= total else None
    if kind in (b"*", b"~", b">", b"%", b"|"):
        count = int(header)
        if count < 0:
            return end + 2
        if kind in (b"%", b"|"):
            count *= 2
        position = end + 2
        for _ in range(count):
            following = _reply_end(data, position)
            if following is None:
                return None
            position = following
        return position
    raise AssertionError(f"not a RESP reply: {data[position:position + 40]!r}")
