"""Redis data survives a restart and kill -9 on the data directory: every
acknowledged write is there afterwards, TTLs included."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.api.helpers import kill_9_under_load
from tests.redis.conftest import start_dynastore


def test_every_type_survives_a_restart(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        r.set("s", "value")
        r.set("t", "temporary", ex=1000)
        r.incrby("n", 41)
        r.incr("n")
        r.select(3) if hasattr(r, "select") else r.execute_command("SELECT", 3)
        r.set("in-db-3", "x")
        r.close()
        r = server.client()
        r.execute_command("SELECT", 0)
        r.rename("s", "renamed")
        r.close()
    finally:
        server.stop()
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        assert r.get("renamed") == b"value"
        assert r.get("s") is None
        assert r.get("n") == b"42"
        assert 990 < r.ttl("t") <= 1000
        assert r.dbsize() == 3
        r3 = server.client(db=3)
        assert r3.get("in-db-3") == b"x"
        r3.close()
        r.close()
    finally:
        server.stop()


def test_expired_keys_stay_expired_after_a_restart(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        r.set("short", "x", px=200)
        r.set("long", "y")
    finally:
        server.stop()
    time.sleep(0.3)
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        assert r.get("short") is None
        assert r.keys("*") == [b"long"]
    finally:
        server.stop()


@pytest.mark.slow
def test_kill_9_loses_no_acknowledged_write(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    acknowledged = [0, 0, 0, 0]

    def writer(index: int) -> None:
        client = server.client()
        try:
            while True:
                acknowledged[index] = int(client.incr(f"counter:{index}"))
                client.set(f"last:{index}", acknowledged[index])
        except (redis.ConnectionError, redis.TimeoutError, ConnectionError):
            return
        finally:
            client.close()

    writers = [threading.Thread(target=writer, args=(index,)) for index in range(4)]
    kill_9_under_load(server.process, writers, 1.0, lambda: sum(acknowledged), 200)
    server.stop()  # killed already: closes its log
    time.sleep(0.5)  # the front process notices its link went and exits
    server.stop()  # already dead: closes its log
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        for index in range(4):
            assert int(r.get(f"counter:{index}") or 0) >= acknowledged[index]
            assert int(r.get(f"last:{index}") or 0) >= acknowledged[index] - 1
    finally:
        server.stop()


def test_collections_survive_a_restart_row_by_row(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
        r.hdel("h", "b")
        r.hincrby("h", "a", 10)
        r.rpush("l", "b", "c", "d")
        r.lpush("l", "a")
        r.lpop("l")
        r.rpush("l", "e")
        r.linsert("l", "BEFORE", "d", "c2")
        r.lrem("l", 1, "c")
        r.lset("l", 0, "B")
        r.ltrim("l", 0, 3)
        r.sadd("s", "x", "y", "z")
        r.srem("s", "y")
        r.zadd("z", {"a": 1, "b": 2, "c": 3})
        r.zincrby("z", 10, "a")
        r.zrem("z", "b")
        r.expire("h", 500)
        r.sunionstore("s2", ["s"])
        r.zunionstore("z2", ["z"])
        r.rename("z2", "z3")
        expected = (r.hgetall("h"), r.lrange("l", 0, -1), r.smembers("s"), r.zrange("z", 0, -1, withscores=True),
                    r.smembers("s2"), r.zrange("z3", 0, -1, withscores=True))
    finally:
        server.stop()
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        assert (r.hgetall("h"), r.lrange("l", 0, -1), r.smembers("s"), r.zrange("z", 0, -1, withscores=True),
                r.smembers("s2"), r.zrange("z3", 0, -1, withscores=True)) == expected
        assert expected[1] == [b"B", b"c2", b"d", b"e"]
        assert r.zrange("z", 0, -1, withscores=True) == [(b"c", 3.0), (b"a", 11.0)]
        assert 490 < r.ttl("h") <= 500
        assert r.type("z2") == b"none"
    finally:
        server.stop()


def test_sigterm_with_a_blocked_client_stops_cleanly(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    # No retries: redis-py 8 retries a dropped connection 10 times with backoff
    # (about 4 s of "Connection refused" once the server is gone), which is
    # not the server's answer and outlasted the join below on a loaded machine.
    blocked = server.client(retry=Retry(NoBackoff(), 0))
    result: list[object] = []

    def wait() -> None:
        try:
            result.append(blocked.blpop(["never"], timeout=0))
        except (redis.ConnectionError, ConnectionError) as error:
            result.append(type(error).__name__)

    thread = threading.Thread(target=wait)
    thread.start()
    r = server.client()
    r.set("before-stop", "kept")
    deadline = time.monotonic() + 10
    while r.info("clients")["blocked_clients"] < 1:  # the BLPOP has reached the server
        assert time.monotonic() < deadline, "the client did not block"
        time.sleep(0.02)
    server.process.terminate()
    assert server.process.wait(timeout=15) == 0
    thread.join(timeout=15)
    assert not thread.is_alive(), "the blocked client was not disconnected"
    assert result == ["ConnectionError"]  # the server closed the blocked connection
    server.stop()
    assert value_after_a_restart(data_dir, "before-stop") == b"kept"


def test_reads_are_served_while_another_program_holds_the_write_lock(data_dir: Path) -> None:
    """The keyspace is in memory: a turn of reads opens no transaction, so it
    answers while another program (an operator's sqlite3 shell) holds the data
    directory's write lock; a write waits for the lock, then commits."""
    import sqlite3

    server = start_dynastore("--data-dir", str(data_dir))
    shell = sqlite3.connect(data_dir / "dynastore.db", isolation_level=None, timeout=0)
    try:
        r = redis.Redis(port=server.redis_port, socket_timeout=3, retry_on_error=[], retry=None)
        assert r.set("k", "v") is True
        r.hset("h", "f", "1")
        shell.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert r.get("k") == b"v"
        assert r.hgetall("h") == {b"f": b"1"}
        assert r.exists("k", "h", "missing") == 2
        assert time.monotonic() - started < 1.0  # not the 5 s busy timeout
        writer = server.client(retry_on_error=[], retry=None)
        outcome: list[object] = []
        thread = threading.Thread(target=lambda: outcome.append(writer.set("k", "w")))
        thread.start()
        time.sleep(0.3)
        assert outcome == []  # the write waits for the lock
        shell.execute("ROLLBACK")
        thread.join(timeout=10)
        assert outcome == [True]
        assert r.get("k") == b"w"
    finally:
        shell.close()
        server.stop()
    assert value_after_a_restart(data_dir, "k") == b"w"


def value_after_a_restart(data_dir: Path, key: str) -> bytes | None:
    """``key``'s value as a server started afresh on ``data_dir`` reads it."""
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        value = server.client().get(key)
        assert value is None or isinstance(value, bytes)
        return value
    finally:
        server.stop()
