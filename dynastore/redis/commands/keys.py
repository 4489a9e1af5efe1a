"""Generic key commands: DEL, EXISTS, TYPE, RENAME, the EXPIRE family, TTL,
KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL, RANDOMKEY, COPY, TOUCH."""

from __future__ import annotations

import copy
import random
import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.redis import resp
from dynastore.redis.commands.common import (
    NO_SUCH_KEY,
    NOT_INTEGER,
    SYNTAX,
    command,
    delete_key,
    lookup,
    to_int,
)
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import STREAM, Entry, ZSet
from dynastore.redis.resp import Error, Status

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

EXPIRE_MS_MAX = (1 << 63) - 1


@command("del", -2, "write", 1, -1, 1)
def delete(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    deleted = 0
    for key in argv[1:]:
        if lookup(server, client, key) is not None and delete_key(server, client.db, key):
            deleted += 1
    return deleted


@command("unlink", -2, "write fast", 1, -1, 1)
def unlink(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return delete(server, client, argv)


@command("exists", -2, "readonly fast", 1, -1, 1)
def exists(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return sum(1 for key in argv[1:] if lookup(server, client, key) is not None)


@command("touch", -2, "readonly fast", 1, -1, 1)
def touch(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return exists(server, client, argv)


@command("type", 2, "readonly fast", 1, 1, 1)
def type_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1])
    return Status("none" if entry is None else entry.kind)


def _rename(server: RedisServer, client: Client, argv: list[bytes], only_new: bool) -> Any:
    source, target = argv[1], argv[2]
    entry = lookup(server, client, source)
    if entry is None:
        raise Error(NO_SUCH_KEY)
    if source == target:
        return 0 if only_new else resp.OK
    if lookup(server, client, target) is not None:
        if only_new:
            return 0
        delete_key(server, client.db, target)
    delete_key(server, client.db, source)
    server.keyspace.dbs[client.db][target] = entry
    server.keyspace.wrote_key(client.db, target, entry)
    return 1 if only_new else resp.OK


@command("rename", 3, "write", 1, 2, 1)
def rename(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _rename(server, client, argv, False)


@command("renamenx", 3, "write fast", 1, 2, 1)
def renamenx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _rename(server, client, argv, True)


def copy_entry(entry: Entry) -> Entry:
    value: Any
    if isinstance(entry.value, ZSet):
        value = ZSet()
        value.scores = dict(entry.value.scores)
        value.order = entry.value.order.copy()
    elif isinstance(entry.value, bytes):
        value = entry.value
    elif entry.kind == STREAM:
        value = copy.deepcopy(entry.value)
    else:
        value = copy.copy(entry.value)
    return Entry(entry.kind, value, entry.expire_ms, entry.head)


@command("copy", -3, "write", 1, 2, 1)
def copy_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    target_db = client.db
    replace = False
    index = 3
    while index < len(argv):
        option = argv[index].upper()
        if option == b"REPLACE":
            replace = True
            index += 1
        elif option == b"DB" and index + 1 < len(argv):
            target_db = to_int(argv[index + 1])
            if target_db < 0 or target_db >= limits.REDIS_DATABASES:
                raise Error("ERR DB index is out of range")
            index += 2
        else:
            raise Error(SYNTAX)
    source, target = argv[1], argv[2]
    if source == target and target_db == client.db:
        raise Error("ERR source and destination objects are the same")
    entry = lookup(server, client, source)
    if entry is None:
        return 0
    saved, client.db = client.db, target_db
    try:
        existing = lookup(server, client, target)
    finally:
        client.db = saved
    if existing is not None:
        if not replace:
            return 0
        delete_key(server, target_db, target)
    made = copy_entry(entry)
    server.keyspace.dbs[target_db][target] = made
    server.keyspace.wrote_key(target_db, target, made)
    return 1


# --- expiry ------------------------------------------------------------------------------
def _expire(server: RedisServer, client: Client, argv: list[bytes], unit_ms: int, absolute: bool) -> Any:
    name = argv[0].decode(errors="replace").lower()
    amount = to_int(argv[2])
    flags = {option.upper() for option in argv[3:]}
    for option in argv[3:]:
        if option.upper() not in (b"NX", b"XX", b"GT", b"LT"):
            raise Error(f"ERR Unsupported option {option.decode(errors='replace')}")
    if b"NX" in flags and flags & {b"XX", b"GT", b"LT"}:
        raise Error("ERR NX and XX, GT or LT options at the same time are not compatible")
    if b"GT" in flags and b"LT" in flags:
        raise Error("ERR GT and LT options at the same time are not compatible")
    now = server.now_ms()
    try:
        when = amount * unit_ms + (0 if absolute else now)
    except OverflowError:  # pragma: no cover - Python ints do not overflow
        when = EXPIRE_MS_MAX + 1
    if amount * unit_ms > EXPIRE_MS_MAX or when > EXPIRE_MS_MAX or when < -EXPIRE_MS_MAX:
        raise Error(f"ERR invalid expire time in '{name}' command")
    entry = lookup(server, client, argv[1])
    if entry is None:
        return 0
    current = entry.expire_ms
    if b"NX" in flags and current is not None:
        return 0
    if b"XX" in flags and current is None:
        return 0
    if b"GT" in flags and (current is None or when <= current):
        return 0
    if b"LT" in flags and current is not None and when >= current:
        return 0
    if when <= now:
        delete_key(server, client.db, argv[1])
        return 1
    entry.expire_ms = when
    server.keyspace.changed_head(client.db, argv[1], entry)
    return 1


@command("expire", -3, "write fast", 1, 1, 1)
def expire(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _expire(server, client, argv, 1000, False)


@command("pexpire", -3, "write fast", 1, 1, 1)
def pexpire(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _expire(server, client, argv, 1, False)


@command("expireat", -3, "write fast", 1, 1, 1)
def expireat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _expire(server, client, argv, 1000, True)


@command("pexpireat", -3, "write fast", 1, 1, 1)
def pexpireat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _expire(server, client, argv, 1, True)


def _ttl(server: RedisServer, client: Client, key: bytes) -> int | None:
    """Milliseconds left; -2 absent, -1 no expiry (as negative sentinels)."""
    entry = lookup(server, client, key)
    if entry is None:
        return -2
    if entry.expire_ms is None:
        return -1
    return max(0, entry.expire_ms - server.now_ms())


@command("ttl", 2, "readonly fast", 1, 1, 1)
def ttl(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    left = _ttl(server, client, argv[1])
    assert left is not None
    return left if left < 0 else (left + 500) // 1000


@command("pttl", 2, "readonly fast", 1, 1, 1)
def pttl(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _ttl(server, client, argv[1])


@command("expiretime", 2, "readonly fast", 1, 1, 1)
def expiretime(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1])
    if entry is None:
        return -2
    return -1 if entry.expire_ms is None else entry.expire_ms // 1000


@command("pexpiretime", 2, "readonly fast", 1, 1, 1)
def pexpiretime(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1])
    if entry is None:
        return -2
    return -1 if entry.expire_ms is None else entry.expire_ms


@command("persist", 2, "write fast", 1, 1, 1)
def persist(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[1])
    if entry is None or entry.expire_ms is None:
        return 0
    entry.expire_ms = None
    server.keyspace.changed_head(client.db, argv[1], entry)
    return 1


# --- the keyspace ----------------------------------------------------------------------------
def live_keys(server: RedisServer, client: Client) -> list[bytes]:
    now = server.now_ms()
    return [key for key, entry in server.keyspace.dbs[client.db].items()
            if entry.expire_ms is None or entry.expire_ms > now]


@command("keys", 2, "readonly", 0, 0, 0)
def keys(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    match = matcher(argv[1])
    return [key for key in live_keys(server, client) if match(key)]


@command("dbsize", 1, "readonly fast")
def dbsize(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return len(server.keyspace.dbs[client.db])


@command("randomkey", 1, "readonly")
def randomkey(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entries = server.keyspace.dbs[client.db]
    for _ in range(100):
        if not entries:
            return None
        key = random.choice(list(entries)) if len(entries) < 1000 else next(iter(entries))
        if lookup(server, client, key) is not None:
            return key
    return None


def flush_db(server: RedisServer, db: int) -> None:
    entries = server.keyspace.dbs[db]
    for key in list(entries):
        delete_key(server, db, key)
    server.touch_all(db)


def _flush_option(argv: list[bytes]) -> None:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].upper() not in (b"ASYNC", b"SYNC")):
        raise Error(SYNTAX)


@command("flushdb", -1, "write")
def flushdb(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _flush_option(argv)
    flush_db(server, client.db)
    return resp.OK


@command("flushall", -1, "write")
def flushall(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _flush_option(argv)
    for db in range(len(server.keyspace.dbs)):
        flush_db(server, db)
    return resp.OK


@command("swapdb", 3, "write fast")
def swapdb(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    try:
        first, second = to_int(argv[1]), to_int(argv[2])
    except Error:
        raise Error("ERR invalid first DB index") from None
    if not (0 <= first < limits.REDIS_DATABASES and 0 <= second < limits.REDIS_DATABASES):
        raise Error("ERR DB index is out of range")
    keyspace = server.keyspace
    a, b = keyspace.dbs[first], keyspace.dbs[second]
    for key, entry in list(a.items()):
        keyspace.deleted_key(first, key, entry)
    for key, entry in list(b.items()):
        keyspace.deleted_key(second, key, entry)
    keyspace.dbs[first], keyspace.dbs[second] = b, a
    for key, entry in b.items():
        keyspace.wrote_key(first, key, entry)
    for key, entry in a.items():
        keyspace.wrote_key(second, key, entry)
    server.touch_all(first)
    server.touch_all(second)
    return resp.OK


# --- SCAN and its family ------------------------------------------------------------------------
def _slot(member: bytes) -> int:
    return zlib.crc32(member) + 1


def scan_page(members: Iterable[bytes], cursor: int, count: int) -> tuple[int, list[bytes]]:
    """A page of ``members`` from ``cursor``: members are walked in the order
    of their CRC32, and a cursor is the next CRC32 + 1 to visit, so a member
    present during the whole iteration is returned at least once, whatever
    was added or removed meanwhile (SCAN's guarantee); 0 ends."""
    ordered = sorted((slot, member) for member in members if (slot := _slot(member)) >= cursor)
    page: list[bytes] = []
    last = 0
    for slot, member in ordered:
        if len(page) >= count and slot != last:
            return slot, page
        page.append(member)
        last = slot
    return 0, page


def scan_options(argv: list[bytes], start: int, allow_type: bool) -> tuple[int, int, bytes | None, bytes | None]:
    try:
        cursor = int(argv[start - 1])
        if cursor < 0 or not argv[start - 1].isdigit():
            raise ValueError
    except ValueError:
        raise Error("ERR invalid cursor") from None
    count = limits.REDIS_SCAN_COUNT_DEFAULT
    pattern = None
    kind = None
    index = start
    while index < len(argv):
        option = argv[index].upper()
        if index + 1 >= len(argv):
            raise Error(SYNTAX)
        value = argv[index + 1]
        if option == b"COUNT":
            count = to_int(value, NOT_INTEGER)
            if count < 1:
                raise Error(SYNTAX)
        elif option == b"MATCH":
            pattern = value
        elif option == b"TYPE" and allow_type:
            kind = value.lower()
        else:
            raise Error(SYNTAX)
        index += 2
    return cursor, count, pattern, kind


@command("scan", -2, "readonly")
def scan(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    cursor, count, pattern, kind = scan_options(argv, 2, True)
    entries = server.keyspace.dbs[client.db]
    following, page = scan_page(entries, cursor, count)
    now = server.now_ms()
    match = matcher(pattern) if pattern is not None else None
    found = []
    for key in page:
        entry = entries.get(key)
        if entry is None or (entry.expire_ms is not None and entry.expire_ms <= now):
            continue
        if kind is not None and entry.kind.encode() != kind:
            continue
        if match is not None and not match(key):
            continue
        found.append(key)
    return [str(following).encode(), found]


@command("move", 3, "write fast", 1, 1, 1)
def move(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    target = to_int(argv[2])
    if target < 0 or target >= limits.REDIS_DATABASES:
        raise Error("ERR DB index is out of range")
    if target == client.db:
        raise Error("ERR source and destination objects are the same")
    entry = lookup(server, client, argv[1])
    if entry is None or argv[1] in server.keyspace.dbs[target]:
        return 0
    delete_key(server, client.db, argv[1])
    server.keyspace.dbs[target][argv[1]] = entry
    server.keyspace.wrote_key(target, argv[1], entry)
    return 1
