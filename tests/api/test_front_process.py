"""``dynastore serve`` runs two processes (ADR 0003): the engine accepts every
connection and serves the first few itself; the rest are handed to the HTTP
front process, whose requests come back to the engine over a link. What that
must never change for a client, on either path.

Each test starts its own ``python -m dynastore serve`` (the engine) and
finds the front as its child process. A connection is known to be served by
the front when its replies carry another x-amzn-RequestId prefix than the
engine's (tests/api/helpers.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from dynastore import limits
from tests.api.conftest import make_client, start_server, stop_server
from tests.api.helpers import (
    children_of,
    front_connection,
    occupy_the_engines_connections,
    raw_request,
    read_replies,
    request_id_prefix,
    server_side_inode,
    socket_inodes_of,
)

FRONT_MODULE = "dynastore.protocol.front"


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode()
    except OSError:  # it ended while we looked
        return ""


def front_of(engine: subprocess.Popen[bytes]) -> int:
    """The engine's front process. The port accepts connections as soon as
    the engine listens, just before it starts the front: until the child has
    executed the front's interpreter its command line is still the engine's."""
    fronts: list[int] = []

    def found() -> bool:
        fronts[:] = [pid for pid in children_of(engine.pid) if FRONT_MODULE in command_line(pid)]
        return len(fronts) == 1

    assert wait_until(found), fronts
    return fronts[0]


def is_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def create_table(url: str, name: str, *items: dict[str, object]) -> None:
    """Create a table (and put ``items``) with a client whose connections are
    closed afterwards, so they hold none of the engine's own connections."""
    client = make_client(url)
    try:
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for item in items:
            client.put_item(TableName=name, Item=item)
    finally:
        client.close()


@pytest.fixture
def engine() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    process, url = start_server("--in-memory")
    try:
        yield process, url
    finally:
        stop_server(process)


