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
from pathlib import Path

from dynastore.engine.schema import TableSchema
from dynastore.errors import table_not_found
from dynastore.storage.base import Storage

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
            schema = TableSchema.from_metadata(record.metadata)
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
            raise table_not_found(name)
        return schema

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{name}"

    def close(self) -> None:
        self.storage.close()
