"""Point-in-time recovery: the change log, and the table as of a time T.

This module is the internal interface backups, PITR restores and exports
(ExportTableToPointInTime, dynastore/backups/exports.py) read tables
through. Its public functions are stable; everything starting with ``_`` is
not.

Is PITR on, and which times can be read::

    from dynastore.backups import pitr
    pitr.pitr_enabled(schema)                    # bool
    pitr.restorable_window(database, schema)     # (earliest, latest) epoch seconds, or None
    pitr.check_restorable(database, schema, at)  # raises DynamoDB's PITR errors

Reading the table as it was at ``at`` (epoch seconds, the database clock:
``database.now()``), a page at a time, memory bounded by the page::

    at = pitr.hold(database, table_name, holder="export/01234", at=at)   # see below
    position = None
    while True:
        page = pitr.read_page(database, database.table(table_name), at, position)
        for row in page.rows:     # storage.base.Row: row.item is the item as
            ...                   # DynamoDB JSON bytes, row.size its DynamoDB size
        if page.position is None:
            break
        position = page.position  # a tuple[int, bytes, bytes]; position_to_json /
                                  # position_from_json keep it across a restart
    pitr.release(database, table_name, holder="export/01234")

Rows come in the table's scan order (``(pk_hash, pk, sk)``), each item once.
Each ``read_page`` call is one consistent read: on the server call it from
one background step (memory and SQLite run one operation at a time; a
page is never interleaved with a write), never hold a page generator across
requests. ``pages_as_of`` is the convenience loop for code that runs on its
own (the embedded database, tests, a command over a data directory).

``read_changes_page(database, schema, since, until, position)`` pages
through the items whose state changed in ``(since, until]`` (an
INCREMENTAL_EXPORT): each ``Change`` has the item before (at ``since``) and
after (at ``until``), either None when absent, and ``micros``, the time of
its last change in the period.

Holding a view
    The log keeps every change after the time a reader reads at as long as
    the reader ``hold``s it (the PITR window alone would let a long read's
    changes be pruned once ``at`` leaves the window). ``hold`` with
    ``at=database.now()`` works on any table, PITR on or not: it starts a
    change log if the table has none (so an export without PITR, or an
    on-demand backup, is one consistent point in time taken without
    blocking writers). With ``at`` in the past the table must have PITR on
    and ``at`` inside its window. Holds are stored (they survive a restart,
    so a resumed job still reads the same view); ``release`` when done, and
    ``holders(schema)`` to find leftovers. ``hold`` and ``release`` change
    the table's definition (one catalogue write): call them once a job, not
    once a page.

How it works
    While a table has a change log (``CHANGE_LOG_EXTENSION`` in its
    ``TableSchema.extensions``), every write of one of its items (the one
    write path, dynastore/write_path.py: puts, updates, deletes, batches,
    transactions, TTL deletions, restores) adds, in the same commit, one
    row to the log: the item's image *before* the write (or "absent"),
    keyed by the item's key and the write's time. The item as of T is then
    the image before the first change after T, or the current item when
    nothing changed since T; a merge of the table's scan with the log's
    (both in key order) gives the whole table as of T with bounded memory.
    Entries older than the window (and than every hold) are pruned by a
    background pass (``prune``); correctness never depends on that pass.
    Writes to a logged table always read the row they replace (one more
    read for a blind put) and write one more row: docs/backups.md has
    the measured cost.

Times are the database clock's: moving it (POST /_dynastore/clock) moves the
window. Changes of one item are ordered by time then by a per-process
counter; several servers over PostgreSQL rely on their clocks agreeing to
the microsecond for writes of one item in the same microsecond.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from dynastore import limits
from dynastore.backups.errors import (
    ContinuousBackupsUnavailableException,
    pitr_not_enabled,
    restore_time_outside_window,
)
from dynastore.backups.own_tables import own_table_name, own_tables_with_prefix
from dynastore.engine.indexes import TERMINATOR, escape
from dynastore.storage.base import HASH_SPACE, CatalogueChanged, Row, RowChange

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

CHANGE_LOG_EXTENSION = "change_log"
"""``TableSchema.extensions`` key while the table keeps a change log:
``{"storage_id", "kind", "started", "pitr": {"enabled_at", "period_days"} | None,
"holds": {holder: at}}``."""

RECOVERY_PERIOD_DEFAULT_DAYS = limits.PITR_RECOVERY_PERIOD_DEFAULT_DAYS
RECOVERY_PERIOD_MIN_DAYS = limits.PITR_RECOVERY_PERIOD_MIN_DAYS
RECOVERY_PERIOD_MAX_DAYS = limits.PITR_RECOVERY_PERIOD_MAX_DAYS
DAY_SECONDS = 86_400
PAGE_ROWS = 1000
"""Items per ``read_page`` by default."""
PAGE_BYTES = 4 * 1024 * 1024
"""A page stops once its items reach this many bytes (DynamoDB size)."""
PAGE_VISITS = 4
"""A page also stops after ``PAGE_VISITS * max_rows`` keys looked at (keys
deleted since T cost a look but give no row)."""
PRUNE_BATCH_ROWS = 1000

_SUFFIX_BYTES = 16
"""A log row's sort key: escape(item sk) + TERMINATOR + 8-byte time in
microseconds + 8-byte counter, all big-endian."""
_AFTER_KEY = TERMINATOR + b"\xff" * (_SUFFIX_BYTES + 1)
"""Sorts after every log row of one item key."""
_PRESENT = b"\x01"
_ABSENT = b"\x00"
_counter = itertools.count(int.from_bytes(os.urandom(3), "big") << 32)
"""Orders two changes of one item in one microsecond (commit order within
a process; a random start keeps two processes' numbers apart)."""

Position = tuple[int, bytes, bytes]
"""Where a page stopped: the last key looked at, ``(pk_hash, pk, sk)``."""


class Page(NamedTuple):
    rows: list[Row]
    position: Position | None
    """None: the table ends here; else pass it to the next ``read_page``."""


class Change(NamedTuple):
    pk_hash: int
    pk: bytes
    sk: bytes
    before: Row | None
    after: Row | None
    micros: int = 0
    """When the write that left the item as ``after`` happened (its last
    change in the period; epoch microseconds of the database clock): an
    incremental export's WriteTimestampMicros."""


class ChangesPage(NamedTuple):
    changes: list[Change]
    position: Position | None


@dataclass(frozen=True)
class PitrStatus:
    """What DescribeContinuousBackups says of a table."""

    enabled: bool
    period_days: int
    earliest: float | None = None
    latest: float | None = None


# --- the table's settings -------------------------------------------------------


def change_log(schema: TableSchema) -> dict[str, Any] | None:
    """The table's change-log settings, None while it keeps none."""
    return schema.extensions.get(CHANGE_LOG_EXTENSION)


def pitr_enabled(schema: TableSchema) -> bool:
    """PointInTimeRecoveryStatus ENABLED."""
    log = change_log(schema)
    return log is not None and log.get("pitr") is not None


def pitr_status(database: Database, schema: TableSchema) -> PitrStatus:
    log = change_log(schema)
    settings = None if log is None else log.get("pitr")
    if settings is None:
        return PitrStatus(False, RECOVERY_PERIOD_DEFAULT_DAYS)
    now = database.now()
    period = int(settings["period_days"])
    earliest = max(float(settings["enabled_at"]), now - period * DAY_SECONDS)
    return PitrStatus(True, period, earliest, max(earliest, now - limits.PITR_LATEST_RESTORABLE_LAG_SECONDS))


def restorable_window(database: Database, schema: TableSchema) -> tuple[float, float] | None:
    """(EarliestRestorableDateTime, LatestRestorableDateTime), epoch seconds
    of the database clock; None while PITR is off. The latest is DynamoDB's:
    PITR_LATEST_RESTORABLE_LAG_SECONDS (5 minutes) before now, though every
    committed write is in the log at once (an export may read up to now:
    ``readable_window``); never before the earliest."""
    status = pitr_status(database, schema)
    if not status.enabled:
        return None
    assert status.earliest is not None and status.latest is not None
    return status.earliest, status.latest


def readable_window(database: Database, schema: TableSchema) -> tuple[float, float] | None:
    """(earliest, now): the times the log can read the table at while PITR
    is on (ExportTableToPointInTime's bounds), None while it is off."""
    window = restorable_window(database, schema)
    return None if window is None else (window[0], max(window[0], database.now()))


def check_restorable(database: Database, schema: TableSchema, at: float) -> None:
    """Refuse, with DynamoDB's errors, a restore of ``schema`` at ``at``
    (outside [EarliestRestorableDateTime, LatestRestorableDateTime])."""
    window = restorable_window(database, schema)
    if window is None:
        raise pitr_not_enabled(schema.name)
    if not window[0] <= at <= window[1]:
        raise restore_time_outside_window()


# --- turning the log on and off (UpdateContinuousBackups, holds) -------------------


def enable(database: Database, schema: TableSchema, period_days: int) -> TableSchema:
    """PITR on (or its period changed): the window starts now when it was off."""

    def edit(current: TableSchema, log: dict[str, Any] | None) -> dict[str, Any]:
        settings = None if log is None else log.get("pitr")
        enabled_at = database.now() if settings is None else settings["enabled_at"]
        return {"pitr": {"enabled_at": enabled_at, "period_days": period_days}}

    changed = _update_log(database, schema.name, edit)
    assert changed is not None
    return changed


def disable(database: Database, schema: TableSchema) -> TableSchema:
    """PITR off: the window and its history go (a held view stays readable)."""

    def edit(current: TableSchema, log: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if log is None or log.get("pitr") is None else {"pitr": None}

    changed = _update_log(database, schema.name, edit)
    assert changed is not None
    return changed


def hold(database: Database, table_name: str, holder: str, at: float | None = None) -> float:
    """Keep the table readable as of ``at`` (default: now) until ``release``
    (module docstring); returns the time held, which is the one to read at
    (``at``, or a moment after the call began when ``at`` is None or not in
    the past). Raises TableNotFound (ResourceNotFoundException),
    PointInTimeRecoveryUnavailableException or InvalidRestoreTimeException
    when ``at`` is in the past and not readable (before the window). Holding
    again under the same ``holder`` moves its time."""

    def edit(schema: TableSchema, log: dict[str, Any] | None) -> dict[str, Any]:
        now = database.now()
        held = now if at is None or at >= now else at
        if held < now:
            window = readable_window(database, schema)
            if window is None:
                raise pitr_not_enabled(schema.name)
            if held < window[0]:
                raise restore_time_outside_window()
        holds = dict(log.get("holds", {})) if log is not None else {}
        holds[holder] = held
        return {"holds": holds}

    schema = _update_log(database, table_name, edit)
    assert schema is not None
    return float(holders(schema)[holder])


def release(database: Database, table_name: str, holder: str) -> None:
    """Stop holding a view (a table deleted meanwhile is fine)."""

    def edit(schema: TableSchema, log: dict[str, Any] | None) -> dict[str, Any] | None:
        if log is None or holder not in log.get("holds", {}):
            return None
        return {"holds": {name: at for name, at in log["holds"].items() if name != holder}}

    _update_log(database, table_name, edit, missing_ok=True)


def holders(schema: TableSchema) -> dict[str, float]:
    """Who holds a view of the table, and at which time."""
    log = change_log(schema)
    return dict(log.get("holds", {})) if log is not None else {}


_KEEP: Any = object()


def _update_log(database: Database, table_name: str,
                edit: Callable[[TableSchema, dict[str, Any] | None], dict[str, Any] | None],
                missing_ok: bool = False) -> TableSchema | None:
    """Change the table's change-log settings: ``edit(schema, log)`` gives
    the new ``pitr`` and/or ``holds`` (None: nothing to change). The change
    is a compare-and-set on the table's generation in the catalogue: when
    another server (or another request of this one) changed the table since
    this copy of it was loaded, the catalogue is reloaded and ``edit`` runs
    again on the definition as it is now, so no change is lost (one made on
    a stale copy would drop another's PITR or held view). Returns the
    table's definition after (None: the table is gone and ``missing_ok``)."""
    attempts = limits.PITR_SETTINGS_ATTEMPTS
    for attempt in range(attempts):
        schema = database.tables.get(table_name) if missing_ok else database.table(table_name)
        if schema is None:
            return None
        log = change_log(schema)
        changes = edit(schema, log)
        if changes is None:
            return schema
        try:
            return _set_log(database, schema, log, **changes)
        except CatalogueChanged:
            if attempt == attempts - 1:
                raise
            # A random pause: contenders that paused alike would collide again
            # in step (two servers' backups and PITR switches did, under load).
            database.storage.pause(random.uniform(0, limits.PITR_SETTINGS_RETRY_SECONDS * (attempt + 1)))
            database.reload_catalogue()  # refused: this copy is stale, whatever a refresh would think
    raise AssertionError("unreachable")


def _set_log(database: Database, schema: TableSchema, log: dict[str, Any] | None,
             pitr: Any = _KEEP, holds: Any = _KEEP) -> TableSchema:
    if schema.status not in ("ACTIVE", "UPDATING"):
        raise ContinuousBackupsUnavailableException(
            f"Backups are being enabled for the table: {schema.name}. Please retry later"
        )
    new = dict(log) if log is not None else {"pitr": None, "holds": {}}
    if pitr is not _KEEP:
        new["pitr"] = pitr
    if holds is not _KEEP:
        new["holds"] = holds
    extensions = dict(schema.extensions)
    storage = database.storage
    if new["pitr"] is None and not new["holds"]:
        if log is None:
            return schema
        extensions.pop(CHANGE_LOG_EXTENSION)
        with _changing(database, schema):
            changed = database.update_table(replace(schema, extensions=extensions))
            storage.drop_table(int(log["storage_id"]))
        return changed
    with _changing(database, schema):
        if log is None:
            # The table's lock is held from here to the commit: other servers'
            # writes to it wait, and those after see the new generation (with
            # the log) and compute again, so the log is complete from now on.
            started = database.now()
            kind = f"change-log/{schema.table_uuid}/{int(started * 1_000_000)}"
            new["kind"] = kind
            new["started"] = started
            new["holds"] = {name: max(at, started) for name, at in new["holds"].items()}
            if new["pitr"] is not None:
                new["pitr"] = dict(new["pitr"], enabled_at=max(new["pitr"]["enabled_at"], started))
            new["storage_id"] = storage.create_table(database.storage_name(own_table_name(kind)), b"{}")
        extensions[CHANGE_LOG_EXTENSION] = new
        return database.update_table(replace(schema, extensions=extensions))


@contextmanager
def _changing(database: Database, schema: TableSchema) -> Iterator[None]:
    """One transaction that first takes the table's lock (then catalogue
    rows: the order every catalogue change keeps, so two never wait for each
    other in a cycle). If it fails, Database.update_table's copy of the
    table is taken back (only if nothing newer came in meanwhile: putting
    the copy from before back blindly undid another request's reload)."""
    storage = database.storage
    with storage.transaction():
        storage.lock_table(schema.table_id)
        yield


def drop_orphan_logs(database: Database) -> int:
    """Drop the change logs of tables deleted (DeleteTable does not know of
    them); returns how many went."""
    live = {
        int(log["storage_id"]) for schema in database.tables.values()
        if (log := change_log(schema)) is not None
    }
    uuids = {schema.table_uuid for schema in database.tables.values()}
    dropped = 0
    for kind, storage_id in own_tables_with_prefix(database, "change-log/"):
        table_uuid = kind.split("/")[1]
        if storage_id not in live and table_uuid not in uuids:
            database.storage.drop_table(storage_id)
            dropped += 1
    return dropped


# --- the write path's part ------------------------------------------------------------


def log_change(database: Database, log: dict[str, Any], old_row: Row | None, pk: bytes, sk: bytes) -> RowChange:
    """The log row of one item write (dynastore/write_path.py adds it to the
    write's commit): the item's image before the write, keyed by its key and now."""
    micros = int(database.now() * 1_000_000)
    log_sk = escape(sk) + TERMINATOR + micros.to_bytes(8, "big") + next(_counter).to_bytes(8, "big")
    if old_row is None:
        data, size, pk_hash = _ABSENT, 0, None
    else:
        data, size, pk_hash = _PRESENT + old_row.item, old_row.size, old_row.pk_hash
    if pk_hash is None:
        from dynastore.types.keys import partition_hash

        pk_hash = partition_hash(pk)
    storage_id = int(log["storage_id"])
    return RowChange(storage_id, pk, log_sk, Row(pk_hash, pk, log_sk, data, size))


# --- reading the table as of T ----------------------------------------------------------


class _Entry(NamedTuple):
    key: Position
    image: Row | None
    """The item before the change (None: it did not exist)."""
    micros: int


def _entries(database: Database, storage_id: int, after: Position | None) -> Iterator[_Entry]:
    start = None if after is None else (after[0], after[1], escape(after[2]) + _AFTER_KEY)
    for row in database.storage.scan(storage_id, 0, HASH_SPACE, exclusive_start=start):
        item_sk = row.sk[: -(_SUFFIX_BYTES + len(TERMINATOR))].replace(b"\x00\xff", b"\x00")
        micros = int.from_bytes(row.sk[-_SUFFIX_BYTES:-8], "big")
        image = None
        if row.item[:1] == _PRESENT:
            image = Row(row.pk_hash, row.pk, item_sk, row.item[1:], row.size)
        yield _Entry((row.pk_hash, row.pk, item_sk), image, micros)


def _histories(entries: Iterator[_Entry], times: tuple[int, ...],
               latest_until: int | None = None) -> Iterator[tuple[Position, list[Any]]]:
    """Per item key (in key order): for each time in ``times``, the entry of
    its first change after that time (its ``image`` is the item before), or
    ``_UNCHANGED`` (bounded memory: one key's answers at a time). With
    ``latest_until``, one more answer: the key's last change at or before it."""
    key: Position | None = None
    answers: list[Any] = []
    width = len(times) + (latest_until is not None)
    for entry in entries:
        if entry.key != key:
            if key is not None:
                yield key, answers
            key, answers = entry.key, [_UNCHANGED] * width
        for position, micros in enumerate(times):
            if answers[position] is _UNCHANGED and entry.micros > micros:
                answers[position] = entry
        if latest_until is not None and entry.micros <= latest_until:
            answers[-1] = entry
    if key is not None:
        yield key, answers


_UNCHANGED: Any = object()


def _log_id(schema: TableSchema) -> int:
    log = change_log(schema)
    if log is None:
        raise ValueError(f"table {schema.name} keeps no change log: hold a view first")
    return int(log["storage_id"])


def _micros(at: float) -> int:
    return int(at * 1_000_000)


def _merged(database: Database, schema: TableSchema, times: tuple[int, ...],
            position: Position | None,
            latest_until: int | None = None) -> Iterator[tuple[Position, Row | None, list[Any]]]:
    """Every key of the table now or in the log after ``position``: (key,
    current row, answers of ``_histories``)."""
    current = database.storage.scan(schema.table_id, 0, HASH_SPACE, exclusive_start=position)
    logged = _histories(_entries(database, _log_id(schema), position), times, latest_until)
    row = next(current, None)
    history = next(logged, None)
    none = [_UNCHANGED] * (len(times) + (latest_until is not None))
    while row is not None or history is not None:
        row_key = None if row is None else (row.pk_hash, row.pk, row.sk)
        if history is None or (row_key is not None and row_key < history[0]):
            assert row is not None and row_key is not None
            yield row_key, row, none
            row = next(current, None)
        elif row_key is None or history[0] < row_key:
            yield history[0], None, history[1]
            history = next(logged, None)
        else:
            yield row_key, row, history[1]
            row, history = next(current, None), next(logged, None)


def read_page(
    database: Database,
    schema: TableSchema,
    at: float,
    position: Position | None = None,
    max_rows: int = PAGE_ROWS,
    max_bytes: int = PAGE_BYTES,
) -> Page:
    """Up to ``max_rows`` items (and about ``max_bytes``) of the table as it
    was at ``at``, after ``position`` (None: from the start). The table
    must keep a change log reaching back to ``at`` (PITR on and ``at`` in
    its window, or a ``hold``): else ValueError."""
    _check_readable(database, schema, at)
    rows: list[Row] = []
    size = 0
    visits = 0
    with database.storage.snapshot():
        for key, current, answers in _merged(database, schema, (_micros(at),), position):
            visits += 1
            then = current if answers[0] is _UNCHANGED else answers[0].image
            if then is not None:
                rows.append(then)
                size += then.size
            if len(rows) >= max_rows or size >= max_bytes or visits >= PAGE_VISITS * max_rows:
                return Page(rows, key)
    return Page(rows, None)


def read_changes_page(
    database: Database,
    schema: TableSchema,
    since: float,
    until: float,
    position: Position | None = None,
    max_rows: int = PAGE_ROWS,
) -> ChangesPage:
    """The items changed in ``(since, until]``, each with its state at
    ``since`` and at ``until`` (None: absent; an item changed and changed
    back is included, with equal rows). Needs the log back to ``since``."""
    _check_readable(database, schema, since)
    changes: list[Change] = []
    visits = 0
    until_micros = _micros(until)
    with database.storage.snapshot():
        for key, current, answers in _merged(database, schema, (_micros(since), until_micros), position,
                                             latest_until=until_micros):
            visits += 1
            first, after, latest = answers
            if first is not _UNCHANGED and first.micros <= until_micros:
                changes.append(Change(*key, first.image, current if after is _UNCHANGED else after.image,
                                      latest.micros))
            if len(changes) >= max_rows or visits >= PAGE_VISITS * max_rows:
                return ChangesPage(changes, key)
    return ChangesPage(changes, None)


def pages_as_of(database: Database, schema: TableSchema, at: float, max_rows: int = PAGE_ROWS) -> Iterator[Page]:
    """Every page of the table as of ``at`` (for code running on its own)."""
    position = None
    while True:
        page = read_page(database, schema, at, position, max_rows)
        yield page
        if page.position is None:
            return
        position = page.position


def _check_readable(database: Database, schema: TableSchema, at: float) -> None:
    log = change_log(schema)
    if log is None or float(log["started"]) > at:
        raise ValueError(f"the change log of {schema.name} does not reach back to {at}")


def position_to_json(position: Position | None) -> list[Any] | None:
    return None if position is None else [position[0], position[1].hex(), position[2].hex()]


def position_from_json(raw: list[Any] | None) -> Position | None:
    return None if raw is None else (int(raw[0]), bytes.fromhex(raw[1]), bytes.fromhex(raw[2]))


# --- pruning ----------------------------------------------------------------------------


def prune_cutoff(database: Database, schema: TableSchema) -> float | None:
    """Log entries older than this are needed by nobody (None: no log)."""
    log = change_log(schema)
    if log is None:
        return None
    needed = [at for at in log.get("holds", {}).values()]
    settings = log.get("pitr")
    if settings is not None:
        needed.append(database.now() - int(settings["period_days"]) * DAY_SECONDS)
    return min(needed) if needed else database.now()


def prune(database: Database, schema: TableSchema, position: Position | None = None,
          max_rows: int = PRUNE_BATCH_ROWS) -> Position | None:
    """Delete a batch of the log's entries nobody needs; returns where to go
    on (None: the log was walked to its end). An entry is needed while a
    view at or after some needed time may read it: the first change of an
    item after that time, and every later one."""
    cutoff = prune_cutoff(database, schema)
    if cutoff is None:
        return None
    storage = database.storage
    storage_id = _log_id(schema)
    limit = _micros(cutoff)
    start = None if position is None else (position[0], position[1], position[2])
    doomed: list[tuple[bytes, bytes]] = []
    last: Position | None = None
    for count, row in enumerate(storage.scan(storage_id, 0, HASH_SPACE, exclusive_start=start)):
        if count >= max_rows:
            break
        last = (row.pk_hash, row.pk, row.sk)
        if int.from_bytes(row.sk[-_SUFFIX_BYTES:-8], "big") <= limit:
            doomed.append((row.pk, row.sk))
    else:
        last = None
    if doomed:
        with storage.transaction():
            for pk, sk in doomed:
                storage.delete(storage_id, pk, sk)
    return last
