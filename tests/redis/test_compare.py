"""Replies compared byte for byte with Debian's redis-server (Redis 7.0):
each scenario's commands run on both servers, on the same fresh keys, over
plain sockets; every reply must be identical, errors included."""

from __future__ import annotations

import uuid

import pytest

from tests.redis.conftest import RawConnection, Served

K = "{k}"
"""Replaced by the scenario's fresh key name (``{k}2`` etc. for more keys)."""

SCENARIOS: dict[str, list[tuple[str | int, ...]]] = {
    "strings": [
        ("GET", K), ("SET", K, "hello"), ("GET", K), ("APPEND", K, " world"), ("STRLEN", K),
        ("GETRANGE", K, 0, 4), ("GETRANGE", K, -5, -1), ("GETRANGE", K, 5, 2), ("SETRANGE", K, 6, "Redis"),
        ("GET", K), ("SETRANGE", K, -1, "x"), ("SETRANGE", K + "2", 3, "ab"), ("GET", K + "2"),
        ("SET", K, "v", "NX"), ("SET", K, "v", "XX", "GET"), ("SET", K + "3", "v", "XX"),
        ("SET", K, "w", "EX", 0), ("SET", K, "w", "EX", "x"), ("SET", K, "w", "EX", 10, "PX", 10),
        ("SET", K, "w", "NX", "XX"), ("SET", K, "w", "KEEPTTL", "EX", 5), ("SET", K, "w", "FOO"),
        ("SETNX", K, "a"), ("SETNX", K + "4", "a"), ("GETSET", K + "4", "b"), ("GETDEL", K + "4"),
        ("GETDEL", K + "4"), ("MSET", K + "5", 1, K + "6", 2), ("MGET", K + "5", K + "6", K + "7"),
        ("MSET", K + "5"), ("MSETNX", K + "5", 1, K + "8", 2), ("MSETNX", K + "8", 1, K + "9", 2),
        ("SETEX", K + "10", 0, "x"), ("SETEX", K + "10", 100, "x"), ("TTL", K + "10"),
        ("PSETEX", K + "10", -5, "x"), ("GETEX", K + "10", "PERSIST"), ("TTL", K + "10"),
        ("GETEX", K + "10", "EX", 50), ("TTL", K + "10"), ("GETEX", K + "10", "EX", 50, "PX", 3),
        ("SUBSTR", K, 0, 2), ("LCS", K, K + "2"), ("LCS", K, K + "2", "LEN"),
    ],
    "counters": [
        ("INCR", K), ("INCRBY", K, 10), ("DECR", K), ("DECRBY", K, 3), ("GET", K),
        ("INCRBY", K, "1.5"), ("INCRBY", K, " 1"), ("INCRBY", K, "+1"), ("INCRBY", K, "01"),
        ("SET", K, "9223372036854775807"), ("INCR", K), ("SET", K, "-9223372036854775808"), ("DECR", K),
        ("DECRBY", K, "-9223372036854775808"), ("SET", K, "abc"), ("INCR", K), ("INCRBYFLOAT", K, 1),
        ("SET", K, "10.50"), ("INCRBYFLOAT", K, "0.1"), ("INCRBYFLOAT", K, "-5.0e3"), ("GET", K),
        ("INCRBYFLOAT", K, "inf"), ("INCRBYFLOAT", K, "nan"), ("INCRBYFLOAT", K, "x"),
        ("INCRBYFLOAT", K + "2", "3"), ("INCRBYFLOAT", K + "2", "1.25"), ("SET", K + "3", "5"),
        ("INCRBYFLOAT", K + "3", "1e2"),
    ],
    "keys": [
        ("SET", K, 1), ("EXISTS", K, K, K + "2"), ("TYPE", K), ("TYPE", K + "2"), ("TTL", K),
        ("PTTL", K + "2"), ("EXPIRE", K, 100), ("TTL", K), ("EXPIRE", K, 50, "GT"), ("EXPIRE", K, 50, "LT"),
        ("TTL", K), ("EXPIRE", K, 10, "NX"), ("EXPIRE", K, 10, "XX", "NX"), ("EXPIRE", K, 10, "GT", "LT"),
        ("EXPIRE", K, 10, "FOO"), ("EXPIRE", K, "x"), ("EXPIRE", K, "9223372036854775807"),
        ("PERSIST", K), ("PERSIST", K), ("TTL", K), ("EXPIRETIME", K), ("EXPIRETIME", K + "2"),
        ("EXPIRE", K + "2", 10), ("RENAME", K + "2", K + "3"), ("RENAME", K, K + "3"), ("GET", K + "3"),
        ("RENAMENX", K + "3", K + "3"), ("SET", K + "4", 2), ("RENAMENX", K + "3", K + "4"),
        ("COPY", K + "3", K + "5"), ("COPY", K + "3", K + "5"), ("COPY", K + "3", K + "5", "REPLACE"),
        ("COPY", K + "3", K + "3"), ("GET", K + "5"), ("DEL", K + "3", K + "4", K + "9"), ("UNLINK", K + "5"),
        ("EXISTS", K + "3"), ("SET", K + "6", "x"), ("EXPIRE", K + "6", -1), ("EXISTS", K + "6"),
        ("SET", K + "7", 1, "PX", 100000), ("EXPIRE", K + "7", 50, "GT"),
    ],
    "errors": [
        ("GET",), ("SET", K), ("NOSUCHCOMMAND", K, "b"), ("NOSUCHCOMMAND",), ("CONFIG", "FOO"),
        ("SELECT", 16), ("SELECT", "x"), ("ECHO", "hi"), ("PING",), ("PING", "x"), ("PING", "x", "y"),
        ("OBJECT", "ENCODING", K), ("CLIENT", "SETNAME", "a b"),
    ],
}


