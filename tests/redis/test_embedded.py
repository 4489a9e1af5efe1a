"""``dynastore.open()``'s redis-py client: the same keyspace, under the same lock
as the in-process DynamoDB client, durable in the data directory."""

from __future__ import annotations

from pathlib import Path

import dynastore


def test_embedded_redis_client_beside_the_dynamodb_client(data_dir: Path) -> None:
    with dynastore.open(data_dir) as db:
        r = db.redis()
        r.hset("session:1", mapping={"user": "ada"})
        r.expire("session:1", 600)
        assert r.hgetall("session:1") == {b"user": b"ada"}
        db.client().list_tables()  # the DynamoDB side works beside it
        assert db.client().list_tables()["TableNames"] == []  # Redis keys are no tables
        r3 = db.redis(protocol=3, decode_responses=True)
        assert r3.zadd("board", {"ada": 3}) == 1
        assert r3.zrange("board", 0, -1, withscores=True) == [["ada", 3.0]]
        r.close()
        r3.close()
    with dynastore.open(data_dir) as db:
        r = db.redis()
        assert r.hget("session:1", "user") == b"ada"
        assert 590 < r.ttl("session:1") <= 600
        r.close()
