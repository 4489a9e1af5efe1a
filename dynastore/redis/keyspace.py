"""Redis's keyspace over dynastore's store (docs/adr/0009-redis-protocol.md).

Every Redis key of every database is stored in two storage tables of
dynastore's own, written through the one write path (dynastore/write_path.py)
like any DynamoDB item:

- ``_dynastore/redis``: the key's *head row*, ``pk = db byte + key``,
  ``sk = b""``; its item is the type letter, the expiry (8 bytes,
  milliseconds since the epoch, 0: none) and, for a string, the value;
- ``_dynastore/redis/elements``: one *element row* per hash field, set
  member, sorted-set member, list element or stream row,
  ``pk = db byte + key + 8-byte bucket`` (BUCKET_BITS), ``sk`` the field,
  member or position; the item is the field's value, nothing, the score (a
  big-endian double) or the element (streams: redis/streams.py).

So a write stores what it changed, not the whole value: HSET of one field
writes one row, ZADD of one member one row (O(log N) in the store's B-tree).

The values themselves are kept decoded in memory too (an exclusive store:
this process alone writes it), loaded from the store when the server starts:
commands read and change them directly, and each command's row changes
commit as one write. Sorted sets keep their order in a ``SortedList`` of
(score, member) beside a dict of scores: O(log N) inserts, O(log N + M) ranges.
"""

from __future__ import annotations

import heapq
import struct
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList  # type: ignore[import-untyped]

from dynastore import write_path
from dynastore.storage.base import HASH_SPACE, Row, RowCheck
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

STORAGE_NAME = "_dynastore/redis"
"""The storage table of every Redis key's head row (a name no DynamoDB table can have)."""
ELEMENTS_NAME = "_dynastore/redis/elements"
"""The storage table of the element rows of hashes, sets, sorted sets and lists."""

STRING, HASH, LIST, SET, ZSET, STREAM = "string", "hash", "list", "set", "zset", "stream"
_TYPE_LETTERS = {STRING: b"s", HASH: b"h", LIST: b"l", SET: b"S", ZSET: b"z", STREAM: b"x"}
_LETTER_TYPES = {letter[0]: kind for kind, letter in _TYPE_LETTERS.items()}
_EXPIRY = struct.Struct(">Q")
_SCORE = struct.Struct(">d")
_POSITION = struct.Struct(">Q")
_POSITION_BIAS = 1 << 63
_BUCKET = struct.Struct(">Q")
BUCKET_BITS = 10
"""A list's element rows are partitions of 2^10 consecutive positions; a
hash's, set's or sorted set's are spread over 2^10 partitions by the CRC32
of the member: no partition of the store grows past about a thousand rows,
however large the value (the in-memory store's sorted arrays stay cheap to
insert into)."""
HASHES_CACHED = 1 << 16
"""Partition-key hashes the keyspace keeps at most (about 10 MB)."""
LIST_START = 0
"""The position a new list's first element gets (pushes go either way from it)."""


class ZSet:
    """A sorted set: ``scores`` member -> score, ``order`` (score, member) sorted."""

    __slots__ = ("scores", "order")

    def __init__(self) -> None:
        self.scores: dict[bytes, float] = {}
        self.order: SortedList = SortedList()

    def __len__(self) -> int:
        return len(self.scores)

    def add(self, member: bytes, score: float) -> None:
        old = self.scores.get(member)
        if old is not None:
            if old == score:
                return
            self.order.remove((old, member))
        self.scores[member] = score
        self.order.add((score, member))

    def remove(self, member: bytes) -> bool:
        old = self.scores.pop(member, None)
        if old is None:
            return False
        self.order.remove((old, member))
        return True

    def rank(self, member: bytes) -> int | None:
        score = self.scores.get(member)
        if score is None:
            return None
        return int(self.order.index((score, member)))


class Entry:
    """One key's value: its type, the decoded value, its expiry (ms or None),
    and for a list the store position of its first element."""

    __slots__ = ("kind", "value", "expire_ms", "head")

    def __init__(self, kind: str, value: Any, expire_ms: int | None = None, head: int = LIST_START) -> None:
        self.kind = kind
        self.value = value
        self.expire_ms = expire_ms
        self.head = head


def new_value(kind: str) -> Any:
    if kind == HASH:
        return {}
    if kind == LIST:
        return deque()
    if kind == SET:
        return set()
    if kind == ZSET:
        return ZSet()
    if kind == STREAM:
        from dynastore.redis.streams import Stream

        return Stream()
    raise ValueError(kind)


_STRING_NO_EXPIRY = b"s" + _EXPIRY.pack(0)
_DB_BYTES = tuple(bytes((db,)) for db in range(256))
"""A database's byte, the first of each of its rows' partition keys."""


