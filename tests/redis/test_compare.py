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


def _run(port: int, commands: list[tuple[str | int, ...]], name: str) -> list[bytes]:
    connection = RawConnection(port)
    try:
        connection.call("SELECT", 9)
        replies = []
        for command in commands:
            arguments = [str(part).replace(K, name) for part in command]
            replies.append(connection.call(*arguments))
        return replies
    finally:
        connection.close()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_replies_match_redis(scenario: str, served: Served, real_redis_port: int) -> None:
    name = f"cmp:{scenario}:{uuid.uuid4().hex[:8]}"
    commands = SCENARIOS[scenario]
    ours = _run(served.redis_port, commands, name)
    theirs = _run(real_redis_port, commands, name)
    mismatches = [
        f"{command}: dynastore {mine!r} != redis {real!r}"
        for command, mine, real in zip(commands, ours, theirs, strict=True) if mine != real
    ]
    assert mismatches == [], "\n".join(mismatches)
