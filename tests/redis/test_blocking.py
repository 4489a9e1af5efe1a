"""Blocking list and sorted-set pops: served in order, timeouts, a deleted key."""

from __future__ import annotations

import threading
import time

import redis

from tests.redis.conftest import RawConnection, Served


def test_blpop_times_out_with_a_null_array(served: Served, key: str) -> None:
    raw = RawConnection(served.redis_port)
    try:
        started = time.monotonic()
        assert raw.call("BLPOP", key, "0.2") == b"*-1\r\n"
        assert 0.15 < time.monotonic() - started < 2
        assert raw.call("BLMOVE", key, key + ":to", "LEFT", "RIGHT", "0.1") == b"$-1\r\n"
    finally:
        raw.close()


def wait_until_blocked(r: redis.Redis, count: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while r.info("clients")["blocked_clients"] < count:
        assert time.monotonic() < deadline, "the clients did not block"
        time.sleep(0.02)


def test_a_push_wakes_the_oldest_waiter_first(served: Served, r: redis.Redis, key: str) -> None:
    results: dict[int, object] = {}

    def waiter(index: int) -> None:
        client = served.client()
        results[index] = client.blpop([key], timeout=5)
        client.close()

    blocked_before = r.info("clients")["blocked_clients"]
    first = threading.Thread(target=waiter, args=(1,))
    first.start()
    wait_until_blocked(r, blocked_before + 1)
    second = threading.Thread(target=waiter, args=(2,))
    second.start()
    wait_until_blocked(r, blocked_before + 2)
    r.rpush(key, "a")
    first.join(timeout=5)
    assert results[1] == (key.encode(), b"a")
    assert second.is_alive()
    r.rpush(key, "b")
    second.join(timeout=5)
    assert results[2] == (key.encode(), b"b")
    assert r.exists(key) == 0


def test_a_deleted_or_retyped_key_keeps_the_client_blocked(served: Served, r: redis.Redis, key: str) -> None:
    raw = RawConnection(served.redis_port)
    try:
        raw.send(b"*3\r\n$5\r\nBRPOP\r\n$%d\r\n%s\r\n$1\r\n3\r\n" % (len(key), key.encode()))
        time.sleep(0.2)
        r.rpush(key, "x")  # served at once
        assert raw.read_reply() == b"*2\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(key), key.encode())
        raw.send(b"*3\r\n$5\r\nBRPOP\r\n$%d\r\n%s\r\n$1\r\n3\r\n" % (len(key), key.encode()))
        time.sleep(0.2)
        r.set(key, "a string")  # another type: still blocked
        r.delete(key)
        raw.sock.settimeout(0.3)
        try:
            raw.sock.recv(100)
            raise AssertionError("the client was answered")
        except TimeoutError:
            pass
        raw.sock.settimeout(10)
        r.lpush(key, "y")
        assert raw.read_reply().endswith(b"$1\r\ny\r\n")
        assert raw.call("PING") == b"+PONG\r\n"  # what came after the blocked command runs
    finally:
        raw.close()


def test_blmove_and_bzpopmin_wake_on_a_push(served: Served, r: redis.Redis, key: str) -> None:
    results: list[object] = []

    def mover() -> None:
        client = served.client()
        results.append(client.blmove(key, key + ":dst", 5, "LEFT", "RIGHT"))
        results.append(client.bzpopmin([key + ":z"], timeout=5))
        client.close()

    thread = threading.Thread(target=mover)
    thread.start()
    time.sleep(0.3)
    r.lpush(key, "job")
    time.sleep(0.3)
    r.zadd(key + ":z", {"m": 1.5})
    thread.join(timeout=5)
    assert results == [b"job", (f"{key}:z".encode(), b"m", 1.5)]
    assert r.lrange(key + ":dst", 0, -1) == [b"job"]


def test_blocking_pop_inside_multi_answers_at_once(r: redis.Redis, key: str) -> None:
    pipe = r.pipeline(transaction=True)
    pipe.blpop([key], timeout=0)
    pipe.rpush(key, "a")
    assert pipe.execute() == [None, 1]


def test_the_pusher_inside_exec_wakes_the_waiter_after_the_whole_transaction(
    served: Served, r: redis.Redis, key: str
) -> None:
    results: list[object] = []

    def waiter() -> None:
        client = served.client()
        results.append(client.blpop([key], timeout=5))
        client.close()

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    pipe = r.pipeline(transaction=True)
    pipe.rpush(key, "a", "b")
    pipe.lpop(key)  # the waiter must not have taken "a" yet
    pipe.execute()
    thread.join(timeout=5)
    assert results == [(key.encode(), b"b")]
