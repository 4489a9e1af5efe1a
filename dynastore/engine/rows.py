"""Items <-> storage rows.

A validated wire item becomes a ``Row``: its encoded key, the partition hash,
the item serialised once with orjson (so reads hand the bytes to the client
untouched) and its DynamoDB size (so reads count capacity and page limits
without decoding). Used by every data-plane operation (items, Query, Scan,
transactions).
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore.engine.schema import TableSchema
from dynastore.storage.base import Row
from dynastore.types.keys import partition_hash

try:
    from dynastore.types.size import item_size
except ImportError:  # pragma: no cover - until dynastore.types.size lands
    import base64

    def _value_size(value: dict[str, Any]) -> int:
        (kind, inner), = value.items()
        if kind == "S":
            return len(inner.encode("utf-8"))
        if kind == "N":
            digits = len(inner.lstrip("-").replace(".", "").strip("0"))
            return (digits + 1) // 2 + 1 + (1 if inner.startswith("-") else 0)
        if kind == "B":
            return len(base64.b64decode(inner))
        if kind in ("BOOL", "NULL"):
            return 1
        if kind == "SS":
            return sum(len(v.encode("utf-8")) for v in inner)
        if kind == "NS":
            return sum(_value_size({"N": v}) for v in inner)
        if kind == "BS":
            return sum(len(base64.b64decode(v)) for v in inner)
        if kind == "L":
            return 3 + sum(1 + _value_size(v) for v in inner)
        return 3 + sum(1 + len(k.encode("utf-8")) + _value_size(v) for k, v in inner.items())

    def item_size(item: dict[str, Any]) -> int:
        return sum(len(name.encode("utf-8")) + _value_size(v) for name, v in item.items())


def row_for(schema: TableSchema, item: dict[str, Any], size_bytes: int | None = None) -> Row:
    """The storage row of a validated ``item`` of table ``schema``.

    Pass ``size_bytes`` when the caller already computed the item's size (the
    write path checks the 400 KB limit first), to avoid measuring twice.
    """
    pk, sk = schema.encode_key(item)
    if size_bytes is None:
        size_bytes = item_size(item)
    return Row(partition_hash(pk), pk, sk, orjson.dumps(item), size_bytes)


def item_of(row: Row) -> dict[str, Any]:
    """The wire item stored in ``row``."""
    item: dict[str, Any] = orjson.loads(row.item)
    return item


def storage_key(schema: TableSchema, key: dict[str, Any]) -> tuple[bytes, bytes]:
    """(pk, sk) of a validated key, for ``storage.get``/``delete``."""
    return schema.encode_key(key)
