"""DescribeLimits: the account's provisioned-capacity quotas (not what is left)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import limits

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "AccountMaxReadCapacityUnits": limits.ACCOUNT_MAX_READ_CAPACITY_UNITS,
        "AccountMaxWriteCapacityUnits": limits.ACCOUNT_MAX_WRITE_CAPACITY_UNITS,
        "TableMaxReadCapacityUnits": limits.TABLE_MAX_READ_CAPACITY_UNITS,
        "TableMaxWriteCapacityUnits": limits.TABLE_MAX_WRITE_CAPACITY_UNITS,
    }
