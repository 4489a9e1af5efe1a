"""StreamSpecification on CreateTable and UpdateTable: create a table's
stream, close it, or create a new one (disabling and re-enabling makes a new
stream with a new label and ARN, as in DynamoDB; the old one stays readable
for 24 hours)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema


def enable_on_create(database: Database, schema: TableSchema, request: dict[str, Any]) -> TableSchema:
    """The new table with its stream, when the request enables one (persisted)."""
    specification = request.get("StreamSpecification") or {}
    if not specification.get("StreamEnabled"):
        return schema
    with database.storage.transaction():
        updated = database.streams.enable(schema, specification["StreamViewType"], schema.creation_time)
        return database.update_table(updated)


def apply_update(
    database: Database, schema: TableSchema, request: dict[str, Any], now: float
) -> TableSchema:
    """The table after UpdateTable's StreamSpecification (not yet persisted;
    tables.check_stream_disable has already refused enabling twice and
    disabling nothing)."""
    specification = request.get("StreamSpecification")
    if specification is None:
        return schema
    if specification.get("StreamEnabled"):
        return database.streams.enable(schema, specification["StreamViewType"], now)
    return database.streams.disable(schema, now)
