"""The throughput model of one Database: capacity accounting on every
request, per-table/per-index/per-partition counters, and (opt-in) throttling
as DynamoDB does it. Off by default: ``database.throughput`` is None and
``ops.dispatch`` pays one attribute check. ``dynastore serve --throughput
enforce`` (or the admin endpoint, per table) turns it on (docs/throughput.md).

How it sees what a request consumed without touching every operation: while
on, ``Throughput.run`` calls the handler with ReturnConsumedCapacity=INDEXES
(the operations already compute capacity by DynamoDB's rules), charges the
reported units to the buckets, and gives the client the ConsumedCapacity it
asked for (or none). Before the handler runs, the request is refused when a
bucket it needs is empty -- DynamoDB refuses before it writes. Batch items
whose buckets are empty come back unprocessed instead.

Admin routes, as plain functions for the protocol layer:
``handle_admin_metrics(database, method, path, body) -> (status, answer)``
for ``GET /_dynastore/metrics`` and ``POST /_dynastore/throughput``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.engine import throughput as rules
from dynastore.engine import top_keys
from dynastore.engine.contributor_insights import settings as insights_settings
from dynastore.engine.indexes import encode_component
from dynastore.engine.schema import IndexDefinition, TableSchema
from dynastore.errors import (
    DYNAMODB,
    ConditionalCheckFailedException,
    DynamoDBError,
    ProvisionedThroughputExceededException,
    ThrottlingException,
    TransactionCanceledException,
)
from dynastore.types.attribute_value import validate_item
from dynastore.types.keys import encode_attribute, partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

ENFORCE = "enforce"
OBSERVE = "observe"
OFF = "off"
MODES = (OFF, OBSERVE, ENFORCE)
ADMIN_METRICS_PATH = "/_dynastore/metrics"
ADMIN_THROUGHPUT_PATH = "/_dynastore/throughput"
ADMIN_THROUGHPUT_PATHS = (ADMIN_METRICS_PATH, ADMIN_THROUGHPUT_PATH)

READ_OPERATIONS = frozenset(("GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"))
WRITE_OPERATIONS = frozenset(("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"))
STREAM_OPERATIONS = frozenset(("DescribeStream", "GetShardIterator", "GetRecords", "ListStreams"))
KEY_STATS_MAX = limits.THROUGHPUT_KEY_STATS_MAX
"""Keys tracked per table for the top-keys report; past it the coldest half is dropped."""
TOP_KEYS = limits.THROUGHPUT_TOP_KEYS
TARGET_CACHE_MAX = limits.THROUGHPUT_TARGET_CACHE_MAX
"""Partition-key encodings cached per table; the cache starts over past it."""
SIZE_RECHECK_SECONDS = limits.THROUGHPUT_SIZE_RECHECK_SECONDS
"""How often (database time) a table's size is re-read to split partitions."""

MESSAGE_TABLE_PROVISIONED = ProvisionedThroughputExceededException.default_message or ""
MESSAGE_INDEX_PROVISIONED = (
    "The level of configured provisioned throughput for one or more global secondary indexes "
    "of the table was exceeded. Consider increasing your provisioning level for the "
    "under-provisioned global secondary indexes with the UpdateTable API"
)
MESSAGE_TABLE_ON_DEMAND = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
    "scaling your table or index so please try again shortly. If exceptions persist, check if "
    "you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-partition-key-design.html"
)
MESSAGE_INDEX_ON_DEMAND = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)


class DataPlaneThrottlingException(ThrottlingException):
    """ThrottlingException of an on-demand table, in DynamoDB's namespace."""

    namespace = DYNAMODB

    @classmethod
    def type_name(cls) -> str:
        return "ThrottlingException"


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


# --- a throttled request ---------------------------------------------------------------


@dataclass
class Refusal:
    """Why one request (or one batch item) may not run now."""

    resource: Resource
    reason: str
    on_demand: bool

    def wire(self) -> dict[str, str]:
        return {"reason": self.reason, "resource": self.resource.arn}


def throttle_error(refusals: list[Refusal]) -> DynamoDBError:
    first = refusals[0]
    fields = {"ThrottlingReasons": [refusal.wire() for refusal in refusals]}
    index = first.resource.kind == "Index"
    if first.on_demand:
        return DataPlaneThrottlingException(MESSAGE_INDEX_ON_DEMAND if index else MESSAGE_TABLE_ON_DEMAND, **fields)
    return ProvisionedThroughputExceededException(
        MESSAGE_INDEX_PROVISIONED if index else MESSAGE_TABLE_PROVISIONED, **fields
    )


def cancellation_reason(refusal: Refusal | None) -> dict[str, Any]:
    if refusal is None:
        return {"Code": "None"}
    index = refusal.resource.kind == "Index"
    if refusal.on_demand:
        return {"Code": "ThrottlingError", "Message": MESSAGE_INDEX_ON_DEMAND if index else MESSAGE_TABLE_ON_DEMAND}
    return {
        "Code": "ProvisionedThroughputExceeded",
        "Message": MESSAGE_INDEX_PROVISIONED if index else MESSAGE_TABLE_PROVISIONED,
    }


@dataclass(slots=True)
class IndexKey:
    """An item's (or a Query's) key in one secondary index: what the index's
    partitions and top keys are charged by."""

    name: str
    resource: IndexResource | None  # None for an LSI (it shares the table's capacity)
    pk_hash: int
    partition: top_keys.KeyRef
    item: top_keys.KeyRef | None  # partition+sort key, when the index has a sort key


@dataclass(slots=True)
class Target:
    """One item a request touches: its table state and partition key; the
    item's full key (``item``, tables with a sort key) and its keys in the
    indexes the request reads or writes (``index_keys``)."""

    state: TableState
    pk: bytes | None
    pk_hash: int | None
    key: dict[str, Any] | None
    item: top_keys.KeyRef | None = None
    index_keys: tuple[IndexKey, ...] = ()


def _components(attributes: tuple[Any, ...], item: dict[str, Any]) -> bytes | None:
    """The key encoding of ``attributes`` in ``item``; None when one is missing."""
    parts = []
    for attribute in attributes:
        value = item.get(attribute.name)
        if not isinstance(value, dict) or attribute.type not in value or value[attribute.type] == "":
            return None
        parts.append(encode_component(attribute.type, value))
    return b"".join(parts)


