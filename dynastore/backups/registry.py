"""Where backups and restores are recorded: one row each in a storage table
of dynastore's own per namespace (dynastore/backups/own_tables.py).

- ``backups``: pk ``backup``, sk the backup's id (``<14-digit ms>-<8 hex>``,
  the tail of its ARN, so rows sort by creation time), item a JSON record:
  name, status, the source table's definition and settings at the backup's
  time, the storage table holding its items (``backup/<id>``), and while
  CREATING the copy's progress;
- ``restores``: pk ``restore``, sk the restore's id, item a JSON record:
  the target table's definition (with the storage ids of the table and
  indexes it is built in under names of dynastore's own), the source (a
  backup, or a table at a time), progress, and IN_PROGRESS / FAILED with a
  reason. A restore that completes removes its record.

Each job step changes its record in the same transaction as the items it
copied, so a kill -9 leaves a record that says exactly how far it got.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from dynastore.backups.own_tables import own_table_id
from dynastore.storage.base import Row, RowChange, SortKeyRange
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database

BACKUPS_KIND = "backups"
RESTORES_KIND = "restores"
BACKUP_PK = b"backup"
RESTORE_PK = b"restore"

CREATING = "CREATING"
AVAILABLE = "AVAILABLE"
DELETED = "DELETED"
IN_PROGRESS = "IN_PROGRESS"
FAILED = "FAILED"


def new_backup_id(now: float) -> str:
    """DynamoDB's: creation time in ms, 14 digits, and 8 hex digits
    (``.../backup/01489602797149-73d8d5bc``)."""
    return f"{int(now * 1000):014d}-{secrets.token_hex(4)}"


def backup_id_of_arn(arn: Any) -> str | None:
    """The id at the end of a backup ARN, None if it is not one's shape."""
    if not isinstance(arn, str):
        return None
    _, marker, backup_id = arn.rpartition("/backup/")
    if not marker or len(backup_id) != 23 or backup_id[14] != "-":
        return None
    if not (backup_id[:14].isdigit() and all(c in "0123456789abcdef" for c in backup_id[15:])):
        return None
    return backup_id


@dataclass
class BackupRecord:
    backup_id: str
    arn: str
    name: str
    table_name: str
    table_id: str
    """The source table's TableId (a uuid), not its storage id."""
    table_arn: str
    created: float
    """BackupCreationDateTime: the time the backup's copy is as of."""
    source: dict[str, Any]
    """The source table's TableSchema metadata (JSON), as it was."""
    items_storage_id: int
    status: str = CREATING
    backup_type: str = "USER"
    expires: float | None = None
    position: list[Any] | None = None
    item_count: int = 0
    size_bytes: int = 0
    total_items: int = 0
    total_bytes: int = 0
    """The source table's count and size when the backup began (progress)."""

    @property
    def holder(self) -> str:
        return f"backup/{self.backup_id}"

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> BackupRecord:
        return cls(**orjson.loads(data))


@dataclass
class RestoreRecord:
    restore_id: str
    target: str
    schema: dict[str, Any]
    """The target's TableSchema metadata (JSON) with its storage ids."""
    generation: int
    source_backup_arn: str | None
    source_table_arn: str
    source_table_name: str
    source_table_id: str
    restore_time: float
    started: float
    status: str = IN_PROGRESS
    reason: str | None = None
    position: list[Any] | None = None
    item_count: int = 0
    size_bytes: int = 0
    total_items: int = 0
    total_bytes: int = 0
    backup_items_storage_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def holder(self) -> str:
        return f"restore/{self.restore_id}"

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> RestoreRecord:
        return cls(**orjson.loads(data))


def _row(pk: bytes, sk: bytes, data: bytes) -> Row:
    return Row(partition_hash(pk), pk, sk, data, len(data))


def backups_id(database: Database) -> int:
    return own_table_id(database, BACKUPS_KIND)


def restores_id(database: Database) -> int:
    return own_table_id(database, RESTORES_KIND)


def backup_change(database: Database, record: BackupRecord | None, backup_id: str) -> RowChange:
    """The change that stores (or, with None, forgets) a backup's record."""
    sk = backup_id.encode()
    row = None if record is None else _row(BACKUP_PK, sk, record.to_json())
    return RowChange(backups_id(database), BACKUP_PK, sk, row)


def restore_change(database: Database, record: RestoreRecord | None, restore_id: str) -> RowChange:
    sk = restore_id.encode()
    row = None if record is None else _row(RESTORE_PK, sk, record.to_json())
    return RowChange(restores_id(database), RESTORE_PK, sk, row)


def restore_row(database: Database, record: RestoreRecord) -> Row:
    return _row(RESTORE_PK, record.restore_id.encode(), record.to_json())


def apply(database: Database, change: RowChange) -> None:
    storage = database.storage
    if change.row is None:
        storage.delete(change.table_id, change.pk, change.sk)
    else:
        storage.put(change.table_id, change.row)


def get_backup(database: Database, backup_id: str) -> BackupRecord | None:
    row = database.storage.get(backups_id(database), BACKUP_PK, backup_id.encode())
    return None if row is None else BackupRecord.from_json(row.item)


def backups(database: Database, after: str | None = None) -> Iterator[BackupRecord]:
    """Every backup of the namespace, oldest first (after the id ``after``)."""
    sort_range = SortKeyRange() if after is None else SortKeyRange(low=after.encode(), low_inclusive=False)
    for row in database.storage.query(backups_id(database), BACKUP_PK, sort_range):
        yield BackupRecord.from_json(row.item)


def get_restore(database: Database, restore_id: str) -> RestoreRecord | None:
    row = database.storage.get(restores_id(database), RESTORE_PK, restore_id.encode())
    return None if row is None else RestoreRecord.from_json(row.item)


def restores(database: Database) -> Iterator[RestoreRecord]:
    for row in database.storage.query(restores_id(database), RESTORE_PK, SortKeyRange()):
        yield RestoreRecord.from_json(row.item)

