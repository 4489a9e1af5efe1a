"""Storage tables of dynastore's own for backups, PITR, exports and imports.

The catalogue loader (Database._load_catalogue) takes every storage table
whose name holds ``/index/`` for an index's entries and looks them up only
by an index's exact name, so a storage table named ``_dynastore/index/<kind>``
is never mistaken for a DynamoDB table ('/' never occurs in a table name,
and '_dynastore' can never be a table followed by an index name: index
names cannot contain '/'). The names carry the namespace's prefix
(dynastore/engine/namespaces.py), so every (account, region) has its own.

    from dynastore.backups.own_tables import own_table_id
    exports_id = own_table_id(database, "exports")   # created on first use
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

OWN_PREFIX = "_dynastore/index/"
"""Every storage table of this package is named ``OWN_PREFIX + kind``."""


def own_table_name(kind: str) -> str:
    """The name (within a namespace) of the storage table ``kind``
    (``backups``, ``backup/<id>``, ``change-log/<table uuid>``, ``exports``...)."""
    return OWN_PREFIX + kind


def find_own_table(database: Database, kind: str) -> int | None:
    """The storage id of this namespace's table ``kind`` (the first, should
    there be two), None if there is none. Reads the store's catalogue: callers
    cache the answer."""
    name = database.storage_name(own_table_name(kind))
    for record in database.storage.load_tables():
        if record.name == name:
            return record.table_id
    return None


_CACHE: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
"""storage -> {namespaced name: storage id}, for tables never dropped. Keyed
by the storage object itself (not its id(), which a later store may reuse)."""


def _cache(database: Database) -> dict[str, int]:
    found = _CACHE.get(database.storage)
    if found is None:
        found = _CACHE[database.storage] = {}
    return found


def own_table_id(database: Database, kind: str) -> int:
    """The storage id of this namespace's table ``kind`` (one that lives as
    long as the store: a registry), created on first use. Call it outside
    any write's transaction, so a rolled-back write cannot take it back."""
    name = database.storage_name(own_table_name(kind))
    cache = _cache(database)
    cached = cache.get(name)
    if cached is not None:
        return cached
    found = find_own_table(database, kind)
    if found is None:
        created = database.storage.create_table(name, b"{}")
        # Another server may have made it at the same moment: all take the
        # first one the catalogue holds, and a duplicate goes.
        found = find_own_table(database, kind)
        if found != created:
            database.storage.drop_table(created)
    assert found is not None
    cache[name] = found
    return found


def existing_own_table_id(database: Database, kind: str) -> int | None:
    """As ``own_table_id``, but None instead of creating it: for reads
    (ListTables asks whether restores run) that must not write."""
    name = database.storage_name(own_table_name(kind))
    cache = _cache(database)
    cached = cache.get(name)
    if cached is not None:
        return cached
    found = find_own_table(database, kind)
    if found is not None:
        cache[name] = found
    return found


def own_tables_with_prefix(database: Database, kind_prefix: str) -> list[tuple[str, int]]:
    """(kind, storage id) of this namespace's own tables whose kind starts with ``kind_prefix``."""
    prefix = database.storage_name(own_table_name(kind_prefix))
    start = len(database.storage_name(OWN_PREFIX))
    return [(record.name[start:], record.table_id) for record in database.storage.load_tables()
            if record.name.startswith(prefix)]
