"""Items in DAX's shape: attribute lists, stream items, projections.

A DAX item leaves its key out (the client knows it, or it travels as key
bytes beside the item) and sends its other attributes as one byte string:
the id of the sorted list of their names, then their values in that order.
``AttributeLists`` is the node's registry of those lists (id 1 is the empty
list, as the clients assume).
"""

from __future__ import annotations

from typing import Any

from dynastore import limits
from dynastore.dax.wire import (
    MalformedFrame,
    attribute_value,
    decode_all,
    put_attribute_value,
    put_bytes,
    put_int,
    put_map_head,
)
from dynastore.errors import LimitExceededException, ValidationException

EMPTY_LIST_ID = 1

KeySchema = list[tuple[str, str]]
"""(attribute name, type) of the partition key, then the sort key if any."""


class AttributeLists:
    """Attribute name lists <-> their ids, for every connection of the node."""

    def __init__(self, max_lists: int = limits.DAX_ATTRIBUTE_LISTS_MAX) -> None:
        self.max_lists = max_lists
        self._ids: dict[tuple[str, ...], int] = {(): EMPTY_LIST_ID}
        self._names: dict[int, tuple[str, ...]] = {EMPTY_LIST_ID: ()}

    def __len__(self) -> int:
        return len(self._names)

    def id_of(self, names: tuple[str, ...]) -> int:
        known = self._ids.get(names)
        if known is not None:
            return known
        if len(self._names) >= self.max_lists:
            raise LimitExceededException(
                f"The DAX endpoint holds its maximum of {self.max_lists} attribute lists"
            )
        new_id = len(self._names) + 1
        self._ids[names] = new_id
        self._names[new_id] = names
        return new_id

    def names_of(self, list_id: Any) -> tuple[str, ...]:
        names = self._names.get(list_id) if type(list_id) is int else None
        if names is None:
            raise ValidationException(f"Unknown attribute list id {list_id!r}")
        return names


def item_from_parts(key: dict[str, Any], values: Any, lists: AttributeLists) -> dict[str, Any]:
    """A whole item from its key and its values' byte string."""
    if not isinstance(values, bytes | bytearray):
        raise MalformedFrame("an item's values must be a byte string")
    decoded = decode_all(bytes(values))
    if not decoded:
        raise MalformedFrame("an item's values lack their attribute list id")
    names = lists.names_of(decoded[0])
    if len(names) != len(decoded) - 1:
        raise ValidationException(
            f"Incorrect number of attributes for attribute list (got {len(decoded) - 1}; "
            f"expected {len(names)})"
        )
    item = dict(key)
    for name, value in zip(names, decoded[1:], strict=True):
        item[name] = attribute_value(value)
    return item


def stream_item(item: dict[str, Any], schema: KeySchema, lists: AttributeLists) -> bytes:
    """An item's non-key attributes as DAX's byte string (list id, values)."""
    key_names = {name for name, _ in schema}
    names = tuple(sorted(name for name in item if name not in key_names))
    out = bytearray()
    put_int(out, lists.id_of(names))
    for name in names:
        put_attribute_value(out, item[name])
    return bytes(out)


def put_stream_item(out: bytearray, item: dict[str, Any], schema: KeySchema, lists: AttributeLists) -> None:
    put_bytes(out, stream_item(item, schema, lists))


def partial_stream_item(attributes: dict[str, Any], lists: AttributeLists) -> bytes:
    """UPDATED_OLD / UPDATED_NEW: a list id, then a map of ordinal -> value."""
    names = tuple(sorted(attributes))
    out = bytearray()
    put_int(out, lists.id_of(names))
    put_map_head(out, len(names))
    for ordinal, name in enumerate(names):
        put_int(out, ordinal)
        put_attribute_value(out, attributes[name])
    return bytes(out)


def projected_values(item: dict[str, Any], paths: list[list[str | int]]) -> list[tuple[int, dict[str, Any]]]:
    """(ordinal, value) of each projection path the item has."""
    found = []
    for ordinal, path in enumerate(paths):
        value = _walk(item, path)
        if value is not None:
            found.append((ordinal, value))
    return found


def _walk(item: dict[str, Any], path: list[str | int]) -> dict[str, Any] | None:
    current: Any = item.get(path[0]) if isinstance(path[0], str) else None
    for element in path[1:]:
        if current is None:
            return None
        if isinstance(element, int):
            elements = current.get("L")
            current = elements[element] if isinstance(elements, list) and element < len(elements) else None
        else:
            members = current.get("M")
            current = members.get(element) if isinstance(members, dict) else None
    return current if isinstance(current, dict) else None


def put_projection(out: bytearray, item: dict[str, Any], paths: list[list[str | int]]) -> None:
    found = projected_values(item, paths)
    put_map_head(out, len(found))
    for ordinal, value in found:
        put_int(out, ordinal)
        put_attribute_value(out, value)


def key_schema_of(table: Any) -> KeySchema:
    """The (name, type) pairs of a table's key, partition key first."""
    schema = [(table.partition_key.name, table.partition_key.type)]
    if table.sort_key is not None:
        schema.append((table.sort_key.name, table.sort_key.type))
    return schema


class CachedItem:
    """An item cache entry: the item (None: known absent) and the answer to a
    plain GetItem of it, encoded once when cached."""

    __slots__ = ("item", "answer")

    def __init__(self, item: dict[str, Any] | None, answer: bytes) -> None:
        self.item = item
        self.answer = answer


def plain_get_answer(encoded: bytes | None) -> bytes:
    """GetItem's answer without projection or capacity: {0: item} or {}."""
    if encoded is None:
        return b"\x80\xa0"
    out = bytearray(b"\x80\xa1\x00")
    put_bytes(out, encoded)
    return bytes(out)


def item_size_estimate(encoded: bytes | None) -> int:
    """What an item cache entry costs: its encoded bytes and a fixed overhead."""
    return limits.DAX_CACHE_ENTRY_OVERHEAD_BYTES + (len(encoded) if encoded is not None else 0)