def index_key(index: IndexDefinition, resource: IndexResource | None, item: dict[str, Any]) -> IndexKey | None:
    """``item``'s key in ``index`` (None when the item is not in the index)."""
    try:
        pk = _components(index.partition_keys, item)
        sort = _components(index.sort_keys, item) if index.sort_keys else b""
    except Exception:  # noqa: BLE001 -- a malformed value: the handler reports it
        return None
    if pk is None or sort is None:
        return None
    partition_label = {attribute.name: item[attribute.name] for attribute in index.partition_keys}
    full: top_keys.KeyRef | None = None
    if index.sort_keys:
        label = dict(partition_label)
        label.update((attribute.name, item[attribute.name]) for attribute in index.sort_keys)
        full = ((pk, sort), label)
    return IndexKey(index.name, resource, partition_hash(pk), (pk, partition_label), full)


def index_partition_key(
    index: IndexDefinition, resource: IndexResource | None, values: tuple[Any, ...]
) -> IndexKey | None:
    """The key a Query on ``index`` reads: its partition-key values."""
    item = {attribute.name: value for attribute, value in zip(index.partition_keys, values, strict=False)}
    pk = _components(index.partition_keys, item)
    if pk is None:
        return None
    return IndexKey(index.name, resource, partition_hash(pk), (pk, item), None)


# --- the per-database model --------------------------------------------------------------


