"""String commands: GET, SET and its relatives, counters, ranges."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.redis import longdouble, resp
from dynastore.redis.commands.common import (
    INT64_MAX,
    INT64_MIN,
    NOT_FLOAT,
    OVERFLOW,
    STRING_TOO_LONG,
    SYNTAX,
    command,
    delete_key,
    lookup,
    lookup_read,
    slice_range,
    to_int,
)
from dynastore.redis.keyspace import STRING, Entry
from dynastore.redis.resp import Error

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

EXPIRE_MS_MAX = (1 << 63) - 1


def store(server: RedisServer, client: Client, key: bytes, value: bytes,
          expire_ms: int | None = None, entry: Entry | None = None) -> Entry:
    """Make ``key`` the string ``value`` (a key of another type is replaced)."""
    entries = server.keyspace.dbs[client.db]
    if entry is None:
        entry = entries.get(key)
    if entry is not None and entry.kind != STRING:
        delete_key(server, client.db, key)
        entry = None
    if entry is None:
        entry = Entry(STRING, value, expire_ms)
        entries[key] = entry
    else:
        entry.value = value
        entry.expire_ms = expire_ms
    server.keyspace.changed_head(client.db, key, entry)
    return entry


def string_of(server: RedisServer, client: Client, key: bytes, count: bool = True) -> Entry | None:
    if count:
        return lookup_read(server, client, key, STRING)
    return lookup(server, client, key, STRING)


@command("get", 2, "readonly fast", 1, 1, 1)
def get(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1])
    return None if entry is None else entry.value


def expiry_option(server: RedisServer, name: str, option: bytes, value: bytes) -> int:
    """EX / PX / EXAT / PXAT's absolute expiry in milliseconds."""
    amount = to_int(value)
    if amount <= 0:
        raise Error(f"ERR invalid expire time in '{name}' command")
    if option in (b"EX", b"EXAT"):
        if amount > EXPIRE_MS_MAX // 1000:
            raise Error(f"ERR invalid expire time in '{name}' command")
        amount *= 1000
    if option in (b"EX", b"PX"):
        if amount > EXPIRE_MS_MAX - server.now_ms():
            raise Error(f"ERR invalid expire time in '{name}' command")
        amount += server.now_ms()
    return amount


@command("set", -3, "write", 1, 1, 1)
def set_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    key, value = argv[1], argv[2]
    if len(argv) == 3:  # no option: the usual case
        store(server, client, key, value, None, lookup(server, client, key))
        return resp.OK
    condition = None
    give_old = keep_ttl = False
    expire_ms: int | None = None
    expiry_given = False
    index = 3
    while index < len(argv):
        option = argv[index].upper()
        if option in (b"NX", b"XX") and condition is None:
            condition = option
        elif option == b"GET" and not give_old:
            give_old = True
        elif option == b"KEEPTTL" and not keep_ttl and not expiry_given:
            keep_ttl = True
        elif option in (b"EX", b"PX", b"EXAT", b"PXAT") and not expiry_given and not keep_ttl \
                and index + 1 < len(argv):
            expire_ms = expiry_option(server, "set", option, argv[index + 1])
            expiry_given = True
            index += 1
        else:
            raise Error(SYNTAX)
        index += 1
    entry = lookup(server, client, key)
    if give_old and entry is not None and entry.kind != STRING:
        raise Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    old = entry.value if entry is not None and give_old else None
    if (condition == b"NX" and entry is not None) or (condition == b"XX" and entry is None):
        return old if give_old else None
    if keep_ttl and entry is not None:
        expire_ms = entry.expire_ms
    if expire_ms is not None and expire_ms <= server.now_ms():
        if entry is not None:
            delete_key(server, client.db, key)
    else:
        store(server, client, key, value, expire_ms, entry)
    return old if give_old else resp.OK


