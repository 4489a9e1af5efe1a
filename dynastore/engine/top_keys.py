"""Most accessed and most throttled keys over recent windows, in bounded
memory (issue 7: Contributor Insights as DynamoDB's rules report them). Pure:
every function takes ``now`` (database time, epoch seconds).

DynamoDB's Contributor Insights rules count, per table or index, the keys of
the items that consume the most read and write capacity (PKC: partition key,
SKC: partition and sort key) and the keys that are throttled most often (PKT,
SKT: throttle events), at one-minute granularity. Here each rule is a
``WindowedTopKeys``: one bucket per minute of database time, each bucket a
space-saving counter (after Metwally, Agrawal and El Abbadi, 2005) holding
at most ``per_minute`` distinct keys, so memory never grows with the number
of keys. While a minute sees fewer distinct keys than the bound the counts
are exact; past it, the colder half is dropped and newcomers start from the
largest count dropped (an overestimate, never an underestimate, of any key
still held), which keeps the heavy hitters -- the keys worth reporting -- in
place.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from operator import itemgetter
from typing import Any

from dynastore import limits

SECONDS_PER_MINUTE = 60
WINDOW_MINUTES = limits.THROUGHPUT_TOP_KEYS_MINUTES
"""Minute buckets kept: the longest window that can be reported."""
KEYS_PER_MINUTE = limits.THROUGHPUT_TOP_KEYS_PER_MINUTE
"""Distinct keys one minute bucket of one rule holds."""
REPORT_WINDOWS = limits.THROUGHPUT_TOP_KEYS_WINDOWS_MINUTES
"""The windows reported (minutes)."""

Ranked = list[tuple[Any, float]]
"""(the key as shown, its count), largest first."""
KeyRef = tuple[Hashable, Any]
"""(a key's identity -- its encoding --, the key as shown)."""


BY_COUNT = itemgetter(1)


class SpaceSaving:
    """Counts per key in bounded memory: at ``capacity`` keys the smaller
    half is dropped at once (one sort per ``capacity // 2`` new keys, not a
    scan per key), and later newcomers start from the largest count dropped
    -- so a held key's count is never an underestimate, and a key that keeps
    coming back climbs past the ones that do not."""

    __slots__ = ("capacity", "counts", "labels", "floor")

    def __init__(self, capacity: int) -> None:
        self.capacity = max(2, capacity)
        self.counts: dict[Hashable, float] = {}
        self.labels: dict[Hashable, Any] = {}
        self.floor = 0.0

    def add(self, key: Hashable, label: Any, amount: float) -> None:
        counts = self.counts
        if key in counts:
            counts[key] += amount
            return
        if len(counts) >= self.capacity:
            self._prune()
        self.counts[key] = self.floor + amount
        self.labels[key] = label

    def _prune(self) -> None:
        ranked = sorted(self.counts.items(), key=BY_COUNT, reverse=True)
        keep = self.capacity // 2
        self.floor = max(self.floor, ranked[keep][1])
        self.counts = dict(ranked[:keep])
        self.labels = {key: self.labels[key] for key in self.counts}


class WindowedTopKeys:
    """One rule's counts in minute buckets of database time; the oldest
    bucket is dropped once it leaves the longest window."""

    __slots__ = ("minutes", "per_minute", "buckets")

    def __init__(self, minutes: int = WINDOW_MINUTES, per_minute: int = KEYS_PER_MINUTE) -> None:
        self.minutes = max(1, minutes)
        self.per_minute = per_minute
        self.buckets: deque[tuple[int, SpaceSaving]] = deque()

    def add(self, key: Hashable, label: Any, amount: float, now: float) -> None:
        minute = int(now // SECONDS_PER_MINUTE)
        buckets = self.buckets
        if not buckets or buckets[-1][0] < minute:
            buckets.append((minute, SpaceSaving(self.per_minute)))
            self._expire(minute)
        # A clock set back lands in the newest bucket: buckets stay in order.
        buckets[-1][1].add(key, label, amount)

    def _expire(self, minute: int) -> None:
        buckets = self.buckets
        while buckets and buckets[0][0] <= minute - self.minutes:
            buckets.popleft()

    def top(self, window_minutes: int, now: float, count: int) -> Ranked:
        """The ``count`` largest keys over the minutes (now - window, now]:
        counts summed over the window's buckets; ties by key, so the order
        is stable."""
        first = int(now // SECONDS_PER_MINUTE) - max(1, window_minutes) + 1
        totals: dict[Hashable, float] = {}
        labels: dict[Hashable, Any] = {}
        for minute, bucket in self.buckets:
            if minute < first:
                continue
            for key, value in bucket.counts.items():
                totals[key] = totals.get(key, 0.0) + value
                labels.setdefault(key, bucket.labels[key])
        ranked = sorted(totals.items(), key=lambda pair: (-pair[1], repr(pair[0])))
        return [(labels[key], value) for key, value in ranked[:count]]

    def size(self) -> int:
        """Keys held over all buckets (the memory bound's measure)."""
        return sum(len(bucket.counts) for _, bucket in self.buckets)


ACCESSED_PARTITION = "PKC"
THROTTLED_PARTITION = "PKT"
ACCESSED_ITEM = "SKC"
THROTTLED_ITEM = "SKT"
"""DynamoDB's rule kinds: partition key (PK) or partition+sort key (SK),
consumed capacity (C) or throttle events (T)."""


class KeyInsights:
    """The four rules of one table or index (the SK rules only when it has a
    sort key), as DynamoDB's Contributor Insights creates them."""

    __slots__ = ("rules",)

    def __init__(self, has_sort_key: bool) -> None:
        kinds = [ACCESSED_PARTITION, THROTTLED_PARTITION]
        if has_sort_key:
            kinds += [ACCESSED_ITEM, THROTTLED_ITEM]
        self.rules: dict[str, WindowedTopKeys] = {kind: WindowedTopKeys() for kind in kinds}

    def record(self, throttled: bool, partition: KeyRef, item: KeyRef | None, amount: float, now: float) -> None:
        """Count ``amount`` (consumed units, or one throttle event) for a
        partition key and, when known and the target has a sort key, the item."""
        rules = self.rules
        rule = rules[THROTTLED_PARTITION if throttled else ACCESSED_PARTITION]
        rule.add(partition[0], partition[1], amount, now)
        if item is not None:
            item_rule = rules.get(THROTTLED_ITEM if throttled else ACCESSED_ITEM)
            if item_rule is not None:
                item_rule.add(item[0], item[1], amount, now)

    def report(self, now: float, count: int, windows: tuple[int, ...] = REPORT_WINDOWS) -> dict[str, dict[int, Ranked]]:
        """rule kind -> window (minutes) -> the top ``count`` keys."""
        return {kind: {window: rule.top(window, now, count) for window in windows} for kind, rule in self.rules.items()}