def head_item(entry: Entry) -> bytes:
    kind = entry.kind
    if kind == STRING:
        value: bytes = entry.value
        if entry.expire_ms is None:
            return _STRING_NO_EXPIRY + value
        return b"s" + _EXPIRY.pack(entry.expire_ms) + value
    return _TYPE_LETTERS[kind] + _EXPIRY.pack(entry.expire_ms or 0)


def position_bytes(position: int) -> bytes:
    """A list element's sort key: its position, biased to sort as unsigned."""
    return _POSITION.pack(position + _POSITION_BIAS)


def member_bucket(member: bytes) -> bytes:
    return _BUCKET.pack(zlib.crc32(member) >> (32 - BUCKET_BITS))


def position_bucket(position: int) -> bytes:
    return _BUCKET.pack((position + _POSITION_BIAS) >> BUCKET_BITS)


def score_bytes(score: float) -> bytes:
    return _SCORE.pack(score)


class Keyspace:
    """The 16 databases' keys, and the rows the current commands changed.

    Commands change ``Entry`` values in place and say which rows follow with
    ``changed_head`` / ``changed_element`` / ``changed_position`` /
    ``deleted_key``; ``flush`` then writes them all as one write (one
    commit) through the write path."""

    def __init__(self, database: Database, databases: int) -> None:
        self.database = database
        self.dbs: list[dict[bytes, Entry]] = [{} for _ in range(databases)]
        self.expiring: list[set[bytes]] = [set() for _ in range(databases)]
        """Keys with a TTL, per database (INFO's expires=)."""
        self.deadlines: list[tuple[int, int, bytes]] = []
        """A heap of (expire_ms, db, key) for the active sweep; an entry whose
        key's expiry changed since is stale and skipped."""
        self.on_change: Callable[[int, bytes], None] = _ignore
        """Told of every changed key (WATCH, blocked clients: redis/server.py)."""
        self.heads_id = 0
        self.elements_id = 0
        self._pending: dict[tuple[int, bytes, bytes], bytes | None] = {}
        self._hashes: dict[bytes, int] = {}
        """Partition keys' hashes already computed (a blake2b each): the keys and
        element partitions written again and again; emptied past HASHES_CACHED."""
        self.writes = 0
        """Keyspace changes since start (INFO's rdb_changes_since_last_save)."""

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    # --- loading ----------------------------------------------------------------
    def open(self) -> None:
        self.open_tables()
        self.load()

    def open_tables(self) -> None:
        """The two storage tables' ids (made when missing)."""
        storage = self.database.storage
        ids = {record.name: record.table_id for record in storage.load_tables()}
        self.heads_id = ids.get(STORAGE_NAME) or storage.create_table(STORAGE_NAME, b"{}")
        self.elements_id = ids.get(ELEMENTS_NAME) or storage.create_table(ELEMENTS_NAME, b"{}")

    def load(self) -> None:
        """Every key's value from its rows (one scan of each table)."""
        storage = self.database.storage
        for row in storage.scan(self.heads_id, 0, HASH_SPACE):
            db, key = row.pk[0], row.pk[1:]
            if db >= len(self.dbs) or row.sk or not row.item or row.item[0] not in _LETTER_TYPES:
                continue  # not a head row of this layout
            entry = _decode_head(row.item)
            self.dbs[db][key] = entry
            if entry.expire_ms is not None:
                self.expiring[db].add(key)
                self.deadlines.append((entry.expire_ms, db, key))
        heapq.heapify(self.deadlines)
        positions: dict[tuple[int, bytes], list[tuple[bytes, bytes]]] = {}
        for row in storage.scan(self.elements_id, 0, HASH_SPACE):
            db, key = row.pk[0], row.pk[1:-8]
            found = self.dbs[db].get(key) if db < len(self.dbs) else None
            if found is None:
                continue  # an element whose key is gone (never written so)
            if found.kind == LIST:
                positions.setdefault((db, key), []).append((row.sk, row.item))
            else:
                _load_element(found, row.sk, row.item)
        for (db, key), elements in positions.items():
            elements.sort()
            entry = self.dbs[db][key]
            entry.head = _POSITION.unpack(elements[0][0])[0] - _POSITION_BIAS
            entry.value = deque(item for _, item in elements)

    # --- recording changes ---------------------------------------------------------
    def changed_head(self, db: int, key: bytes, entry: Entry) -> None:
        self._pending[(self.heads_id, _DB_BYTES[db] + key, b"")] = head_item(entry)
        if entry.expire_ms is None:
            expiring = self.expiring[db]
            if expiring:
                expiring.discard(key)
        else:
            self.expiring[db].add(key)
            heapq.heappush(self.deadlines, (entry.expire_ms, db, key))
            if len(self.deadlines) > 2 * sum(map(len, self.expiring)) + 1024:
                self._rebuild_deadlines()
        self.on_change(db, key)

    def changed_element(self, db: int, key: bytes, member: bytes, item: bytes | None) -> None:
        """A hash field's, set member's or sorted-set member's row; ``item`` None deletes it."""
        self._pending[(self.elements_id, _DB_BYTES[db] + key + member_bucket(member), member)] = item
        self.on_change(db, key)

    def changed_position(self, db: int, key: bytes, position: int, item: bytes | None) -> None:
        """A list element's row at ``position``; ``item`` None deletes it."""
        pk = _DB_BYTES[db] + key + position_bucket(position)
        self._pending[(self.elements_id, pk, position_bytes(position))] = item
        self.on_change(db, key)

    def wrote_key(self, db: int, key: bytes, entry: Entry) -> None:
        """The key was made anew (RENAME, COPY, a STORE command): every row."""
        self.changed_head(db, key, entry)
        pending = self._pending
        prefix = bytes((db,)) + key
        elements_id = self.elements_id
        for bucket, sort_key, item in element_rows(entry):
            pending[(elements_id, prefix + bucket, sort_key)] = item

    def deleted_key(self, db: int, key: bytes, entry: Entry) -> None:
        """The key is gone: its head row and every element row."""
        prefix = bytes((db,)) + key
        pending = self._pending
        pending[(self.heads_id, prefix, b"")] = None
        elements_id = self.elements_id
        for bucket, sort_key, _ in element_rows(entry):
            pending[(elements_id, prefix + bucket, sort_key)] = None
        self.expiring[db].discard(key)
        self.on_change(db, key)

    def _rebuild_deadlines(self) -> None:
        """Drop the stale entries of the sweep's heap (sliding TTLs pile them up)."""
        live = []
        for db, keys in enumerate(self.expiring):
            entries = self.dbs[db]
            for key in keys:
                entry = entries.get(key)
                if entry is not None and entry.expire_ms is not None:
                    live.append((entry.expire_ms, db, key))
        heapq.heapify(live)
        self.deadlines = live

    def flush(self, checks: Sequence[RowCheck] = ()) -> None:
        """Write the rows changed since the last flush as one write (one
        commit); ``checks``: rows it expects unchanged (the lease, redis/lease.py)."""
        pending = self._pending
        if not pending:
            return
        self._pending = {}
        self.writes += 1
        Target, DELETE = write_path.Target, write_path.DELETE
        targets = [Target(table_id, pk, sk, None, False) for table_id, pk, sk in pending]
        hashes = self._hashes
        if len(hashes) > HASHES_CACHED:
            hashes.clear()
        decisions: list[Any] = []
        for (_, pk, sk), item in pending.items():
            if item is None:
                decisions.append(DELETE)
                continue
            pk_hash = hashes.get(pk)
            if pk_hash is None:
                pk_hash = hashes[pk] = partition_hash(pk)
            decisions.append(Row(pk_hash, pk, sk, item, len(item)))
        write_path.write(self.database, targets, lambda rows, conflicted: decisions,
                         conflicts=write_path.RETRY_ALL, checks=checks)

    def discard_pending(self) -> None:
        self._pending = {}


