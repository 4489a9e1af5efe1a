"""Secondary indexes: entry keys, projections, and what a write changes in them.

Pure: no storage calls, no clock. The write path (dynastore/write_path.py) asks
``index_changes`` what to do and apply it; Query/Scan ask
``index_sort_range``/``index_position`` where to read.

Index rows
    Each index lives in its own storage table. An entry's ``pk`` is the
    index partition key and its ``sk`` is the index sort key followed by the
    table's primary key, so entries are unique per item and ordered as
    DynamoDB orders them (by index sort key, then by table key). Every part is
    a *delimited* encoding (``encode_component``): the order-preserving key
    encoding with 0x00 escaped as 0x00 0xFF and a 0x00 0x01 terminator, so a
    concatenation of parts still sorts part by part. Multi-attribute GSI keys
    are concatenations of up to four parts.

Sparse indexes
    An item lacking any index key attribute is not in that index.

Projections
    KEYS_ONLY keeps the table key and the index key; INCLUDE adds the listed
    non-key attributes; ALL keeps the whole item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynastore import limits
from dynastore.engine.capacity import write_units
from dynastore.engine.rows import encode_item
from dynastore.engine.schema import IndexDefinition, KeyAttribute, TableSchema
from dynastore.errors import ValidationException, invalid_parameter
from dynastore.storage.base import Row, SortKeyRange
from dynastore.types.keys import encode_attribute, partition_hash
from dynastore.types.size import item_size, key_value_size, oversized

Item = dict[str, Any]
IndexUnits = dict[str, dict[str, float]]
"""Capacity by kind ("GlobalSecondaryIndexes"/"LocalSecondaryIndexes") and index name."""

TERMINATOR = b"\x00\x01"
AFTER_TERMINATOR = b"\x00\x02"


# --- encoding -------------------------------------------------------------------


def escape(raw: bytes) -> bytes:
    return raw.replace(b"\x00", b"\x00\xff")


def encode_component(key_type: str, value: Item) -> bytes:
    """A key value as a self-delimiting, order-preserving part of a composite key."""
    return escape(encode_attribute(key_type, value)) + TERMINATOR


def after_component(encoded: bytes) -> bytes:
    """The smallest byte string above every key that starts with ``encoded``."""
    return encoded[: -len(TERMINATOR)] + AFTER_TERMINATOR


def table_key_suffix(schema: TableSchema, item: Item) -> bytes:
    suffix = encode_component(schema.partition_key.type, item[schema.partition_key.name])
    if schema.sort_key is not None:
        suffix += encode_component(schema.sort_key.type, item[schema.sort_key.name])
    return suffix


def _components(attributes: tuple[KeyAttribute, ...], item: Item, max_bytes: int) -> bytes | None:
    """The concatenated encoding of ``attributes`` in ``item``; None when one is
    missing, or cannot be an index key: not of the index's type, empty, over
    ``max_bytes`` (writes of such items are refused earlier; a backfill
    leaves them out, as DynamoDB's index key violations)."""
    parts = []
    for attribute in attributes:
        value = item.get(attribute.name)
        if value is None or attribute.type not in value or value[attribute.type] == "":
            return None
        if oversized(value, max_bytes):
            return None
        parts.append(encode_component(attribute.type, value))
    return b"".join(parts)


def entry_partition(index: IndexDefinition, item: Item) -> bytes | None:
    """The storage partition key of ``item``'s entries in ``index``: the
    concatenated key parts, or for an LSI created by this version the
    item's own partition key bytes (co-located with the item)."""
    if index.item_partition:
        (attribute,) = index.partition_keys
        value = item.get(attribute.name)
        if value is None or attribute.type not in value or value[attribute.type] == "":
            return None
        return encode_attribute(attribute.type, value)
    return _components(index.partition_keys, item, limits.PARTITION_KEY_MAX_BYTES)


def entry_key(schema: TableSchema, index: IndexDefinition, item: Item) -> tuple[bytes, bytes] | None:
    """(pk, sk) of ``item``'s entry in ``index``, None when the item is not in it."""
    pk = entry_partition(index, item)
    if pk is None:
        return None
    sort = _components(index.sort_keys, item, limits.SORT_KEY_MAX_BYTES)
    if sort is None:
        return None
    return pk, sort + table_key_suffix(schema, item)


# --- projections ------------------------------------------------------------------


_DERIVED: dict[tuple[int, str, str], tuple[TableSchema, Any]] = {}
DERIVED_CACHE_ENTRIES = 1024


def derived(schema: TableSchema, index: IndexDefinition, kind: str, compute: Any) -> Any:
    """``compute(schema, index)``, remembered per schema object: reads on an
    index ask for the same projections and key names on every request.
    (Schemas are immutable; a changed table is a new object.)"""
    cache_key = (id(schema), index.name, kind)
    hit = _DERIVED.get(cache_key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_DERIVED) >= DERIVED_CACHE_ENTRIES:
        _DERIVED.clear()
    value = compute(schema, index)
    _DERIVED[cache_key] = (schema, value)
    return value


def projected_names(schema: TableSchema, index: IndexDefinition) -> frozenset[str] | None:
    """The attributes an index holds; None means every attribute (ALL)."""
    return derived(schema, index, "projected", _projected_names)  # type: ignore[no-any-return]


def _projected_names(schema: TableSchema, index: IndexDefinition) -> frozenset[str] | None:
    if index.projection_type == "ALL":
        return None
    names = set(schema.key_names) | set(index.key_names)
    if index.projection_type == "INCLUDE":
        names.update(index.non_key_attributes)
    return frozenset(names)


def project(schema: TableSchema, index: IndexDefinition, item: Item) -> Item:
    names = projected_names(schema, index)
    if names is None:
        return item
    return {name: value for name, value in item.items() if name in names}


def entry_row(
    schema: TableSchema, index: IndexDefinition, item: Item, stored: Row | None = None
) -> Row | None:
    """The storage row of ``item`` in ``index`` (None: not in the index).
    ``stored`` is the item's own table row, whose bytes and size an ALL
    projection reuses instead of serialising and measuring again."""
    key = entry_key(schema, index, item)
    if key is None:
        return None
    if stored is not None and index.projection_type == "ALL":
        return Row(partition_hash(key[0]), key[0], key[1], stored.item, stored.size)
    projected = project(schema, index, item)
    return Row(partition_hash(key[0]), key[0], key[1], encode_item(projected), item_size(projected))


# --- validation of writes ---------------------------------------------------------


def check_index_keys(schema: TableSchema, item: Item) -> None:
    """An index key attribute present in an item must have the index's type,
    must not be an empty string or binary, and must fit the key size limits
    (2048 bytes a partition key attribute, 1024 a sort key one): DynamoDB's
    messages."""
    for index in schema.indexes:
        for position, attribute in enumerate((*index.partition_keys, *index.sort_keys)):
            value = item.get(attribute.name)
            if value is None:
                continue
            actual = next(iter(value))
            if actual != attribute.type:
                raise invalid_parameter(
                    f"Type mismatch for Index Key {attribute.name} Expected: {attribute.type} "
                    f"Actual: {actual} IndexName: {index.name}"
                )
            if attribute.type != "N" and value[actual] == "":
                kind = "string" if actual == "S" else "binary"
                raise ValidationException(
                    "One or more parameter values are not valid. A value specified for a "
                    "secondary index key is not supported. The AttributeValue for a key "
                    f"attribute cannot contain an empty {kind} value. IndexName: {index.name}, "
                    f"IndexKey: {attribute.name}"
                )
            max_bytes = (
                limits.PARTITION_KEY_MAX_BYTES if position < len(index.partition_keys)
                else limits.SORT_KEY_MAX_BYTES
            )
            if oversized(value, max_bytes):
                raise invalid_parameter(
                    f"Size limit exceeded for Index Key {attribute.name} Actual Size: "
                    f"{key_value_size(value)} bytes Max Size: {max_bytes} bytes IndexName: {index.name}"
                )


# --- maintenance ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexChange:
    """What one item write does to one index: remove ``delete`` (pk, sk), then
    store ``put``; ``units`` is the write capacity that costs."""

    index: IndexDefinition
    delete: tuple[bytes, bytes] | None
    put: Row | None
    units: float


def capacity_kind(index: IndexDefinition) -> str:
    return "GlobalSecondaryIndexes" if index.is_global else "LocalSecondaryIndexes"


def index_changes(
    schema: TableSchema,
    old_item: Item | None,
    new_item: Item | None,
    old_row: Row | None = None,
    new_row: Row | None = None,
) -> list[IndexChange]:
    """The index writes that turn ``old_item`` into ``new_item`` (either may be
    None; their table rows, when given, save re-serialising them). An
    unchanged entry costs nothing; a moved entry (its index key changed) costs
    a delete and a put."""
    if new_item is not None:
        check_index_keys(schema, new_item)
    changes: list[IndexChange] = []
    for index in schema.indexes:
        old = entry_row(schema, index, old_item, old_row) if old_item is not None else None
        new = entry_row(schema, index, new_item, new_row) if new_item is not None else None
        if old is None and new is None:
            continue
        if old is not None and new is not None and (old.pk, old.sk) == (new.pk, new.sk):
            if old.item == new.item:
                continue
            changes.append(IndexChange(index, None, new, write_units(new.size)))
            continue
        units = 0.0
        delete = None
        if old is not None:
            delete = (old.pk, old.sk)
            units += write_units(old.size)
        if new is not None:
            units += write_units(new.size)
        changes.append(IndexChange(index, delete, new, units))
    return changes


def units_of(changes: list[IndexChange]) -> IndexUnits:
    """Index write capacity in ConsumedCapacity's per-kind shape."""
    units: IndexUnits = {}
    for change in changes:
        per_kind = units.setdefault(capacity_kind(change.index), {})
        per_kind[change.index.name] = per_kind.get(change.index.name, 0.0) + change.units
    return units


def merge_units(total: IndexUnits, more: IndexUnits | None) -> IndexUnits:
    for kind, per_index in (more or {}).items():
        target = total.setdefault(kind, {})
        for name, units in per_index.items():
            target[name] = target.get(name, 0.0) + units
    return total


# --- reads ------------------------------------------------------------------------


def index_sort_range(
    index: IndexDefinition,
    equal_values: tuple[Item, ...],
    operator: str | None,
    values: tuple[Item, ...],
) -> SortKeyRange:
    """The stored-sk range of a Query on ``index``: equality on the first
    ``len(equal_values)`` sort attributes, then ``operator`` on the next."""
    sort_keys = index.sort_keys
    prefix = b"".join(
        encode_component(attribute.type, value)
        for attribute, value in zip(sort_keys, equal_values, strict=False)
    )
    base = prefix or None
    if operator is None:
        return SortKeyRange(prefix=base)
    key_type = sort_keys[len(equal_values)].type
    if operator == "BEGINS_WITH":
        return SortKeyRange(prefix=prefix + escape(encode_attribute(key_type, values[0])))
    encoded = [prefix + encode_component(key_type, value) for value in values]
    if operator == "EQ":
        return SortKeyRange(prefix=encoded[0])
    if operator == "LT":
        return SortKeyRange(prefix=base, high=encoded[0], high_inclusive=False)
    if operator == "LE":
        return SortKeyRange(prefix=base, high=after_component(encoded[0]), high_inclusive=False)
    if operator == "GT":
        return SortKeyRange(prefix=base, low=after_component(encoded[0]))
    if operator == "GE":
        return SortKeyRange(prefix=base, low=encoded[0])
    # BETWEEN
    return SortKeyRange(
        prefix=base, low=encoded[0], high=after_component(encoded[1]), high_inclusive=False
    )


def index_partition(index: IndexDefinition, values: tuple[Item, ...]) -> bytes:
    """The storage partition a Query on ``index`` reads (see entry_partition)."""
    if index.item_partition:
        (attribute,), (value,) = index.partition_keys, values
        return encode_attribute(attribute.type, value)
    return b"".join(
        encode_component(attribute.type, value)
        for attribute, value in zip(index.partition_keys, values, strict=True)
    )


def start_key_names(schema: TableSchema, index: IndexDefinition) -> tuple[str, ...]:
    """LastEvaluatedKey of an index read: the table key, then the index key."""
    return derived(schema, index, "start_key", _start_key_names)  # type: ignore[no-any-return]


def _start_key_names(schema: TableSchema, index: IndexDefinition) -> tuple[str, ...]:
    names = list(schema.key_names)
    names += [name for name in index.key_names if name not in names]
    return tuple(names)


def check_index_start_key(schema: TableSchema, index: IndexDefinition, start_key: Item) -> tuple[bytes, bytes]:
    """(pk, sk) of an ExclusiveStartKey on ``index``; DynamoDB's refusals."""
    message = "The provided starting key is invalid"
    names = start_key_names(schema, index)
    if len(start_key) != len(names):
        raise ValidationException(message)
    attributes = [schema.partition_key, *( [schema.sort_key] if schema.sort_key else [])]
    attributes += [*index.partition_keys, *index.sort_keys]
    for attribute in attributes:
        value = start_key.get(attribute.name)
        if value is None or attribute.type not in value:
            raise ValidationException(message)
        if attribute.type != "N" and value[attribute.type] == "":
            raise ValidationException(message)
    key = entry_key(schema, index, start_key)
    assert key is not None
    return key