class Throughput:
    """Accounting and (where enforced) throttling for one Database."""

    def __init__(self, database: Database, mode: str = ENFORCE) -> None:
        self.database = database
        self.mode = mode
        """Server-wide: ENFORCE throttles every table; OBSERVE only counts."""
        self.table_modes: dict[str, str] = {}
        self.tables: dict[str, TableState] = {}
        self.control = rules.TokenBucket(rules.CONTROL_PLANE_REQUESTS_PER_SECOND, 1.0, database.now())
        self.control_throttled = 0
        self.operations: dict[str, OperationStats] = {}

    def enforced(self, table_name: str) -> bool:
        return self.table_modes.get(table_name, self.mode) == ENFORCE

    # --- state ----------------------------------------------------------------------
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

    # --- dispatch ----------------------------------------------------------------------
    def run(self, operation: str, handler: Callable[..., Any], request: dict[str, Any]) -> Any:
        """Run one operation under the model (called by ops.dispatch when on),
        counting its requests, throttles and latency."""
        stats = self.operations.get(operation)
        if stats is None:
            stats = self.operations[operation] = OperationStats()
        started = time.perf_counter()
        try:
            return self._run(operation, handler, request)
        except (ProvisionedThroughputExceededException, ThrottlingException):
            stats.throttled += 1
            raise
        except TransactionCanceledException as error:
            codes = {reason.get("Code") for reason in error.extra_fields.get("CancellationReasons", ())}
            if codes & {"ProvisionedThroughputExceeded", "ThrottlingError"}:
                stats.throttled += 1
            raise
        finally:
            stats.record(time.perf_counter() - started)

    def _run(self, operation: str, handler: Callable[..., Any], request: dict[str, Any]) -> Any:
        database = self.database
        if operation not in READ_OPERATIONS and operation not in WRITE_OPERATIONS:
            if operation not in STREAM_OPERATIONS and self.mode == ENFORCE:
                self._control_plane(database.now())
            return handler(database, request)
        asked = request.get("ReturnConsumedCapacity")
        inner = dict(request)
        inner["ReturnConsumedCapacity"] = "INDEXES"
        write = operation in WRITE_OPERATIONS
        if operation == "BatchWriteItem":
            return self._batch_write(handler, inner, asked)
        if operation == "BatchGetItem":
            return self._batch_get(handler, inner, asked)
        if operation in ("TransactWriteItems", "TransactGetItems"):
            return self._transaction(operation, handler, inner, asked)
        return self._single(operation, handler, inner, asked, write)

    def _control_plane(self, now: float) -> None:
        if not self.control.admits(now):
            self.control_throttled += 1
            raise ThrottlingException()
        self.control.take(1.0, now)

    def _single(self, operation: str, handler: Callable[..., Any], inner: dict[str, Any], asked: Any, write: bool) -> Any:
        now = self.database.now()
        target = self._target(operation, inner)
        index_name = inner.get("IndexName") if operation in ("Query", "Scan") else None
        index_name = index_name if isinstance(index_name, str) else None
        if target is not None and not self._admits(target, write, now, index_name):
            refusals = self._refusals(target, write, now, index_name=index_name)
            if refusals:
                self._count_throttle(target, refusals)
                raise throttle_error(refusals)
        try:
            response = handler(self.database, inner)
        except (ConditionalCheckFailedException, TransactionCanceledException) as error:
            units = getattr(error, "write_units_consumed", 0.0)
            if target is not None and units:
                self._charge(target, 0.0, units, {}, now)
            raise
        response, capacity = split_capacity(response, asked)
        if target is not None and capacity:
            if operation == "UpdateItem" and not target.index_keys and target.state.schema.indexes:
                target = self._created_item_target(target)
            self._charge_capacity(target, capacity[0], write, now)
        return response

    def _created_item_target(self, target: Target) -> Target:
        """An UpdateItem that created its item: the item's index keys, read
        after the write (before it, there was nothing to read them from), so
        its index units reach the index partitions and top keys."""
        if target.pk is None:
            return target
        sk = target.item[0][1] if target.item is not None else b""  # type: ignore[index]
        item = self._stored_item(target.state.schema, target.pk, sk)
        if item is None:
            return target
        index_keys = self._index_keys(target.state, item)
        return Target(target.state, target.pk, target.pk_hash, target.key, target.item, index_keys)

    # --- admission -------------------------------------------------------------------
    def _admits(self, target: Target, write: bool, now: float, index_name: str | None) -> bool:
        """The common case, cheaply: every bucket the request needs has capacity
        (``_refusals`` then says which do not)."""
        state = target.state
        if not self.enforced(state.schema.name):
            return True
        resource = state.indexes.get(index_name, state.table) if index_name else state.table
        if not (resource.write if write else resource.read).admits(now):
            return False
        if target.pk_hash is not None:
            partition = state.partition(target.pk_hash, now)
            if not (partition.write if write else partition.read).admits(now):
                return False
        if write:
            for index in state.indexes.values():
                if not index.write.admits(now):
                    return False
        for key in target.index_keys:
            if key.resource is not None:
                partition = key.resource.partition(key.pk_hash, now)
                if not (partition.write if write else partition.read).admits(now):
                    return False
        return True

    def _refusals(
        self,
        target: Target,
        write: bool,
        now: float,
        pending: dict[int, float] | None = None,
        index_name: str | None = None,
    ) -> list[Refusal]:
        """The empty buckets a request on ``target`` needs (none when not enforced)."""
        state = target.state
        if not self.enforced(state.schema.name):
            return []
        on_demand = state.on_demand
        operation_type = "Write" if write else "Read"
        refusals: list[Refusal] = []
        pending = pending if pending is not None else {}

        def check(resource: Resource, limit_type: str) -> None:
            bucket = resource.write if write else resource.read
            if not bucket.admits(now, pending.get(id(bucket), 0.0)):
                reason = rules.throttling_reason(resource.kind, operation_type, limit_type)
                refusals.append(Refusal(resource, reason, on_demand))

        # A read of a GSI needs the GSI's capacity; of the table or an LSI, the table's.
        resource = state.indexes.get(index_name, state.table) if index_name else state.table
        check(resource, resource.limits.limit_type)
        if target.pk_hash is not None:
            check(state.partition(target.pk_hash, now), rules.KEY_RANGE_EXCEEDED)
        if write:
            for resource in state.indexes.values():
                check(resource, resource.limits.limit_type)
        for key in target.index_keys:  # the GSI partitions of the item's (or Query's) GSI keys
            if key.resource is not None:
                check(key.resource.partition(key.pk_hash, now), rules.KEY_RANGE_EXCEEDED)
        return refusals

    def _count_throttle(self, target: Target, refusals: list[Refusal]) -> None:
        """Throttle counters; a throttle event for the table's key and for the
        key of each index whose capacity refused (PKT/SKT)."""
        state = target.state
        now = self.database.now()
        for refusal in refusals:
            refusal.resource.throttled += 1
            state.throttles[refusal.reason] = state.throttles.get(refusal.reason, 0) + 1
        if target.pk is not None and target.key is not None:
            state.key_stats(target.pk, target.key).throttled += 1
            insights = state.key_insights("", state.schema.sort_key is not None)
            insights.record(True, (target.pk, target.key), target.item, 1.0, now)
        refused = {refusal.resource.arn for refusal in refusals if refusal.resource.kind == "Index"}
        for key in target.index_keys:
            if key.resource is not None and key.resource.arn in refused:
                self._index_insights(state, key.name).record(True, key.partition, key.item, 1.0, now)

    @staticmethod
    def _index_insights(state: TableState, name: str) -> top_keys.KeyInsights:
        index = state.schema.index(name)
        return state.key_insights(name, index is not None and bool(index.sort_keys))

    # --- charging -------------------------------------------------------------------------
    def _charge_capacity(self, target: Target, capacity: dict[str, Any], write: bool, now: float, share: float = 1.0) -> None:
        """Charge one ConsumedCapacity (INDEXES shape): table and LSIs to the
        table and the partition, each GSI to its own buckets."""
        table_units = capacity.get("Table", {}).get("CapacityUnits", 0.0)
        lsi_units = {
            name: per_index.get("CapacityUnits", 0.0)
            for name, per_index in (capacity.get("LocalSecondaryIndexes") or {}).items()
        }
        table_units += sum(lsi_units.values())
        gsi_units = {
            name: per_index.get("CapacityUnits", 0.0)
            for name, per_index in (capacity.get("GlobalSecondaryIndexes") or {}).items()
        }
        if write:
            self._charge(target, 0.0, table_units * share, gsi_units, now, share)
        else:
            self._charge(target, table_units * share, 0.0, gsi_units, now, share, gsi_write=False)
        if target.index_keys:
            self._charge_index_keys(target, gsi_units, lsi_units, write, now, share)

    def _charge(
        self,
        target: Target,
        read: float,
        write: float,
        gsi_units: dict[str, float],
        now: float,
        share: float = 1.0,
        gsi_write: bool = True,
    ) -> None:
        """Charge the table, the partition and the key; ``gsi_units`` (times
        ``share``) to each GSI's read or write bucket."""
        state = target.state
        if read or write:
            state.table.charge(read, write, now)
            if target.pk_hash is not None:
                state.partition(target.pk_hash, now).charge(read, write, now)
            if target.pk is not None and target.key is not None:
                stats = state.key_stats(target.pk, target.key)
                stats.read_units += read
                stats.write_units += write
                insights = state.key_insights("", state.schema.sort_key is not None)
                insights.record(False, (target.pk, target.key), target.item, read + write, now)
        for name, units in gsi_units.items():
            resource = state.indexes.get(name)
            if resource is not None and units:
                scaled = units * share
                resource.charge(0.0 if gsi_write else scaled, scaled if gsi_write else 0.0, now)

    def _charge_index_keys(
        self,
        target: Target,
        gsi_units: dict[str, float],
        lsi_units: dict[str, float],
        write: bool,
        now: float,
        share: float,
    ) -> None:
        """Each index's units to the index partition of the item's (or the
        Query's) key in it, and to the index's top keys (PKC/SKC)."""
        state = target.state
        for key in target.index_keys:
            units = (gsi_units.get(key.name) or lsi_units.get(key.name) or 0.0) * share
            if not units:
                continue
            if key.resource is not None:
                partition = key.resource.partition(key.pk_hash, now)
                partition.charge(0.0 if write else units, units if write else 0.0, now)
            self._index_insights(state, key.name).record(False, key.partition, key.item, units, now)

    # --- targets -------------------------------------------------------------------------
    def _table_target(self, table_name: Any, key: Any, write: bool = False, full_item: bool = False) -> Target | None:
        """The table state and partition of a key (None when the request is
        malformed: the handler then answers with DynamoDB's error); with the
        item's sort key, and for a write on a table with indexes, the item's
        keys in its indexes (``full_item``: ``key`` is the whole new item)."""
        base = self._partition_target(table_name, key)
        if base is None or base.pk is None:
            return base
        schema = base.state.schema
        if schema.sort_key is None and not (write and schema.indexes):
            return base  # the common case: the cached target as it is
        return self._item_target(base, key, write, full_item)

    def _partition_target(self, table_name: Any, key: Any) -> Target | None:
        schema = self.database.tables.get(table_name) if isinstance(table_name, str) else None
        if schema is None:
            try:
                schema = self.database.table(table_name)  # an ARN, or DynamoDB's error
            except DynamoDBError:
                return None
        state = self.state(schema, self.database.now())
        if not isinstance(key, dict):
            return Target(state, None, None, None)
        name = schema.partition_key.name
        value = key.get(name)
        # Keys repeat (that is what makes them hot): their encoding and hash are cached.
        text = value.get(schema.partition_key.type) if isinstance(value, dict) and len(value) == 1 else None
        cached = state.targets.get(text) if isinstance(text, str) else None
        if cached is not None:
            return cached
        try:
            partition_key = validate_item({name: value})
            pk = encode_attribute(schema.partition_key.type, partition_key[name])
        except Exception:  # noqa: BLE001 -- a bad key is the handler's to report
            return Target(state, None, None, None)
        target = Target(state, pk, partition_hash(pk), partition_key)
        if isinstance(text, str):
            if len(state.targets) >= TARGET_CACHE_MAX:
                state.targets.clear()
            state.targets[text] = target
        return target

    def _item_target(self, base: Target, key: dict[str, Any], write: bool, full_item: bool) -> Target:
        """``base`` (a partition) with the item's full key and index keys.
        Without index keys to find, the result depends on the key alone and
        is cached, as partition targets are (hot items repeat too)."""
        state = base.state
        sort_key = state.schema.sort_key
        if sort_key is None or (write and state.schema.indexes):
            return self._new_item_target(base, key, write, full_item)
        value = key.get(sort_key.name)
        text = value.get(sort_key.type) if isinstance(value, dict) and len(value) == 1 else None
        if not isinstance(text, str):
            return self._new_item_target(base, key, write, full_item)
        cached = state.item_targets.get((base.pk, text))
        if cached is None:
            cached = self._new_item_target(base, key, write, full_item)
            if len(state.item_targets) >= TARGET_CACHE_MAX:
                state.item_targets.clear()
            state.item_targets[(base.pk, text)] = cached
        return cached

    def _new_item_target(self, base: Target, key: dict[str, Any], write: bool, full_item: bool) -> Target:
        """The item's full key (encoded, and as shown) and its index keys (for
        a write on a table with indexes: from the new item, or the stored one)."""
        state = base.state
        schema = state.schema
        item_ref: top_keys.KeyRef | None = None
        sk = b""
        if schema.sort_key is not None:
            value = key.get(schema.sort_key.name)
            try:
                sk = encode_attribute(schema.sort_key.type, value)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 -- a bad key is the handler's to report
                return base
            label = dict(base.key or {})
            label[schema.sort_key.name] = value
            item_ref = ((base.pk, sk), label)
        index_keys: tuple[IndexKey, ...] = ()
        if write and schema.indexes and base.pk is not None:
            item = key if full_item else self._stored_item(schema, base.pk, sk)
            if item is not None:
                index_keys = self._index_keys(state, item)
        return Target(state, base.pk, base.pk_hash, base.key, item_ref, index_keys)

    def _stored_item(self, schema: TableSchema, pk: bytes, sk: bytes) -> dict[str, Any] | None:
        """The item a write replaces or deletes (its index keys decide which
        index partitions the write lands on); read only for tables with indexes."""
        row = self.database.storage.get(schema.table_id, pk, sk)
        if row is None:
            return None
        item: dict[str, Any] = orjson.loads(row.item)
        return item

    @staticmethod
    def _index_keys(state: TableState, item: dict[str, Any]) -> tuple[IndexKey, ...]:
        found = []
        for index in state.schema.indexes:
            key = index_key(index, state.indexes.get(index.name), item)
            if key is not None:
                found.append(key)
        return tuple(found)

    def _target(self, operation: str, request: dict[str, Any]) -> Target | None:
        table_name = request.get("TableName")
        if operation == "GetItem":
            return self._table_target(table_name, request.get("Key"))
        if operation in ("UpdateItem", "DeleteItem"):
            return self._table_target(table_name, request.get("Key"), write=True)
        if operation == "PutItem":
            return self._table_target(table_name, request.get("Item"), write=True, full_item=True)
        if operation == "Query":
            if request.get("IndexName") is None:
                return self._table_target(table_name, self._query_partition(request))
            return self._index_query_target(table_name, request)
        return self._table_target(table_name, None)

    def _index_query_target(self, table_name: Any, request: dict[str, Any]) -> Target | None:
        """A Query on an index: the index partition it reads (and, for an LSI,
        whose partition key is the table's, the table partition too)."""
        target = self._table_target(table_name, None)
        if target is None:
            return None
        schema = target.state.schema
        index = schema.index(request.get("IndexName"))  # type: ignore[arg-type]
        values = self._index_query_partition(schema, index, request) if index is not None else None
        if index is None or values is None:
            return target
        if not index.is_global:
            target = self._table_target(table_name, {schema.partition_key.name: values[0]}) or target
        key = index_partition_key(index, target.state.indexes.get(index.name), values)
        if key is None:
            return target
        return Target(target.state, target.pk, target.pk_hash, target.key, None, (key,))

    def _index_query_partition(
        self, schema: TableSchema, index: IndexDefinition, request: dict[str, Any]
    ) -> tuple[Any, ...] | None:
        """The partition-key values of a Query on an index (from its key condition)."""
        from dynastore.expressions import ExpressionContext
        from dynastore.ops import query

        try:
            context = ExpressionContext(
                request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
            )
            values = query._index_key_range(schema, index, request, request.get("KeyConditionExpression"), context)[0]
            return tuple(values)
        except Exception:  # noqa: BLE001 -- the handler reports a bad condition
            return None

    def _query_partition(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The partition-key value of a table Query (from its key condition)."""
        from dynastore.expressions import ExpressionContext
        from dynastore.ops import query

        try:
            schema = self.database.table(request.get("TableName"))  # type: ignore[arg-type]
            context = ExpressionContext(
                request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
            )
            key_range = query._key_range(schema, request, request.get("KeyConditionExpression"), context)
            return {schema.partition_key.name: key_range.partition_value}
        except Exception:  # noqa: BLE001 -- the handler reports a bad condition
            return None

    # --- batches ---------------------------------------------------------------------------
    def _batch_write(self, handler: Callable[..., Any], inner: dict[str, Any], asked: Any) -> Any:
        now = self.database.now()
        request_items = inner.get("RequestItems")
        if not isinstance(request_items, dict):
            return finish_dict(handler(self.database, inner), asked)
        kept: dict[str, list[Any]] = {}
        held: dict[str, list[Any]] = {}
        targets: dict[str, list[Target]] = {}
        refused_any: list[Refusal] = []
        pending: dict[int, float] = {}
        for table_name, writes in request_items.items():
            for write in writes or []:
                body = (write or {}).get("PutRequest") or (write or {}).get("DeleteRequest") or {}
                full_item = "Item" in body
                target = self._table_target(table_name, body.get("Item", body.get("Key")), True, full_item)
                refusals = self._refusals(target, True, now, pending) if target is not None else []
                if refusals:
                    self._count_throttle(target, refusals)  # type: ignore[arg-type]
                    refused_any.extend(refusals)
                    held.setdefault(table_name, []).append(write)
                    continue
                if target is not None:
                    self._reserve(target, True, pending, now)
                    targets.setdefault(table_name, []).append(target)
                kept.setdefault(table_name, []).append(write)
        if held and not kept:
            raise throttle_error(refused_any)
        inner["RequestItems"] = kept
        response = handler(self.database, inner)
        self._charge_batch(response.get("ConsumedCapacity") or [], targets, True, now)
        unprocessed = response.setdefault("UnprocessedItems", {})
        for table_name, writes in held.items():
            unprocessed.setdefault(table_name, []).extend(writes)
        return finish_dict(response, asked)

    def _reserve(self, target: Target, write: bool, pending: dict[int, float], now: float, units: float = 1.0) -> None:
        """Tentative units of an admitted batch item (its minimum cost), so
        one batch cannot overdraw a bucket that had a single unit left."""
        buckets = [target.state.table.write if write else target.state.table.read]
        if target.pk_hash is not None:
            partition = target.state.partition(target.pk_hash, now)
            buckets.append(partition.write if write else partition.read)
        if write:
            buckets.extend(resource.write for resource in target.state.indexes.values())
        for key in target.index_keys:
            if key.resource is not None:
                partition = key.resource.partition(key.pk_hash, now)
                buckets.append(partition.write if write else partition.read)
        for bucket in buckets:
            pending[id(bucket)] = pending.get(id(bucket), 0.0) + units

    def _charge_batch(self, capacities: list[Any], targets: dict[str, list[Target]], write: bool, now: float) -> None:
        """Each table's units split evenly over its items (and their partitions)."""
        for capacity in capacities:
            if not isinstance(capacity, dict):
                continue
            table_targets = targets.get(capacity.get("TableName", ""), [])
            if not table_targets:
                continue
            share = 1.0 / len(table_targets)
            for target in table_targets:
                self._charge_capacity(target, capacity, write, now, share)

    def _batch_get(self, handler: Callable[..., Any], inner: dict[str, Any], asked: Any) -> Any:
        now = self.database.now()
        request_items = inner.get("RequestItems")
        if not isinstance(request_items, dict):
            return finish_bytes_full(handler(self.database, inner), asked)
        kept: dict[str, Any] = {}
        held: dict[str, Any] = {}
        targets: dict[str, list[Target]] = {}
        refused_any: list[Refusal] = []
        pending: dict[int, float] = {}
        for table_name, entry in request_items.items():
            keys = (entry or {}).get("Keys") or []
            admitted, refused = [], []
            minimum = 1.0 if (entry or {}).get("ConsistentRead") else 0.5
            for key in keys:
                target = self._table_target(table_name, key)
                refusals = self._refusals(target, False, now, pending) if target is not None else []
                if refusals:
                    self._count_throttle(target, refusals)  # type: ignore[arg-type]
                    refused_any.extend(refusals)
                    refused.append(key)
                    continue
                if target is not None:
                    self._reserve(target, False, pending, now, minimum)
                    targets.setdefault(table_name, []).append(target)
                admitted.append(key)
            if admitted or not keys:
                kept[table_name] = dict(entry, Keys=admitted)
            if refused:
                held[table_name] = dict(entry, Keys=refused)
        if held and not kept:
            raise throttle_error(refused_any)
        inner["RequestItems"] = kept
        body = orjson.loads(handler(self.database, inner))
        self._charge_batch(body.get("ConsumedCapacity") or [], targets, False, now)
        unprocessed = body.setdefault("UnprocessedKeys", {})
        for table_name, entry in held.items():
            if table_name in unprocessed:
                unprocessed[table_name]["Keys"].extend(entry["Keys"])
            else:
                unprocessed[table_name] = entry
        return orjson.dumps(strip_capacity(body, asked))

    # --- transactions ----------------------------------------------------------------------
    def _transaction(self, operation: str, handler: Callable[..., Any], inner: dict[str, Any], asked: Any) -> Any:
        now = self.database.now()
        write = operation == "TransactWriteItems"
        targets: list[Target | None] = []
        for element in inner.get("TransactItems") or []:
            kind, action = next(iter(element.items()), ("", {})) if isinstance(element, dict) and element else ("", {})
            action = action if isinstance(action, dict) else {}
            changes = kind in ("Put", "Update", "Delete")
            key = action.get("Key", action.get("Item"))
            targets.append(self._table_target(action.get("TableName"), key, changes, kind == "Put"))
        refusals_by_action = [
            (self._refusals(target, write, now) if target is not None else []) for target in targets
        ]
        if any(refusals_by_action):
            from dynastore.engine.transactions import cancelled

            for target, refusals in zip(targets, refusals_by_action, strict=True):
                if refusals and target is not None:
                    self._count_throttle(target, refusals)
            raise cancelled([cancellation_reason(refusals[0] if refusals else None) for refusals in refusals_by_action])
        by_table: dict[str, list[Target]] = {}
        for target in targets:
            if target is not None:
                by_table.setdefault(target.state.schema.name, []).append(target)
        try:
            response = handler(self.database, inner)
        except TransactionCanceledException as error:
            units = getattr(error, "write_units_consumed", 0.0)
            present = [target for target in targets if target is not None]
            for target in present:
                self._charge(target, 0.0, units / len(present), {}, now)
            raise
        if isinstance(response, bytes):
            body = orjson.loads(response)
            self._charge_batch(body.get("ConsumedCapacity") or [], by_table, write, now)
            return orjson.dumps(strip_capacity(body, asked))
        self._charge_batch(response.get("ConsumedCapacity") or [], by_table, write, now)
        return finish_dict(response, asked)

    # --- metrics -----------------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        now = self.database.now()
        tables = {}
        for name, state in self.tables.items():
            if name not in self.database.tables:
                continue
            tables[name] = self.table_metrics(state, now)
        return {
            "Mode": self.mode,
            "TableModes": dict(self.table_modes),
            "ControlPlaneThrottledRequests": self.control_throttled,
            "Operations": {name: stats.report() for name, stats in sorted(self.operations.items())},
            "Tables": tables,
        }

    def table_metrics(self, state: TableState, now: float) -> dict[str, Any]:
        ranked = sorted(state.keys.values(), key=lambda s: s.read_units + s.write_units, reverse=True)
        throttled = sorted((s for s in state.keys.values() if s.throttled), key=lambda s: s.throttled, reverse=True)
        return {
            "BillingMode": state.schema.billing_mode,
            "Enforced": self.enforced(state.schema.name),
            "PartitionCount": state.partition_count,
            **state.table.report(now),
            "ThrottlesByReason": dict(state.throttles),
            "Indexes": {name: index_report(resource, now) for name, resource in state.indexes.items()},
            "Partitions": partitions_report(state.partitions, state.partition_count, now),
            "TopKeys": [key_report(stats) for stats in ranked[:TOP_KEYS]],
            "TopThrottledKeys": [key_report(stats) for stats in throttled[:TOP_KEYS]],
            "Hints": hot_key_hints(state, ranked) + gsi_key_hints(state, now),
            "ContributorInsights": contributor_insights_report(
                state, self.database.tables.get(state.schema.name, state.schema), now
            ),
        }


def partitions_report(partitions: dict[int, Partition], count: int, now: float) -> list[dict[str, Any]]:
    """The partitions that saw traffic, with their hash ranges."""
    width = rules.HASH_SPACE // count
    return [
        {"Partition": number, "HashRange": [number * width, (number + 1) * width - 1], **partition.report(now)}
        for number, partition in sorted(partitions.items())
    ]


def index_report(resource: IndexResource, now: float) -> dict[str, Any]:
    return {
        **resource.report(now),
        "PartitionCount": resource.partition_count,
        "Partitions": partitions_report(resource.partitions, resource.partition_count, now),
    }


WINDOW_LABELS = {minutes: f"{minutes}m" for minutes in top_keys.REPORT_WINDOWS}
RULE_VALUE = {
    top_keys.ACCESSED_PARTITION: "ConsumedUnits",
    top_keys.ACCESSED_ITEM: "ConsumedUnits",
    top_keys.THROTTLED_PARTITION: "ThrottleEvents",
    top_keys.THROTTLED_ITEM: "ThrottleEvents",
}


def dynamodb_rules(schema: TableSchema, index: IndexDefinition | None) -> list[str]:
    """The rules DynamoDB would publish for the table (or a GSI) now: none
    unless Contributor Insights is ENABLED for it, only PKT/SKT in
    THROTTLED_KEYS mode, SKC/SKT only with a sort key. LSIs have none."""
    if index is not None and not index.is_global:
        return []
    setting = insights_settings(schema).get(index.name if index is not None else "")
    if setting is None or setting.get("status") != "ENABLED":
        return []
    has_sort_key = bool(index.sort_keys) if index is not None else schema.sort_key is not None
    kinds = [top_keys.ACCESSED_PARTITION, top_keys.THROTTLED_PARTITION]
    if has_sort_key:
        kinds += [top_keys.ACCESSED_ITEM, top_keys.THROTTLED_ITEM]
    if setting.get("mode") == "THROTTLED_KEYS":
        kinds = [kind for kind in kinds if kind.endswith("T")]
    return kinds


def target_report(
    schema: TableSchema, index: IndexDefinition | None, insights: top_keys.KeyInsights | None, now: float
) -> dict[str, Any]:
    """The top keys of the table or one index: every rule, every window."""
    has_sort_key = bool(index.sort_keys) if index is not None else schema.sort_key is not None
    setting = insights_settings(schema).get(index.name if index is not None else "") or {}
    figures = insights.report(now, TOP_KEYS) if insights is not None else {}
    kinds = [top_keys.ACCESSED_PARTITION, top_keys.THROTTLED_PARTITION]
    if has_sort_key:
        kinds += [top_keys.ACCESSED_ITEM, top_keys.THROTTLED_ITEM]
    rules_report = {
        kind: {
            WINDOW_LABELS[window]: [
                {"Key": label, RULE_VALUE[kind]: value} for label, value in figures.get(kind, {}).get(window, [])
            ]
            for window in top_keys.REPORT_WINDOWS
        }
        for kind in kinds
    }
    answer: dict[str, Any] = {}
    if index is not None:
        answer["IndexType"] = "GSI" if index.is_global else "LSI"
    answer.update({
        "ContributorInsightsStatus": setting.get("status", "DISABLED"),
        "ContributorInsightsMode": setting.get("mode") if setting.get("status") == "ENABLED" else None,
        "DynamoDBRules": dynamodb_rules(schema, index),
        "Rules": rules_report,
    })
    return answer


def contributor_insights_report(state: TableState, schema: TableSchema, now: float) -> dict[str, Any]:
    """Top keys per table and per index (GSI and LSI), per rule and window;
    the settings as the table has them now (``schema``)."""
    return {
        "Windows": list(WINDOW_LABELS.values()),
        "Table": target_report(schema, None, state.insights.get(""), now),
        "Indexes": {index.name: target_report(schema, index, state.insights.get(index.name), now)
                    for index in schema.indexes},
    }


DATE_LIKE = re.compile(r"^\d{4}-?\d{2}-?\d{2}([T ]\d{2}.*)?$")
"""A partition-key value that is a date (or a timestamp): every write of a day lands on one key."""
HOT_KEY_SHARE = 0.5
"""One key taking at least this share of a table's units is a hot key."""
HOT_KEY_MIN_UNITS = 100.0
"""...once the table has consumed enough for the share to mean something."""


def hot_key_hints(state: TableState, ranked: list[KeyStats]) -> list[str]:
    """The source documents' anti-patterns, when the counters show them."""
    hints: list[str] = []
    total = state.table.read_units + state.table.write_units
    if ranked and total >= HOT_KEY_MIN_UNITS:
        top = ranked[0]
        share = (top.read_units + top.write_units) / total
        if share >= HOT_KEY_SHARE:
            hints.append(
                f"One partition key takes {share:.0%} of this table's capacity "
                f"({orjson.dumps(top.key).decode()}): a counter or singleton item? Cache its reads, "
                "or shard its writes over random or calculated suffixes."
            )
    dates = [stats for stats in ranked[:TOP_KEYS] if _looks_like_date(stats.key)]
    if dates:
        hints.append(
            f"Partition key {orjson.dumps(dates[0].key).decode()} looks like a date: all of a day's "
            "traffic goes to one partition. Add a suffix, or use a key with many distinct values."
        )
    if any(stats.throttled for stats in ranked) or state.throttles.get(
        rules.throttling_reason("Table", "Write", rules.KEY_RANGE_EXCEEDED)
    ):
        hints.append(
            "Requests were throttled by partition limits (3,000 RCU / 1,000 WCU per partition) "
            "while the table may be under its own limit: spread the traffic over more keys."
        )
    return hints


GSI_KEY_RANGE_REASONS = tuple(
    rules.throttling_reason("Index", operation, rules.KEY_RANGE_EXCEEDED) for operation in ("Write", "Read")
)


def gsi_key_hints(state: TableState, now: float) -> list[str]:
    """A GSI partition key that was throttled (the source documents' low-
    cardinality GSI key: a status, a type, a date), named from the GSI's
    most throttled keys of the last hour."""
    if not any(state.throttles.get(reason) for reason in GSI_KEY_RANGE_REASONS):
        return []
    hints = []
    longest = max(top_keys.REPORT_WINDOWS)
    for name in state.indexes:
        insights = state.insights.get(name)
        ranked = insights.rules[top_keys.THROTTLED_PARTITION].top(longest, now, 1) if insights else []
        if ranked:
            key = orjson.dumps(ranked[0][0]).decode()
            hints.append(
                f"GSI {name}: its partition key {key} is hot -- its GSI partition (1,000 WCU / 3,000 RCU "
                "per second) throttled requests, and GSI writes hold back the table's writes. A GSI key "
                "with few distinct values (a status, a type, a date)? Add a suffix, or choose a key "
                "with many values."
            )
    return hints


def _looks_like_date(key: dict[str, Any]) -> bool:
    for value in key.values():
        text = value.get("S") if isinstance(value, dict) else None
        if isinstance(text, str) and DATE_LIKE.match(text):
            return True
    return False


def key_report(stats: KeyStats) -> dict[str, Any]:
    return {
        "Key": stats.key,
        "ReadUnits": stats.read_units,
        "WriteUnits": stats.write_units,
        "ThrottledRequests": stats.throttled,
    }


# --- ConsumedCapacity the client asked for ------------------------------------------------

TOTAL_MEMBERS = ("TableName", "CapacityUnits", "ReadCapacityUnits", "WriteCapacityUnits")
CAPACITY_MARK = b'"ConsumedCapacity":'


def as_asked(capacity: Any, asked: Any) -> Any:
    """An INDEXES-mode ConsumedCapacity (or list of them) in the client's mode."""
    if asked == "INDEXES":
        return capacity
    if isinstance(capacity, list):
        return [as_asked(one, asked) for one in capacity]
    return {name: capacity[name] for name in TOTAL_MEMBERS if name in capacity}


def wants(asked: Any) -> bool:
    return asked in ("TOTAL", "INDEXES")


def strip_capacity(body: dict[str, Any], asked: Any) -> dict[str, Any]:
    capacity = body.pop("ConsumedCapacity", None)
    if capacity is not None and wants(asked):
        body["ConsumedCapacity"] = as_asked(capacity, asked)
    return body


def finish_dict(response: dict[str, Any], asked: Any) -> dict[str, Any]:
    return strip_capacity(response, asked)


def finish_bytes_full(response: bytes, asked: Any) -> bytes:
    return orjson.dumps(strip_capacity(orjson.loads(response), asked))


def split_capacity(response: Any, asked: Any) -> tuple[Any, list[dict[str, Any]]]:
    """(the response as the client asked it, the ConsumedCapacity objects
    computed). Byte responses (GetItem, Query, Scan) end with their
    ConsumedCapacity member, so it is cut off without decoding the items."""
    if isinstance(response, dict):
        capacity = response.get("ConsumedCapacity")
        strip_capacity(response, asked)
        return response, [capacity] if isinstance(capacity, dict) else list(capacity or [])
    at = response.rfind(CAPACITY_MARK)
    if at < 0:
        return response, []
    capacity = orjson.loads(response[at + len(CAPACITY_MARK):-1])
    head = response[:at]
    if wants(asked):
        return head + CAPACITY_MARK + orjson.dumps(as_asked(capacity, asked)) + b"}", [capacity]
    head = head[:-1] if head.endswith(b",") else head
    return head + b"}", [capacity]


# --- switching it on, and the admin routes --------------------------------------------------


def enable(database: Database, mode: str = ENFORCE) -> Throughput:
    """Turn the model on for ``database`` (``mode`` ENFORCE or OBSERVE)."""
    meter: Throughput | None = database.throughput
    if meter is None:
        meter = Throughput(database, mode)
        database.throughput = meter
    else:
        meter.mode = mode
    return meter


def disable(database: Database) -> None:
    database.throughput = None


Answer = tuple[int, dict[str, Any]]


def handle_admin_metrics(database: Database, method: str, path: str, body: bytes | None) -> Answer:
    """``GET /_dynastore/metrics`` -> the figures (``{"Mode": "off"}`` when off);
    ``POST /_dynastore/throughput`` ``{"Mode": "enforce"|"observe"|"off"[, "TableName": t]}``
    switches the model server-wide, or for one table."""
    route = path.split("?", 1)[0].rstrip("/")
    if route == ADMIN_METRICS_PATH:
        if method != "GET":
            return 405, {"message": "Method not allowed"}
        meter = database.throughput
        return 200, (meter.metrics() if meter is not None else {"Mode": OFF, "Tables": {}})
    if route != ADMIN_THROUGHPUT_PATH:
        return 404, {"message": "Not found"}
    if method == "GET":
        meter = database.throughput
        return 200, {"Mode": meter.mode if meter else OFF, "TableModes": dict(meter.table_modes) if meter else {}}
    if method != "POST":
        return 405, {"message": "Method not allowed"}
    try:
        spec = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return 400, {"message": "The body is not JSON"}
    mode = spec.get("Mode") if isinstance(spec, dict) else None
    if mode not in MODES:
        return 400, {"message": f"Mode must be one of {', '.join(MODES)}"}
    table_name = spec.get("TableName")
    if table_name is None:
        if mode == OFF:
            disable(database)
        else:
            enable(database, mode)
    else:
        meter = database.throughput or enable(database, OBSERVE)
        meter.table_modes[str(table_name)] = mode
    meter = database.throughput
    return 200, {"Mode": meter.mode if meter else OFF, "TableModes": dict(meter.table_modes) if meter else {}}


# --- Prometheus text format --------------------------------------------------------------

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: dict[str, str], value: float) -> str:
    inner = ",".join(f'{key}="{_label(text)}"' for key, text in labels.items())
    return f"{name}{{{inner}}} {value:g}" if inner else f"{name} {value:g}"


