"""Capacity units by DynamoDB's rules, and the ConsumedCapacity shape.

- Reads: one read unit per 4 KB (rounded up) strongly consistent, half of
  that eventually consistent, twice that transactional. Query and Scan sum the
  sizes of all items read before rounding; GetItem and each BatchGetItem item
  round on their own. A read of nothing costs the minimum (0.5 or 1).
- Writes: one write unit per 1 KB (rounded up), at least 1; an update is
  charged on the larger of the item before and after; a failed conditional
  write is still charged; transactional writes cost twice.
"""

from __future__ import annotations

from typing import Any

from dynastore import limits


def read_units(size_bytes: int, consistent: bool, transactional: bool = False) -> float:
    units = max(1, -(-size_bytes // limits.READ_UNIT_BYTES))
    if transactional:
        return float(units * 2)
    return float(units) if consistent else units / 2


def write_units(size_bytes: int, transactional: bool = False) -> float:
    units = max(1, -(-size_bytes // limits.WRITE_UNIT_BYTES))
    return float(units * 2 if transactional else units)


def consumed_capacity(
    return_mode: str | None,
    table_name: str,
    *,
    read: float = 0.0,
    write: float = 0.0,
    indexes: dict[str, dict[str, float]] | None = None,
    split: bool = False,
) -> dict[str, Any] | None:
    """The ConsumedCapacity object for ReturnConsumedCapacity ``return_mode``
    (None when the caller did not ask, or asked for NONE).

    ``indexes`` maps ``("GlobalSecondaryIndexes"|"LocalSecondaryIndexes")`` to
    ``{index_name: units}`` and is reported only in INDEXES mode. ``split``
    adds ReadCapacityUnits/WriteCapacityUnits beside CapacityUnits: DynamoDB
    reports that split only for the transactional operations; a plain read or
    write reports the aggregate alone, under TOTAL and INDEXES (a conformance
    suite's captures, eu-west-2, 2026; dynalite's recorded answers).
    """
    if return_mode not in ("TOTAL", "INDEXES"):
        return None
    total = read + write
    result: dict[str, Any] = {"TableName": table_name, "CapacityUnits": total}
    if split and read:
        result["ReadCapacityUnits"] = read
    if split and write:
        result["WriteCapacityUnits"] = write
    if return_mode == "INDEXES":
        table_units: dict[str, float] = {"CapacityUnits": read + write}
        if split and read:
            table_units["ReadCapacityUnits"] = read
        if split and write:
            table_units["WriteCapacityUnits"] = write
        result["Table"] = table_units
        for kind, per_index in (indexes or {}).items():
            result[kind] = {name: {"CapacityUnits": units} for name, units in per_index.items()}
            result["CapacityUnits"] += sum(per_index.values())
    return result