def _ignore(db: int, key: bytes) -> None:
    return None


def element_rows(entry: Entry) -> Iterator[tuple[bytes, bytes, bytes]]:
    """(partition bucket, sort key, item) of every element row of ``entry``."""
    kind = entry.kind
    if kind == HASH:
        for field_name, value in entry.value.items():
            yield member_bucket(field_name), field_name, value
    elif kind == SET:
        for member in entry.value:
            yield member_bucket(member), member, b""
    elif kind == ZSET:
        for member, score in entry.value.scores.items():
            yield member_bucket(member), member, _SCORE.pack(score)
    elif kind == LIST:
        for offset, element in enumerate(entry.value):
            position = entry.head + offset
            yield position_bucket(position), position_bytes(position), element
    elif kind == STREAM:
        for sort_key, item in entry.value.element_rows():
            yield member_bucket(sort_key), sort_key, item


def _decode_head(item: bytes) -> Entry:
    kind = _LETTER_TYPES[item[0]]
    expire_ms = _EXPIRY.unpack_from(item, 1)[0] or None
    if kind == STRING:
        return Entry(kind, item[9:], expire_ms)
    return Entry(kind, new_value(kind), expire_ms)


def _load_element(entry: Entry, element: bytes, item: bytes) -> None:
    kind = entry.kind
    if kind == HASH:
        entry.value[element] = item
    elif kind == SET:
        entry.value.add(element)
    elif kind == ZSET:
        entry.value.add(element, _SCORE.unpack(item)[0])
    elif kind == STREAM:
        entry.value.load(element, item)
