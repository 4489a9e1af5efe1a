"""UpdateTableReplicaAutoScaling (global tables: dynastore/replication/auto_scaling.py, docs/global-tables.md)."""

from __future__ import annotations

from dynastore.replication.auto_scaling import update_table_replica_auto_scaling as handle

__all__ = ["handle"]
