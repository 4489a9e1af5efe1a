"""Why a store cannot be opened or used, whatever the backend."""

from __future__ import annotations


class StorageError(RuntimeError):
    """The store cannot be opened (locked, unreachable, or written by newer code)."""


class DataDirectoryLocked(StorageError):
    pass


class UnsupportedSchemaVersion(StorageError):
    pass


class StorageUnavailable(StorageError):
    """The store cannot be reached now (a PostgreSQL server down or restarting,
    a dropped connection): the request in progress was not applied, or its
    outcome is unknown, and may be retried. The server answers it with
    InternalServerError, which every SDK retries."""
