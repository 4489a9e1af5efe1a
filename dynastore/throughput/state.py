"""The state of the throughput model: the buckets and counters of a table,
a GSI and a partition; per-operation and per-key statistics; the state of
one table (``TableState``) and ``TableStates``, which keeps each table's
state current (limits after an UpdateTable, partition splits)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.engine import throughput as rules
from dynastore.engine import top_keys
from dynastore.engine.schema import IndexDefinition, TableSchema

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.throughput.targets import Target

KEY_STATS_MAX = limits.THROUGHPUT_KEY_STATS_MAX
"""Keys tracked per table for the top-keys report; past it the coldest half is dropped."""
SIZE_RECHECK_SECONDS = limits.THROUGHPUT_SIZE_RECHECK_SECONDS
"""How often (database time) a table's size is re-read to split partitions."""


# --- state ---------------------------------------------------------------------------


class Resource:
    """A table or a GSI: its buckets and counters."""

    def __init__(self, kind: str, arn: str, limits: rules.Limits, now: float) -> None:
        self.kind = kind  # "Table" | "Index"
        self.arn = arn
        self.limits = limits
        self.read = rules.TokenBucket(limits.read_rate, limits.burst_seconds, now)
        self.write = rules.TokenBucket(limits.write_rate, limits.burst_seconds, now)
        self.read_window = rules.RateWindow()
        self.write_window = rules.RateWindow()
        self.read_units = 0.0
        self.write_units = 0.0
        self.throttled = 0

    def set_limits(self, limits: rules.Limits, now: float, since: float | None = None) -> None:
        """New limits, in force from ``since`` (when UpdateTable changed them;
        seen only at the next request) or from now."""
        if limits != self.limits:
            self.limits = limits
            at = now if since is None else min(max(since, self.write.updated, self.read.updated), now)
            for bucket, rate in ((self.read, limits.read_rate), (self.write, limits.write_rate)):
                bucket.resize(rate, limits.burst_seconds, at)
                bucket.refill(now)

    def charge(self, read: float, write: float, now: float) -> None:
        if read:
            self.read.take(read, now)
            self.read_window.add(read, now)
            self.read_units += read
        if write:
            self.write.take(write, now)
            self.write_window.add(write, now)
            self.write_units += write

    def report(self, now: float) -> dict[str, Any]:
        return {
            "ReadUnitsPerSecond": self.read_window.per_second(now),
            "WriteUnitsPerSecond": self.write_window.per_second(now),
            "ReadUnits": self.read_units,
            "WriteUnits": self.write_units,
            "ReadLimit": self.limits.read_rate,
            "WriteLimit": self.limits.write_rate,
            "ThrottledRequests": self.throttled,
        }


class Partition(Resource):
    """One partition of a table or a GSI: 3,000 read / 1,000 write units per
    second, no burst, refused as KeyRangeThroughputExceeded."""

    def __init__(self, arn: str, now: float, kind: str = "Table") -> None:
        limits = rules.Limits(
            rules.PARTITION_READ_UNITS, rules.PARTITION_WRITE_UNITS, 1.0, rules.KEY_RANGE_EXCEEDED
        )
        super().__init__(kind, arn, limits, now)


class IndexResource(Resource):
    """A GSI: its own buckets, and its own partitions by the GSI's partition
    key (sized like a table's), so a hot GSI key throttles -- and, for
    writes, back-pressures the base table -- while the GSI is under its limit."""

    def __init__(self, arn: str, limits: rules.Limits, now: float, partition_count: int) -> None:
        super().__init__("Index", arn, limits, now)
        self.partition_count = partition_count
        self.partitions: dict[int, Partition] = {}

    def partition(self, pk_hash: int, now: float) -> Partition:
        number = rules.partition_of(pk_hash, self.partition_count)
        found = self.partitions.get(number)
        if found is None:
            found = self.partitions[number] = Partition(self.arn, now, "Index")
        return found

    def resize(self, count: int) -> None:
        """A split: new hash ranges, fresh partition buckets (never fewer)."""
        if count > self.partition_count:
            self.partition_count = count
            self.partitions.clear()


