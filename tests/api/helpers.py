"""Small helpers for the black-box tests (import as ``from tests.api.helpers import ...``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pytest

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDTEST/20261129/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64
)
"""A well-formed SigV4 Authorization header for raw HTTP requests (any
signature is accepted; the header's shape is what DynamoDB checks first)."""


def error_of(excinfo: pytest.ExceptionInfo[Any]) -> tuple[str, str]:
    """(error code, message) of a botocore ClientError."""
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


KILL_LOAD_MAX_SECONDS = 20.0
"""How long a kill -9 test waits for its load to get going."""


def kill_9_under_load(
    process: subprocess.Popen[bytes],
    writers: list[threading.Thread],
    load_seconds: float,
    acknowledged: Callable[[], int],
    at_least: int,
) -> None:
    """Start ``writers``, let them load the server for ``load_seconds`` and
    until ``acknowledged()`` reaches ``at_least`` (a busy machine can spend
    the first second on the server's warm-up), then SIGKILL it and wait until
    every writer has noticed (each records only what the server acknowledged)."""
    for writer in writers:
        writer.start()
    time.sleep(load_seconds)
    deadline = time.monotonic() + KILL_LOAD_MAX_SECONDS
    while acknowledged() < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    for writer in writers:
        writer.join(timeout=15)
    assert not any(writer.is_alive() for writer in writers)


def children_of(pid: int) -> list[int]:
    """Direct children of process ``pid`` (from /proc; Linux)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:
            continue  # the process ended while we looked
    return found


def raw_request(target: str, body: bytes) -> bytes:
    """One DynamoDB API call as raw HTTP/1.1 bytes."""
    return (
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.{target}\r\nX-Amz-Date: 20261129T000000Z\r\n"
        f"Authorization: {SIGV4}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def read_replies(sock: Any, count: int) -> list[tuple[int, dict[bytes, bytes], bytes]]:
    """``count`` HTTP replies (status, lower-cased headers, body) read off
    ``sock``: all the replies to what was sent on it (the reader may read
    ahead, and what it read ahead is gone with it)."""
    replies = []
    with sock.makefile("rb") as stream:
        for _ in range(count):
            status_line = stream.readline()
            if not status_line:
                raise ConnectionError("the connection closed before a reply")
            status = int(status_line.split()[1])
            headers: dict[bytes, bytes] = {}
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            replies.append((status, headers, stream.read(int(headers.get(b"content-length", 0)))))
    return replies


def request_id_prefix(sock: Any) -> bytes:
    """The x-amzn-RequestId prefix of the process answering on ``sock`` (each
    HTTP process draws its own at start: the prefix tells which one answered)."""
    sock.sendall(raw_request("ListTables", b"{}"))
    (_, headers, _), = read_replies(sock, 1)
    return headers[b"x-amzn-requestid"][:32]


def socket_inodes_of(pid: int) -> set[str]:
    """The inodes of the sockets process ``pid`` holds (from /proc; Linux)."""
    inodes = set()
    for entry in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{entry}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def server_side_inode(server_port: int, client: Any) -> str:
    """The inode of the server's end of ``client``'s TCP connection (/proc/net/tcp)."""
    client_port = client.getsockname()[1]
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].split(":")[1], 16)
            remote_port = int(fields[2].split(":")[1], 16)
            if local_port == server_port and remote_port == client_port:
                return fields[9]
    raise AssertionError("the server's end of the connection is not in /proc/net/tcp")


def occupy_the_engines_connections(port: int, engine_pid: int) -> tuple[list[Any], bytes]:
    """Open the connections ``dynastore serve``'s engine serves itself
    (limits.HTTP_ENGINE_CONNECTIONS), so that the next connection is handed to
    the HTTP front process; returns them (close them when done) and the
    engine's request-id prefix.

    Which process holds a connection is read from /proc, not guessed from
    the replies: connections closed just before (a port probe, a client's
    pool) may still hold the engine's places for a moment, and then every
    new one goes to the front, whose replies agree among themselves too."""
    import socket

    from dynastore import limits

    deadline = time.monotonic() + 10
    while True:
        held = [socket.create_connection(("127.0.0.1", port), timeout=10)
                for _ in range(limits.HTTP_ENGINE_CONNECTIONS)]
        prefixes = {request_id_prefix(sock) for sock in held}
        engines = socket_inodes_of(engine_pid)
        if len(prefixes) == 1 and all(server_side_inode(port, sock) in engines for sock in held):
            return held, prefixes.pop()
        for sock in held:
            sock.close()
        assert time.monotonic() < deadline, "the engine's connections stay taken"
        time.sleep(0.05)


def front_connection(port: int, engine_prefix: bytes, timeout_s: float = 10) -> Any:
    """A new connection that the HTTP front process answers. Until the front
    has started the engine serves every connection itself, so this retries
    (closing each connection the engine took) for up to ``timeout_s``."""
    import socket

    deadline = time.monotonic() + timeout_s
    while True:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        try:
            if request_id_prefix(sock) != engine_prefix:
                return sock
        except BaseException:
            sock.close()
            raise
        sock.close()
        assert time.monotonic() < deadline, "no connection was handed to the front"
        time.sleep(0.02)


# --- raw HTTP requests and replies (tests of the wire itself) ---------------------------


@dataclass
class Reply:
    """One HTTP reply as read off a socket: status, lower-cased headers, body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request_bytes(
    method: str = "POST",
    path: str = "/",
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    host: str = "localhost",
) -> bytes:
    """One HTTP/1.1 request as a client would write it."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_reply(stream: BinaryIO) -> Reply:
    """The next reply on ``stream``; a header sent twice fails the test."""
    status_line = stream.readline()
    if not status_line:
        raise ConnectionError("connection closed before a reply")
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        assert name.strip().lower() not in headers, f"{name} sent twice"
        headers[name.strip().lower()] = value.strip()
    body = stream.read(int(headers["content-length"]))
    return Reply(status, headers, body)


JS_DIR = Path(__file__).resolve().parent.parent / "js"
"""tests/js: the AWS SDK for JavaScript v3, installed by ``npm ci`` there."""


def node_with_js_sdk() -> str:
    """The node binary, when node and tests/js's SDK are installed. CI
    (.ci/run) installs them, so there a missing install fails the test; on
    a machine with only python3 and pip the test is skipped."""
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules" / "@aws-sdk" / "client-dynamodb").exists():
        message = "node and tests/js/node_modules are required: run `npm ci` in tests/js (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return node
