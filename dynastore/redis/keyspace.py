"""Redis's keyspace over dynastore's store (docs/adr/0008-redis-protocol.md).

Every Redis key of every database is stored in one storage table of
dynastore's own, ``_dynastore/redis``, written through the one write path
(dynastore/write_path.py) like any DynamoDB item:

- the key's *head row*: ``pk = db byte + key``, ``sk = b""``; its item is the
  type letter, the expiry (8 bytes, milliseconds since the epoch, 0: none)
  and, for a string, the value; for a list, the position of its first element;
- one *element row* per hash field, set member, sorted-set member or list
  element: ``sk = b"\\x01" + field / member / position``; the item is the
  field's value, nothing, the score (a big-endian double) or the element.

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
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList  # type: ignore[import-untyped]

from dynastore import write_path
from dynastore.storage.base import HASH_SPACE, Row
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

STORAGE_NAME = "_dynastore/redis"
"""The storage table of every Redis key (a name no DynamoDB table can have)."""
ELEMENT = b"\x01"
"""Element rows' sort keys start with this byte; the head row's is empty."""

STRING, HASH, LIST, SET, ZSET, STREAM = "string", "hash", "list", "set", "zset", "stream"
_TYPE_LETTERS = {STRING: b"s", HASH: b"h", LIST: b"l", SET: b"S", ZSET: b"z", STREAM: b"x"}
_LETTER_TYPES = {letter[0]: kind for kind, letter in _TYPE_LETTERS.items()}
_EXPIRY = struct.Struct(">Q")
_SCORE = struct.Struct(">d")
_POSITION = struct.Struct(">Q")
_POSITION_BIAS = 1 << 63
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
    raise ValueError(kind)


def head_item(entry: Entry) -> bytes:
    expiry = _EXPIRY.pack(entry.expire_ms or 0)
    letter = _TYPE_LETTERS[entry.kind]
    if entry.kind == STRING:
        value: bytes = entry.value
        return letter + expiry + value
    if entry.kind == LIST:
        return letter + expiry + _POSITION.pack(entry.head + _POSITION_BIAS)
    return letter + expiry


def position_key(position: int) -> bytes:
    return ELEMENT + _POSITION.pack(position + _POSITION_BIAS)


def score_bytes(score: float) -> bytes:
    return _SCORE.pack(score)


class Keyspace:
    """The 16 databases' keys, and the rows the current command changed.

    Commands change ``Entry`` values in place and say which rows follow with
    ``changed_head`` / ``changed_element`` / ``deleted_key``; ``flush`` then
    writes them all as one write (one commit) through the write path."""

    def __init__(self, database: Database, databases: int) -> None:
        self.database = database
        self.dbs: list[dict[bytes, Entry]] = [{} for _ in range(databases)]
        self.expiring: list[set[bytes]] = [set() for _ in range(databases)]
        """Keys with a TTL, per database (what the active sweep samples)."""
        self.deadlines: list[tuple[int, int, bytes]] = []
        """A heap of (expire_ms, db, key) for the active sweep; an entry whose
        key's expiry changed since is stale and skipped."""
        self.on_change: Callable[[int, bytes], None] = _ignore
        """Told of every changed key (WATCH, blocked clients: redis/server.py)."""
        self.table_id = 0
        self._pending: dict[tuple[bytes, bytes], bytes | None] = {}
        self.writes = 0
        """Keyspace changes since start (INFO's rdb_changes_since_last_save)."""

    # --- loading ----------------------------------------------------------------
    def open(self) -> None:
        storage = self.database.storage
        for record in storage.load_tables():
            if record.name == STORAGE_NAME:
                self.table_id = record.table_id
                break
        else:
            self.table_id = storage.create_table(STORAGE_NAME, b"{}")
        entry: Entry | None = None
        current = b""
        for row in storage.scan(self.table_id, 0, HASH_SPACE):
            if row.sk == b"":
                entry = _decode_head(row.item)
                current = row.pk
                db = row.pk[0]
                if db < len(self.dbs):
                    self.dbs[db][row.pk[1:]] = entry
                    if entry.expire_ms is not None:
                        self.expiring[db].add(row.pk[1:])
                        self.deadlines.append((entry.expire_ms, db, row.pk[1:]))
                continue
            if entry is None or row.pk != current:
                continue  # an element whose head is gone (never written so)
            _load_element(entry, row.sk[1:], row.item)
        heapq.heapify(self.deadlines)

    # --- recording changes ---------------------------------------------------------
    def changed_head(self, db: int, key: bytes, entry: Entry) -> None:
        self._pending[(bytes((db,)) + key, b"")] = head_item(entry)
        if entry.expire_ms is None:
            self.expiring[db].discard(key)
        else:
            self.expiring[db].add(key)
            heapq.heappush(self.deadlines, (entry.expire_ms, db, key))
            if len(self.deadlines) > 2 * sum(map(len, self.expiring)) + 1024:
                self._rebuild_deadlines()
        self.on_change(db, key)

    def changed_element(self, db: int, key: bytes, element: bytes, item: bytes | None) -> None:
        """``element`` is the element's sort key without ELEMENT; ``item`` None deletes it."""
        self._pending[(bytes((db,)) + key, ELEMENT + element)] = item
        self.on_change(db, key)

    def wrote_key(self, db: int, key: bytes, entry: Entry) -> None:
        """The key was made anew (RENAME, COPY, a STORE command): every row."""
        self.changed_head(db, key, entry)
        pending = self._pending
        pk = bytes((db,)) + key
        for sort_key, item in element_rows(entry):
            pending[(pk, sort_key)] = item

    def deleted_key(self, db: int, key: bytes, entry: Entry) -> None:
        """The key is gone: its head row and every element row."""
        pk = bytes((db,)) + key
        pending = self._pending
        pending[(pk, b"")] = None
        for sort_key in element_keys(entry):
            pending[(pk, sort_key)] = None
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

    def flush(self) -> None:
        """Write the rows the command changed as one write (one commit)."""
        pending = self._pending
        if not pending:
            return
        self._pending = {}
        self.writes += 1
        table_id = self.table_id
        targets = []
        decisions: list[Any] = []
        for (pk, sk), item in pending.items():
            targets.append(write_path.Target(table_id, pk, sk, None, reads_old=False))
            decisions.append(
                write_path.DELETE if item is None else Row(partition_hash(pk), pk, sk, item, len(item))
            )
        write_path.write(self.database, targets, lambda rows, conflicted: decisions,
                         conflicts=write_path.RETRY_ALL)

    def discard_pending(self) -> None:
        self._pending = {}


