"""DynamoDB's throughput rules as pure data: token buckets, the partition
model, the throttling reasons. No clock, no database: every function takes
``now`` (epoch seconds from ``Database.now()``), so tests drive time.

The rules, as DynamoDB documents them (docs/throughput.md):

- A provisioned table (and each GSI) refills at its provisioned units per
  second and keeps up to 300 seconds of unused capacity (burst). A new
  bucket starts with one second's worth: a fresh table has saved nothing.
- An on-demand table serves up to twice its previous peak, at least its warm
  throughput (12,000 RRU / 4,000 WRU for a new table), never more than its
  OnDemandThroughput maximums.
- A table is split into partitions by partition-key hash: enough for its
  throughput (3,000 RCU + 1,000 WCU each) and its size (10 GB each). The
  count never shrinks. Each partition serves at most 3,000 read units and
  1,000 write units per second, whatever the table's limit: a hot key
  throttles a table that is far below its own limit.
- Admission: a request is refused when a bucket it needs is empty; what it
  consumed is charged afterwards (a bucket may go below zero, and the debt is
  repaid by refill), as DynamoDB charges the actual size read or written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dynastore import limits

BURST_SECONDS = limits.THROUGHPUT_BURST_SECONDS
"""DynamoDB retains up to five minutes of unused read and write capacity."""
PARTITION_READ_UNITS = float(limits.PARTITION_MAX_READ_UNITS_PER_SECOND)
PARTITION_WRITE_UNITS = float(limits.PARTITION_MAX_WRITE_UNITS_PER_SECOND)
PARTITION_MAX_BYTES = limits.PARTITION_MAX_BYTES
ON_DEMAND_PEAK_FACTOR = limits.ON_DEMAND_PEAK_FACTOR
"""On-demand tables accommodate up to double their previous peak instantly."""
CONTROL_PLANE_REQUESTS_PER_SECOND = limits.CONTROL_PLANE_REQUESTS_PER_SECOND
"""DynamoDB's control-plane throttle (bp-control-plane.html)."""
HASH_SPACE = 1 << 32
"""partition_hash values are 32-bit (dynastore.types.keys.partition_hash)."""

# ThrottlingReason.reason: ResourceType + OperationType + LimitType.
PROVISIONED_EXCEEDED = "ProvisionedThroughputExceeded"
KEY_RANGE_EXCEEDED = "KeyRangeThroughputExceeded"
MAX_ON_DEMAND_EXCEEDED = "MaxOnDemandThroughputExceeded"
ACCOUNT_LIMIT_EXCEEDED = "AccountLimitExceeded"


def throttling_reason(resource_type: str, operation_type: str, limit_type: str) -> str:
    """e.g. ("Table", "Write", KEY_RANGE_EXCEEDED) -> TableWriteKeyRangeThroughputExceeded."""
    return resource_type + operation_type + limit_type


class TokenBucket:
    """Units per second with a bounded saving (``burst_seconds`` of them)."""

    __slots__ = ("rate", "capacity", "tokens", "updated")

    def __init__(self, rate: float, burst_seconds: float, now: float) -> None:
        self.rate = rate
        self.capacity = rate * max(burst_seconds, 1.0)
        self.tokens = rate  # one second's worth: nothing saved yet
        self.updated = now

    def refill(self, now: float) -> None:
        elapsed = now - self.updated
        if elapsed > 0:
            self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
            self.updated = now

    def admits(self, now: float, pending: float = 0.0) -> bool:
        """True while there is capacity left (after ``pending`` tentative units)."""
        self.refill(now)
        return self.tokens - pending > 0

    def take(self, units: float, now: float) -> None:
        self.refill(now)
        self.tokens -= units

    def resize(self, rate: float, burst_seconds: float, now: float) -> None:
        """A new rate (UpdateTable); saved capacity is kept up to the new bound."""
        self.refill(now)
        self.rate = rate
        self.capacity = rate * max(burst_seconds, 1.0)
        self.tokens = min(self.tokens, self.capacity)


def partitions_for_throughput(read_units: float, write_units: float) -> int:
    """Partitions DynamoDB needs for a throughput: RCU/3000 + WCU/1000, rounded up."""
    needed = read_units / PARTITION_READ_UNITS + write_units / PARTITION_WRITE_UNITS
    return max(1, math.ceil(needed - 1e-9))


def partitions_for_size(size_bytes: int) -> int:
    return max(1, -(-size_bytes // PARTITION_MAX_BYTES))


def partition_count(read_units: float, write_units: float, size_bytes: int, previous: int = 0) -> int:
    """Partitions of a table: for its throughput and its size; never fewer than before."""
    return max(previous, partitions_for_throughput(read_units, write_units), partitions_for_size(size_bytes))


def partition_of(pk_hash: int, partitions: int) -> int:
    """The partition owning a 32-bit key hash: the hash space split evenly."""
    return (pk_hash * partitions) >> 32


@dataclass(frozen=True, slots=True)
class Limits:
    """What one table or GSI may consume per second, and how it is refused."""

    read_rate: float
    write_rate: float
    burst_seconds: float
    limit_type: str  # PROVISIONED_EXCEEDED or MAX_ON_DEMAND_EXCEEDED


def provisioned_limits(read_units: float, write_units: float) -> Limits:
    return Limits(float(read_units), float(write_units), BURST_SECONDS, PROVISIONED_EXCEEDED)


def on_demand_limits(
    warm_read: float,
    warm_write: float,
    peak_read: float,
    peak_write: float,
    max_read: float | None,
    max_write: float | None,
) -> Limits:
    """On-demand: up to double the previous peak (at least the warm
    throughput), capped by OnDemandThroughput; no burst beyond one second."""
    read = max(warm_read, ON_DEMAND_PEAK_FACTOR * peak_read)
    write = max(warm_write, ON_DEMAND_PEAK_FACTOR * peak_write)
    limit_type = ACCOUNT_LIMIT_EXCEEDED
    if max_read is not None and max_read > 0:
        read = min(read, float(max_read))
        limit_type = MAX_ON_DEMAND_EXCEEDED
    if max_write is not None and max_write > 0:
        write = min(write, float(max_write))
        limit_type = MAX_ON_DEMAND_EXCEEDED
    return Limits(read, write, 1.0, limit_type)


class RateWindow:
    """Units consumed in the current whole second, the last complete one,
    and the highest complete second seen (the on-demand peak)."""

    __slots__ = ("second", "current", "last", "peak")

    def __init__(self) -> None:
        self.second = -1
        self.current = 0.0
        self.last = 0.0
        self.peak = 0.0

    def add(self, units: float, now: float) -> None:
        self.roll(now)
        self.current += units

    def roll(self, now: float) -> None:
        second = int(now)
        if second != self.second:
            self.last = self.current if second == self.second + 1 else 0.0
            self.peak = max(self.peak, self.current)
            self.current = 0.0
            self.second = second

    def per_second(self, now: float) -> float:
        """The rate to show: the last complete second, or this one if higher."""
        self.roll(now)
        return max(self.last, self.current)