@command("setnx", 3, "write fast", 1, 1, 1)
def setnx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if lookup(server, client, argv[1]) is not None:
        return 0
    store(server, client, argv[1], argv[2])
    return 1


def _setex(server: RedisServer, client: Client, argv: list[bytes], option: bytes) -> Any:
    name = argv[0].decode(errors="replace").lower()
    expire_ms = expiry_option(server, name, option, argv[2])
    store(server, client, argv[1], argv[3], expire_ms, lookup(server, client, argv[1]))
    return resp.OK


@command("setex", 4, "write", 1, 1, 1)
def setex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _setex(server, client, argv, b"EX")


@command("psetex", 4, "write", 1, 1, 1)
def psetex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _setex(server, client, argv, b"PX")


@command("getset", 3, "write fast", 1, 1, 1)
def getset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1], count=False)
    old = None if entry is None else entry.value
    store(server, client, argv[1], argv[2], None, entry)
    return old


@command("getdel", 2, "write fast", 1, 1, 1)
def getdel(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1])
    if entry is None:
        return None
    delete_key(server, client.db, argv[1])
    return entry.value


@command("getex", -2, "write fast", 1, 1, 1)
def getex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    expire_ms: int | None = None
    persist = given = False
    index = 2
    while index < len(argv):
        option = argv[index].upper()
        if option == b"PERSIST" and not given:
            persist = given = True
        elif option in (b"EX", b"PX", b"EXAT", b"PXAT") and not given and index + 1 < len(argv):
            expire_ms = expiry_option(server, "getex", option, argv[index + 1])
            given = True
            index += 1
        else:
            raise Error(SYNTAX)
        index += 1
    entry = string_of(server, client, argv[1])
    if entry is None:
        return None
    value = entry.value
    if expire_ms is not None and expire_ms <= server.now_ms():
        delete_key(server, client.db, argv[1])
    elif expire_ms is not None or (persist and entry.expire_ms is not None):
        entry.expire_ms = expire_ms
        server.keyspace.changed_head(client.db, argv[1], entry)
    return value


@command("mget", -2, "readonly fast", 1, -1, 1)
def mget(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    values = []
    for key in argv[1:]:
        entry = lookup_read(server, client, key)
        values.append(entry.value if entry is not None and entry.kind == STRING else None)
    return values


@command("mset", -3, "write", 1, -1, 2)
def mset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise Error("ERR wrong number of arguments for 'mset' command")
    for index in range(1, len(argv), 2):
        store(server, client, argv[index], argv[index + 1], None, lookup(server, client, argv[index]))
    return resp.OK


@command("msetnx", -3, "write", 1, -1, 2)
def msetnx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise Error("ERR wrong number of arguments for 'msetnx' command")
    if any(lookup(server, client, argv[index]) is not None for index in range(1, len(argv), 2)):
        return 0
    for index in range(1, len(argv), 2):
        store(server, client, argv[index], argv[index + 1])
    return 1


@command("append", 3, "write fast", 1, 1, 1)
def append(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1], count=False)
    if entry is None:
        store(server, client, argv[1], argv[2])
        return len(argv[2])
    if len(entry.value) + len(argv[2]) > limits.REDIS_STRING_MAX_BYTES:
        raise Error(STRING_TOO_LONG)
    entry.value = entry.value + argv[2]
    server.keyspace.changed_head(client.db, argv[1], entry)
    return len(entry.value)


@command("strlen", 2, "readonly fast", 1, 1, 1)
def strlen(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1])
    return 0 if entry is None else len(entry.value)


@command("getrange", 4, "readonly", 1, 1, 1)
def getrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    start, end = to_int(argv[2]), to_int(argv[3])
    entry = string_of(server, client, argv[1])
    if entry is None:
        return b""
    value = entry.value
    if start < 0 and end < 0 and start > end:
        return b""
    bounds = slice_range(start, end, len(value))
    return b"" if bounds is None else value[bounds[0]:bounds[1]]


