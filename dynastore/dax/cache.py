"""DAX's two caches: items (by key) and queries (by the whole request).

Each is an LRU bounded in bytes whose entries expire after a TTL measured on
the database's clock (``Database.now``, which the admin clock route moves),
so tests can expire them without waiting. A miss of the item cache is cached
too (negative caching): ``None`` stands for "no such item".

Pure: no clock reads, no I/O. The caller passes ``now`` (epoch seconds).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from dynastore import limits

MISSING: Any = object()
"""``get``'s answer when the cache holds nothing (alive) for the key."""


class Cache:
    """An LRU of values with a TTL and a bound on their total size."""

    __slots__ = ("name", "ttl_seconds", "zero_ttl_keeps", "max_bytes", "_entries", "size_bytes",
                 "hits", "misses", "evictions", "expirations")

    def __init__(self, name: str, ttl_seconds: float, max_bytes: int = limits.DAX_CACHE_MAX_BYTES,
                 zero_ttl_keeps: bool = False) -> None:
        self.name = name
        self.ttl_seconds = ttl_seconds
        self.zero_ttl_keeps = zero_ttl_keeps
        """A TTL of 0 keeps entries until the LRU drops them (DAX's item
        cache: record-ttl-millis 0 is "infinite"), else turns the cache off."""
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Any, tuple[float, int, Any]] = OrderedDict()
        """key -> (expires at, size in bytes, value), least recently used first."""
        self.size_bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        """Entries dropped to stay under ``max_bytes``."""
        self.expirations = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Any, now: float, count_miss: bool = True) -> Any:
        """The live value for ``key`` (counted as a hit), else MISSING (a
        miss, unless ``count_miss`` is off: the caller asks again)."""
        entry = self._entries.get(key)
        if entry is None:
            self.misses += count_miss
            return MISSING
        if entry[0] <= now:
            self._drop(key, entry)
            self.expirations += 1
            self.misses += count_miss
            return MISSING
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[2]

    def put(self, key: Any, value: Any, size_bytes: int, now: float) -> None:
        """Keep ``value`` for the TTL, evicting the least recently used
        entries while the cache is over its bound. A value larger than the
        whole bound is not kept."""
        if not self.enabled:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.size_bytes -= old[1]
        if size_bytes > self.max_bytes:
            return
        expires = now + self.ttl_seconds if self.ttl_seconds > 0 else float("inf")
        self._entries[key] = (expires, size_bytes, value)
        self.size_bytes += size_bytes
        while self.size_bytes > self.max_bytes:
            oldest_key, oldest = next(iter(self._entries.items()))
            self._drop(oldest_key, oldest)
            self.evictions += 1

    @property
    def enabled(self) -> bool:
        return self.ttl_seconds > 0 or self.zero_ttl_keeps

    def discard(self, key: Any) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            self._drop(key, entry)

    def flush(self) -> int:
        """Empty the cache; returns how many entries it held."""
        count = len(self._entries)
        self._entries.clear()
        self.size_bytes = 0
        return count

    def _drop(self, key: Any, entry: tuple[float, int, Any]) -> None:
        del self._entries[key]
        self.size_bytes -= entry[1]

    def statistics(self) -> dict[str, Any]:
        return {
            "entries": len(self._entries),
            "sizeBytes": self.size_bytes,
            "maxBytes": self.max_bytes,
            "ttlMs": round(self.ttl_seconds * 1000),
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
            "expirations": self.expirations,
        }
