"""DescribeTableReplicaAutoScaling (global tables: dynastore/replication/legacy.py, docs/global-tables.md)."""

from __future__ import annotations

from dynastore.replication.legacy import describe_table_replica_auto_scaling as handle

__all__ = ["handle"]
