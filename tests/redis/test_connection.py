"""The connection: redis-py sync and asyncio, RESP3, pipelining, malformed frames."""

from __future__ import annotations

import asyncio
import socket

import pytest
import redis
import redis.asyncio

from tests.redis.conftest import RawConnection, Served


def test_strings_with_redis_py(r: redis.Redis, key: str) -> None:
    assert r.set(key, "v") is True
    assert r.get(key) == b"v"
    assert r.set(key, "w", nx=True) is None
    assert r.set(key, "w", xx=True, get=True) == b"v"
    assert r.incr(key + ":n", 5) == 5
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.incr(key)
    assert r.delete(key, key + ":n") == 2


def test_asyncio_client(served: Served, key: str) -> None:
    async def run() -> list[object]:
        client = redis.asyncio.Redis(port=served.redis_port)
        try:
            await client.set(key, "a")
            results = await asyncio.gather(*(client.incr(key + ":c") for _ in range(50)))
            return [await client.get(key), sorted(results)[-1]]
        finally:
            await client.aclose()

    assert asyncio.run(run()) == [b"a", 50]


def test_resp3(served: Served, key: str) -> None:
    client = served.client(protocol=3)
    try:
        client.set(key, "x")
        assert client.get(key) == b"x"
        assert client.config_get("set-max-intset-entries") == {"set-max-intset-entries": "512"}
    finally:
        client.close()
    raw = RawConnection(served.redis_port)
    try:
        hello = raw.call("HELLO", 3)
        assert hello.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
        assert raw.call("GET", key + ":missing") == b"_\r\n"
        assert raw.call("HELLO", 4) == b"-NOPROTO unsupported protocol version\r\n"
    finally:
        raw.close()


def test_pipelining_many_commands_in_one_write(served: Served, key: str) -> None:
    raw = RawConnection(served.redis_port)
    try:
        raw.send(b"".join(b"*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n" % (len(key), key.encode()) for _ in range(100)))
        replies = [raw.read_reply() for _ in range(100)]
        assert replies == [b":%d\r\n" % n for n in range(1, 101)]
    finally:
        raw.close()


def test_one_read_mixing_frames_of_every_shape(served: Served, key: str) -> None:
    """Whole frames, a bulk holding CRLF and '$', an inline command and a frame cut in two, in one write and then byte by byte:
    the same replies either way (the parser's fast path and its fallback)."""
    k = key.encode()
    tricky = b"a\r\n$1\r\nb\r\n"
    stream = (
        b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(tricky), tricky)
        + b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
        + b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
        + b"PING\r\n"
        + b"*3\r\n$6\r\nAPPEND\r\n$%d\r\n%s\r\n$2\r\nzz\r\n" % (len(k), k)
    )
    expected = [b"+OK\r\n", b"$%d\r\n%s\r\n" % (len(tricky), tricky),
                b"$%d\r\n%s\r\n" % (len(tricky), tricky), b"+PONG\r\n", b":%d\r\n" % (len(tricky) + 2)]
    for chunk in (len(stream), 1, 7):
        raw_set = RawConnection(served.redis_port)
        raw_set.send(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(k), k))
        assert raw_set.read_reply() in (b":0\r\n", b":1\r\n")
        raw_set.close()
        raw = RawConnection(served.redis_port)
        raw.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for start in range(0, len(stream), chunk):
                raw.send(stream[start:start + chunk])
            assert [raw.read_reply() for _ in expected] == expected
        finally:
            raw.close()


def test_inline_commands(served: Served, key: str) -> None:
    raw = RawConnection(served.redis_port)
    try:
        raw.send(f'SET {key} "a b"\r\n'.encode())
        assert raw.read_reply() == b"+OK\r\n"
        raw.send(f"GET {key}\n".encode())
        assert raw.read_reply() == b"$3\r\na b\r\n"
    finally:
        raw.close()