SCENARIOS.update({
    "hashes": [
        ("HSET", K, "a", 1, "b", 2), ("HSET", K, "a", 3), ("HSET", K, "a"), ("HGET", K, "a"),
        ("HMGET", K, "a", "x", "b"), ("HGETALL", K), ("HKEYS", K), ("HVALS", K), ("HLEN", K),
        ("HEXISTS", K, "b"), ("HSTRLEN", K, "a"), ("HSETNX", K, "a", 9), ("HSETNX", K, "c", "x"),
        ("HINCRBY", K, "a", 5), ("HINCRBY", K, "c", 1), ("HINCRBY", K, "new", "x"),
        ("HINCRBYFLOAT", K, "a", "0.5"), ("HINCRBYFLOAT", K, "c", 1), ("HDEL", K, "a", "zz"),
        ("HMSET", K, "m", 1), ("HGETALL", K), ("HDEL", K, "b", "c", "m", "a"), ("EXISTS", K),
        ("SET", K + "s", "x"), ("HGET", K + "s", "a"), ("HSET", K + "s", "a", 1), ("HLEN", K + "s"),
        ("HRANDFIELD", K), ("HRANDFIELD", K, 2, "WITHVALUES", "x"), ("OBJECT", "ENCODING", K),
        ("HSET", K + "2", "f", "v"), ("OBJECT", "ENCODING", K + "2"), ("HSCAN", K + "2", 0),
        ("HINCRBY", K + "2", "f", 1), ("HSET", K + "2", "n", "9223372036854775807"),
        ("HINCRBY", K + "2", "n", 1),
    ],
    "lists": [
        ("RPUSH", K, "a", "b", "c"), ("LPUSH", K, "z"), ("LRANGE", K, 0, -1), ("LLEN", K),
        ("LINDEX", K, 0), ("LINDEX", K, -1), ("LINDEX", K, 10), ("LSET", K, 1, "A"), ("LSET", K, 10, "x"),
        ("LSET", K + "no", 0, "x"), ("LINSERT", K, "BEFORE", "b", "ins"), ("LINSERT", K, "AFTER", "nope", "x"),
        ("LINSERT", K, "MIDDLE", "b", "x"), ("LRANGE", K, 0, -1), ("LRANGE", K, -2, 100), ("LRANGE", K, 3, 1),
        ("RPUSH", K, "b", "b"), ("LREM", K, -1, "b"), ("LRANGE", K, 0, -1), ("LREM", K, 0, "b"),
        ("LPOS", K, "c"), ("LPOS", K, "x"), ("RPUSH", K, "c", "c"), ("LPOS", K, "c", "RANK", -1),
        ("LPOS", K, "c", "COUNT", 0), ("LPOS", K, "c", "RANK", 0), ("LPOS", K, "c", "MAXLEN", 2),
        ("LTRIM", K, 1, -2), ("LRANGE", K, 0, -1), ("LPOP", K), ("RPOP", K), ("LPOP", K, 2),
        ("LPOP", K, -1), ("RPOP", K + "no", 2), ("LPUSHX", K + "no", "a"), ("RPUSH", K + "2", 1, 2, 3),
        ("LMOVE", K + "2", K + "3", "LEFT", "RIGHT"), ("RPOPLPUSH", K + "2", K + "3"),
        ("LRANGE", K + "3", 0, -1), ("LMOVE", K + "2", K + "2", "LEFT", "LEFT"), ("LRANGE", K + "2", 0, -1),
        ("LMOVE", K + "2", K + "3", "UP", "LEFT"), ("LMPOP", 2, K + "no", K + "3", "LEFT", "COUNT", 5),
        ("EXISTS", K + "3"), ("LMPOP", 0, K, "LEFT"), ("BLPOP", K + "3", "x"), ("BLPOP", K + "3", -1),
        ("RPUSH", K + "4", "x"), ("BLPOP", K + "no", K + "4", 0), ("OBJECT", "ENCODING", K + "2"),
        ("SET", K + "5", 1), ("LPUSH", K + "5", 1), ("LTRIM", K + "2", 5, 10), ("EXISTS", K + "2"),
    ],
    "sets": [
        ("SADD", K, 3, 1, 2, 2), ("SMEMBERS", K), ("SCARD", K), ("SISMEMBER", K, 1), ("SISMEMBER", K, 9),
        ("SMISMEMBER", K, 1, 9), ("OBJECT", "ENCODING", K), ("SREM", K, 1, 9), ("SADD", K + "2", 2, 3, 4),
        ("SINTER", K, K + "2"), ("SUNION", K, K + "2"), ("SDIFF", K + "2", K), ("SINTERSTORE", K + "3", K, K + "2"),
        ("SMEMBERS", K + "3"), ("SUNIONSTORE", K + "3", K, K + "2"), ("SMEMBERS", K + "3"),
        ("SDIFFSTORE", K + "3", K, K), ("EXISTS", K + "3"), ("SINTERCARD", 2, K, K + "2"),
        ("SINTERCARD", 2, K, K + "2", "LIMIT", 1), ("SINTERCARD", 0, K), ("SINTERCARD", 3, K),
        ("SMOVE", K, K + "2", 3), ("SMOVE", K, K + "2", 2), ("EXISTS", K), ("SMEMBERS", K + "2"),
        ("SPOP", K + "no"), ("SPOP", K + "no", 2), ("SRANDMEMBER", K + "no"), ("SRANDMEMBER", K + "no", 3),
        ("SADD", K + "4", "word"), ("OBJECT", "ENCODING", K + "4"), ("SPOP", K + "4"), ("EXISTS", K + "4"),
        ("SET", K + "5", 1), ("SADD", K + "5", 1), ("SINTER", K + "5", K), ("SPOP", K + "2", -1),
    ],
    "zsets": [
        ("ZADD", K, 1, "a", 2, "b", "3.5", "c"), ("ZADD", K, "NX", 10, "a", 4, "d"), ("ZADD", K, "XX", "CH", 5, "a", 1, "x"),
        ("ZADD", K, "GT", "CH", 1, "a", 6, "b"), ("ZADD", K, "LT", 0, "c"), ("ZADD", K, "INCR", 1, "c"),
        ("ZADD", K, "NX", "XX", 1, "a"), ("ZADD", K, "GT", "LT", 1, "a"), ("ZADD", K, "INCR", 1, "a", 2, "b"),
        ("ZADD", K, "x", "a"), ("ZADD", K, 1), ("ZRANGE", K, 0, -1, "WITHSCORES"), ("ZCARD", K),
        ("ZSCORE", K, "c"), ("ZSCORE", K, "nope"), ("ZMSCORE", K, "a", "nope"), ("ZINCRBY", K, "0.1", "a"),
        ("ZINCRBY", K, "x", "a"), ("ZRANK", K, "b"), ("ZREVRANK", K, "b"), ("ZRANK", K, "nope"),
        ("ZCOUNT", K, "-inf", "+inf"), ("ZCOUNT", K, "(1", 5), ("ZCOUNT", K, "x", 5),
        ("ZRANGEBYSCORE", K, "-inf", "+inf", "WITHSCORES", "LIMIT", 1, 2), ("ZRANGEBYSCORE", K, "(1", "(6"),
        ("ZREVRANGEBYSCORE", K, "+inf", "-inf", "LIMIT", 0, 2), ("ZREVRANGE", K, 0, 1, "WITHSCORES"),
        ("ZRANGE", K, 5, 1, "BYSCORE", "REV"), ("ZRANGE", K, 0, -1, "LIMIT", 0, 1),
        ("ZRANGE", K, "[a", "[z", "BYLEX", "WITHSCORES"), ("ZRANGE", K, "(", "+", "BYLEX"),
        ("ZADD", K + "l", 0, "a", 0, "b", 0, "c", 0, "d"), ("ZRANGEBYLEX", K + "l", "-", "+"),
        ("ZRANGEBYLEX", K + "l", "(a", "[c"), ("ZREVRANGEBYLEX", K + "l", "+", "(b", "LIMIT", 0, 1),
        ("ZLEXCOUNT", K + "l", "[b", "+"), ("ZRANGEBYLEX", K + "l", "a", "+"), ("ZREMRANGEBYLEX", K + "l", "[a", "(c"),
        ("ZRANGE", K + "l", 0, -1), ("ZREMRANGEBYRANK", K, 0, 0), ("ZREMRANGEBYSCORE", K, "(5", "+inf"),
        ("ZRANGE", K, 0, -1, "WITHSCORES"), ("ZPOPMIN", K), ("ZPOPMAX", K, 2), ("ZPOPMIN", K + "no"),
        ("ZADD", K + "1", 1, "a", 2, "b"), ("ZADD", K + "2", 10, "b", 20, "c"), ("SADD", K + "3", "a", "c"),
        ("ZUNIONSTORE", K + "u", 2, K + "1", K + "2"), ("ZRANGE", K + "u", 0, -1, "WITHSCORES"),
        ("ZINTERSTORE", K + "i", 2, K + "1", K + "2", "WEIGHTS", 2, 3), ("ZRANGE", K + "i", 0, -1, "WITHSCORES"),
        ("ZUNIONSTORE", K + "u", 3, K + "1", K + "2", K + "3", "AGGREGATE", "MAX"), ("ZRANGE", K + "u", 0, -1, "WITHSCORES"),
        ("ZUNIONSTORE", K + "u", 0, K + "1"), ("ZINTERSTORE", K + "u", 2, K + "1"), ("ZUNION", 2, K + "1", K + "2", "WITHSCORES"),
        ("ZINTER", 2, K + "1", K + "3"), ("ZDIFF", 2, K + "1", K + "2", "WITHSCORES"), ("ZDIFFSTORE", K + "d", 2, K + "1", K + "2"),
        ("ZRANGESTORE", K + "r", K + "u", 0, 1), ("ZRANGE", K + "r", 0, -1, "WITHSCORES"), ("OBJECT", "ENCODING", K + "r"),
        ("ZADD", K + "f", "0.1", "a", "1e3", "b", "-inf", "c", "inf", "d"), ("ZRANGE", K + "f", 0, -1, "WITHSCORES"),
        ("ZINCRBY", K + "f", "0.2", "a"), ("ZINCRBY", K + "f", "-inf", "d"), ("ZSCAN", K + "f", 0),
        ("SET", K + "s", 1), ("ZADD", K + "s", 1, "a"), ("ZUNIONSTORE", K + "u", 1, K + "s"),
    ],
    "transactions": [
        ("MULTI",), ("SET", K, 1), ("INCR", K), ("LPUSH", K, "x"), ("GET", K), ("EXEC",), ("EXEC",),
        ("DISCARD",), ("MULTI",), ("MULTI",), ("SET", K), ("EXEC",), ("MULTI",), ("NOPE",), ("DISCARD",),
        ("MULTI",), ("WATCH", K), ("DISCARD",), ("UNWATCH",),
    ],
    "server": [
        ("CONFIG", "GET", "hash-max-listpack-entries"), ("CONFIG", "GET", "zset-max-ziplist-value"), ("CONFIG", "SET", "nonsense-option", "1"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "1"), ("HSET", K, "a", 1, "b", 2),
        ("OBJECT", "ENCODING", K), ("CONFIG", "SET", "hash-max-listpack-entries", "512"),
        ("CONFIG", "GET", "hash-max-listpack-entries"), ("SET", K + "i", 12345), ("OBJECT", "ENCODING", K + "i"),
        ("SET", K + "e", "x" * 44), ("OBJECT", "ENCODING", K + "e"), ("SET", K + "r", "x" * 45),
        ("OBJECT", "ENCODING", K + "r"), ("OBJECT", "ENCODING", K + "none"), ("SAVE",), ("FUNCTION", "FLUSH"),
        ("TYPE", K), ("PUBLISH", K, "nobody"),
    ],
})


