"""Sort-key ranges and read chunks, shared by the storage backends.

A Query's ``SortKeyRange`` (bounds, a begins_with prefix) and its exclusive
start reduce to at most one lower and one upper ``Bound``; both backends then
read the partition in chunks of FIRST_CHUNK_ROWS doubling up to
MAX_CHUNK_ROWS, each chunk read at once and the next one starting strictly
after the last key returned (so an abandoned iterator holds nothing, and
writes between chunks never break one).
"""

from __future__ import annotations

from dynastore.storage.base import SortKeyRange

FIRST_CHUNK_ROWS = 32
"""Rows a read iterator fetches first: small, since many reads stop early."""
MAX_CHUNK_ROWS = 512
"""Chunks double up to this bound, so long reads amortise the re-query."""

def first_chunk_rows(expected_rows: int | None) -> int:
    """The first chunk of a read: what the caller expects to read when it
    said (a Limit of 25 reads 25 rows, not 32), never more than FIRST_CHUNK_ROWS."""
    if expected_rows is None:
        return FIRST_CHUNK_ROWS
    return max(1, min(expected_rows, FIRST_CHUNK_ROWS))


Bound = tuple[bytes, bool]
"""(value, inclusive) of one end of a sort-key range."""


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with
    ``prefix``; None when there is none (empty prefix or all 0xFF bytes)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def tighter_lower(a: Bound | None, b: Bound | None) -> Bound | None:
    if a is None or b is None:
        return a if b is None else b
    if a[0] != b[0]:
        return a if a[0] > b[0] else b
    return (a[0], a[1] and b[1])


def tighter_upper(a: Bound | None, b: Bound | None) -> Bound | None:
    if a is None or b is None:
        return a if b is None else b
    if a[0] != b[0]:
        return a if a[0] < b[0] else b
    return (a[0], a[1] and b[1])


def sort_key_bounds(
    sort_range: SortKeyRange, forward: bool, exclusive_start_sk: bytes | None
) -> tuple[Bound | None, Bound | None]:
    """The (lower, upper) bounds that together express ``sort_range``, its
    prefix and the exclusive start. Both backends use it."""
    lower: Bound | None = None
    upper: Bound | None = None
    if sort_range.low is not None:
        lower = (sort_range.low, sort_range.low_inclusive)
    if sort_range.high is not None:
        upper = (sort_range.high, sort_range.high_inclusive)
    if sort_range.prefix:
        lower = tighter_lower(lower, (sort_range.prefix, True))
        successor = prefix_successor(sort_range.prefix)
        if successor is not None:
            upper = tighter_upper(upper, (successor, False))
    if exclusive_start_sk is not None:
        if forward:
            lower = tighter_lower(lower, (exclusive_start_sk, False))
        else:
            upper = tighter_upper(upper, (exclusive_start_sk, False))
    return lower, upper


def is_empty_range(lower: Bound | None, upper: Bound | None) -> bool:
    if lower is None or upper is None:
        return False
    if lower[0] != upper[0]:
        return lower[0] > upper[0]
    return not (lower[1] and upper[1])
