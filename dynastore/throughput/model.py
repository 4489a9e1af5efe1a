"""The throughput model of one Database (``Throughput``): runs each
request under it -- refused before the handler when a bucket it needs is
empty, charged by the ConsumedCapacity the handler reports -- for single
requests, batches and transactions."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.engine import throughput as rules
from dynastore.engine import top_keys
from dynastore.errors import (
    ConditionalCheckFailedException,
    ProvisionedThroughputExceededException,
    ThrottlingException,
    TransactionCanceledException,
)
from dynastore.throughput import reporting
from dynastore.throughput.consumed_capacity import (
    finish_bytes_full,
    finish_dict,
    split_capacity,
    strip_capacity,
)
from dynastore.throughput.refusals import Refusal, cancellation_reason, throttle_error
from dynastore.throughput.state import OperationStats, Resource, TableState
from dynastore.throughput.targets import RequestTargets, Target

if TYPE_CHECKING:
    from dynastore.database import Database

ENFORCE = "enforce"
OBSERVE = "observe"
OFF = "off"
MODES = (OFF, OBSERVE, ENFORCE)

READ_OPERATIONS = frozenset(("GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"))
WRITE_OPERATIONS = frozenset(("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"))
STREAM_OPERATIONS = frozenset(("DescribeStream", "GetShardIterator", "GetRecords", "ListStreams"))
PARTIQL_OPERATIONS = frozenset(("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction"))
"""Run the item operations they translate to through this model (ops/execute_statement.py)."""


# --- the per-database model --------------------------------------------------------------


class Throughput(RequestTargets):
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
            if operation in PARTIQL_OPERATIONS:
                return handler(database, request)
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
        """The figures of ``GET /_dynastore/metrics`` (throughput/reporting.py)."""
        return reporting.metrics(self)
