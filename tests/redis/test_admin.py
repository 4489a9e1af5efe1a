"""The admin routes of the Redis side, expiry on the movable clock, INFO and CONFIG."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import redis

from tests.redis.conftest import Served, start_dynastore


def admin(served: Served, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{served.http_port}{path}", data=data, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
        if response.headers.get("Content-Type", "").startswith("text/plain"):
            return response.status, raw.decode()
        return response.status, json.loads(raw)


def stat_once_settled(r: redis.Redis, name: str, expected: int, timeout_s: float = 10.0) -> int:
    """INFO stats' ``name`` once it is ``expected``, or its value after
    ``timeout_s`` (a background job's effect: waited for, not slept for)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = int(r.info("stats")[name])
        if value == expected or time.monotonic() >= deadline:
            return value
        time.sleep(0.02)


def test_overview_counts_commands_and_hot_keys(served: Served, r: redis.Redis, key: str) -> None:
    for _ in range(30):
        r.incr(key)
    status, answer = admin(served, "GET", "/_dynastore/redis")
    assert status == 200
    assert answer["Commands"]["incrby"]["Calls"] >= 30  # redis-py sends INCR as INCRBY
    assert any(entry["Key"] == key for entry in answer["HotKeys"])
    status, text = admin(served, "GET", "/_dynastore/redis/metrics")
    assert 'dynastore_redis_commands_total{command="incrby"}' in text


def test_keys_page_and_commands_from_the_admin_route(served: Served, r: redis.Redis, key: str) -> None:
    r.hset(key, mapping={"a": "1"})
    r.expire(key, 100)
    status, answer = admin(served, "POST", "/_dynastore/redis/keys", {"Db": 0, "Match": key})
    assert status == 200
    [described] = answer["Keys"]
    assert described["Type"] == "hash" and described["Encoding"] == "listpack"
    assert 0 < described["TtlMs"] <= 100_000
    status, answer = admin(served, "POST", "/_dynastore/redis/command", {"Db": 0, "Command": ["HSET", key, "b", "2"]})
    assert answer == {"Reply": 1}
    assert r.hget(key, "b") == b"2"
    status, answer = admin(served, "POST", "/_dynastore/redis/command", {"Command": ["HGETALL", key]})
    assert answer == {"Reply": [["a", "1"], ["b", "2"]]}
    status, answer = admin(served, "POST", "/_dynastore/redis/command", {"Command": ["GET", key]})
    assert answer["Error"].startswith("WRONGTYPE")


def test_keys_expire_on_the_moved_database_clock() -> None:
    server = start_dynastore("--in-memory")
    try:
        r = server.client()
        r.set("session", "x", ex=60)
        r.set("kept", "y")
        admin(server, "POST", "/_dynastore/clock", {"advance_seconds": 61})
        # Removed by the active sweep (every 100 ms), before any access: INFO touches no key.
        assert stat_once_settled(r, "expired_keys", 1) == 1
        assert r.get("session") is None
        assert r.keys("*") == [b"kept"]
    finally:
        server.stop()


def test_info_sections_and_keyspace_hits(served: Served, r: redis.Redis, key: str) -> None:
    before = r.info("stats")
    r.get(key)
    r.set(key, 1)
    r.get(key)
    after = r.info("stats")
    assert after["keyspace_hits"] - before["keyspace_hits"] == 1
    assert after["keyspace_misses"] - before["keyspace_misses"] == 1
    info = r.info()
    assert info["redis_version"] == "7.0.15"
    assert info["connected_clients"] >= 1
    assert "db0" in info


def test_config_thresholds_decide_object_encoding(served: Served, r: redis.Redis, key: str) -> None:
    r.zadd(key, {"a": 1, "b": 2})
    assert r.object("encoding", key) == b"listpack"
    r.config_set("zset-max-listpack-entries", 1)
    try:
        assert r.object("encoding", key) == b"skiplist"
        assert r.config_get("zset-max-ziplist-entries") == {"zset-max-ziplist-entries": "1"}
    finally:
        r.config_set("zset-max-listpack-entries", 128)
    try:
        r.config_set("no-such-parameter", 1)
        raise AssertionError("accepted an unknown parameter")
    except redis.ResponseError as error:
        assert "Unknown option" in str(error)


def test_auth_with_the_credentials_files_keys(data_dir: Any) -> None:
    credentials = data_dir / "credentials"
    credentials.write_text("AKIDWRITER:writer-secret\nAKIDREADER:reader-secret:111122223333:readonly\n")
    server = start_dynastore("--in-memory", "--credentials", str(credentials))
    try:
        anonymous = server.client()
        try:
            anonymous.get("k")
            raise AssertionError("served without AUTH")
        except redis.AuthenticationError:
            pass
        except redis.ResponseError as error:
            assert str(error).startswith("Authentication required")
        writer = server.client(username="AKIDWRITER", password="writer-secret")
        assert writer.set("k", "v") is True
        reader = server.client(username="AKIDREADER", password="reader-secret", protocol=3)
        assert reader.get("k") == b"v"
        try:
            reader.set("k", "w")
            raise AssertionError("a readonly key wrote")
        except redis.ResponseError as error:
            assert "no permissions to run the 'set' command" in str(error)
        try:
            server.client(username="AKIDWRITER", password="wrong").ping()
            raise AssertionError("a wrong secret was accepted")
        except (redis.AuthenticationError, redis.ResponseError) as error:
            assert "invalid username-password pair" in str(error)
    finally:
        server.stop()
