"""Storage backends behind one interface (see base.py).

``SQLiteStorage`` is the real store (one file per data directory, or in
memory); ``MemoryStorage`` is a pure-Python reference the contract tests
cross-check it against.
"""

from dynastore.storage.base import HASH_SPACE, Row, SortKeyRange, Storage, TableRecord
from dynastore.storage.memory import MemoryStorage
from dynastore.storage.sqlite import (
    DataDirectoryLocked,
    SQLiteStorage,
    StorageError,
    UnsupportedSchemaVersion,
)

__all__ = [
    "HASH_SPACE",
    "DataDirectoryLocked",
    "MemoryStorage",
    "Row",
    "SQLiteStorage",
    "SortKeyRange",
    "Storage",
    "StorageError",
    "TableRecord",
    "UnsupportedSchemaVersion",
]
