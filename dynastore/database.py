"""The Database: one open store, its table catalogue, its clock.

This is the object every operation receives. It owns the storage backend and
an in-memory copy of the table catalogue (``TableSchema`` by name), and it is
the only place that reads the clock, so tests can inject a manual one.
Operations run one at a time against a Database (the server serialises them),
which is what makes each operation's read-modify-write atomic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dynastore.engine.schema import TableSchema
from dynastore.engine.tables import table_name_from_identifier
from dynastore.errors import table_not_found
from dynastore.storage.base import Row, Storage

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "000000000000"


class Database:
    def __init__(
        self,
        storage: Storage,
        clock: Callable[[], float] = time.time,
        region: str = DEFAULT_REGION,
        account_id: str = DEFAULT_ACCOUNT_ID,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.region = region
        self.account_id = account_id
        self.tables: dict[str, TableSchema] = {}
        for record in storage.load_tables():
            # The storage id is authoritative: metadata is written before it is known.
            schema = replace(TableSchema.from_metadata(record.metadata), table_id=record.table_id)
            self.tables[record.name] = schema

    @classmethod
    def open(cls, path: str | Path | None = None, **options: object) -> Database:
        """An embedded database: in memory when ``path`` is None, else the
        SQLite store in directory ``path`` (created if missing)."""
        from dynastore.storage.sqlite import SQLiteStorage

        storage = SQLiteStorage(None if path is None else Path(path))
        return cls(storage, **options)  # type: ignore[arg-type]

    def now(self) -> float:
        return self.clock()

    def table(self, name: str) -> TableSchema:
        """The named table, or DynamoDB's ResourceNotFoundException."""
        schema = self.tables.get(name)
        if schema is None:
            # Every operation also accepts the table's ARN as TableName; resolving
            # it only after a miss keeps the common lookup a single dict access.
            if isinstance(name, str) and name.startswith("arn:"):
                name = table_name_from_identifier(name)
                schema = self.tables.get(name)
            if schema is None:
                raise table_not_found(name)
        return schema

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{name}"

    # --- catalogue: the only writers of ``tables``, kept in step with storage ----
    def create_table(self, schema: TableSchema) -> TableSchema:
        """Register a new table; returns its schema with the storage id filled in."""
        table_id = self.storage.create_table(schema.name, schema.to_metadata())
        created = replace(schema, table_id=table_id)
        self.tables[created.name] = created
        return created

    def update_table(self, schema: TableSchema) -> TableSchema:
        """Persist a changed definition of an existing table (same name and id)."""
        self.storage.update_table_metadata(schema.table_id, schema.to_metadata())
        self.tables[schema.name] = schema
        return schema

    def drop_table(self, name: str) -> TableSchema:
        """Remove a table and all of its items; returns the schema it had."""
        schema = self.table(name)
        self.storage.drop_table(schema.table_id)
        del self.tables[name]
        return schema

    def table_statistics(self, schema: TableSchema) -> tuple[int, int]:
        """(item count, size in bytes) of a table, as DescribeTable reports them."""
        return self.storage.table_statistics(schema.table_id)

    # --- the one path every item write takes -------------------------------------
    # PutItem, UpdateItem, DeleteItem, BatchWriteItem (and later transactions and
    # the TTL sweeper) change items only through these two methods, so that
    # what must follow a write -- index entries (issue 3), stream records
    # (issue 5) -- is added in one place and no write path can miss it.

    def needs_old_rows(self, schema: TableSchema) -> bool:
        """True when a write must pass the row it replaces (for index
        maintenance or stream images); otherwise writers may skip reading it."""
        return False

    def write_row(self, schema: TableSchema, new_row: Row, old_row: Row | None = None) -> None:
        """Insert or replace an item. ``old_row`` is the stored row it replaces
        (required when ``needs_old_rows(schema)``)."""
        self.storage.put(schema.table_id, new_row)

    def delete_row(self, schema: TableSchema, old_row: Row) -> None:
        """Delete a stored item (callers skip deleting what is not there)."""
        self.storage.delete(schema.table_id, old_row.pk, old_row.sk)

    def close(self) -> None:
        self.storage.close()
