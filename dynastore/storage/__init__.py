"""Storage backends behind one interface (see base.py).

``SQLiteStorage`` is the store of a data directory (one file); ``MemoryStorage``
(dicts and sorted lists) is the in-memory store of ``--in-memory`` and
``dynastore.open()``; ``storage.postgres.PostgresStorage`` keeps everything in
a PostgreSQL database that many servers share (imported only when used: it
needs psycopg). The contract tests run every case against both and
cross-check them on random operation sequences.
"""

from dynastore.storage.base import HASH_SPACE, Row, SortKeyRange, Storage, TableRecord
from dynastore.storage.errors import (
    DataDirectoryLocked,
    StorageError,
    StorageUnavailable,
    UnsupportedSchemaVersion,
)
from dynastore.storage.memory import MemoryStorage
from dynastore.storage.sqlite import SQLiteStorage

__all__ = [
    "HASH_SPACE",
    "DataDirectoryLocked",
    "MemoryStorage",
    "Row",
    "SQLiteStorage",
    "SortKeyRange",
    "Storage",
    "StorageError",
    "StorageUnavailable",
    "TableRecord",
    "UnsupportedSchemaVersion",
]
