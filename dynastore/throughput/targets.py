"""What a request touches: its table state, partition key, the item's full
key and its keys in the table's indexes (``Target``), found from the
request (and, for a write on a table with indexes, from the stored item)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from dynastore import limits
from dynastore.engine import top_keys
from dynastore.engine.indexes import encode_component
from dynastore.engine.schema import IndexDefinition, TableSchema
from dynastore.errors import DynamoDBError
from dynastore.throughput.state import IndexResource, TableState, TableStates
from dynastore.types.attribute_value import validate_item
from dynastore.types.keys import encode_attribute, partition_hash

TARGET_CACHE_MAX = limits.THROUGHPUT_TARGET_CACHE_MAX
"""Partition-key encodings cached per table; the cache starts over past it."""


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


class RequestTargets(TableStates):
    """The targets of a request, for the model of one Database."""

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