def _resource_samples(lines: list[str], labels: dict[str, str], resource: Resource) -> None:
    lines.append(_sample("dynastore_consumed_read_units_total", labels, resource.read_units))
    lines.append(_sample("dynastore_consumed_write_units_total", labels, resource.write_units))
    lines.append(_sample("dynastore_throttled_requests_total", labels, resource.throttled))


def prometheus_metrics(database: Database) -> bytes:
    """The figures of ``GET /_dynastore/metrics`` in Prometheus' text format
    (serve with PROMETHEUS_CONTENT_TYPE); empty while the model is off."""
    meter = database.throughput
    if meter is None:
        return b""
    lines = [
        "# TYPE dynastore_consumed_read_units_total counter",
        "# TYPE dynastore_consumed_write_units_total counter",
        "# TYPE dynastore_throttled_requests_total counter",
        "# TYPE dynastore_partitions gauge",
        "# TYPE dynastore_requests_total counter",
        "# TYPE dynastore_request_latency_seconds summary",
        "# TYPE dynastore_top_key_consumed_units gauge",
        "# TYPE dynastore_top_key_throttle_events gauge",
        _sample("dynastore_control_plane_throttled_requests_total", {}, meter.control_throttled),
    ]
    for operation, stats in sorted(meter.operations.items()):
        labels = {"operation": operation}
        lines.append(_sample("dynastore_requests_total", labels, stats.requests))
        lines.append(_sample("dynastore_throttled_operation_requests_total", labels, stats.throttled))
        lines.append(_sample("dynastore_request_latency_seconds_sum", labels, stats.seconds_total))
        lines.append(_sample("dynastore_request_latency_seconds_count", labels, stats.requests))
    for name, state in sorted(meter.tables.items()):
        if name not in database.tables:
            continue
        lines.append(_sample("dynastore_partitions", {"table": name, "index": ""}, state.partition_count))
        _resource_samples(lines, {"table": name, "index": "", "partition": ""}, state.table)
        for index_name, resource in sorted(state.indexes.items()):
            _resource_samples(lines, {"table": name, "index": index_name, "partition": ""}, resource)
        for number, partition in sorted(state.partitions.items()):
            _resource_samples(lines, {"table": name, "index": "", "partition": str(number)}, partition)
        for resource_name, resource in sorted(state.indexes.items()):
            _index_partition_samples(lines, name, resource_name, resource)
        ranked = sorted(state.keys.values(), key=lambda s: s.read_units + s.write_units, reverse=True)
        for stats in ranked[:TOP_KEYS]:
            labels = {"table": name, "key": orjson.dumps(stats.key).decode()}
            lines.append(_sample("dynastore_key_consumed_units_total", labels, stats.read_units + stats.write_units))
            lines.append(_sample("dynastore_key_throttled_requests_total", labels, stats.throttled))
        _top_key_samples(lines, name, state, database.now())
    return ("\n".join(lines) + "\n").encode()


