"""kill -9 at storage level: every acknowledged write survives.

A writer subprocess opens SQLiteStorage on a data directory and writes rows,
printing each key only after the write call returned (its acknowledgement).
The test SIGKILLs it mid-stream, reopens the directory and requires every
acknowledged row, byte for byte. Several rounds run on the same directory, so
recovery of a WAL left by a killed process is exercised too, and the lock
file of a dead process must not keep the directory locked.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dynastore.storage import SortKeyRange, SQLiteStorage
from dynastore.storage.sqlite import DATABASE_FILE_NAME
from dynastore.types.keys import partition_hash

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 3
ACKNOWLEDGEMENTS_BEFORE_KILL = 200

WRITER = r"""
import sys
from pathlib import Path
from dynastore.storage import Row, SQLiteStorage
from dynastore.types.keys import partition_hash

directory, first, batch = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
store = SQLiteStorage(directory)
tables = store.load_tables()
table_id = tables[0].table_id if tables else store.create_table("t", b"{}")

def row(number):
    pk = b"key-%d" % number
    item = b'{"pk":{"S":"key-%d"},"pad":{"S":"' % number + b"%d" % number * 60 + b'"}}'
    return Row(partition_hash(pk), pk, b"sk", item, len(item))

number = first
while True:
    if batch == 1:
        store.put(table_id, row(number))
    else:
        with store.transaction():
            for offset in range(batch):
                store.put(table_id, row(number + offset))
    number += batch
    sys.stdout.write("%d\n" % (number - 1))  # every key below this is acknowledged
    sys.stdout.flush()
"""


def expected_item(number: int) -> bytes:
    return b'{"pk":{"S":"key-%d"},"pad":{"S":"' % number + b"%d" % number * 60 + b'"}}'


def run_writer_and_kill(directory: Path, first: int, batch: int) -> int:
    """Start a writer at key ``first``; SIGKILL it after enough acknowledgements.
    Returns the highest acknowledged key."""
    environment = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(directory), str(first), str(batch)],
        stdout=subprocess.PIPE,
        env=environment,
    ) as process:
        assert process.stdout is not None
        acknowledged = first - 1
        try:
            for _ in range(ACKNOWLEDGEMENTS_BEFORE_KILL):
                line = process.stdout.readline()
                if not line:
                    pytest.fail(f"writer exited early with code {process.wait()}")
                acknowledged = int(line)
        finally:
            process.send_signal(signal.SIGKILL)
            # Lines written before the kill are acknowledgements too.
            remaining = process.stdout.read()
            process.wait()
    for line in remaining.splitlines(keepends=True):
        if line.endswith(b"\n"):
            acknowledged = int(line)
    assert process.returncode == -signal.SIGKILL
    return acknowledged


@pytest.mark.parametrize("batch", [1, 10], ids=["one-row-per-commit", "10-row-transactions"])
def test_acknowledged_writes_survive_kill_9(tmp_path: Path, batch: int) -> None:
    directory = tmp_path / "data"
    next_key = 0
    for _ in range(ROUNDS):
        acknowledged = run_writer_and_kill(directory, next_key, batch)
        store = SQLiteStorage(directory)  # the dead writer's lock is gone
        try:
            (table,) = store.load_tables()
            for number in range(acknowledged + 1):
                pk = b"key-%d" % number
                row = store.get(table.table_id, pk, b"sk")
                assert row is not None, f"acknowledged key {number} lost"
                assert row.item == expected_item(number)
                assert row.size == len(row.item)
                assert row.pk_hash == partition_hash(pk)
            # Unacknowledged writes may or may not be there, but a batch is all or nothing.
            count, _ = store.table_statistics(table.table_id)
            assert (count - (acknowledged + 1)) % batch == 0
            assert list(store.query(table.table_id, b"key-0", SortKeyRange()))
            next_key = count
        finally:
            store.close()
    raw = sqlite3.connect(directory / DATABASE_FILE_NAME)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()
