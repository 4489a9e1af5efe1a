"""ListGlobalTables (global tables: dynastore/replication/legacy.py, docs/global-tables.md)."""

from __future__ import annotations

from dynastore.replication.legacy import list_global_tables as handle

__all__ = ["handle"]
