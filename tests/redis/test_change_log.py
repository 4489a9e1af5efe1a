"""The keyspace's change log (docs/adr/0011-redis-change-log.md): every flush
appends a record, folds move the records into the key rows a step at a time,
and whatever moment kill -9 lands on, a restart serves exactly what was
acknowledged. A real server process on a real data directory; the fold
threshold is made tiny so that folds run all the time (and kills land in
the middle of them)."""

from __future__ import annotations

import random
import signal
import sqlite3
from pathlib import Path
from typing import Any

import redis

from tests.redis.conftest import Served, start_dynastore

TINY_FOLDS = {"DYNASTORE_REDIS_LOG_FOLD_BYTES": "2048"}
"""A fold every forty-odd records."""


def _kill(server: Served) -> None:
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=10)
    server.stop()


def _snapshot(client: redis.Redis) -> dict[tuple[int, bytes], Any]:
    """Every key of databases 0 and 1: its type, its value, whether it has a TTL."""
    found: dict[tuple[int, bytes], Any] = {}
    for db in (0, 1):
        client.select(db)
        for key in sorted(client.keys("*")):
            kind = client.type(key)
            value: Any
            if kind == b"string":
                value = client.get(key)
            elif kind == b"hash":
                value = client.hgetall(key)
            elif kind == b"list":
                value = client.lrange(key, 0, -1)
            elif kind == b"set":
                value = sorted(client.smembers(key))
            elif kind == b"zset":
                value = client.zrange(key, 0, -1, withscores=True)
            else:
                value = client.xrange(key)
            found[(db, key)] = (kind, value, client.pttl(key) > 0)
    client.select(0)
    return found


def _workload(client: redis.Redis, rng: random.Random, commands: int) -> None:
    """Random writes of every type over a few dozen keys (TTLs long enough
    not to expire during the test)."""
    for _ in range(commands):
        i = rng.randrange(12)
        member = f"m{rng.randrange(30)}"
        choice = rng.randrange(22)
        if choice == 0:
            client.set(f"s{i}", rng.randbytes(rng.randrange(1, 40)))
        elif choice == 1:
            client.incrby(f"c{i}", rng.randrange(-5, 50))
        elif choice == 2:
            client.append(f"s{i}", b"+")
        elif choice == 3:
            client.delete(rng.choice([f"s{i}", f"h{i}", f"l{i}", f"S{i}", f"z{i}", f"x{i}", f"c{i}"]))
        elif choice == 4:
            client.expire(rng.choice([f"s{i}", f"h{i}", f"z{i}"]), 3600)
        elif choice == 5:
            client.persist(rng.choice([f"s{i}", f"h{i}", f"z{i}"]))
        elif choice in (6, 7):
            client.hset(f"h{i}", member, rng.randbytes(8))
        elif choice == 8:
            client.hdel(f"h{i}", member)
        elif choice in (9, 10):
            client.lpush(f"l{i}", *[rng.randbytes(4) for _ in range(rng.randrange(1, 4))])
        elif choice == 11:
            client.rpush(f"l{i}", rng.randbytes(4))
        elif choice == 12:
            client.lpop(f"l{i}", rng.randrange(1, 3))
        elif choice == 13:
            client.rpop(f"l{i}")
        elif choice == 14:
            client.sadd(f"S{i}", member)
        elif choice == 15:
            client.srem(f"S{i}", member)
        elif choice in (16, 17):
            client.zadd(f"z{i}", {member: rng.randrange(-100, 100) / 4})
        elif choice == 18:
            client.zrem(f"z{i}", member)
        elif choice == 19:
            client.xadd(f"x{i}", {"f": rng.randbytes(4)}, maxlen=20, approximate=False)
        elif choice == 20:
            with client.pipeline(transaction=True) as multi:  # one flush of many changes
                multi.delete(f"h{i}")
                multi.hset(f"h{i}", mapping={f"f{n}": n for n in range(rng.randrange(1, 20))})
                multi.rename(f"h{i}", f"h{(i + 1) % 12}")
                multi.execute()
        else:
            client.select(1)
            client.set(f"s{i}", b"db1")
            client.select(0)


def _log_rows(data_dir: Path) -> tuple[int, int]:
    """(records in the log, head rows folded into the key rows), read from the SQLite file."""
    with sqlite3.connect(f"file:{data_dir / 'dynastore.db'}?mode=ro", uri=True) as connection:
        def count(name: str) -> int:
            return int(connection.execute(
                "SELECT count(*) FROM items WHERE table_id = (SELECT table_id FROM tables WHERE name = ?)",
                (name,)).fetchone()[0])
        return count("_dynastore/redis/log"), count("_dynastore/redis")


def test_kill_9_at_any_moment_of_the_folds_loses_nothing_acknowledged(data_dir: Path) -> None:
    rng = random.Random(22)
    server = start_dynastore("--data-dir", str(data_dir), environment=TINY_FOLDS)
    try:
        for cycle in range(5):
            client = server.client()
            _workload(client, rng, 600 + rng.randrange(300))
            before = _snapshot(client)
            client.close()
            assert before, "the workload left keys"
            _kill(server)
            server = start_dynastore("--data-dir", str(data_dir), environment=TINY_FOLDS)
            client = server.client()
            assert _snapshot(client) == before, f"cycle {cycle}: the restart serves something else"
            client.close()
        records, heads = _log_rows(data_dir)
        assert heads > 0, "folds wrote key rows"
        assert records < 300, f"the log is bounded by its folds ({records} records)"
    finally:
        server.stop()


def test_without_a_fold_a_restart_serves_everything_from_the_log(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        client = server.client()
        _workload(client, random.Random(7), 400)
        before = _snapshot(client)
        client.close()
        records, heads = _log_rows(data_dir)
        assert records > 0 and heads == 0, "nothing is folded below the default threshold"
        _kill(server)
        server = start_dynastore("--data-dir", str(data_dir))
        client = server.client()
        assert _snapshot(client) == before
        client.set("after", "restart")  # the log goes on after the records it replayed
        client.close()
        _kill(server)
        server = start_dynastore("--data-dir", str(data_dir))
        client = server.client()
        assert client.get("after") == b"restart"
        assert _snapshot(client) == {**before, (0, b"after"): (b"string", b"restart", False)}
        client.close()
    finally:
        server.stop()


def test_flushes_larger_than_a_log_row_survive_a_kill(data_dir: Path) -> None:
    """A value over REDIS_LOG_RECORD_BYTES gets a row of its own; a flush of
    many changes spreads over several rows of one commit."""
    server = start_dynastore("--data-dir", str(data_dir), environment=TINY_FOLDS)
    try:
        client = server.client()
        big = random.Random(1).randbytes(3 * 1024 * 1024)
        client.set("big", big)
        client.mset({f"part{n}": bytes([n]) * 300_000 for n in range(12)})
        client.hset("wide", mapping={f"field{n}": b"v" * 200 for n in range(20_000)})
        client.close()
        _kill(server)
        server = start_dynastore("--data-dir", str(data_dir), environment=TINY_FOLDS)
        client = server.client()
        assert client.get("big") == big
        assert all(client.get(f"part{n}") == bytes([n]) * 300_000 for n in range(12))
        assert client.hlen("wide") == 20_000 and client.hget("wide", "field19999") == b"v" * 200
        client.close()
    finally:
        server.stop()
