"""DescribeGlobalTable (global tables: dynastore/replication/legacy.py, docs/global-tables.md)."""

from __future__ import annotations

from dynastore.replication.legacy import describe_global_table as handle

__all__ = ["handle"]
