"""The replication queue's rows and the items' versions (dynastore/replication/queue.py):
what a write queues comes back exactly, rows sort by the time of their write, and
last writer wins on (timestamp, region)."""

from __future__ import annotations

import pytest

from dynastore.replication.queue import (
    Replicated,
    Version,
    parse_queue_row,
    parse_version,
    queue_partition,
    queue_row,
    version_row,
)


def write(item: bytes | None, at: float = 1_800_000_000.25, previous: Version | None = None) -> Replicated:
    return Replicated("us-east-1", "accounts", b"\x01pk", b"", item, len(item or b""), Version(at, "us-east-1"),
                      previous, item is None, at)


@pytest.mark.parametrize("queued", [
    write(b'{"pk":{"S":"a"},"note":{"S":"line\\nbreak"}}'),
    write(None, previous=Version(1_799_999_999.5, "us-west-2")),
    write(b'{"pk":{"B":"AAEC"}}', at=0.000001),
])
def test_a_queued_write_comes_back_exactly(queued: Replicated) -> None:
    row = queue_row("us-west-2", queued)
    assert row.pk == b"us-west-2"
    assert parse_queue_row(row) == queued


def test_rows_sort_by_the_time_of_their_write_and_strong_ones_have_their_own_partition() -> None:
    early, late = queue_row("eu-west-1", write(b"{}", at=10.0)), queue_row("eu-west-1", write(b"{}", at=10.000001))
    assert early.sk < late.sk and early.sk[:8] != late.sk[:8]
    assert queue_row("eu-west-1", write(b"{}"), strong=True).pk == queue_partition("eu-west-1", strong=True) == b"strong/eu-west-1"


@pytest.mark.parametrize(("newer", "older"), [
    (Version(2.0, "us-east-1"), Version(1.0, "us-west-2")),
    (Version(1.0, "us-west-2"), Version(1.0, "us-east-1")),  # a tie: the region decides, the same everywhere
])
def test_last_writer_wins(newer: Version, older: Version) -> None:
    assert newer.newer_than(older) and not older.newer_than(newer)
    assert newer.newer_than(None)
    assert not newer.newer_than(newer)


def test_a_version_row_round_trips_and_marks_deletions() -> None:
    row = version_row(7, b"pk", b"sk", Version(12.5, "ap-south-1"), deleted=True)
    assert row.pk == (7).to_bytes(8, "big") + b"pk" and row.sk == b"sk"
    assert parse_version(row) == Version(12.5, "ap-south-1")
    assert parse_version(None) is None