def _index_partition_samples(lines: list[str], table: str, index: str, resource: IndexResource) -> None:
    lines.append(_sample("dynastore_partitions", {"table": table, "index": index}, resource.partition_count))
    for number, partition in sorted(resource.partitions.items()):
        _resource_samples(lines, {"table": table, "index": index, "partition": str(number)}, partition)


PROMETHEUS_TOP_KEYS = limits.THROUGHPUT_PROMETHEUS_TOP_KEYS
"""Keys per rule and window in the Prometheus text: label cardinality stays bounded."""
PROMETHEUS_RULE_METRIC = {
    top_keys.ACCESSED_PARTITION: "dynastore_top_key_consumed_units",
    top_keys.ACCESSED_ITEM: "dynastore_top_key_consumed_units",
    top_keys.THROTTLED_PARTITION: "dynastore_top_key_throttle_events",
    top_keys.THROTTLED_ITEM: "dynastore_top_key_throttle_events",
}


def _top_key_samples(lines: list[str], table: str, state: TableState, now: float) -> None:
    """The top PROMETHEUS_TOP_KEYS keys of every rule and window, per table
    ("" index) and index: gauges over the window, labelled by rule and key."""
    for index_name, insights in sorted(state.insights.items()):
        for kind, windows in insights.report(now, PROMETHEUS_TOP_KEYS).items():
            for window, ranked in windows.items():
                for label, value in ranked:
                    labels = {"table": table, "index": index_name, "rule": kind, "window": WINDOW_LABELS[window],
                              "key": orjson.dumps(label).decode()}
                    lines.append(_sample(PROMETHEUS_RULE_METRIC[kind], labels, value))
