"""A table's definition: key schema, attribute definitions, billing, tags.

``TableSchema`` is what the catalogue stores (as JSON metadata) and what
every data-plane operation consults. It is immutable; control-plane
operations build a new one with ``dataclasses.replace``.

Secondary indexes (issue 3), streams and TTL (issue 5) add fields here; keep
``to_metadata``/``from_metadata`` round-tripping every field.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

import orjson

from dynastore.errors import ValidationException, key_schema_mismatch
from dynastore.types.keys import encode_attribute


@dataclass(frozen=True)
class KeyAttribute:
    name: str
    type: str  # "S" | "N" | "B"


@dataclass(frozen=True)
class IndexDefinition:
    """One secondary index: its key, projection, storage table and state.

    ``partition_keys``/``sort_keys`` hold one attribute each, or up to four for
    a GSI with multi-attribute keys. The index's entries live in their own
    storage table (``storage_id``), registered under ``index_storage_name``.
    """

    name: str
    kind: str  # "GLOBAL" | "LOCAL"
    partition_keys: tuple[KeyAttribute, ...]
    sort_keys: tuple[KeyAttribute, ...]
    projection_type: str  # "ALL" | "KEYS_ONLY" | "INCLUDE"
    non_key_attributes: tuple[str, ...] = ()
    storage_id: int = 0
    status: str = "ACTIVE"  # CREATING | ACTIVE | DELETING
    backfilling: bool = False
    read_capacity_units: int = 0
    write_capacity_units: int = 0
    on_demand_max_read_units: int | None = None
    on_demand_max_write_units: int | None = None
    last_increase_time: float | None = None
    last_decrease_time: float | None = None
    decreases_today: int = 0
    item_partition: bool = False
    """The index's entries are stored under the item's own partition key
    bytes (an LSI created by this version): an item and its LSI entries
    then hash alike, so a hash-distributed store (Citus) keeps them on one
    shard. LSIs of older data directories keep their entries' original
    partition encoding (False)."""

    @property
    def is_global(self) -> bool:
        return self.kind == "GLOBAL"

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(attribute.name for attribute in (*self.partition_keys, *self.sort_keys))

    @classmethod
    def from_raw(cls, raw: dict[str, Any]) -> IndexDefinition:
        raw = dict(raw)
        raw["partition_keys"] = tuple(KeyAttribute(**key) for key in raw["partition_keys"])
        raw["sort_keys"] = tuple(KeyAttribute(**key) for key in raw["sort_keys"])
        raw["non_key_attributes"] = tuple(raw.get("non_key_attributes", ()))
        known = {field_.name for field_ in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})


def index_storage_name(table_name: str, index_name: str) -> str:
    """The catalogue name of an index's storage table. A '/' can never appear
    in a DynamoDB table name, so this never collides with a table."""
    return f"{table_name}/index/{index_name}"


INDEX_STORAGE_MARKER = "/index/"


@dataclass(frozen=True)
class TableSchema:
    name: str
    table_id: int  # storage's id; 0 before the catalogue assigns one
    table_uuid: str  # DynamoDB's TableId
    arn: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None
    attribute_definitions: tuple[KeyAttribute, ...]
    creation_time: float  # epoch seconds
    billing_mode: str = "PROVISIONED"  # or "PAY_PER_REQUEST"
    read_capacity_units: int = 0
    write_capacity_units: int = 0
    last_increase_time: float | None = None
    last_decrease_time: float | None = None
    decreases_today: int = 0
    billing_mode_last_update_time: float | None = None
    """LastUpdateToPayPerRequestDateTime: set whenever the table becomes on-demand."""
    table_class: str = "STANDARD"
    table_class_reported: bool = False
    """DynamoDB shows TableClassSummary only once a class was given explicitly."""
    table_class_update_time: float | None = None
    table_class_changes: tuple[float, ...] = ()
    """When the class last changed (at most the last two): 2 changes per 30 days."""
    deletion_protection: bool = False
    tags: tuple[tuple[str, str], ...] = ()
    status: str = "ACTIVE"
    warm_read_units: int = 0
    warm_write_units: int = 0
    """WarmThroughput: never decreases; tracks the highest provisioned capacity."""
    on_demand_max_read_units: int | None = None
    on_demand_max_write_units: int | None = None
    indexes: tuple[IndexDefinition, ...] = ()
    """Secondary indexes (LSIs and GSIs), in the order they were defined."""
    extensions: dict[str, Any] = field(default_factory=dict)
    """Room for later features (indexes, streams, TTL) before they get fields."""
    generation: int = 0
    """The catalogue generation this definition was read at (storage's, like
    ``table_id``; on a shared store a commit computed from an older one is
    refused: storage.base.Commit)."""

    # --- indexes -------------------------------------------------------------
    def index(self, name: str) -> IndexDefinition | None:
        for index in self.indexes:
            if index.name == name:
                return index
        return None

    @property
    def local_indexes(self) -> tuple[IndexDefinition, ...]:
        return tuple(index for index in self.indexes if not index.is_global)

    @property
    def global_indexes(self) -> tuple[IndexDefinition, ...]:
        return tuple(index for index in self.indexes if index.is_global)

    # --- keys ----------------------------------------------------------------
    @property
    def key_names(self) -> tuple[str, ...]:
        if self.sort_key is None:
            return (self.partition_key.name,)
        return (self.partition_key.name, self.sort_key.name)

    def key_of(self, item: dict[str, Any]) -> dict[str, Any]:
        """The primary-key attributes of a full item (which must have them)."""
        key = {self.partition_key.name: item[self.partition_key.name]}
        if self.sort_key is not None:
            key[self.sort_key.name] = item[self.sort_key.name]
        return key

    def encode_key(self, key: dict[str, Any]) -> tuple[bytes, bytes]:
        """(pk, sk) storage encodings of a validated key or item."""
        pk = encode_attribute(self.partition_key.type, key[self.partition_key.name])
        if self.sort_key is None:
            return pk, b""
        return pk, encode_attribute(self.sort_key.type, key[self.sort_key.name])

    def check_key_shape(self, key: dict[str, Any]) -> None:
        """A Key parameter must hold exactly the key attributes, of the right types."""
        if len(key) != len(self.key_names):
            raise key_schema_mismatch()
        for attribute in (self.partition_key, self.sort_key):
            if attribute is None:
                continue
            value = key.get(attribute.name)
            if value is None:
                raise key_schema_mismatch()
            if attribute.type not in value:
                raise key_schema_mismatch()
            if value[attribute.type] == "":
                kind = "string" if attribute.type == "S" else "binary"
                raise ValidationException(
                    "One or more parameter values are not valid. The AttributeValue for a key "
                    f"attribute cannot contain an empty {kind} value. Key: {attribute.name}"
                )

    # --- persistence -----------------------------------------------------------
    def to_metadata(self) -> bytes:
        raw = asdict(self)
        del raw["generation"]  # storage's, like table_id: never part of the definition
        return orjson.dumps(raw)

    @classmethod
    def from_metadata(cls, metadata: bytes) -> TableSchema:
        raw = orjson.loads(metadata)
        raw["partition_key"] = KeyAttribute(**raw["partition_key"])
        if raw["sort_key"] is not None:
            raw["sort_key"] = KeyAttribute(**raw["sort_key"])
        raw["attribute_definitions"] = tuple(
            KeyAttribute(**definition) for definition in raw["attribute_definitions"]
        )
        raw["tags"] = tuple(tuple(pair) for pair in raw.get("tags", ()))
        raw["table_class_changes"] = tuple(raw.get("table_class_changes", ()))
        raw["indexes"] = tuple(IndexDefinition.from_raw(index) for index in raw.get("indexes", ()))
        # Metadata written before a field existed simply lacks it: the default applies.
        known = {field_.name for field_ in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})