@dataclass
class OperationStats:
    """Requests of one operation while the model is on, and their latency."""

    requests: int = 0
    throttled: int = 0
    seconds_total: float = 0.0
    seconds_max: float = 0.0

    def record(self, seconds: float) -> None:
        self.requests += 1
        self.seconds_total += seconds
        if seconds > self.seconds_max:
            self.seconds_max = seconds

    def report(self) -> dict[str, Any]:
        mean = self.seconds_total / self.requests if self.requests else 0.0
        return {
            "Requests": self.requests,
            "ThrottledRequests": self.throttled,
            "LatencyMeanMs": round(mean * 1000, 3),
            "LatencyMaxMs": round(self.seconds_max * 1000, 3),
        }


@dataclass
class KeyStats:
    key: dict[str, Any]
    read_units: float = 0.0
    write_units: float = 0.0
    throttled: int = 0


@dataclass
class TableState:
    schema: TableSchema
    table: Resource
    indexes: dict[str, IndexResource]
    partition_count: int
    partitions: dict[int, Partition] = field(default_factory=dict)
    keys: dict[bytes, KeyStats] = field(default_factory=dict)
    throttles: dict[str, int] = field(default_factory=dict)
    size_checked_at: float = 0.0
    limits_second: int = -1
    targets: dict[str, Target] = field(default_factory=dict)
    """Partition-key value (as on the wire) -> its Target (see _table_target)."""
    item_targets: dict[tuple[bytes | None, str], Target] = field(default_factory=dict)
    """(partition key, sort-key value as on the wire) -> its Target (see _item_target)."""
    insights: dict[str, top_keys.KeyInsights] = field(default_factory=dict)
    """Windowed top keys of the table ("") and of each index (by name)."""

    @property
    def on_demand(self) -> bool:
        return self.schema.billing_mode == "PAY_PER_REQUEST"

    def partition(self, pk_hash: int, now: float) -> Partition:
        number = rules.partition_of(pk_hash, self.partition_count)
        found = self.partitions.get(number)
        if found is None:
            found = self.partitions[number] = Partition(self.table.arn, now)
        return found

    def key_stats(self, pk: bytes, key: dict[str, Any]) -> KeyStats:
        stats = self.keys.get(pk)
        if stats is None:
            if len(self.keys) >= KEY_STATS_MAX:
                ranked = sorted(self.keys.items(), key=lambda kv: kv[1].read_units + kv[1].write_units)
                self.keys = dict(ranked[len(ranked) // 2:])
            stats = self.keys[pk] = KeyStats(key)
        return stats

    def key_insights(self, name: str, has_sort_key: bool) -> top_keys.KeyInsights:
        """The top-key rules of the table ("") or one of its indexes."""
        found = self.insights.get(name)
        if found is None:
            found = self.insights[name] = top_keys.KeyInsights(has_sort_key)
        return found


def table_limits(schema: TableSchema, table: Resource | None) -> rules.Limits:
    if schema.billing_mode != "PAY_PER_REQUEST":
        return rules.provisioned_limits(schema.read_capacity_units, schema.write_capacity_units)
    return rules.on_demand_limits(
        schema.warm_read_units, schema.warm_write_units,
        table.read_window.peak if table else 0.0, table.write_window.peak if table else 0.0,
        schema.on_demand_max_read_units, schema.on_demand_max_write_units,
    )


def index_limits(schema: TableSchema, index: Any, resource: Resource | None) -> rules.Limits:
    if schema.billing_mode != "PAY_PER_REQUEST":
        return rules.provisioned_limits(index.read_capacity_units, index.write_capacity_units)
    return rules.on_demand_limits(
        schema.warm_read_units, schema.warm_write_units,
        resource.read_window.peak if resource else 0.0, resource.write_window.peak if resource else 0.0,
        index.on_demand_max_read_units, index.on_demand_max_write_units,
    )


def changed_at(definition: Any) -> float | None:
    """When a table's (or GSI's) provisioned throughput last changed."""
    times = [t for t in (definition.last_increase_time, definition.last_decrease_time) if t is not None]
    return max(times) if times else None


def index_partitions(schema: TableSchema, index: IndexDefinition) -> int:
    """A GSI's partitions for its own throughput, as a table's are: its
    provisioned units (or, on demand, the table's warm throughput)."""
    if schema.billing_mode == "PAY_PER_REQUEST":
        return rules.partitions_for_throughput(schema.warm_read_units, schema.warm_write_units)
    return rules.partitions_for_throughput(index.read_capacity_units, index.write_capacity_units)


def throughput_partitions(schema: TableSchema) -> int:
    if schema.billing_mode == "PAY_PER_REQUEST":
        return rules.partitions_for_throughput(schema.warm_read_units, schema.warm_write_units)
    return rules.partitions_for_throughput(
        max(schema.read_capacity_units, schema.warm_read_units),
        max(schema.write_capacity_units, schema.warm_write_units),
    )




class TableStates:
    """The model's state of each table of one Database, kept current."""

    database: Database
    tables: dict[str, TableState]

    def state(self, schema: TableSchema, now: float) -> TableState:
        state = self.tables.get(schema.name)
        if state is None or state.schema.table_uuid != schema.table_uuid:
            # Buckets start when the table was created: idle time since then is saved burst.
            born = min(now, schema.creation_time)
            table = Resource("Table", schema.arn, table_limits(schema, None), born)
            state = TableState(schema, table, {}, throughput_partitions(schema))
            self.tables[schema.name] = state
            self._refresh(state, schema, now)
        elif state.schema is not schema or int(now) != state.limits_second:
            self._refresh(state, schema, now)
        return state

    def _refresh(self, state: TableState, schema: TableSchema, now: float) -> None:
        """Limits after an UpdateTable or a new second (on-demand peaks); partitions split."""
        state.schema = schema
        state.limits_second = int(now)
        state.table.set_limits(table_limits(schema, state.table), now, changed_at(schema))
        for index in schema.global_indexes:
            resource = state.indexes.get(index.name)
            if resource is None:
                arn = f"{schema.arn}/index/{index.name}"
                born = min(now, schema.creation_time)
                limits = index_limits(schema, index, None)
                state.indexes[index.name] = IndexResource(arn, limits, born, index_partitions(schema, index))
            else:
                resource.set_limits(index_limits(schema, index, resource), now, changed_at(index))
                resource.resize(index_partitions(schema, index))
        for name in [name for name in state.indexes if schema.index(name) is None]:
            del state.indexes[name]
        for name in [name for name in state.insights if name and schema.index(name) is None]:
            del state.insights[name]
        count = max(state.partition_count, throughput_partitions(schema))
        if now - state.size_checked_at >= SIZE_RECHECK_SECONDS or state.size_checked_at == 0.0:
            state.size_checked_at = now
            _, size_bytes = self.database.table_statistics(schema)
            count = rules.partition_count(0, 0, size_bytes, count)
            if state.indexes:
                self._split_indexes_by_size(state, schema)
        if count != state.partition_count:
            state.partition_count = count
            state.partitions.clear()  # split: new hash ranges, fresh partition buckets

    def _split_indexes_by_size(self, state: TableState, schema: TableSchema) -> None:
        """A GSI splits when it outgrows 10 GB per partition, like its table."""
        sizes = self.database.index_statistics(schema)
        for name, resource in state.indexes.items():
            size_bytes = sizes.get(name, (0, 0))[1]
            resource.resize(rules.partition_count(0, 0, size_bytes, resource.partition_count))
