"""Hash commands: one element row per field (keyspace.py)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from dynastore.redis.commands.common import (
    INT64_MAX,
    INT64_MIN,
    command,
    delete_key,
    lookup,
    lookup_read,
    to_int,
)
from dynastore.redis.commands.keys import scan_options, scan_page
from dynastore.redis.commands.strings import add_float
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import HASH, Entry
from dynastore.redis.resp import Error, Map

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer


def hash_for_write(server: RedisServer, client: Client, key: bytes) -> Entry:
    """The key's hash, made (empty, not yet stored) if absent."""
    entry = lookup(server, client, key, HASH)
    if entry is None:
        entry = Entry(HASH, {})
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.changed_head(client.db, key, entry)
    return entry


def set_field(server: RedisServer, client: Client, key: bytes, entry: Entry, name: bytes, value: bytes) -> bool:
    """True if the field is new."""
    fields: dict[bytes, bytes] = entry.value
    new = name not in fields
    fields[name] = value
    server.keyspace.changed_element(client.db, key, name, value)
    return new


def drop_if_empty(server: RedisServer, client: Client, key: bytes, entry: Entry) -> None:
    if not entry.value:
        delete_key(server, client.db, key)


def _hset(server: RedisServer, client: Client, argv: list[bytes]) -> int:
    if len(argv) % 2 != 0:
        raise Error(f"ERR wrong number of arguments for '{argv[0].decode(errors='replace').lower()}' command")
    entry = hash_for_write(server, client, argv[1])
    added = 0
    for index in range(2, len(argv), 2):
        added += set_field(server, client, argv[1], entry, argv[index], argv[index + 1])
    return added


@command("hset", -4, "write fast", 1, 1, 1)
def hset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _hset(server, client, argv)


@command("hmset", -4, "write fast", 1, 1, 1)
def hmset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    from dynastore.redis import resp

    _hset(server, client, argv)
    return resp.OK


@command("hsetnx", 4, "write fast", 1, 1, 1)
def hsetnx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1], HASH)
    if entry is not None and argv[2] in entry.value:
        return 0
    entry = hash_for_write(server, client, argv[1])
    set_field(server, client, argv[1], entry, argv[2], argv[3])
    return 1


@command("hget", 3, "readonly fast", 1, 1, 1)
def hget(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return None if entry is None else entry.value.get(argv[2])


@command("hmget", -3, "readonly fast", 1, 1, 1)
def hmget(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    fields = {} if entry is None else entry.value
    return [fields.get(name) for name in argv[2:]]


@command("hgetall", 2, "readonly", 1, 1, 1)
def hgetall(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return Map([] if entry is None else list(entry.value.items()))


@command("hkeys", 2, "readonly", 1, 1, 1)
def hkeys(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return [] if entry is None else list(entry.value)


@command("hvals", 2, "readonly", 1, 1, 1)
def hvals(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return [] if entry is None else list(entry.value.values())


@command("hlen", 2, "readonly fast", 1, 1, 1)
def hlen(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return 0 if entry is None else len(entry.value)


@command("hexists", 3, "readonly fast", 1, 1, 1)
def hexists(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return int(entry is not None and argv[2] in entry.value)


@command("hstrlen", 3, "readonly fast", 1, 1, 1)
def hstrlen(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], HASH)
    return 0 if entry is None else len(entry.value.get(argv[2], b""))


@command("hdel", -3, "write fast", 1, 1, 1)
def hdel(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1], HASH)
    if entry is None:
        return 0
    removed = 0
    for name in argv[2:]:
        if entry.value.pop(name, None) is not None:
            server.keyspace.changed_element(client.db, argv[1], name, None)
            removed += 1
    drop_if_empty(server, client, argv[1], entry)
    return removed


@command("hincrby", 4, "write fast", 1, 1, 1)
def hincrby(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    by = to_int(argv[3])
    entry = lookup(server, client, argv[1], HASH)
    current = 0
    if entry is not None and argv[2] in entry.value:
        current = to_int(entry.value[argv[2]], "ERR hash value is not an integer")
    result = current + by
    if result < INT64_MIN or result > INT64_MAX:
        raise Error("ERR increment or decrement would overflow")
    entry = hash_for_write(server, client, argv[1])
    set_field(server, client, argv[1], entry, argv[2], b"%d" % result)
    return result


@command("hincrbyfloat", 4, "write fast", 1, 1, 1)
def hincrbyfloat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1], HASH)
    current = None if entry is None else entry.value.get(argv[2])
    encoded = add_float(current, argv[3], "ERR hash value is not a float")
    entry = hash_for_write(server, client, argv[1])
    set_field(server, client, argv[1], entry, argv[2], encoded)
    return encoded


@command("hrandfield", -2, "readonly", 1, 1, 1)
def hrandfield(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHVALUES"):
        raise Error("ERR syntax error")
    count = to_int(argv[2]) if len(argv) >= 3 else None
    with_values = len(argv) == 4
    entry = lookup_read(server, client, argv[1], HASH)
    if count is None:
        return None if entry is None else random.choice(list(entry.value))
    if entry is None:
        return []
    fields = list(entry.value.items())
    if count >= 0:
        chosen = random.sample(fields, min(count, len(fields)))
    else:
        chosen = [random.choice(fields) for _ in range(-count)]
    if with_values:
        if client.protocol == 3:
            return [[name, value] for name, value in chosen]
        return [part for pair in chosen for part in pair]
    return [name for name, _ in chosen]


@command("hscan", -3, "readonly", 1, 1, 1)
def hscan(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    cursor, count, pattern, _ = scan_options(argv, 3, False)
    entry = lookup_read(server, client, argv[1], HASH)
    if entry is None:
        return [b"0", []]
    from dynastore.redis.commands.server import encoding_of

    if encoding_of(server, entry) == "listpack":  # Redis answers a small hash whole, in order
        following, page = 0, list(entry.value)
    else:
        following, page = scan_page(entry.value, cursor, count)
    match = matcher(pattern) if pattern is not None else None
    out: list[bytes] = []
    for name in page:
        if match is None or match(name):
            out += [name, entry.value[name]]
    return [str(following).encode(), out]