def test_the_engine_serves_its_first_connections_and_hands_the_rest_to_the_front(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = engine
    front = front_of(process)
    create_table(url, "both")
    held, engine_prefix = occupy_the_engines_connections(port_of(url), process.pid)
    try:
        with front_connection(port_of(url), engine_prefix) as handed_over:
            # Both paths reach one database.
            put = {"TableName": "both", "Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}
            handed_over.sendall(raw_request("PutItem", json.dumps(put).encode()))
            assert read_replies(handed_over, 1)[0][0] == 200
        get = {"TableName": "both", "Key": {"pk": {"S": "a"}}, "ConsistentRead": True}
        held[0].sendall(raw_request("GetItem", json.dumps(get).encode()))
        status, _, body = read_replies(held[0], 1)[0]
        assert status == 200 and json.loads(body)["Item"]["n"] == {"N": "1"}
        assert is_running(front)
    finally:
        for sock in held:
            sock.close()
    # Once the engine's connections have closed, a new one is the engine's again.
    def served_by_the_engine() -> bool:
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=10) as sock:
            return request_id_prefix(sock) == engine_prefix

    assert wait_until(served_by_the_engine)


def test_the_front_exits_when_the_engine_is_killed(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """kill -9 of the server (the engine) leaves no process behind: the front
    sees the link close, drops its connections and exits at once."""
    process, url = engine
    port = port_of(url)
    front = front_of(process)
    held, engine_prefix = occupy_the_engines_connections(port, process.pid)
    try:
        with front_connection(port, engine_prefix) as handed_over:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            assert wait_until(lambda: not is_running(front)), "the front outlived the engine"
            handed_over.settimeout(5)
            try:  # the open connection is dropped, not left hanging
                assert handed_over.recv(1) == b""
            except ConnectionResetError:
                pass
    finally:
        for sock in held:
            sock.close()
    assert wait_until(lambda: refuses_connections(port))


def test_the_engine_serves_on_when_the_front_dies(tmp_path: Path) -> None:
    """If the front goes away, its connections are lost (nothing they were
    told was written is), and the engine serves every new connection itself."""
    process, url = start_server("--data-dir", str(tmp_path))
    port = port_of(url)
    try:
        create_table(url, "kept", {"pk": {"S": "a"}})
        held, engine_prefix = occupy_the_engines_connections(port, process.pid)
        try:
            with front_connection(port, engine_prefix) as handed_over:
                os.kill(front_of(process), signal.SIGKILL)
                handed_over.settimeout(5)
                try:
                    assert handed_over.recv(1) == b""
                except ConnectionResetError:
                    pass
            # A connection handed over in the instant the front was dying is lost
            # with it; once the engine has seen the link close, none is handed over.
            def served_by_the_engine() -> bool:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                        return request_id_prefix(sock) == engine_prefix
                except OSError:  # ConnectionError included
                    return False

            assert wait_until(served_by_the_engine)
            extra = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
            try:
                assert {request_id_prefix(sock) for sock in extra} == {engine_prefix}
            finally:
                for sock in extra:
                    sock.close()
        finally:
            for sock in held:
                sock.close()
        item = make_client(url).get_item(TableName="kept", Key={"pk": {"S": "a"}})["Item"]
        assert item == {"pk": {"S": "a"}}
        assert process.poll() is None
    finally:
        stop_server(process)
    assert process.returncode == 0


def test_deeply_pipelined_requests_cross_the_link_in_order(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """More requests in flight on one front connection than the front lets
    one connection have (it stops reading, then resumes): each reply is the
    answer to its own request, in order."""
    process, url = engine
    create_table(url, "pipelined")
    count = 600
    requests = []
    for number in range(count):
        if number % 2 == 0:
            item = {"pk": {"S": f"k{number}"}, "n": {"N": str(number)}}
            body = json.dumps({"TableName": "pipelined", "Item": item})
            requests.append(raw_request("PutItem", body.encode()))
        else:
            key = {"pk": {"S": f"k{number - 1}"}}
            body = json.dumps({"TableName": "pipelined", "Key": key, "ConsistentRead": True})
            requests.append(raw_request("GetItem", body.encode()))
    held, engine_prefix = occupy_the_engines_connections(port_of(url), process.pid)
    try:
        with front_connection(port_of(url), engine_prefix, timeout_s=20) as handed_over:
            handed_over.sendall(b"".join(requests))
            replies = read_replies(handed_over, count)
    finally:
        for sock in held:
            sock.close()
    assert count > limits.HTTP_MAX_PIPELINED_REQUESTS
    for number, (status, _, body) in enumerate(replies):
        assert status == 200, body
        if number % 2 == 0:
            assert json.loads(body) == {}
        else:
            assert json.loads(body)["Item"]["n"] == {"N": str(number - 1)}


def test_a_body_near_the_request_limit_crosses_the_link_intact(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """A 15 MB request body is one frame on the link: the engine sees every
    byte of it (valid JSON until the last byte, so the second answer proves
    the engine parsed all of it)."""
    process, url = engine
    padding = "x" * (15 * 1024 * 1024)
    whole = json.dumps({"Limit": 1, "Padding": padding}).encode()
    broken = whole[:-1] + b"!"
    held, engine_prefix = occupy_the_engines_connections(port_of(url), process.pid)
    try:
        with front_connection(port_of(url), engine_prefix, timeout_s=30) as handed_over:
            handed_over.sendall(raw_request("ListTables", whole) + raw_request("ListTables", broken))
            (first_status, _, first), (second_status, _, second) = read_replies(handed_over, 2)
    finally:
        for sock in held:
            sock.close()
    assert first_status == 200, first
    assert "TableNames" in json.loads(first)
    assert second_status == 400
    assert json.loads(second)["__type"].endswith("#SerializationException")


def test_single_process_mode_serves_without_a_front(tmp_path: Path) -> None:
    process, url = start_server("--data-dir", str(tmp_path), "--single-process")
    try:
        assert children_of(process.pid) == []
        client = make_client(url)
        create_table(url, "solo")
        client.put_item(TableName="solo", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
        assert client.get_item(TableName="solo", Key={"pk": {"S": "a"}})["Item"]["n"] == {"N": "1"}
    finally:
        stop_server(process)
    assert process.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("path", ["engine", "front", "single-process"])
def test_a_transaction_that_cannot_begin_is_a_500_and_the_server_lives_on(
    tmp_path: Path, path: str
) -> None:
    """Another program holding SQLite's write lock past the busy timeout (an
    operator's sqlite3 shell in a transaction): the request is not run and
    gets InternalServerError; the server goes on serving once the lock is gone."""
    import sqlite3

    mode = ("--single-process",) if path == "single-process" else ()
    process, url = start_server("--data-dir", str(tmp_path), *mode)
    held: list[socket.socket] = []
    try:
        create_table(url, "locked")
        if path == "front":
            held, engine_prefix = occupy_the_engines_connections(port_of(url), process.pid)
            front_connection(port_of(url), engine_prefix).close()  # the front is up
        client = make_client(url)
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
        for sock in held:
            sock.close()
        stop_server(process)


def test_many_front_connections_pipelining_at_once_are_all_answered_in_order(
    engine: tuple[subprocess.Popen[bytes], str],
) -> None:
    """More requests in flight than the engine queues off the link
    (limits.LINK_PENDING_REQUESTS_MAX): the link stops being read, then
    resumes; every connection gets its own answers, in order."""
    process, url = engine
    create_table(url, "crowd", *({"pk": {"S": f"k{n}"}, "n": {"N": str(n)}} for n in range(20)))
    connections, per_connection = 12, 150
    assert connections * per_connection > limits.LINK_PENDING_REQUESTS_MAX
    held, engine_prefix = occupy_the_engines_connections(port_of(url), process.pid)
    fronts = [front_connection(port_of(url), engine_prefix, timeout_s=30) for _ in range(connections)]
    try:
        for index, sock in enumerate(fronts):
            keys = [(index + number) % 20 for number in range(per_connection)]
            sock.sendall(b"".join(
                raw_request("GetItem", json.dumps(
                    {"TableName": "crowd", "Key": {"pk": {"S": f"k{key}"}}}).encode())
                for key in keys
            ))
        for index, sock in enumerate(fronts):
            keys = [(index + number) % 20 for number in range(per_connection)]
            replies = read_replies(sock, per_connection)
            assert [json.loads(body)["Item"]["n"]["N"] for _, _, body in replies] == [
                str(key) for key in keys
            ]
    finally:
        for sock in (*held, *fronts):
            sock.close()


def test_ctrl_c_to_the_process_group_stops_both_processes_cleanly(tmp_path: Path) -> None:
    """A terminal's Ctrl-C sends SIGINT to every process of the group: the
    engine stops the front itself, so neither reports the other lost, the
    requests in progress are answered and the exit status is 0."""
    import sys

    from tests.api.conftest import free_port, wait_for_port

    port = free_port()
    log = tmp_path / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "dynastore", "serve", "--port", str(port), "--data-dir",
             str(tmp_path / "data")],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        wait_for_port(port, process)
        held, engine_prefix = occupy_the_engines_connections(port, process.pid)
        front_connection(port, engine_prefix).close()  # the front is up and serving
        # SIGINT to the front alone is ignored: it takes its orders from the engine.
        os.kill(front_of(process), signal.SIGINT)
        time.sleep(0.2)
        front_connection(port, engine_prefix).close()  # still serving
        assert is_running(front_of(process))
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=15) == 0
        for sock in held:
            sock.close()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    logged = log.read_text()
    assert "went away" not in logged, logged
    assert "stopped" in logged


def test_engine_connections_0_sends_every_connection_through_the_front() -> None:
    """DYNASTORE_ENGINE_CONNECTIONS=0 (how the black-box suite's server runs):
    even the first connection is held by the front process, not the engine."""
    process, url = start_server("--in-memory", environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    port = port_of(url)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as first:
            assert request_id_prefix(first) != b""
            inode = server_side_inode(port, first)
            assert inode in socket_inodes_of(front_of(process))
            assert inode not in socket_inodes_of(process.pid)
    finally:
        stop_server(process)


def test_by_default_the_engine_holds_its_first_connection() -> None:
    """The control for the test above, by the same evidence."""
    process, url = start_server("--in-memory")
    port = port_of(url)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as first:
            assert request_id_prefix(first) != b""
            inode = server_side_inode(port, first)
            assert inode in socket_inodes_of(process.pid)
            assert inode not in socket_inodes_of(front_of(process))
    finally:
        stop_server(process)


def test_clients_that_vanish_at_every_point_leave_the_front_serving() -> None:
    """Every connection through the front (DYNASTORE_ENGINE_CONNECTIONS=0);
    clients that hang up at every point of an exchange: before reading any
    reply to many pipelined writes, halfway through a request, after a
    half-close, after resetting the connection. Afterwards the same front
    serves on, every acknowledged write is there, and nothing was logged as
    failing."""
    process, url = start_server("--in-memory", environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    port = port_of(url)
    try:
        front = front_of(process)
        create_table(url, "vanishing")
        put = [
            raw_request("PutItem", json.dumps(
                {"TableName": "vanishing", "Item": {"pk": {"S": f"k{number}"}}}
            ).encode())
            for number in range(50)
        ]
        half_request = put[0][: len(put[0]) // 2]
        for round_number in range(30):
            way = round_number % 5
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                if way == 0:  # many requests, no reply read
                    sock.sendall(b"".join(put))
                elif way == 1:  # half a request
                    sock.sendall(half_request)
                elif way == 2:  # whole requests, then a half-close
                    sock.sendall(b"".join(put[:5]))
                    sock.shutdown(socket.SHUT_WR)
                elif way == 3:  # reset (SO_LINGER 0): the front's writes meet ECONNRESET
                    sock.sendall(b"".join(put))
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                else:  # read some replies, then go
                    sock.sendall(b"".join(put[:10]))
                    assert [status for status, _, _ in read_replies(sock, 1)] == [200]
            finally:
                sock.close()
        # A well-behaved client still gets every answer, from the same front.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"".join(put))
            assert [status for status, _, _ in read_replies(sock, len(put))] == [200] * len(put)
        assert front_of(process) == front
        client = make_client(url)
        try:
            count = client.scan(TableName="vanishing", Select="COUNT")["Count"]
        finally:
            client.close()
        assert count == len(put)
        process.log_file.seek(0)  # type: ignore[attr-defined]
        logged = process.log_file.read().decode()  # type: ignore[attr-defined]
        assert "Traceback" not in logged and "failed" not in logged, logged
    finally:
        stop_server(process)
