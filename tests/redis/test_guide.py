"""The key-value guide's patterns (docs/redis.md, "Patterns"), run as written."""

from __future__ import annotations

import random

import redis

from tests.redis.conftest import Served


def test_session_hash_with_a_sliding_ttl(r: redis.Redis, key: str) -> None:
    session = f"{key}:session:8f2c"
    r.hset(session, mapping={"user": "ada", "cart": "3"})
    r.expire(session, 1800)
    # every request reads the session and slides its TTL in one round trip
    pipe = r.pipeline()
    pipe.hgetall(session)
    pipe.expire(session, 1800)
    data, renewed = pipe.execute()
    assert data == {b"user": b"ada", b"cart": b"3"} and renewed is True
    assert 1790 < r.ttl(session) <= 1800


def test_weekly_leaderboard(r: redis.Redis, key: str) -> None:
    board = f"{key}:leaderboard:2026-w49"
    for player, points in [("ada", 25), ("bob", 40), ("cy", 10), ("ada", 30)]:
        r.zincrby(board, points, player)
    r.expire(board, 14 * 86400)  # the week's board goes two weeks later
    assert r.zrevrange(board, 0, 2, withscores=True) == [(b"ada", 55.0), (b"bob", 40.0), (b"cy", 10.0)]
    assert r.zrevrank(board, "bob") == 1
    assert r.zscore(board, "cy") == 10.0


def test_sharded_counter(r: redis.Redis, key: str) -> None:
    shards = 8
    counter = f"{key}:views:page-1"
    for _ in range(200):
        r.incr(f"{counter}:{random.randrange(shards)}")
    total = sum(int(value or 0) for value in r.mget([f"{counter}:{shard}" for shard in range(shards)]))
    assert total == 200


def test_fixed_window_rate_limiter(r: redis.Redis, key: str) -> None:
    window = f"{key}:rate:user-7:2026-12-03T14:45"
    allowed = 0
    for _ in range(15):
        pipe = r.pipeline()
        pipe.incr(window)
        pipe.expire(window, 60, nx=True)
        count, _ = pipe.execute()
        allowed += count <= 10
    assert allowed == 10
    assert 0 < r.ttl(window) <= 60


def test_a_reliable_queue_with_lmove(served: Served, r: redis.Redis, key: str) -> None:
    queue, processing = f"{key}:jobs", f"{key}:jobs:processing"
    r.lpush(queue, "job-1", "job-2")
    job = r.blmove(queue, processing, 1, "RIGHT", "LEFT")
    assert job == b"job-1"
    r.lrem(processing, 1, job)  # done
    assert r.lrange(queue, 0, -1) == [b"job-2"] and r.llen(processing) == 0
