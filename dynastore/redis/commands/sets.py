"""Set commands: one element row per member (keyspace.py)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from dynastore.redis.commands.common import (
    NOT_POSITIVE,
    SYNTAX,
    command,
    delete_key,
    lookup,
    lookup_read,
    to_int,
)
from dynastore.redis.commands.keys import scan_options, scan_page
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import SET, Entry
from dynastore.redis.resp import Error, SetReply

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer


def set_for_write(server: RedisServer, client: Client, key: bytes) -> Entry:
    entry = lookup(server, client, key, SET)
    if entry is None:
        entry = Entry(SET, set())
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.changed_head(client.db, key, entry)
    return entry


def add_member(server: RedisServer, client: Client, key: bytes, entry: Entry, member: bytes) -> bool:
    members: set[bytes] = entry.value
    if member in members:
        return False
    members.add(member)
    server.keyspace.changed_element(client.db, key, member, b"")
    return True


def remove_member(server: RedisServer, client: Client, key: bytes, entry: Entry, member: bytes) -> bool:
    members: set[bytes] = entry.value
    if member not in members:
        return False
    members.discard(member)
    server.keyspace.changed_element(client.db, key, member, None)
    if not members:
        delete_key(server, client.db, key)
    return True


def members_of(server: RedisServer, client: Client, key: bytes) -> set[bytes]:
    entry = lookup_read(server, client, key, SET)
    return set() if entry is None else entry.value


@command("sadd", -3, "write fast", 1, 1, 1)
def sadd(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = set_for_write(server, client, argv[1])
    return sum(add_member(server, client, argv[1], entry, member) for member in argv[2:])


@command("srem", -3, "write fast", 1, 1, 1)
def srem(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1], SET)
    if entry is None:
        return 0
    return sum(remove_member(server, client, argv[1], entry, member) for member in argv[2:])


def in_order(server: RedisServer, members: set[bytes]) -> list[bytes]:
    """Redis 7.0 keeps a small set of integers as an intset, in numeric order."""
    from dynastore.redis.commands.server import is_intset

    if is_intset(server, members):
        return sorted(members, key=int)
    return list(members)


@command("smembers", 2, "readonly", 1, 1, 1)
def smembers(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return SetReply(in_order(server, members_of(server, client, argv[1])))


@command("sismember", 3, "readonly fast", 1, 1, 1)
def sismember(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return int(argv[2] in members_of(server, client, argv[1]))


@command("smismember", -3, "readonly fast", 1, 1, 1)
def smismember(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    members = members_of(server, client, argv[1])
    return [int(member in members) for member in argv[2:]]


@command("scard", 2, "readonly fast", 1, 1, 1)
def scard(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return len(members_of(server, client, argv[1]))


@command("spop", -2, "write fast", 1, 1, 1)
def spop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise Error(SYNTAX)
    count = None
    if len(argv) == 3:
        count = to_int(argv[2], NOT_POSITIVE)
        if count < 0:
            raise Error(NOT_POSITIVE)
    entry = lookup(server, client, argv[1], SET)
    if entry is None:
        return None if count is None else SetReply([])
    chosen = random.sample(list(entry.value), 1 if count is None else min(count, len(entry.value)))
    for member in chosen:
        remove_member(server, client, argv[1], entry, member)
    return chosen[0] if count is None else SetReply(chosen)


@command("srandmember", -2, "readonly", 1, 1, 1)
def srandmember(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise Error(SYNTAX)
    count = to_int(argv[2]) if len(argv) == 3 else None
    members = list(members_of(server, client, argv[1]))
    if count is None:
        return random.choice(members) if members else None
    if not members:
        return []
    if count >= 0:
        return random.sample(members, min(count, len(members)))
    return [random.choice(members) for _ in range(-count)]


@command("smove", 4, "write fast", 1, 2, 1)
def smove(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    source = lookup(server, client, argv[1], SET)
    lookup(server, client, argv[2], SET)  # WRONGTYPE first
    if source is None or argv[3] not in source.value:
        return 0
    if argv[1] == argv[2]:
        return 1
    remove_member(server, client, argv[1], source, argv[3])
    target = set_for_write(server, client, argv[2])
    add_member(server, client, argv[2], target, argv[3])
    return 1


def combine(server: RedisServer, client: Client, keys: list[bytes], operation: str) -> set[bytes]:
    groups: list[set[bytes]] = [members_of(server, client, key) for key in keys]
    if operation == "inter":
        smallest = sorted(groups, key=len)[0]
        result: set[bytes] = set(smallest)
        for group in groups:
            result &= group
        return result
    if operation == "union":
        return set().union(*groups)
    difference: set[bytes] = set(groups[0])
    for group in groups[1:]:
        difference -= group
    return difference


def store_set(server: RedisServer, client: Client, key: bytes, members: set[bytes]) -> int:
    delete_key(server, client.db, key)
    if members:
        entry = Entry(SET, set(members))
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.wrote_key(client.db, key, entry)
    return len(members)


@command("sinter", -2, "readonly", 1, -1, 1)
def sinter(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return SetReply(in_order(server, combine(server, client, argv[1:], "inter")))


@command("sunion", -2, "readonly", 1, -1, 1)
def sunion(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return SetReply(in_order(server, combine(server, client, argv[1:], "union")))


@command("sdiff", -2, "readonly", 1, -1, 1)
def sdiff(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return SetReply(in_order(server, combine(server, client, argv[1:], "diff")))


@command("sinterstore", -3, "write", 1, -1, 1)
def sinterstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return store_set(server, client, argv[1], combine(server, client, argv[2:], "inter"))


@command("sunionstore", -3, "write", 1, -1, 1)
def sunionstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return store_set(server, client, argv[1], combine(server, client, argv[2:], "union"))


@command("sdiffstore", -3, "write", 1, -1, 1)
def sdiffstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return store_set(server, client, argv[1], combine(server, client, argv[2:], "diff"))


@command("sintercard", -3, "readonly", 0, 0, 0)
def sintercard(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    numkeys = to_int(argv[1], "ERR numkeys should be greater than 0")
    if numkeys <= 0:
        raise Error("ERR numkeys should be greater than 0")
    if numkeys > len(argv) - 2:
        raise Error("ERR Number of keys can't be greater than number of args")
    keys = argv[2:2 + numkeys]
    rest = argv[2 + numkeys:]
    limit = 0
    if rest:
        if len(rest) != 2 or rest[0].upper() != b"LIMIT":
            raise Error(SYNTAX)
        limit = to_int(rest[1], "ERR LIMIT can't be negative")
        if limit < 0:
            raise Error("ERR LIMIT can't be negative")
    count = len(combine(server, client, keys, "inter"))
    return min(count, limit) if limit else count


@command("sscan", -3, "readonly", 1, 1, 1)
def sscan(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    cursor, count, pattern, _ = scan_options(argv, 3, False)
    members = members_of(server, client, argv[1])
    from dynastore.redis.commands.server import is_intset

    if is_intset(server, members):  # Redis answers an intset whole, in order
        following, page = 0, in_order(server, members)
    else:
        following, page = scan_page(members, cursor, count)
    match = matcher(pattern) if pattern is not None else None
    return [str(following).encode(), [member for member in page if match is None or match(member)]]

