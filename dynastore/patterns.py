"""Key-value patterns from the DynamoDB design guides, on the public API only.

Everything here takes an ordinary boto3 ``dynamodb`` client, so it works the
same against dynastore (embedded or served) and against real DynamoDB.

- ``KeyScheme``: hierarchical keys with one separator (``USER#42#ORDER#7``).
- ``Singleton``: one item under a fixed key (``PK=SETTINGS#APP, SK=FLAGS#V1``)
  read through a short-lived cache, with safe defaults when the item is
  missing, and changed only through ``SET ... , version = :next`` guarded by
  ``version = :current`` -- a stale writer retries instead of losing an update.
- ``ShardedCounter``: a hot counter spread over N keys (random or calculated
  suffix), incremented on one shard and summed on read.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_wire(values: Mapping[str, Any]) -> dict[str, Any]:
    """Plain Python values -> DynamoDB JSON (``{"n": 1}`` -> ``{"n": {"N": "1"}}``)."""
    return {name: _serializer.serialize(value) for name, value in values.items()}


def from_wire(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


# --- hierarchical keys ---------------------------------------------------------------


@dataclass(frozen=True)
class KeyScheme:
    """Builds and splits keys like ``ORDER#2024-01-20#00001``.

    One separator for the whole application; no part may contain it, so a
    key always splits back into the parts it was made of, and
    ``prefix(...)`` gives the exact ``begins_with`` argument for a level.
    """

    separator: str = "#"

    def key(self, *parts: object) -> str:
        texts = [str(part) for part in parts]
        for text in texts:
            if self.separator in text:
                raise ValueError(f"key part {text!r} contains the separator {self.separator!r}")
            if text == "":
                raise ValueError("key parts must not be empty")
        return self.separator.join(texts)

    def prefix(self, *parts: object) -> str:
        """``prefix("ORDER")`` -> ``"ORDER#"``: everything below that level."""
        return self.key(*parts) + self.separator

    def split(self, key: str) -> list[str]:
        return key.split(self.separator)

    def entity_type(self, key: str) -> str:
        """The first level, e.g. ``USER`` of ``USER#42`` (single-table designs)."""
        return key.split(self.separator, 1)[0]


# --- singleton items -----------------------------------------------------------------