SCENARIOS["streams"] = [
    ("XADD", K, "1-1", "a", 1), ("XADD", K, "1-1", "a", 1), ("XADD", K, "1-*", "b", 2), ("XADD", K, "0-0", "x", 1),
    ("XADD", K, "2", "c", 3, "d", 4), ("XADD", K, "bad", "a", 1), ("XADD", K, "3-0", "a"), ("XLEN", K),
    ("XRANGE", K, "-", "+"), ("XRANGE", K, "1-2", "+", "COUNT", 1), ("XRANGE", K, "(1-1", "2"),
    ("XREVRANGE", K, "+", "-", "COUNT", 2), ("XRANGE", K, "x", "+"), ("XREAD", "COUNT", 2, "STREAMS", K, "0-0"),
    ("XREAD", "STREAMS", K, "2-0"), ("XREAD", "STREAMS", K), ("XADD", K + "n", "NOMKSTREAM", "*", "a", 1),
    ("EXISTS", K + "n"), ("XGROUP", "CREATE", K, "g", "0"), ("XGROUP", "CREATE", K, "g", "0"),
    ("XGROUP", "CREATE", K + "n", "g", "$"), ("XGROUP", "CREATE", K + "m", "g", "$", "MKSTREAM"), ("XLEN", K + "m"),
    ("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", K, ">"),
    ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", K, ">"), ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", K, ">"),
    ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", K, "0"), ("XREADGROUP", "GROUP", "nope", "a", "STREAMS", K, ">"),
    ("XPENDING", K, "g"), ("XACK", K, "g", "1-1", "9-9"),
    ("XPENDING", K, "g"), ("XCLAIM", K, "g", "carol", 0, "1-2", "JUSTID"), ("XPENDING", K, "g"),
    ("XAUTOCLAIM", K, "g", "dave", 0, "0", "COUNT", 1, "JUSTID"), ("XINFO", "GROUPS", K),
    ("XGROUP", "CREATECONSUMER", K, "g", "erin"), ("XGROUP", "CREATECONSUMER", K, "g", "erin"),
    ("XGROUP", "DELCONSUMER", K, "g", "dave"), ("XGROUP", "SETID", K, "g", "0"), ("XDEL", K, "1-2", "7-7"),
    ("XLEN", K), ("XTRIM", K, "MAXLEN", 1), ("XRANGE", K, "-", "+"), ("XTRIM", K, "MAXLEN", "~", 0),
    ("XADD", K, "MAXLEN", 2, "5-0", "a", 1), ("XADD", K, "MAXLEN", 2, "6-0", "a", 1), ("XRANGE", K, "-", "+"),
    ("XTRIM", K, "MINID", "6"), ("XLEN", K), ("XGROUP", "DESTROY", K, "g"), ("XGROUP", "DESTROY", K, "g"),
    ("TYPE", K), ("OBJECT", "ENCODING", K), ("SET", K + "s", 1), ("XADD", K + "s", "*", "a", 1),
    ("XINFO", "STREAM", K + "none"), ("XTRIM", K, "MAXLEN", "=", 1, "LIMIT", 10),
]


