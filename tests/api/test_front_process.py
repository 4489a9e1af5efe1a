"""``dynastore serve`` runs HTTP in a front process and the database in the
engine process (ADR 0003): what that must never change for a client.

Each test starts its own ``python -m dynastore serve`` (the engine) and
finds the front as its child process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.conftest import make_client, server_log, start_server, stop_server
from tests.api.helpers import SIGV4, children_of

FRONT_MODULE = "dynastore.protocol.front"


def command_line(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        return cmdline.read().replace(b"\0", b" ").decode()


def front_of(engine: subprocess.Popen[bytes]) -> int:
    fronts = [pid for pid in children_of(engine.pid) if FRONT_MODULE in command_line(pid)]
    assert len(fronts) == 1, fronts
    return fronts[0]


def is_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(condition: object, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def raw_request(target: str, body: bytes) -> bytes:
    return (
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.{target}\r\nX-Amz-Date: 20261129T000000Z\r\n"
        f"Authorization: {SIGV4}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def read_replies(sock: socket.socket, count: int) -> list[tuple[int, bytes]]:
    """``count`` HTTP replies (status, body) read off ``sock``."""
    stream = sock.makefile("rb")
    replies = []
    for _ in range(count):
        status = int(stream.readline().split()[1])
        length = 0
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        replies.append((status, stream.read(length)))
    return replies


@pytest.fixture
def engine() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    process, url = start_server("--in-memory")
    try:
        yield process, url
    finally:
        stop_server(process)


def test_serve_runs_a_front_process_that_forwards_to_the_engine(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = engine
    front = front_of(process)
    client = make_client(url)
    assert "TableNames" in client.list_tables()
    assert is_running(front)


def test_the_front_exits_when_the_engine_is_killed(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """kill -9 of the server (the engine) leaves no process behind holding
    its port: the front sees the link close and exits at once."""
    process, url = engine
    port = int(url.rsplit(":", 1)[1])
    front = front_of(process)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw_request("ListTables", b"{}"))
        assert read_replies(sock, 1)[0][0] == 200
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert wait_until(lambda: not is_running(front)), "the front outlived the engine"
        sock.settimeout(5)
        try:  # the open connection is dropped, not left hanging
            assert sock.recv(1) == b""
        except ConnectionResetError:
            pass
    assert wait_until(lambda: refuses_connections(port))


def test_the_engine_stops_when_the_front_dies(tmp_path: Path) -> None:
    """If the front goes away the server cannot be reached: the engine says
    so and exits 1 (its data safe), rather than running on unreachable."""
    process, url = start_server("--data-dir", str(tmp_path))
    try:
        client = make_client(url)
        client.create_table(
            TableName="kept",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.put_item(TableName="kept", Item={"pk": {"S": "a"}})
        os.kill(front_of(process), signal.SIGKILL)
        assert process.wait(timeout=15) == 1
        assert "the HTTP front process went away" in server_log(process)
    finally:
        stop_server(process)
    process, url = start_server("--data-dir", str(tmp_path))
    try:
        item = make_client(url).get_item(TableName="kept", Key={"pk": {"S": "a"}})["Item"]
        assert item == {"pk": {"S": "a"}}
    finally:
        stop_server(process)


def test_deeply_pipelined_requests_cross_the_link_in_order(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """More requests in flight on one connection than the front lets one
    connection have (it stops reading, then resumes): each reply is the
    answer to its own request, in order."""
    process, url = engine
    port = int(url.rsplit(":", 1)[1])
    client = make_client(url)
    client.create_table(
        TableName="pipelined",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    count = 600
    requests = []
    for number in range(count):
        key = {"pk": {"S": f"k{number}"}}
        if number % 2 == 0:
            item = {**key, "n": {"N": str(number)}}
            requests.append(raw_request("PutItem", json.dumps({"TableName": "pipelined", "Item": item}).encode()))
        else:
            previous = {"pk": {"S": f"k{number - 1}"}}
            body = json.dumps({"TableName": "pipelined", "Key": previous, "ConsistentRead": True})
            requests.append(raw_request("GetItem", body.encode()))
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"".join(requests))
        replies = read_replies(sock, count)
    for number, (status, body) in enumerate(replies):
        assert status == 200, body
        if number % 2 == 0:
            assert json.loads(body) == {}
        else:
            assert json.loads(body)["Item"]["n"] == {"N": str(number - 1)}


def test_a_body_near_the_request_limit_crosses_the_link_intact(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """A 15 MB request body is one frame on the link: the engine sees every
    byte of it (here: valid JSON until the last byte, so the answer proves
    the engine parsed all of it)."""
    _, url = engine
    port = int(url.rsplit(":", 1)[1])
    padding = "x" * (15 * 1024 * 1024)
    whole = json.dumps({"Limit": 1, "Padding": padding}).encode()
    broken = whole[:-1] + b"!"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(raw_request("ListTables", whole) + raw_request("ListTables", broken))
        (first_status, first), (second_status, second) = read_replies(sock, 2)
    assert first_status == 200, first
    assert "TableNames" in json.loads(first)
    assert second_status == 400
    assert json.loads(second)["__type"].endswith("#SerializationException")


def test_single_process_mode_serves_without_a_front(tmp_path: Path) -> None:
    process, url = start_server("--data-dir", str(tmp_path), "--single-process")
    try:
        assert children_of(process.pid) == []
        client = make_client(url)
        client.create_table(
            TableName="solo",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.put_item(TableName="solo", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
        assert client.get_item(TableName="solo", Key={"pk": {"S": "a"}})["Item"]["n"] == {"N": "1"}
    finally:
        stop_server(process)
    assert process.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", [(), ("--single-process",)], ids=["front", "single-process"])
def test_a_transaction_that_cannot_begin_is_a_500_and_the_server_lives_on(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    """Another program holding SQLite's write lock past the busy timeout (an
    operator's sqlite3 shell in a transaction): the request is not run and
    gets InternalServerError; the server goes on serving once the lock is gone."""
    import sqlite3

    from botocore.exceptions import ClientError

    process, url = start_server("--data-dir", str(tmp_path), *mode)
    try:
        client = make_client(url)
        client.create_table(
            TableName="locked",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        shell = sqlite3.connect(tmp_path / "dynastore.db", isolation_level=None)
        shell.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(ClientError) as refused:
                client.put_item(TableName="locked", Item={"pk": {"S": "a"}})
            assert refused.value.response["Error"]["Code"] == "InternalServerError"
        finally:
            shell.execute("ROLLBACK")
            shell.close()
        client.put_item(TableName="locked", Item={"pk": {"S": "b"}})
        assert client.get_item(TableName="locked", Key={"pk": {"S": "b"}})["Item"] == {"pk": {"S": "b"}}
        assert "Item" not in client.get_item(TableName="locked", Key={"pk": {"S": "a"}})
        assert process.poll() is None
    finally:
        stop_server(process)
