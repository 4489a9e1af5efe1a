"""CreateGlobalTable (global tables: dynastore/replication/legacy.py, docs/global-tables.md)."""

from __future__ import annotations

from dynastore.replication.legacy import create_global_table as handle

__all__ = ["handle"]
