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

A flush does not write those rows in place, though: it appends one *change
record* to a third table, ``_dynastore/redis/log`` (docs/adr/0011-redis-change-log.md).
Writing a row in place costs a B-tree page per row (random keys touch a
different page each), a record costs a few bytes of one page at the log's
end. The rows changed since the last fold are remembered; once the log
passes limits.REDIS_LOG_FOLD_BYTES they are folded into the head and element
rows, a bounded step per flush, and the records folded are deleted oldest
first. Loading reads the key rows overlaid with the log's records in order: that
is always the stored state.

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

from dynastore import limits, write_path
from dynastore.storage.base import HASH_SPACE, Row, RowCheck
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

STORAGE_NAME = "_dynastore/redis"
"""The storage table of every Redis key's head row (a name no DynamoDB table can have)."""
ELEMENTS_NAME = "_dynastore/redis/elements"
"""The storage table of the element rows of hashes, sets, sorted sets and lists."""
LOG_NAME = "_dynastore/redis/log"
"""The storage table of the change records not yet folded into the key rows."""

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
_CHANGE = struct.Struct(">BIIi")
"""A change in a record: its table (0: heads, 1: elements), the lengths of
its partition key and sort key, and its item's (-1: the row is deleted);
the three byte strings follow."""
_SEQUENCE = struct.Struct(">Q")
LOG_SEGMENT_BITS = 12
"""A log row's partition is its sequence number's segment of 2^12 records."""


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
        self.log_id = 0
        self._pending: dict[tuple[int, bytes, bytes], bytes | None] = {}
        self.fold_bytes = limits.overridden(limits.REDIS_LOG_FOLD_VARIABLE, limits.REDIS_LOG_FOLD_BYTES)
        self._sequence = 0
        """The next log record's sequence number."""
        self._records: deque[int] = deque()
        """The sequence numbers of the log's records, oldest first."""
        self._unfolded: dict[tuple[int, bytes, bytes], bytes | None] = {}
        """Every row the records appended since the last fold began changed, as it is now."""
        self._unfolded_bytes = 0
        self._folding: dict[tuple[int, bytes, bytes], bytes | None] | None = None
        """The rows a fold in progress has still to write (None: no fold)."""
        self._folded_through = -1
        """The last record a fold in progress covers: deleted once its rows are written."""
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
        self.log_id = ids.get(LOG_NAME) or storage.create_table(LOG_NAME, b"{}")

    def load(self) -> None:
        """Every key's value from its rows (one scan of each table) overlaid
        with the log's records; the log stays as it is (the next fold takes it)."""
        storage = self.database.storage
        overlay = self._read_log()
        for pk, sk, item in _overlaid(self.heads_id, storage.scan(self.heads_id, 0, HASH_SPACE), overlay):
            db, key = pk[0], pk[1:]
            if db >= len(self.dbs) or sk or not item or item[0] not in _LETTER_TYPES:
                continue  # not a head row of this layout
            entry = _decode_head(item)
            self.dbs[db][key] = entry
            if entry.expire_ms is not None:
                self.expiring[db].add(key)
                self.deadlines.append((entry.expire_ms, db, key))
        heapq.heapify(self.deadlines)
        positions: dict[tuple[int, bytes], list[tuple[bytes, bytes]]] = {}
        for pk, sk, item in _overlaid(self.elements_id, storage.scan(self.elements_id, 0, HASH_SPACE), overlay):
            db, key = pk[0], pk[1:-8]
            found = self.dbs[db].get(key) if db < len(self.dbs) else None
            if found is None:
                continue  # an element whose key is gone (never written so)
            if found.kind == LIST:
                positions.setdefault((db, key), []).append((sk, item))
            else:
                _load_element(found, sk, item)
        for (db, key), elements in positions.items():
            elements.sort()
            entry = self.dbs[db][key]
            entry.head = _POSITION.unpack(elements[0][0])[0] - _POSITION_BIAS
            entry.value = deque(item for _, item in elements)

    def _read_log(self) -> dict[tuple[int, bytes, bytes], bytes | None]:
        """The log's records in order: each row's last change, which also
        become the rows the next fold writes."""
        found = sorted(self.database.storage.scan(self.log_id, 0, HASH_SPACE), key=lambda row: row.sk)
        overlay: dict[tuple[int, bytes, bytes], bytes | None] = {}
        tables = (self.heads_id, self.elements_id)
        for row in found:
            for key, item in _changes(row.item, tables):
                overlay[key] = item
        self._records = deque(_SEQUENCE.unpack(row.sk)[0] for row in found)
        self._sequence = self._records[-1] + 1 if found else 0
        self._unfolded = overlay
        self._unfolded_bytes = sum(len(row.item) for row in found)
        self._folding = None
        return overlay

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
        commit): their change record, and a step of a fold in progress;
        ``checks``: rows it expects unchanged (the lease, redis/lease.py).
        Everything it changes in memory it changes before the write parks
        (PostgreSQL: redis/server.py); a write that fails leaves this
        keyspace to be dropped (the server stops or reloads)."""
        pending = self._pending
        if not pending:
            return
        self._pending = {}
        self.writes += 1
        targets: list[write_path.Target] = []
        decisions: list[Any] = []
        self._append_record(pending, targets, decisions)
        if self._folding is None and (
                self._unfolded_bytes >= self.fold_bytes or len(self._unfolded) >= limits.REDIS_LOG_FOLD_ROWS):
            self._folding, self._unfolded = self._unfolded, {}
            self._unfolded_bytes = 0
            self._folded_through = self._sequence - 1
        if self._folding is not None:
            self._fold_step(max(limits.REDIS_LOG_FOLD_STEP_ROWS, 2 * len(pending)), targets, decisions)
        write_path.write(self.database, targets, lambda rows, conflicted: decisions,
                         conflicts=write_path.RETRY_ALL, checks=checks)

    def _append_record(self, pending: dict[tuple[int, bytes, bytes], bytes | None],
                       targets: list[write_path.Target], decisions: list[Any]) -> None:
        """The change record of ``pending`` (one log row per about
        REDIS_LOG_RECORD_BYTES), and the changes remembered for the next fold."""
        heads_id = self.heads_id
        pack, header = _CHANGE.pack, _CHANGE.size
        parts: list[bytes] = []
        size = 0
        limit = limits.REDIS_LOG_RECORD_BYTES
        for (table_id, pk, sk), item in pending.items():
            length = -1 if item is None else len(item)
            parts += (pack(table_id != heads_id, len(pk), len(sk), length), pk, sk)
            if item is not None:
                parts.append(item)
            size += header + len(pk) + len(sk) + max(length, 0)
            if size >= limit:
                self._log_row(b"".join(parts), targets, decisions)
                self._unfolded_bytes += size
                parts, size = [], 0
        if parts:
            self._log_row(b"".join(parts), targets, decisions)
            self._unfolded_bytes += size
        self._unfolded.update(pending)

    def _log_row(self, record: bytes, targets: list[write_path.Target], decisions: list[Any]) -> None:
        sequence = self._sequence
        self._sequence = sequence + 1
        self._records.append(sequence)
        pk, sk = _log_key(sequence)
        targets.append(write_path.Target(self.log_id, pk, sk, None, False))
        decisions.append(Row(self._pk_hash(pk), pk, sk, record, len(record)))

    def _fold_step(self, budget: int, targets: list[write_path.Target], decisions: list[Any]) -> None:
        """Write up to ``budget`` rows of the fold in progress; once all are
        written, delete the records it covers, oldest first: whatever is
        left of them after a crash is then a suffix, whose last word on
        each row is the one the fold wrote."""
        folding = self._folding
        assert folding is not None
        unfolded = self._unfolded
        while folding and budget > 0:
            key, item = folding.popitem()
            if key in unfolded:
                continue  # changed since the fold began: a later record has it, the next fold writes it
            budget -= 1
            table_id, pk, sk = key
            targets.append(write_path.Target(table_id, pk, sk, None, False))
            decisions.append(write_path.DELETE if item is None else Row(self._pk_hash(pk), pk, sk, item, len(item)))
        if folding:
            return
        records, last = self._records, self._folded_through
        while records and records[0] <= last and budget > 0:
            pk, sk = _log_key(records.popleft())
            targets.append(write_path.Target(self.log_id, pk, sk, None, False))
            decisions.append(write_path.DELETE)
            budget -= 1
        if not records or records[0] > last:
            self._folding = None

    def _pk_hash(self, pk: bytes) -> int:
        hashes = self._hashes
        pk_hash = hashes.get(pk)
        if pk_hash is None:
            if len(hashes) > HASHES_CACHED:
                hashes.clear()
            pk_hash = hashes[pk] = partition_hash(pk)
        return pk_hash

    def discard_pending(self) -> None:
        self._pending = {}


def _ignore(db: int, key: bytes) -> None:
    return None


def _overlaid(table_id: int, rows: Iterator[Row],
              overlay: dict[tuple[int, bytes, bytes], bytes | None]) -> Iterator[tuple[bytes, bytes, bytes]]:
    """(pk, sk, item) of a table's rows as the log's records leave them."""
    for row in rows:
        if (table_id, row.pk, row.sk) not in overlay:
            yield row.pk, row.sk, row.item
    for (changed_table, pk, sk), item in overlay.items():
        if changed_table == table_id and item is not None:
            yield pk, sk, item


def _log_key(sequence: int) -> tuple[bytes, bytes]:
    """A record's partition key (its segment) and sort key (its sequence number)."""
    return b"log" + _SEQUENCE.pack(sequence >> LOG_SEGMENT_BITS), _SEQUENCE.pack(sequence)


def _changes(record: bytes, tables: tuple[int, int]) -> Iterator[tuple[tuple[int, bytes, bytes], bytes | None]]:
    """The ((table id, pk, sk), item or None) changes of one log row."""
    unpack, header = _CHANGE.unpack_from, _CHANGE.size
    offset, end = 0, len(record)
    while offset < end:
        table, pk_length, sk_length, item_length = unpack(record, offset)
        offset += header
        pk = record[offset:offset + pk_length]
        offset += pk_length
        sk = record[offset:offset + sk_length]
        offset += sk_length
        item: bytes | None = None
        if item_length >= 0:
            item = record[offset:offset + item_length]
            offset += item_length
        yield (tables[table], pk, sk), item


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