class Singleton:
    """A single item under a fixed key, with a cached read and versioned writes.

    ``get()`` returns the item's attributes (plain Python values) merged over
    ``defaults``, so a missing item reads as the defaults. Reads are cached for
    ``cache_ttl_seconds`` (0 disables the cache). ``update(changes)`` writes
    ``SET <changes>, <version> = :next`` only if ``<version>`` still equals the
    value it read (or the item is still missing), and re-reads and retries on
    ConditionalCheckFailedException up to ``max_attempts`` times.
    """

    def __init__(
        self,
        client: Any,
        table_name: str,
        key: Mapping[str, Any],
        defaults: Mapping[str, Any] | None = None,
        *,
        version_attribute: str = "schema_version",
        cache_ttl_seconds: float = 5.0,
        max_attempts: int = 5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.table_name = table_name
        self.key = dict(key)
        self.defaults = dict(defaults or {})
        self.version_attribute = version_attribute
        self.cache_ttl_seconds = cache_ttl_seconds
        self.max_attempts = max_attempts
        self.clock = clock
        self._cached: dict[str, Any] | None = None
        self._cached_at = 0.0

    def get(self, *, fresh: bool = False) -> dict[str, Any]:
        now = self.clock()
        if not fresh and self._cached is not None and now - self._cached_at < self.cache_ttl_seconds:
            return dict(self._cached)
        response = self.client.get_item(
            TableName=self.table_name, Key=to_wire(self.key), ConsistentRead=True
        )
        stored = from_wire(response.get("Item", {}))
        value = {**self.defaults, **stored}
        self._cached, self._cached_at = value, now
        return dict(value)

    def update(self, changes: Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]) -> dict[str, Any]:
        """Apply ``changes`` (a mapping, or a function of the current value
        returning one) with optimistic concurrency; returns the new value."""
        for _ in range(self.max_attempts):
            current = self.get(fresh=True)
            wanted = dict(changes(current) if callable(changes) else changes)
            wanted.pop(self.version_attribute, None)
            try:
                return self._write(current, wanted)
            except self.client.exceptions.ConditionalCheckFailedException:
                continue
        raise RuntimeError(
            f"singleton {self.key} changed under us {self.max_attempts} times in a row; giving up"
        )

    def _write(self, current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
        names = {"#v": self.version_attribute}
        values: dict[str, Any] = {":next": (current.get(self.version_attribute) or 0) + 1}
        assignments = ["#v = :next"]
        for index, (name, value) in enumerate(sorted(wanted.items())):
            names[f"#a{index}"] = name
            values[f":a{index}"] = value
            assignments.append(f"#a{index} = :a{index}")
        if self.version_attribute in current and current.get(self.version_attribute) is not None:
            condition = "#v = :current"
            values[":current"] = current[self.version_attribute]
        else:
            condition = "attribute_not_exists(#v)"
        response = self.client.update_item(
            TableName=self.table_name,
            Key=to_wire(self.key),
            UpdateExpression="SET " + ", ".join(assignments),
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=to_wire(values),
            ReturnValues="ALL_NEW",
        )
        value = {**self.defaults, **from_wire(response["Attributes"])}
        self._cached, self._cached_at = value, self.clock()
        return dict(value)


# --- write sharding --------------------------------------------------------------------


class ShardedCounter:
    """A counter spread over ``shards`` partition keys ``<base>#0 .. <base>#N-1``.

    ``increment()`` picks a shard at random (random suffix); pass
    ``shard_key=...`` to pick it by hashing an id instead (calculated suffix:
    the same id always lands on the same shard, so it can be read back
    alone). ``total()`` reads every shard with BatchGetItem and sums them.
    """

    def __init__(
        self,
        client: Any,
        table_name: str,
        base_key: str,
        *,
        shards: int = 10,
        partition_key: str = "PK",
        sort_key: tuple[str, Any] | None = None,
        count_attribute: str = "total",
        separator: str = "#",
        rng: random.Random | None = None,
    ) -> None:
        if not 1 <= shards <= 100:
            raise ValueError("shards must be between 1 and 100 (one BatchGetItem reads them all)")
        self.client = client
        self.table_name = table_name
        self.base_key = base_key
        self.shards = shards
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.count_attribute = count_attribute
        self.separator = separator
        self.rng = rng or random.Random()

    def shard_for(self, shard_key: str) -> int:
        """The calculated suffix for an id: stable across processes (CRC32)."""
        return zlib.crc32(shard_key.encode("utf-8")) % self.shards

    def key(self, shard: int) -> dict[str, Any]:
        key: dict[str, Any] = {self.partition_key: f"{self.base_key}{self.separator}{shard}"}
        if self.sort_key is not None:
            key[self.sort_key[0]] = self.sort_key[1]
        return key

    def increment(self, by: int = 1, *, shard_key: str | None = None) -> int:
        """Add ``by`` to one shard; returns the shard number used."""
        shard = self.shard_for(shard_key) if shard_key is not None else self.rng.randrange(self.shards)
        self.client.update_item(
            TableName=self.table_name,
            Key=to_wire(self.key(shard)),
            UpdateExpression="ADD #c :by",
            ExpressionAttributeNames={"#c": self.count_attribute},
            ExpressionAttributeValues=to_wire({":by": by}),
        )
        return shard

    def total(self) -> int:
        """The sum over every shard (a missing shard counts 0)."""
        keys = [to_wire(self.key(shard)) for shard in range(self.shards)]
        request: dict[str, Any] = {
            self.table_name: {
                "Keys": keys,
                "ProjectionExpression": "#c",
                "ExpressionAttributeNames": {"#c": self.count_attribute},
                "ConsistentRead": True,
            }
        }
        total = 0
        while request:
            response = self.client.batch_get_item(RequestItems=request)
            for item in response["Responses"].get(self.table_name, []):
                total += int(from_wire(item).get(self.count_attribute, 0))
            request = response.get("UnprocessedKeys") or {}
        return total
