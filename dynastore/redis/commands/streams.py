"""Stream commands: XADD, XRANGE, XREAD (BLOCK), consumer groups, XINFO."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import SYNTAX, command, container, lookup, lookup_read, to_int
from dynastore.redis.keyspace import STREAM, Entry
from dynastore.redis.resp import Error, Map
from dynastore.redis.streams import (
    Consumer,
    Group,
    Pending,
    Stream,
    StreamId,
    consumer_item,
    consumer_key,
    encode_fields,
    entries_reply,
    entry_key,
    format_id,
    group_item,
    group_key,
    pending_item,
    pending_key,
)

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
MAX_ID: StreamId = ((1 << 64) - 1, (1 << 64) - 1)
_ID = re.compile(rb"([0-9]+)(?:-([0-9]+|\*))?\Z")
NOGROUP = "NOGROUP No such key '{key}' or consumer group '{group}'"


def parse_id(value: bytes, missing_seq: int = 0, exclusive_ok: bool = False) -> StreamId:
    """``ms-seq`` or ``ms`` (seq defaults to ``missing_seq``), ``-`` and ``+``."""
    if value == b"-":
        return (0, 0)
    if value == b"+":
        return MAX_ID
    match = _ID.match(value)
    if match is None or match.group(2) == b"*":
        raise Error(INVALID_ID)
    ms = int(match.group(1))
    seq = int(match.group(2)) if match.group(2) is not None else missing_seq
    if ms >= 1 << 64 or seq >= 1 << 64:
        raise Error(INVALID_ID)
    return (ms, seq)


def _range_bound(value: bytes, low: bool) -> tuple[StreamId, bool]:
    """An XRANGE bound: (id, empty range) with ``(`` exclusive ids."""
    if value.startswith(b"("):
        stream_id = parse_id(value[1:], 0 if low else (1 << 64) - 1)
        if low:
            if stream_id == MAX_ID:
                return stream_id, True
            ms, seq = stream_id
            return ((ms, seq + 1) if seq < (1 << 64) - 1 else (ms + 1, 0)), False
        if stream_id == (0, 0):
            return stream_id, True
        ms, seq = stream_id
        return ((ms, seq - 1) if seq > 0 else (ms - 1, (1 << 64) - 1)), False
    return parse_id(value, 0 if low else (1 << 64) - 1), False


def stream_of(server: RedisServer, client: Client, key: bytes, count: bool = True) -> Entry | None:
    return (lookup_read if count else lookup)(server, client, key, STREAM)


def changed_meta(server: RedisServer, client: Client, key: bytes, stream: Stream) -> None:
    server.keyspace.changed_element(client.db, key, b"m", stream.meta_item())


# --- XADD, XDEL, XTRIM ---------------------------------------------------------------------
def next_id(stream: Stream, requested: bytes, now_ms: int) -> StreamId:
    last = stream.last_id
    if requested == b"*":
        if now_ms > last[0]:
            return (now_ms, 0)
        return (last[0], last[1] + 1)
    match = _ID.match(requested)
    if match is None:
        raise Error(INVALID_ID)
    ms = int(match.group(1))
    if match.group(2) == b"*":
        if ms < last[0]:
            raise Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
        candidate = (ms, last[1] + 1) if ms == last[0] else (ms, 0)
    else:
        candidate = (ms, int(match.group(2)) if match.group(2) is not None else 0)
    if candidate == (0, 0):
        raise Error("ERR The ID specified in XADD must be greater than 0-0")
    if candidate <= last:
        raise Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
    return candidate


def parse_trim(argv: list[bytes], index: int) -> tuple[int, tuple[str, bool, Any, int] | None]:
    """At ``index``: MAXLEN|MINID [=|~] threshold [LIMIT count]; returns (next index, trim)."""
    strategy = argv[index].upper()
    index += 1
    approximate = False
    if index < len(argv) and argv[index] in (b"=", b"~"):
        approximate = argv[index] == b"~"
        index += 1
    if index >= len(argv):
        raise Error(SYNTAX)
    if strategy == b"MAXLEN":
        threshold: Any = to_int(argv[index])
        if threshold < 0:
            raise Error("ERR The MAXLEN argument must be >= 0.")
    else:
        threshold = parse_id(argv[index])
    index += 1
    limit = 0
    if index + 1 < len(argv) and argv[index].upper() == b"LIMIT":
        limit = to_int(argv[index + 1])
        if limit < 0:
            raise Error("ERR The LIMIT argument must be >= 0.")
        if not approximate:
            raise Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
        index += 2
    return index, ("maxlen" if strategy == b"MAXLEN" else "minid", approximate, threshold, limit)


NODE_ENTRIES = 100
"""stream-node-max-entries: with ``~`` Redis trims whole nodes of this many entries."""


def trim(server: RedisServer, client: Client, key: bytes, stream: Stream, how: tuple[str, bool, Any, int]) -> int:
    """XTRIM / XADD's trimming; with ``~`` only whole nodes of NODE_ENTRIES
    (counted from the oldest entry) go, as Redis trims its radix-tree nodes."""
    strategy, approximate, threshold, limit = how
    order = stream.order
    length = len(order)
    if strategy == "maxlen":
        excess = length - threshold
    else:
        excess = int(order.bisect_left(threshold))
    if excess <= 0:
        return 0
    if approximate:
        limit = limit or NODE_ENTRIES * NODE_ENTRIES
        whole = 0
        while whole < length and whole < limit:
            node = min(NODE_ENTRIES, length - whole)
            if whole + node > excess or whole + node > limit:
                break
            whole += node
        excess = whole
    removed = list(order.islice(0, excess))
    for stream_id in removed:
        _delete_entry(server, client, key, stream, stream_id)
    if removed:
        changed_meta(server, client, key, stream)
    return len(removed)


def _delete_entry(server: RedisServer, client: Client, key: bytes, stream: Stream, stream_id: StreamId) -> None:
    del stream.entries[stream_id]
    stream.order.remove(stream_id)
    server.keyspace.changed_element(client.db, key, entry_key(stream_id), None)


@command("xadd", -5, "write fast", 1, 1, 1)
def xadd(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    index = 2
    make = True
    how = None
    while index < len(argv):
        option = argv[index].upper()
        if option == b"NOMKSTREAM":
            make = False
            index += 1
        elif option in (b"MAXLEN", b"MINID"):
            index, how = parse_trim(argv, index)
        else:
            break
    if index >= len(argv):
        raise Error(SYNTAX)
    requested = argv[index]
    fields = argv[index + 1:]
    if not fields or len(fields) % 2:
        raise Error("ERR wrong number of arguments for 'xadd' command")
    entry = stream_of(server, client, argv[1], count=False)
    if entry is None:
        if requested != b"*":
            next_id(Stream(), requested, server.now_ms())  # an invalid id first
        if not make:
            return None
        entry = Entry(STREAM, Stream())
        server.keyspace.dbs[client.db][argv[1]] = entry
        server.keyspace.changed_head(client.db, argv[1], entry)
    stream: Stream = entry.value
    stream_id = next_id(stream, requested, server.now_ms())
    stream.entries[stream_id] = list(fields)
    stream.order.add(stream_id)
    stream.last_id = stream_id
    stream.entries_added += 1
    server.keyspace.changed_element(client.db, argv[1], entry_key(stream_id), encode_fields(list(fields)))
    changed_meta(server, client, argv[1], stream)
    if how is not None:
        trim(server, client, argv[1], stream, how)
    return format_id(stream_id)


@command("xlen", 2, "readonly fast", 1, 1, 1)
def xlen(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = stream_of(server, client, argv[1])
    return 0 if entry is None else len(entry.value)


@command("xdel", -3, "write fast", 1, 1, 1)
def xdel(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    ids = [parse_id(value) for value in argv[2:]]
    entry = stream_of(server, client, argv[1], count=False)
    if entry is None:
        return 0
    stream: Stream = entry.value
    removed = 0
    for stream_id in ids:
        if stream_id in stream.entries:
            _delete_entry(server, client, argv[1], stream, stream_id)
            stream.max_deleted = max(stream.max_deleted, stream_id)
            removed += 1
    if removed:
        changed_meta(server, client, argv[1], stream)
    return removed


@command("xtrim", -4, "write", 1, 1, 1)
def xtrim(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if argv[2].upper() not in (b"MAXLEN", b"MINID"):
        raise Error(SYNTAX)
    index, how = parse_trim(argv, 2)
    if index != len(argv) or how is None:
        raise Error(SYNTAX)
    entry = stream_of(server, client, argv[1], count=False)
    if entry is None:
        return 0
    return trim(server, client, argv[1], entry.value, how)


# --- reading ---------------------------------------------------------------------------------
def _xrange(server: RedisServer, client: Client, argv: list[bytes], reverse: bool) -> Any:
    low_argument, high_argument = (argv[3], argv[2]) if reverse else (argv[2], argv[3])
    low, low_empty = _range_bound(low_argument, True)
    high, high_empty = _range_bound(high_argument, False)
    count = None
    if len(argv) == 6 and argv[4].upper() == b"COUNT":
        count = to_int(argv[5])
    elif len(argv) != 4:
        raise Error(SYNTAX)
    entry = stream_of(server, client, argv[1])
    if entry is None or low_empty or high_empty or low > high or count == 0:
        return []
    stream: Stream = entry.value
    ids: list[StreamId] = []
    for stream_id in stream.ids_between(low, high, reverse):
        if count is not None and count > 0 and len(ids) >= count:
            break
        ids.append(stream_id)
    return entries_reply(stream, ids)


@command("xrange", -4, "readonly", 1, 1, 1)
def xrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _xrange(server, client, argv, False)


@command("xrevrange", -4, "readonly", 1, 1, 1)
def xrevrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _xrange(server, client, argv, True)


def _read_options(argv: list[bytes], group: bool) -> tuple[int | None, float | None, bool, list[bytes], list[bytes], int]:
    count: int | None = None
    block: float | None = None
    noack = False
    index = 1 if not group else 4
    while index < len(argv):
        option = argv[index].upper()
        if option == b"COUNT" and index + 1 < len(argv):
            count = to_int(argv[index + 1])
            count = None if count <= 0 else count
            index += 2
        elif option == b"BLOCK" and index + 1 < len(argv):
            milliseconds = to_int(argv[index + 1], "ERR timeout is not an integer or out of range")
            if milliseconds < 0:
                raise Error("ERR timeout is negative")
            block = milliseconds / 1000
            index += 2
        elif option == b"NOACK" and group:
            noack = True
            index += 1
        elif option == b"STREAMS":
            index += 1
            break
        else:
            raise Error(SYNTAX)
    else:
        raise Error(SYNTAX)
    rest = argv[index:]
    if not rest or len(rest) % 2:
        raise Error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
                    "must be specified." if group else
                    "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must "
                    "be specified.")
    half = len(rest) // 2
    return count, block, noack, rest[:half], rest[half:], index


def _reply_streams(client: Client, found: list[tuple[bytes, list[Any]]]) -> Any:
    if client.protocol == 3:
        return Map(found)
    return [[key, entries] for key, entries in found]


@command("xread", -4, "readonly blocking", 0, 0, 0)
def xread(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    count, block, _, keys, ids, index = _read_options(argv, False)
    starts: list[StreamId] = []
    resolved = list(argv)
    for position, (key, value) in enumerate(zip(keys, ids, strict=True)):
        if value == b"$":
            entry = stream_of(server, client, key, count=False)
            starts.append(entry.value.last_id if entry is not None else (0, 0))
            resolved[index + len(keys) + position] = format_id(starts[-1])
        else:
            starts.append(parse_id(value))
    found: list[tuple[bytes, list[Any]]] = []
    for key, start in zip(keys, starts, strict=True):
        entry = stream_of(server, client, key)
        if entry is None:
            continue
        stream: Stream = entry.value
        ids_after: list[StreamId] = []
        for stream_id in stream.ids_between(_after(start), MAX_ID):
            if count is not None and len(ids_after) >= count:
                break
            ids_after.append(stream_id)
        if ids_after:
            found.append((key, entries_reply(stream, ids_after)))
    if found:
        return _reply_streams(client, found)
    if block is None or client.in_exec:
        return resp.NULL_ARRAY
    client.current = (client.current[0], resolved)  # '$' means the last id when it blocked
    return server.block(client, keys, block)


def _after(stream_id: StreamId) -> StreamId:
    ms, seq = stream_id
    return (ms, seq + 1) if seq < (1 << 64) - 1 else (ms + 1, 0)


# --- consumer groups -------------------------------------------------------------------------
def group_of(server: RedisServer, client: Client, key: bytes, name: bytes) -> tuple[Entry, Group]:
    entry = stream_of(server, client, key, count=False)
    group = None if entry is None else entry.value.groups.get(name)
    if entry is None or group is None:
        raise Error(NOGROUP.format(key=key.decode(errors="replace"), group=name.decode(errors="replace")))
    return entry, group


def save_group(server: RedisServer, client: Client, key: bytes, group: Group) -> None:
    server.keyspace.changed_element(client.db, key, group_key(group.name), group_item(group))


def save_consumer(server: RedisServer, client: Client, key: bytes, group: Group, consumer: Consumer) -> None:
    server.keyspace.changed_element(client.db, key, consumer_key(group.name, consumer.name),
                                    consumer_item(consumer))


def save_pending(server: RedisServer, client: Client, key: bytes, group: Group, stream_id: StreamId) -> None:
    pending = group.pending.get(stream_id)
    server.keyspace.changed_element(client.db, key, pending_key(group.name, stream_id),
                                    None if pending is None else pending_item(pending))


def consumer_of(server: RedisServer, client: Client, key: bytes, group: Group, name: bytes,
                active: bool = False) -> Consumer:
    now = server.now_ms()
    consumer = group.consumers.get(name)
    if consumer is None:
        consumer = group.consumers[name] = Consumer(name, now)
    consumer.seen_ms = now
    if active:
        consumer.active_ms = now
    save_consumer(server, client, key, group, consumer)
    return consumer


def _group_start(stream: Stream, value: bytes) -> StreamId:
    return stream.last_id if value == b"$" else parse_id(value)


container("xgroup", -2)


@command("xgroup|create", -5, "write", 2, 2, 1)
def xgroup_create(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entries_read = -1
    index = 5
    make = False
    while index < len(argv):
        option = argv[index].upper()
        if option == b"MKSTREAM":
            make = True
            index += 1
        elif option == b"ENTRIESREAD" and index + 1 < len(argv):
            entries_read = to_int(argv[index + 1])
            index += 2
        else:
            raise Error(SYNTAX)
    key, name = argv[2], argv[3]
    if argv[4] != b"$":
        parse_id(argv[4])
    entry = stream_of(server, client, key, count=False)
    if entry is None:
        if not make:
            raise Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE "
                        "you may want to use the MKSTREAM option to create an empty stream "
                        "automatically.")
        entry = Entry(STREAM, Stream())
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.changed_head(client.db, key, entry)
        changed_meta(server, client, key, entry.value)
    stream: Stream = entry.value
    if name in stream.groups:
        raise Error("BUSYGROUP Consumer Group name already exists")
    group = Group(name, _group_start(stream, argv[4]), entries_read)
    stream.groups[name] = group
    save_group(server, client, key, group)
    return resp.OK


@command("xgroup|setid", -5, "write", 2, 2, 1)
def xgroup_setid(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry, group = group_of(server, client, argv[2], argv[3])
    group.last_delivered = _group_start(entry.value, argv[4])
    if len(argv) == 7 and argv[5].upper() == b"ENTRIESREAD":
        group.entries_read = to_int(argv[6])
    elif len(argv) != 5:
        raise Error(SYNTAX)
    save_group(server, client, argv[2], group)
    return resp.OK


@command("xgroup|destroy", 4, "write", 2, 2, 1)
def xgroup_destroy(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = stream_of(server, client, argv[2], count=False)
    if entry is None:
        raise Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                    "may want to use the MKSTREAM option to create an empty stream automatically.")
    stream: Stream = entry.value
    group = stream.groups.get(argv[3])
    if group is None:
        return 0
    _drop_group_rows(server, client, argv[2], group)
    del stream.groups[argv[3]]
    return 1


def _drop_group_rows(server: RedisServer, client: Client, key: bytes, group: Group) -> None:
    keyspace = server.keyspace
    keyspace.changed_element(client.db, key, group_key(group.name), None)
    for consumer in group.consumers:
        keyspace.changed_element(client.db, key, consumer_key(group.name, consumer), None)
    for stream_id in group.pending:
        keyspace.changed_element(client.db, key, pending_key(group.name, stream_id), None)


@command("xgroup|createconsumer", 5, "write", 2, 2, 1)
def xgroup_createconsumer(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _, group = group_of(server, client, argv[2], argv[3])
    if argv[4] in group.consumers:
        return 0
    consumer_of(server, client, argv[2], group, argv[4])
    return 1


@command("xgroup|delconsumer", 5, "write", 2, 2, 1)
def xgroup_delconsumer(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _, group = group_of(server, client, argv[2], argv[3])
    consumer = group.consumers.pop(argv[4], None)
    if consumer is None:
        return 0
    for stream_id in consumer.pending:
        group.pending.pop(stream_id, None)
        group.pending_order.discard(stream_id)
        save_pending(server, client, argv[2], group, stream_id)
    server.keyspace.changed_element(client.db, argv[2], consumer_key(group.name, argv[4]), None)
    return len(consumer.pending)


@command("xreadgroup", -7, "write blocking", 0, 0, 0)
def xreadgroup(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if argv[1].upper() != b"GROUP":
        raise Error(SYNTAX)
    group_name, consumer_name = argv[2], argv[3]
    count, block, noack, keys, ids, _ = _read_options(argv, True)
    try:
        groups = [group_of(server, client, key, group_name) for key in keys]
    except Error as error:
        raise Error(error.message + " in XREADGROUP with GROUP option") from None
    starts = [None if value == b">" else parse_id(value) for value in ids]
    found: list[tuple[bytes, list[Any]]] = []
    now = server.now_ms()
    for key, (entry, group), start in zip(keys, groups, starts, strict=True):
        stream: Stream = entry.value
        consumer = consumer_of(server, client, key, group, consumer_name, active=start is None)
        if start is None:
            delivered: list[StreamId] = []
            for stream_id in stream.ids_between(_after(group.last_delivered), MAX_ID):
                if count is not None and len(delivered) >= count:
                    break
                delivered.append(stream_id)
            if not delivered:
                continue
            for stream_id in delivered:
                group.last_delivered = stream_id
                if group.entries_read != -1 and not has_tombstones(stream, stream_id):
                    group.entries_read += 1
                elif stream.entries_added:
                    group.entries_read = estimate_entries_read(stream, stream_id)
            save_group(server, client, key, group)
            if not noack:
                for stream_id in delivered:
                    _claim(group, consumer, stream_id, now, 1)
                    save_pending(server, client, key, group, stream_id)
            found.append((key, entries_reply(stream, delivered)))
        else:
            history = sorted(stream_id for stream_id in consumer.pending if stream_id > start)
            if count is not None:
                history = history[:count]
            replies: list[Any] = []
            for stream_id in history:
                fields = stream.entries.get(stream_id)
                replies.append([format_id(stream_id), None if fields is None else list(fields)])
            found.append((key, replies))
    if found:
        return _reply_streams(client, found)
    if block is None or client.in_exec:
        return resp.NULL_ARRAY
    return server.block(client, keys, block)


def _claim(group: Group, consumer: Consumer, stream_id: StreamId, now: int, add_count: int) -> Pending:
    pending = group.pending.get(stream_id)
    if pending is None:
        pending = group.pending[stream_id] = Pending(consumer.name, now, 0)
        group.pending_order.add(stream_id)
    else:
        previous = group.consumers.get(pending.consumer)
        if previous is not None:
            previous.pending.discard(stream_id)
        pending.consumer = consumer.name
        pending.delivered_ms = now
    pending.count += add_count
    consumer.pending.add(stream_id)
    return pending


@command("xack", -4, "write fast", 1, 1, 1)
def xack(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    ids = [parse_id(value) for value in argv[3:]]
    entry = stream_of(server, client, argv[1], count=False)
    group = None if entry is None else entry.value.groups.get(argv[2])
    if group is None:
        return 0
    acknowledged = 0
    for stream_id in ids:
        pending = group.pending.pop(stream_id, None)
        if pending is None:
            continue
        group.pending_order.discard(stream_id)
        consumer = group.consumers.get(pending.consumer)
        if consumer is not None:
            consumer.pending.discard(stream_id)
        save_pending(server, client, argv[1], group, stream_id)
        acknowledged += 1
    return acknowledged


@command("xpending", -3, "readonly", 1, 1, 1)
def xpending(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _, group = group_of(server, client, argv[1], argv[2])
    if len(argv) == 3:
        if not group.pending:
            return [0, None, None, None]
        counts: dict[bytes, int] = {}
        for pending in group.pending.values():
            counts[pending.consumer] = counts.get(pending.consumer, 0) + 1
        return [len(group.pending), format_id(group.pending_order[0]), format_id(group.pending_order[-1]),
                [[name, str(number).encode()] for name, number in sorted(counts.items())]]
    index = 3
    idle = 0
    if argv[index].upper() == b"IDLE":
        if len(argv) < 8:
            raise Error(SYNTAX)
        idle = to_int(argv[index + 1])
        index += 2
    if len(argv) - index not in (3, 4):
        raise Error(SYNTAX)
    low, low_empty = _range_bound(argv[index], True)
    high, high_empty = _range_bound(argv[index + 1], False)
    count = to_int(argv[index + 2])
    only = argv[index + 3] if len(argv) - index == 4 else None
    if low_empty or high_empty or count <= 0:
        return []
    now = server.now_ms()
    out: list[Any] = []
    start = group.pending_order.bisect_left(low)
    for stream_id in group.pending_order.islice(start):
        if stream_id > high or len(out) >= count:
            break
        pending = group.pending[stream_id]
        if only is not None and pending.consumer != only:
            continue
        waited = max(0, now - pending.delivered_ms)
        if waited < idle:
            continue
        out.append([format_id(stream_id), pending.consumer, waited, pending.count])
    return out


@command("xclaim", -6, "write fast", 1, 1, 1)
def xclaim(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    key, group_name, consumer_name = argv[1], argv[2], argv[3]
    min_idle = to_int(argv[4], "ERR Invalid min-idle-time argument for XCLAIM")
    index = 5
    ids: list[StreamId] = []
    while index < len(argv):
        try:
            ids.append(parse_id(argv[index]))
        except Error:
            break
        index += 1
    now = server.now_ms()
    delivered_ms: int | None = None
    retry: int | None = None
    force = justid = False
    while index < len(argv):
        option = argv[index].upper()
        if option == b"IDLE" and index + 1 < len(argv):
            delivered_ms = now - to_int(argv[index + 1], "ERR Invalid IDLE option argument for XCLAIM")
            index += 2
        elif option == b"TIME" and index + 1 < len(argv):
            delivered_ms = to_int(argv[index + 1], "ERR Invalid TIME option argument for XCLAIM")
            index += 2
        elif option == b"RETRYCOUNT" and index + 1 < len(argv):
            retry = to_int(argv[index + 1], "ERR Invalid RETRYCOUNT option argument for XCLAIM")
            index += 2
        elif option == b"FORCE":
            force = True
            index += 1
        elif option == b"JUSTID":
            justid = True
            index += 1
        elif option == b"LASTID" and index + 1 < len(argv):
            parse_id(argv[index + 1])
            index += 2
        else:
            raise Error(f"ERR Unrecognized XCLAIM option '{argv[index].decode(errors='replace')}'")
    entry, group = group_of(server, client, key, group_name)
    stream: Stream = entry.value
    consumer = consumer_of(server, client, key, group, consumer_name)
    claimed: list[StreamId] = []
    for stream_id in ids:
        pending = group.pending.get(stream_id)
        if stream_id not in stream.entries:
            if pending is not None:  # deleted meanwhile: dropped from the PEL
                _unpend(group, stream_id)
                save_pending(server, client, key, group, stream_id)
            continue
        if pending is None:
            if not force:
                continue
        elif min_idle > 0 and now - pending.delivered_ms < min_idle:
            continue
        claimed_entry = _claim(group, consumer, stream_id, now, 0 if justid else 1)
        if delivered_ms is not None:
            claimed_entry.delivered_ms = delivered_ms
        if retry is not None:
            claimed_entry.count = retry
        save_pending(server, client, key, group, stream_id)
        claimed.append(stream_id)
    if claimed:
        consumer.active_ms = now
        save_consumer(server, client, key, group, consumer)
    if justid:
        return [format_id(stream_id) for stream_id in claimed]
    return entries_reply(stream, claimed)


def _unpend(group: Group, stream_id: StreamId) -> None:
    pending = group.pending.pop(stream_id, None)
    group.pending_order.discard(stream_id)
    if pending is not None:
        consumer = group.consumers.get(pending.consumer)
        if consumer is not None:
            consumer.pending.discard(stream_id)


@command("xautoclaim", -6, "write fast", 1, 1, 1)
def xautoclaim(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    key, group_name, consumer_name = argv[1], argv[2], argv[3]
    min_idle = to_int(argv[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM")
    start = _range_bound(argv[5], True)[0]
    count = 100
    justid = False
    index = 6
    while index < len(argv):
        option = argv[index].upper()
        if option == b"COUNT" and index + 1 < len(argv):
            count = to_int(argv[index + 1])
            if count < 1 or count > (1 << 62):
                raise Error("ERR COUNT must be > 0")
            index += 2
        elif option == b"JUSTID":
            justid = True
            index += 1
        else:
            raise Error(SYNTAX)
    entry, group = group_of(server, client, key, group_name)
    stream: Stream = entry.value
    consumer = consumer_of(server, client, key, group, consumer_name)
    now = server.now_ms()
    claimed: list[StreamId] = []
    deleted: list[StreamId] = []
    following: StreamId = (0, 0)
    position = group.pending_order.bisect_left(start)
    attempts = count * 10
    candidates = list(group.pending_order.islice(position))
    for stream_id in candidates:
        if len(claimed) + len(deleted) >= count or attempts <= 0:
            following = stream_id
            break
        attempts -= 1
        pending = group.pending[stream_id]
        if now - pending.delivered_ms < min_idle:
            continue
        if stream_id not in stream.entries:
            _unpend(group, stream_id)
            save_pending(server, client, key, group, stream_id)
            deleted.append(stream_id)
            continue
        _claim(group, consumer, stream_id, now, 0 if justid else 1)
        save_pending(server, client, key, group, stream_id)
        claimed.append(stream_id)
    if claimed:
        consumer.active_ms = now
        save_consumer(server, client, key, group, consumer)
    body: list[Any] = ([format_id(stream_id) for stream_id in claimed] if justid
                       else entries_reply(stream, claimed))
    return [format_id(following), body, [format_id(stream_id) for stream_id in deleted]]


# --- XINFO -----------------------------------------------------------------------------------------
container("xinfo", -2)


def has_tombstones(stream: Stream, start: StreamId) -> bool:
    """An entry deleted at or after ``start`` (Redis's streamRangeHasTombstones)."""
    if not len(stream) or stream.max_deleted == (0, 0):
        return False
    return start <= stream.max_deleted


def estimate_entries_read(stream: Stream, stream_id: StreamId) -> int:
    """How many entries were added up to ``stream_id``; -1 when deletions make it unknown."""
    if not stream.entries_added:
        return 0
    if not len(stream) and stream_id <= stream.last_id:
        return stream.entries_added
    if stream_id == stream.last_id:
        return stream.entries_added
    if stream_id > stream.last_id:
        return -1
    first = stream.first_id() or (0, 0)
    if stream.max_deleted == (0, 0) or stream.max_deleted < first:
        if stream_id < first:
            return stream.entries_added - len(stream)
        if stream_id == first:
            return stream.entries_added - len(stream) + 1
    return -1


def _lag(stream: Stream, group: Group) -> Any:
    if not stream.entries_added:
        return 0
    if group.entries_read != -1 and not has_tombstones(stream, group.last_delivered):
        return stream.entries_added - group.entries_read
    read = estimate_entries_read(stream, group.last_delivered)
    return None if read == -1 else stream.entries_added - read


@command("xinfo|stream", -3, "readonly", 2, 2, 1)
def xinfo_stream(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = stream_of(server, client, argv[2])
    if entry is None:
        raise Error("ERR no such key")
    stream: Stream = entry.value
    first = stream.first_id()
    last = stream.order[-1] if stream.order else None
    return Map([
        (b"length", len(stream)), (b"radix-tree-keys", max(1, (len(stream) + 99) // 100) if len(stream) else 0),
        (b"radix-tree-nodes", max(1, (len(stream) + 99) // 100) + 1 if len(stream) else 1),
        (b"last-generated-id", format_id(stream.last_id)),
        (b"max-deleted-entry-id", format_id(stream.max_deleted)),
        (b"entries-added", stream.entries_added),
        (b"recorded-first-entry-id", format_id(first or (0, 0))),
        (b"groups", len(stream.groups)),
        (b"first-entry", None if first is None else entries_reply(stream, [first])[0]),
        (b"last-entry", None if last is None else entries_reply(stream, [last])[0]),
    ])


@command("xinfo|groups", 3, "readonly", 2, 2, 1)
def xinfo_groups(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = stream_of(server, client, argv[2])
    if entry is None:
        raise Error("ERR no such key")
    stream: Stream = entry.value
    return [Map([
        (b"name", group.name), (b"consumers", len(group.consumers)), (b"pending", len(group.pending)),
        (b"last-delivered-id", format_id(group.last_delivered)),
        (b"entries-read", None if group.entries_read == -1 else group.entries_read),
        (b"lag", _lag(stream, group)),
    ]) for group in stream.groups.values()]


@command("xinfo|consumers", 4, "readonly", 2, 2, 1)
def xinfo_consumers(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    _, group = group_of(server, client, argv[2], argv[3])
    now = server.now_ms()
    return [Map([
        (b"name", consumer.name), (b"pending", len(consumer.pending)),
        (b"idle", max(0, now - consumer.seen_ms)),
    ]) for consumer in group.consumers.values()]