def _ignore(db: int, key: bytes) -> None:
    return None


def element_keys(entry: Entry) -> Iterator[bytes]:
    """The sort keys of every element row of ``entry``."""
    kind = entry.kind
    if kind == HASH or kind == SET:
        for member in entry.value:
            yield ELEMENT + member
    elif kind == ZSET:
        for member in entry.value.scores:
            yield ELEMENT + member
    elif kind == LIST:
        for offset in range(len(entry.value)):
            yield position_key(entry.head + offset)


def element_rows(entry: Entry) -> Iterator[tuple[bytes, bytes]]:
    """(sort key, item) of every element row of ``entry``."""
    kind = entry.kind
    if kind == HASH:
        for field_name, value in entry.value.items():
            yield ELEMENT + field_name, value
    elif kind == SET:
        for member in entry.value:
            yield ELEMENT + member, b""
    elif kind == ZSET:
        for member, score in entry.value.scores.items():
            yield ELEMENT + member, _SCORE.pack(score)
    elif kind == LIST:
        for offset, element in enumerate(entry.value):
            yield position_key(entry.head + offset), element


def _decode_head(item: bytes) -> Entry:
    kind = _LETTER_TYPES[item[0]]
    expire_ms = _EXPIRY.unpack_from(item, 1)[0] or None
    payload = item[9:]
    if kind == STRING:
        return Entry(kind, payload, expire_ms)
    if kind == LIST:
        return Entry(kind, deque(), expire_ms, _POSITION.unpack(payload)[0] - _POSITION_BIAS)
    return Entry(kind, new_value(kind), expire_ms)


def _load_element(entry: Entry, element: bytes, item: bytes) -> None:
    kind = entry.kind
    if kind == HASH:
        entry.value[element] = item
    elif kind == SET:
        entry.value.add(element)
    elif kind == ZSET:
        entry.value.add(element, _SCORE.unpack(item)[0])
    elif kind == LIST:
        entry.value.append(item)  # rows come in position order