@pytest.mark.parametrize("frame, error", [
    (b"*1\r\n$600000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*x\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n+GET\r\n", b"-ERR Protocol error: expected '$', got '+'\r\n"),
])
def test_a_malformed_frame_closes_only_that_connection(
    served: Served, r: redis.Redis, key: str, frame: bytes, error: bytes
) -> None:
    r.set(key, "kept")
    raw = RawConnection(served.redis_port)
    try:
        raw.send(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$4\r\nhalf" % (len(key), key.encode()))
        raw.send(b"\r\n" if False else b"")
        raw.close()
        raw = RawConnection(served.redis_port)
        raw.send(frame)
        assert raw.read_reply() == error
        raw.sock.settimeout(5)
        assert raw.sock.recv(100) == b""  # closed
    finally:
        raw.close()
    assert r.get(key) == b"kept"  # nothing half-written; the server still serves
    assert r.ping() is True


def _first_reply_and_state(port: int, frame: bytes) -> tuple[bytes, str]:
    """What a server answers ``frame`` with, and whether it then closed."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        sock.sendall(frame)
        sock.settimeout(0.5)
        received = b""
        try:
            while True:
                data = sock.recv(1000)
                if not data:
                    return received, "closed"
                received += data
        except TimeoutError:
            return received, "open"
    finally:
        sock.close()


@pytest.mark.parametrize("frame", [
    b"*1\r\n$03\r\nfoo\r\n", b"*1\r\n$+3\r\nfoo\r\n", b"*1\r\n$ 4\r\nPING\r\n", b"*1\r\n$4 \r\nPING\r\n",
    b"*1\r\n$-0\r\n", b"*1\r\n$0_4\r\nPING\r\n", b"*1\r\n$\r\n", b"*1\r\n$00\r\n\r\n",
    b"*+1\r\n$4\r\nPING\r\n", b"*01\r\n$4\r\nPING\r\n", b"* 1\r\n$4\r\nPING\r\n", b"*1_0\r\n",
    b"*-0\r\n*1\r\n$4\r\nPING\r\n", b"*00\r\n*1\r\n$4\r\nPING\r\n", b"*\r\n",
    b"*-5\r\n*1\r\n$4\r\nPING\r\n", b"*0\r\n*1\r\n$4\r\nPING\r\n",
])
def test_lengths_are_read_as_redis_reads_them(served: Served, real_redis_port: int, frame: bytes) -> None:
    """Redis reads a multibulk or bulk length with string2ll: digits only, no
    sign but a leading '-', no leading zero, no space, no '_' (what Python's
    int() takes); anything else is a protocol error that closes the connection."""
    assert _first_reply_and_state(served.redis_port, frame) == _first_reply_and_state(real_redis_port, frame)


def test_quit_closes_after_the_reply(served: Served) -> None:
    raw = RawConnection(served.redis_port)
    try:
        assert raw.call("QUIT") == b"+OK\r\n"
        assert raw.sock.recv(10) == b""
    except (TimeoutError, ConnectionResetError):  # pragma: no cover
        pytest.fail("QUIT did not close cleanly")
    finally:
        raw.close()


def test_client_commands(served: Served) -> None:
    client = served.client()
    try:
        client.client_setname("worker-1")
        assert client.client_getname() == b"worker-1" or client.client_getname() == "worker-1"
        me = client.client_id()
        assert any(entry["id"] == str(me) for entry in client.client_list())
        assert client.execute_command("CLIENT", "INFO").startswith(b"id=")
    finally:
        client.close()


def test_select_keeps_databases_apart(served: Served, key: str) -> None:
    first = served.client(db=1)
    second = served.client(db=2)
    try:
        first.set(key, "one")
        assert second.get(key) is None
        assert first.get(key) == b"one"
        assert first.move(key, 2) is True
        assert second.get(key) == b"one"
    finally:
        first.close()
        second.close()


def test_client_kill_closes_that_connection_only(served: Served, r: redis.Redis) -> None:
    victim = RawConnection(served.redis_port)
    try:
        victim_id = int(victim.call("CLIENT", "ID")[1:-2])
        assert r.client_kill_filter(_id=victim_id) == 1
        victim.sock.settimeout(5)
        assert victim.sock.recv(10) == b""  # closed by the server
        assert all(entry["id"] != str(victim_id) for entry in r.client_list())
    finally:
        victim.close()
    assert r.ping() is True