SCENARIOS["wrongtype"] = [
    ("SET", K, "text"), ("LPUSH", K, 1), ("RPOP", K), ("LLEN", K), ("HSET", K, "f", 1), ("HGET", K, "f"),
    ("SADD", K, 1), ("SCARD", K), ("ZADD", K, 1, "m"), ("ZSCORE", K, "m"), ("XADD", K, "*", "f", 1),
    ("XLEN", K), ("INCR", K), ("APPEND", K, "!"), ("GET", K), ("LPUSH", K + "l", "a"), ("GET", K + "l"),
    ("INCR", K + "l"), ("SETRANGE", K + "l", 0, "x"), ("GETDEL", K + "l"), ("SET", K + "l", "v", "GET"),
    ("SINTERSTORE", K + "d", K + "l"), ("ZUNIONSTORE", K + "d", 1, K + "l"), ("SMOVE", K + "l", K + "x", "a"),
    ("LMOVE", K + "l", K, "LEFT", "LEFT"), ("RENAME", K + "l", K + "l2"), ("TYPE", K + "l2"),
    ("OBJECT", "ENCODING", K + "l2"), ("MGET", K, K + "l2"), ("GETEX", K + "l2"), ("STRLEN", K + "l2"),
    ("COPY", K + "l2", K + "c"), ("LRANGE", K + "c", 0, -1), ("DEL", K + "c", K + "l2", K),
]
SCENARIOS["arity"] = [
    ("LPUSH", K), ("HSET", K, "f"), ("ZADD", K, 1), ("XADD", K, "*"), ("SET",), ("MSET", "a"),
    ("EXPIRE", K), ("SCAN",), ("SCAN", "x"), ("SCAN", 0, "COUNT", 0), ("SCAN", 0, "MATCH"),
    ("XGROUP", "CREATE", K), ("CLIENT", "NOPE"), ("OBJECT", "NOPE", K), ("CONFIG", "GET"),
    ("BLPOP", K), ("BLPOP", K, "x"), ("BRPOP", K, "-1"), ("ZRANGE", K, 0), ("ZRANGE", K, "a", "b"),
    ("ZRANGEBYSCORE", K, "a", "b"), ("ZRANGEBYLEX", K, "a", "b"), ("LRANGE", K, "a", 1),
    ("GETRANGE", K, 0, "x"), ("SETEX", K, "x", "v"), ("SELECT", -1), ("HELLO", "x"), ("HELLO", 3, "FOO"),
    ("AUTH", "x"), ("WATCH",), ("XREAD", "STREAMS"), ("XREAD", "COUNT", "x", "STREAMS", K, 0),
]


def _run(port: int, commands: list[tuple[str | int, ...]], name: str, protocol: int = 2) -> list[bytes]:
    connection = RawConnection(port)
    try:
        if protocol == 3:
            connection.call("HELLO", 3)
        connection.call("SELECT", 9)
        replies = []
        for command in commands:
            arguments = [str(part).replace(K, name) for part in command]
            replies.append(connection.call(*arguments))
        return replies
    finally:
        connection.close()


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_replies_match_redis(scenario: str, protocol: int, served: Served, real_redis_port: int) -> None:
    name = f"cmp:{scenario}:{uuid.uuid4().hex[:8]}"
    commands = SCENARIOS[scenario]
    ours = _run(served.redis_port, commands, name, protocol)
    theirs = _run(real_redis_port, commands, name, protocol)
    mismatches = [
        f"{command}: dynastore {mine!r} != redis {real!r}"
        for command, mine, real in zip(commands, ours, theirs, strict=True) if mine != real
    ]
    assert mismatches == [], "\n".join(mismatches)
