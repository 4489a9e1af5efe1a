"""UpdateTimeToLive: enable or disable TTL on a table, with DynamoDB's rules
(dynastore.engine.ttl). The answer echoes the request's specification, as
DynamoDB's does."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.engine import ttl

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    schema = database.table(request.get("TableName", ""))  # a table ARN too (Database.table)
    specification = request["TimeToLiveSpecification"]
    enabled = bool(specification["Enabled"])
    attribute = specification["AttributeName"]
    if "replication" in schema.extensions:  # a STRONG global table has no TTL (dynastore/replication/strong.py)
        from dynastore.replication.strong import check_time_to_live

        check_time_to_live(schema, enabled)
    state = ttl.updated_state(ttl.ttl_state(schema.extensions), enabled, attribute, database.now())
    extensions = {**schema.extensions, ttl.TTL_EXTENSION: state}
    updated = database.update_table(replace(schema, extensions=extensions))
    if "replication" in schema.extensions:  # a global table: every replica gets the setting
        from dynastore.replication.replica_updates import carry_settings

        carry_settings(database, updated, ttl=True)
    return {"TimeToLiveSpecification": {"Enabled": enabled, "AttributeName": attribute}}
