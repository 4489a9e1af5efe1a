"""DescribeGlobalTableSettings (the legacy global-tables API: dynastore/replication/legacy.py)."""

from __future__ import annotations

from dynastore.replication.legacy import describe_global_table_settings as handle

__all__ = ["handle"]