@command("substr", 4, "readonly", 1, 1, 1)
def substr(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return getrange(server, client, argv)


@command("setrange", 4, "write", 1, 1, 1)
def setrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    offset = to_int(argv[2])
    if offset < 0:
        raise Error("ERR offset is out of range")
    piece = argv[3]
    entry = string_of(server, client, argv[1], count=False)
    if entry is None:
        if not piece:
            return 0
        if offset + len(piece) > limits.REDIS_STRING_MAX_BYTES:
            raise Error(STRING_TOO_LONG)
        store(server, client, argv[1], b"\x00" * offset + piece)
        return offset + len(piece)
    value = entry.value
    if not piece:
        return len(value)
    if offset + len(piece) > limits.REDIS_STRING_MAX_BYTES:
        raise Error(STRING_TOO_LONG)
    if len(value) < offset:
        value = value + b"\x00" * (offset - len(value))
    entry.value = value[:offset] + piece + value[offset + len(piece):]
    server.keyspace.changed_head(client.db, argv[1], entry)
    return len(entry.value)


def increment(server: RedisServer, client: Client, key: bytes, by: int) -> int:
    entry = string_of(server, client, key, count=False)
    current = 0 if entry is None else to_int(entry.value)
    result = current + by
    if result < INT64_MIN or result > INT64_MAX:
        raise Error(OVERFLOW)
    encoded = b"%d" % result
    if entry is None:
        store(server, client, key, encoded)
    else:
        entry.value = encoded
        server.keyspace.changed_head(client.db, key, entry)
    return result


@command("incr", 2, "write fast", 1, 1, 1)
def incr(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return increment(server, client, argv[1], 1)


@command("decr", 2, "write fast", 1, 1, 1)
def decr(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return increment(server, client, argv[1], -1)


@command("incrby", 3, "write fast", 1, 1, 1)
def incrby(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return increment(server, client, argv[1], to_int(argv[2]))


@command("decrby", 3, "write fast", 1, 1, 1)
def decrby(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    by = to_int(argv[2])
    if by == INT64_MIN:
        raise Error("ERR decrement would overflow")
    return increment(server, client, argv[1], -by)


@command("incrbyfloat", 3, "write fast", 1, 1, 1)
def incrbyfloat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = string_of(server, client, argv[1], count=False)
    encoded = add_float(None if entry is None else entry.value, argv[2], NOT_FLOAT)
    if entry is None:
        store(server, client, argv[1], encoded)
    else:
        entry.value = encoded
        server.keyspace.changed_head(client.db, argv[1], entry)
    return encoded


def add_float(current: bytes | None, increment: bytes, message: str) -> bytes:
    """INCRBYFLOAT / HINCRBYFLOAT: long double arithmetic (redis/longdouble.py)."""
    by = longdouble.parse(increment)
    if by is None:
        if increment.lower().lstrip(b"+-") in (b"inf", b"infinity"):
            raise Error("ERR increment would produce NaN or Infinity")
        raise Error(NOT_FLOAT)
    value = longdouble.parse(current) if current is not None else Fraction(0)
    if value is None:
        raise Error(message)
    total = longdouble.add(value, by)
    if total is None:
        raise Error("ERR increment would produce NaN or Infinity")
    return longdouble.format_human(total)


@command("lcs", -3, "readonly", 1, 2, 1)
def lcs(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    first = string_of(server, client, argv[1])
    second = string_of(server, client, argv[2])
    a = b"" if first is None else first.value
    b = b"" if second is None else second.value
    options = {option.upper() for option in argv[3:]}
    if options - {b"LEN"}:
        raise Error(SYNTAX)
    lengths = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            lengths[i][j] = lengths[i + 1][j + 1] + 1 if a[i] == b[j] else max(lengths[i + 1][j], lengths[i][j + 1])
    if b"LEN" in options:
        return lengths[0][0]
    out = bytearray()
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i += 1
            j += 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    return bytes(out)

