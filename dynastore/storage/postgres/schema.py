"""dynastore's schema in a PostgreSQL database: its version, and the
migrations that bring a database to it.

The version lives in ``dynastore_schema`` (one row). Migrations are the
numbered SQL files of ``migrations/`` (``0001_initial.sql``, ...), applied in
order, each in the same transaction as the version it leads to. A server
takes a transaction-level advisory lock first, so two servers starting on
one empty database never both apply a migration. A database written by a
newer dynastore (a version above the last migration here) is refused with
both versions in the message, before anything is changed.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import psycopg

from dynastore.storage.errors import UnsupportedSchemaVersion

MIGRATION_LOCK_KEY = 0x6479_6E61_7374_6F72  # "dynastor": the advisory lock of migrations
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migrations() -> list[tuple[int, str]]:
    """(version, SQL) of every migration in the package, in order."""
    found = []
    for entry in resources.files(__package__).joinpath("migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.read_text(encoding="utf-8")))
    found.sort()
    if [version for version, _ in found] != list(range(1, len(found) + 1)):
        raise RuntimeError("dynastore's PostgreSQL migrations are not numbered 1..n")
    return found


SCHEMA_VERSION = len(migrations())
"""The schema version this code writes: the number of the last migration."""


def installed_version(connection: psycopg.Connection[Any]) -> int:
    """The database's schema version; 0 when dynastore was never installed there."""
    exists = connection.execute("SELECT to_regclass('dynastore_schema') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = connection.execute("SELECT version FROM dynastore_schema").fetchone()
    return int(row[0]) if row else 0


def ensure_schema(connection: psycopg.Connection[Any], where: str) -> int:
    """Bring the database to SCHEMA_VERSION (or refuse a newer one); returns
    the version it had. ``connection`` is in autocommit mode."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        version = installed_version(connection)
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaVersion(
                f"{where}: the database was written by a newer dynastore (schema version "
                f"{version}; this version of dynastore reads versions 1 to {SCHEMA_VERSION}). "
                "Upgrade dynastore to use it."
            )
        if version == SCHEMA_VERSION:
            return version
        if version == 0:
            connection.execute("CREATE TABLE dynastore_schema (version integer NOT NULL)")
            connection.execute("INSERT INTO dynastore_schema VALUES (0)")
        for number, sql in migrations()[version:]:
            connection.execute(sql.encode())
            connection.execute("UPDATE dynastore_schema SET version = %s", (number,))
    return version
