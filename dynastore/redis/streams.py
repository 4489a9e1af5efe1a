"""A Redis stream in memory, and its rows (keyspace.py).

Rows, each an element row of the stream's key (sort key by its first byte):

- ``e`` + id (16 bytes): an entry, its fields and values length-prefixed;
- ``m``: last generated id, largest deleted id, entries added;
- ``g`` + group: the group's last delivered id and entries read;
- ``c`` + group (length-prefixed) + consumer: when it was last seen and active;
- ``p`` + group (length-prefixed) + id: a pending entry: delivery time,
  delivery count, consumer.

So XADD writes two rows (the entry, the stream's counters), XACK one per id.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from sortedcontainers import SortedList  # type: ignore[import-untyped]

StreamId = tuple[int, int]

_ID = struct.Struct(">QQ")
_META = struct.Struct(">QQQQQ")
_GROUP = struct.Struct(">QQq")
_CONSUMER = struct.Struct(">QQ")
_PENDING = struct.Struct(">QQ")
_LENGTH = struct.Struct(">I")
_SHORT = struct.Struct(">H")


def id_bytes(stream_id: StreamId) -> bytes:
    return _ID.pack(*stream_id)


def format_id(stream_id: StreamId) -> bytes:
    return b"%d-%d" % stream_id


def encode_fields(fields: list[bytes]) -> bytes:
    return b"".join(_LENGTH.pack(len(part)) + part for part in fields)


def decode_fields(data: bytes) -> list[bytes]:
    fields = []
    position = 0
    while position < len(data):
        (length,) = _LENGTH.unpack_from(data, position)
        position += 4
        fields.append(data[position:position + length])
        position += length
    return fields


class Pending:
    __slots__ = ("consumer", "delivered_ms", "count")

    def __init__(self, consumer: bytes, delivered_ms: int, count: int) -> None:
        self.consumer = consumer
        self.delivered_ms = delivered_ms
        self.count = count


class Consumer:
    __slots__ = ("name", "seen_ms", "active_ms", "pending")

    def __init__(self, name: bytes, seen_ms: int, active_ms: int = 0) -> None:
        self.name = name
        self.seen_ms = seen_ms
        self.active_ms = active_ms
        self.pending: set[StreamId] = set()


class Group:
    __slots__ = ("name", "last_delivered", "entries_read", "pending", "pending_order", "consumers")

    def __init__(self, name: bytes, last_delivered: StreamId, entries_read: int) -> None:
        self.name = name
        self.last_delivered = last_delivered
        self.entries_read = entries_read
        """-1: unknown (Redis's SCG_INVALID_ENTRIES_READ)."""
        self.pending: dict[StreamId, Pending] = {}
        self.pending_order: SortedList = SortedList()
        self.consumers: dict[bytes, Consumer] = {}


class Stream:
    __slots__ = ("entries", "order", "last_id", "max_deleted", "entries_added", "groups")

    def __init__(self) -> None:
        self.entries: dict[StreamId, list[bytes]] = {}
        self.order: SortedList = SortedList()
        self.last_id: StreamId = (0, 0)
        self.max_deleted: StreamId = (0, 0)
        self.entries_added = 0
        self.groups: dict[bytes, Group] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def first_id(self) -> StreamId | None:
        return self.order[0] if self.order else None

    def ids_between(self, low: StreamId, high: StreamId, reverse: bool = False) -> Iterator[StreamId]:
        order = self.order
        start = order.bisect_left(low)
        end = order.bisect_right(high)
        return iter(order.islice(start, end, reverse=reverse))

    # --- rows ---------------------------------------------------------------------------
    def meta_item(self) -> bytes:
        return _META.pack(*self.last_id, *self.max_deleted, self.entries_added)

    def element_rows(self) -> Iterator[tuple[bytes, bytes]]:
        yield b"m", self.meta_item()
        for stream_id, fields in self.entries.items():
            yield b"e" + id_bytes(stream_id), encode_fields(fields)
        for group in self.groups.values():
            yield group_key(group.name), group_item(group)
            for consumer in group.consumers.values():
                yield consumer_key(group.name, consumer.name), consumer_item(consumer)
            for stream_id, pending in group.pending.items():
                yield pending_key(group.name, stream_id), pending_item(pending)

    def load(self, sort_key: bytes, item: bytes) -> None:
        kind = sort_key[:1]
        if kind == b"e":
            stream_id = _ID.unpack(sort_key[1:])
            self.entries[stream_id] = decode_fields(item)
            self.order.add(stream_id)
        elif kind == b"m":
            values = _META.unpack(item)
            self.last_id, self.max_deleted, self.entries_added = values[0:2], values[2:4], values[4]
        elif kind == b"g":
            group = self._group(sort_key[1:])
            last_ms, last_seq, group.entries_read = _GROUP.unpack(item)
            group.last_delivered = (last_ms, last_seq)
        elif kind == b"c":
            group_name, rest = _split_group(sort_key[1:])
            seen_ms, active_ms = _CONSUMER.unpack_from(item)
            group = self._group(group_name)
            consumer = group.consumers.get(rest)
            if consumer is None:
                group.consumers[rest] = Consumer(rest, seen_ms, active_ms)
            else:
                consumer.seen_ms, consumer.active_ms = seen_ms, active_ms
        elif kind == b"p":
            group_name, rest = _split_group(sort_key[1:])
            stream_id = _ID.unpack(rest)
            delivered_ms, count = _PENDING.unpack_from(item)
            name = item[_PENDING.size:]
            group = self._group(group_name)
            group.pending[stream_id] = Pending(name, delivered_ms, count)
            group.pending_order.add(stream_id)
            consumer = group.consumers.get(name)
            if consumer is None:
                consumer = group.consumers[name] = Consumer(name, 0)
            consumer.pending.add(stream_id)

    def _group(self, name: bytes) -> Group:
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = Group(name, (0, 0), -1)
        return group


def _split_group(data: bytes) -> tuple[bytes, bytes]:
    (length,) = _SHORT.unpack_from(data)
    return data[2:2 + length], data[2 + length:]


def _group_prefix(group: bytes) -> bytes:
    return _SHORT.pack(len(group)) + group


def group_key(name: bytes) -> bytes:
    return b"g" + name


def group_item(group: Group) -> bytes:
    return _GROUP.pack(*group.last_delivered, group.entries_read)


def consumer_key(group: bytes, consumer: bytes) -> bytes:
    return b"c" + _group_prefix(group) + consumer


def consumer_item(consumer: Consumer) -> bytes:
    return _CONSUMER.pack(consumer.seen_ms, consumer.active_ms)


def pending_key(group: bytes, stream_id: StreamId) -> bytes:
    return b"p" + _group_prefix(group) + id_bytes(stream_id)


def pending_item(pending: Pending) -> bytes:
    return _PENDING.pack(pending.delivered_ms, pending.count) + pending.consumer


def entry_key(stream_id: StreamId) -> bytes:
    return b"e" + id_bytes(stream_id)


def entries_reply(stream: Stream, ids: Any) -> list[Any]:
    return [[format_id(stream_id), list(stream.entries[stream_id])] for stream_id in ids]
