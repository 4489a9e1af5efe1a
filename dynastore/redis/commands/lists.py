"""List commands, the blocking ones included.

A list's elements are rows at consecutive positions from the head row's
``head`` (keyspace.py): pushes and pops at either end write one element row
(and the head row when the first position moves); LSET one row; LINSERT,
LREM rewrite the rows after the change, as Redis's are O(N) too."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import (
    INDEX_OUT_OF_RANGE,
    NO_SUCH_KEY,
    NOT_POSITIVE,
    SYNTAX,
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_FLOAT,
    command,
    delete_key,
    lookup,
    lookup_read,
    slice_range,
    to_float,
    to_int,
)
from dynastore.redis.keyspace import LIST, Entry
from dynastore.redis.resp import Error

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

def list_for_write(server: RedisServer, client: Client, key: bytes) -> Entry:
    entry = lookup(server, client, key, LIST)
    if entry is None:
        entry = Entry(LIST, deque())
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.changed_head(client.db, key, entry)
    return entry


def push(server: RedisServer, client: Client, key: bytes, entry: Entry, value: bytes, left: bool) -> None:
    keyspace = server.keyspace
    values: deque[bytes] = entry.value
    if left:
        entry.head -= 1
        values.appendleft(value)
        keyspace.changed_position(client.db, key, entry.head, value)
    else:
        values.append(value)
        keyspace.changed_position(client.db, key, entry.head + len(values) - 1, value)


def pop(server: RedisServer, client: Client, key: bytes, entry: Entry, left: bool) -> bytes:
    """Take one element (the key goes with its last one)."""
    keyspace = server.keyspace
    values: deque[bytes] = entry.value
    if left:
        keyspace.changed_position(client.db, key, entry.head, None)
        value = values.popleft()
        entry.head += 1
    else:
        keyspace.changed_position(client.db, key, entry.head + len(values) - 1, None)
        value = values.pop()
    if not values:
        delete_key(server, client.db, key)
    return value


def _push(server: RedisServer, client: Client, argv: list[bytes], left: bool, only_existing: bool) -> Any:
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        if only_existing:
            return 0
        entry = list_for_write(server, client, argv[1])
    for value in argv[2:]:
        push(server, client, argv[1], entry, value, left)
    return len(entry.value)


@command("lpush", -3, "write fast", 1, 1, 1)
def lpush(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _push(server, client, argv, True, False)


@command("rpush", -3, "write fast", 1, 1, 1)
def rpush(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _push(server, client, argv, False, False)


@command("lpushx", -3, "write fast", 1, 1, 1)
def lpushx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _push(server, client, argv, True, True)


@command("rpushx", -3, "write fast", 1, 1, 1)
def rpushx(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _push(server, client, argv, False, True)


def _pop(server: RedisServer, client: Client, argv: list[bytes], left: bool) -> Any:
    if len(argv) > 3:
        raise Error(f"ERR wrong number of arguments for '{argv[0].decode(errors='replace').lower()}' command")
    count = None
    if len(argv) == 3:
        count = to_int(argv[2], NOT_POSITIVE)
        if count < 0:
            raise Error(NOT_POSITIVE)
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        return None if count is None else resp.NULL_ARRAY
    if count is None:
        return pop(server, client, argv[1], entry, left)
    taken = []
    for _ in range(min(count, len(entry.value))):
        taken.append(pop(server, client, argv[1], entry, left))
    return taken


@command("lpop", -2, "write fast", 1, 1, 1)
def lpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _pop(server, client, argv, True)


@command("rpop", -2, "write fast", 1, 1, 1)
def rpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _pop(server, client, argv, False)


@command("llen", 2, "readonly fast", 1, 1, 1)
def llen(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup_read(server, client, argv[1], LIST)
    return 0 if entry is None else len(entry.value)


@command("lrange", 4, "readonly", 1, 1, 1)
def lrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    start, stop = to_int(argv[2]), to_int(argv[3])
    entry = lookup_read(server, client, argv[1], LIST)
    if entry is None:
        return []
    bounds = slice_range(start, stop, len(entry.value))
    if bounds is None:
        return []
    values: deque[bytes] = entry.value
    if bounds[0] == 0 and bounds[1] == len(values):
        return list(values)
    if bounds[0] > len(values) // 2:
        values.rotate(-bounds[0])
        try:
            return [values[index] for index in range(bounds[1] - bounds[0])]
        finally:
            values.rotate(bounds[0])
    return [values[index] for index in range(bounds[0], bounds[1])]


@command("lindex", 3, "readonly", 1, 1, 1)
def lindex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    index = to_int(argv[2])
    entry = lookup_read(server, client, argv[1], LIST)
    if entry is None:
        return None
    if index < 0:
        index += len(entry.value)
    if index < 0 or index >= len(entry.value):
        return None
    return entry.value[index]


@command("lset", 4, "write", 1, 1, 1)
def lset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    index = to_int(argv[2])
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        raise Error(NO_SUCH_KEY)
    if index < 0:
        index += len(entry.value)
    if index < 0 or index >= len(entry.value):
        raise Error(INDEX_OUT_OF_RANGE)
    entry.value[index] = argv[3]
    server.keyspace.changed_position(client.db, argv[1], entry.head + index, argv[3])
    return resp.OK


def rewrite_from(server: RedisServer, client: Client, key: bytes, entry: Entry, start: int, old_length: int) -> None:
    """Rows from offset ``start`` on follow the list again (after an insertion or removal)."""
    keyspace = server.keyspace
    values: deque[bytes] = entry.value
    if not values:
        delete_key(server, client.db, key)
        return
    for offset in range(start, len(values)):
        keyspace.changed_position(client.db, key, entry.head + offset, values[offset])
    for offset in range(len(values), old_length):
        keyspace.changed_position(client.db, key, entry.head + offset, None)


@command("linsert", 5, "write", 1, 1, 1)
def linsert(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    where = argv[2].upper()
    if where not in (b"BEFORE", b"AFTER"):
        raise Error(SYNTAX)
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        return 0
    values: deque[bytes] = entry.value
    try:
        index = values.index(argv[3])
    except ValueError:
        return -1
    if where == b"AFTER":
        index += 1
    old_length = len(values)
    values.insert(index, argv[4])
    rewrite_from(server, client, argv[1], entry, index, old_length)
    return len(values)


@command("lrem", 4, "write", 1, 1, 1)
def lrem(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    count = to_int(argv[2])
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        return 0
    values: list[bytes] = list(entry.value)
    old_length = len(values)
    target = argv[3]
    removed = 0
    first_change = None
    order = range(len(values)) if count >= 0 else range(len(values) - 1, -1, -1)
    keep = [True] * len(values)
    for index in order:
        if values[index] == target and (count == 0 or removed < abs(count)):
            keep[index] = False
            removed += 1
            first_change = index if first_change is None else min(first_change, index)
    if not removed:
        return 0
    entry.value = deque(value for value, kept in zip(values, keep, strict=True) if kept)
    assert first_change is not None
    rewrite_from(server, client, argv[1], entry, first_change, old_length)
    return removed


@command("ltrim", 4, "write", 1, 1, 1)
def ltrim(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    start, stop = to_int(argv[2]), to_int(argv[3])
    entry = lookup(server, client, argv[1], LIST)
    if entry is None:
        return resp.OK
    values: deque[bytes] = entry.value
    bounds = slice_range(start, stop, len(values))
    if bounds is None:
        delete_key(server, client.db, argv[1])
        return resp.OK
    keyspace = server.keyspace
    for offset in range(bounds[1], len(values)):
        keyspace.changed_position(client.db, argv[1], entry.head + offset, None)
    for offset in range(bounds[0]):
        keyspace.changed_position(client.db, argv[1], entry.head + offset, None)
    for _ in range(len(values) - bounds[1]):
        values.pop()
    for _ in range(bounds[0]):
        values.popleft()
    entry.head += bounds[0]
    return resp.OK


@command("lpos", -3, "readonly", 1, 1, 1)
def lpos(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    rank, count, maxlen = 1, None, 0
    index = 3
    while index < len(argv):
        option = argv[index].upper()
        if index + 1 >= len(argv):
            raise Error(SYNTAX)
        value = argv[index + 1]
        if option == b"RANK":
            rank = to_int(value)
            if rank == 0:
                raise Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from "
                            "the second ... or use negative to start from the end of the list")
            if rank == -(1 << 63):
                raise Error("ERR value is out of range, value must between -9223372036854775807 "
                            "and 9223372036854775807")
        elif option == b"COUNT":
            count = to_int(value)
            if count < 0:
                raise Error("ERR COUNT can't be negative")
        elif option == b"MAXLEN":
            maxlen = to_int(value)
            if maxlen < 0:
                raise Error("ERR MAXLEN can't be negative")
        else:
            raise Error(SYNTAX)
        index += 2
    entry = lookup_read(server, client, argv[1], LIST)
    if entry is None:
        return None if count is None else []
    values: deque[bytes] = entry.value
    length = len(values)
    order = range(length) if rank > 0 else range(length - 1, -1, -1)
    skip = abs(rank) - 1
    found: list[int] = []
    for compared, position in enumerate(order):
        if maxlen and compared >= maxlen:
            break
        if values[position] == argv[2]:
            if skip:
                skip -= 1
                continue
            found.append(position)
            if count is None or (count and len(found) >= count):
                break
    if count is None:
        return found[0] if found else None
    return found


def _side(value: bytes) -> bool:
    side = value.upper()
    if side not in (b"LEFT", b"RIGHT"):
        raise Error(SYNTAX)
    return side == b"LEFT"


def move(server: RedisServer, client: Client, source: bytes, target: bytes, from_left: bool, to_left: bool) -> Any:
    entry = lookup(server, client, source, LIST)
    if entry is None:
        return None
    destination = lookup(server, client, target, LIST)  # WRONGTYPE before anything changes
    value = pop(server, client, source, entry, from_left)
    if destination is None or lookup(server, client, target, LIST) is None:
        destination = list_for_write(server, client, target)
    push(server, client, target, destination, value, to_left)
    return value


@command("lmove", 5, "write", 1, 2, 1)
def lmove(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return move(server, client, argv[1], argv[2], _side(argv[3]), _side(argv[4]))


@command("rpoplpush", 3, "write", 1, 2, 1)
def rpoplpush(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return move(server, client, argv[1], argv[2], False, True)


# --- blocking -------------------------------------------------------------------------------
def timeout_of(value: bytes) -> float:
    timeout = to_float(value, TIMEOUT_NOT_FLOAT, allow_infinity=False)
    if timeout < 0:
        raise Error(TIMEOUT_NEGATIVE)
    return timeout


def _blocking_pop(server: RedisServer, client: Client, argv: list[bytes], left: bool) -> Any:
    timeout = timeout_of(argv[-1])
    keys = argv[1:-1]
    for key in keys:
        entry = lookup(server, client, key, LIST)
        if entry is not None:
            return [key, pop(server, client, key, entry, left)]
    if client.in_exec:
        return resp.NULL_ARRAY
    return server.block(client, keys, timeout)


@command("blpop", -3, "write blocking", 1, -2, 1)
def blpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_pop(server, client, argv, True)


@command("brpop", -3, "write blocking", 1, -2, 1)
def brpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_pop(server, client, argv, False)


def _blocking_move(server: RedisServer, client: Client, source: bytes, target: bytes,
                   from_left: bool, to_left: bool, timeout_argument: bytes) -> Any:
    timeout = timeout_of(timeout_argument)
    if lookup(server, client, source, LIST) is not None:
        return move(server, client, source, target, from_left, to_left)
    if client.in_exec:
        return None
    return server.block(client, [source], timeout)


@command("blmove", 6, "write blocking", 1, 2, 1)
def blmove(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_move(server, client, argv[1], argv[2], _side(argv[3]), _side(argv[4]), argv[5])


@command("brpoplpush", 4, "write blocking", 1, 2, 1)
def brpoplpush(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_move(server, client, argv[1], argv[2], False, True, argv[3])


def _mpop_arguments(argv: list[bytes], start: int) -> tuple[list[bytes], bool, int]:
    numkeys = to_int(argv[start], "ERR numkeys should be greater than 0")
    if numkeys <= 0:
        raise Error("ERR numkeys should be greater than 0")
    if start + 1 + numkeys >= len(argv):
        raise Error(SYNTAX)
    keys = argv[start + 1:start + 1 + numkeys]
    rest = argv[start + 1 + numkeys:]
    left = _side(rest[0])
    count = 1
    if len(rest) == 3 and rest[1].upper() == b"COUNT":
        count = to_int(rest[2], "ERR count should be greater than 0")
        if count <= 0:
            raise Error("ERR count should be greater than 0")
    elif len(rest) != 1:
        raise Error(SYNTAX)
    return keys, left, count


def _mpop(server: RedisServer, client: Client, keys: list[bytes], left: bool, count: int) -> Any:
    for key in keys:
        entry = lookup(server, client, key, LIST)
        if entry is not None:
            taken = [pop(server, client, key, entry, left) for _ in range(min(count, len(entry.value)))]
            return [key, taken]
    return None


@command("lmpop", -4, "write", 0, 0, 0)
def lmpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    keys, left, count = _mpop_arguments(argv, 1)
    found = _mpop(server, client, keys, left, count)
    return resp.NULL_ARRAY if found is None else found


@command("blmpop", -5, "write blocking", 0, 0, 0)
def blmpop(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    timeout = timeout_of(argv[1])
    keys, left, count = _mpop_arguments(argv, 2)
    found = _mpop(server, client, keys, left, count)
    if found is not None:
        return found
    if client.in_exec:
        return resp.NULL_ARRAY
    return server.block(client, keys, timeout)

