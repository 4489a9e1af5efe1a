"""The read loop shared by Query and Scan.

Storage hands rows over in order; this module walks them the way DynamoDB
reads a page:

- every row read counts: towards ScannedCount, towards the 1 MB page limit
  (``limits.QUERY_SCAN_PAGE_MAX_BYTES``, counted on the stored item sizes) and
  towards ``Limit`` (which bounds items *evaluated*, before any filter);
- the filter decides only what is returned (Count), never what is read, so a
  filter does not reduce the capacity consumed;
- the page stops when Limit items were read or the byte budget is used up, and
  then LastEvaluatedKey names the last row read, even if no row follows (as
  DynamoDB does: it does not look ahead);
- read capacity is the sum of the sizes of every row read, rounded up to 4 KB
  units once (engine/capacity.py).

Hot path: with no filter and no projection a returned row is never decoded;
its stored bytes (already DynamoDB JSON) are spliced into the response. Only
the last row read is decoded, to build LastEvaluatedKey.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits
from dynastore.engine.capacity import consumed_capacity, read_units
from dynastore.storage.base import Row

Item = dict[str, Any]


@dataclass(slots=True)
class ReadPlan:
    """What to do with the rows of one page."""

    key_names: tuple[str, ...]
    """Attributes that make up LastEvaluatedKey (the table's key, later plus an
    index's key)."""
    limit: int | None = None
    filter: Callable[[Item], bool] | None = None
    projection: Callable[[Item], Item] | None = None
    count_only: bool = False
    """Select=COUNT: count matching items, return none."""
    page_max_bytes: int = limits.QUERY_SCAN_PAGE_MAX_BYTES


@dataclass(slots=True)
class Page:
    """The outcome of one read loop."""

    count: int = 0
    scanned_count: int = 0
    read_bytes: int = 0
    raw_items: list[bytes] = field(default_factory=list)
    """Stored item bytes to splice into the response (no filter, no projection)."""
    items: list[Item] = field(default_factory=list)
    """Decoded (filtered and/or projected) items."""
    last_evaluated_key: Item | None = None


def read_page(rows: Iterable[Row], plan: ReadPlan) -> Page:
    """Walk ``rows`` until the page is full; see the module docstring."""
    if plan.filter is not None or plan.projection is not None:
        return _read_decoded(rows, plan)
    # Hot path: count and splice stored bytes, decode nothing but the last key.
    limit = plan.limit if plan.limit is not None else -1
    budget = plan.page_max_bytes
    raw_items: list[bytes] = []
    keep = None if plan.count_only else raw_items.append
    scanned = read_bytes = 0
    last_row: Row | None = None
    for row in rows:
        scanned += 1
        read_bytes += row.size
        if keep is not None:
            keep(row.item)
        if scanned == limit or read_bytes >= budget:
            last_row = row
            break
    page = Page(scanned, scanned, read_bytes, raw_items)
    if last_row is not None:
        page.last_evaluated_key = _key_of(orjson.loads(last_row.item), plan.key_names)
    return page


def _read_decoded(rows: Iterable[Row], plan: ReadPlan) -> Page:
    """The loop when a filter or projection needs every item decoded."""
    page = Page()
    limit = plan.limit if plan.limit is not None else -1
    budget = plan.page_max_bytes
    for row in rows:
        page.scanned_count += 1
        page.read_bytes += row.size
        item = orjson.loads(row.item)
        _keep(page, plan, item)
        if page.scanned_count == limit or page.read_bytes >= budget:
            page.last_evaluated_key = _key_of(item, plan.key_names)
            break
    return page


def _key_of(item: Item, key_names: tuple[str, ...]) -> Item:
    return {name: item[name] for name in key_names}


def _keep(page: Page, plan: ReadPlan, item: Item) -> None:
    if plan.filter is not None and not plan.filter(item):
        return
    page.count += 1
    if plan.count_only:
        return
    page.items.append(plan.projection(item) if plan.projection is not None else item)


def response_bytes(
    page: Page,
    *,
    count_only: bool,
    table_name: str,
    consistent: bool,
    return_consumed_capacity: str | None,
    index: tuple[str, str] | None = None,
    fetched_bytes: int = 0,
) -> bytes:
    """The Query/Scan response as JSON bytes, splicing stored items untouched."""
    parts: list[bytes] = [b"{"]
    if not count_only:
        if page.raw_items:
            parts += [b'"Items":[', b",".join(page.raw_items), b"],"]
        else:
            parts += [b'"Items":', orjson.dumps(page.items), b","]
    parts.append(b'"Count":%d,"ScannedCount":%d' % (page.count, page.scanned_count))
    if page.last_evaluated_key is not None:
        parts += [b',"LastEvaluatedKey":', orjson.dumps(page.last_evaluated_key)]
    if index is None:
        capacity = consumed_capacity(
            return_consumed_capacity, table_name, read=read_units(page.read_bytes, consistent)
        )
    else:
        capacity = index_read_capacity(
            return_consumed_capacity, table_name, index, page, consistent, fetched_bytes
        )
    if capacity is not None:
        parts += [b',"ConsumedCapacity":', orjson.dumps(capacity)]
    parts.append(b"}")
    return b"".join(parts)


def index_read_capacity(
    return_mode: str | None,
    table_name: str,
    index: tuple[str, str],
    page: Page,
    consistent: bool,
    fetched_bytes: int,
) -> dict[str, Any] | None:
    """ConsumedCapacity of a read on an index: ``index`` is (ConsumedCapacity
    member, index name). Items an LSI read fetched from the table
    (``fetched_bytes``) are charged to the table."""
    if return_mode not in ("TOTAL", "INDEXES"):
        return None
    index_units = read_units(page.read_bytes, consistent)
    table_units = read_units(fetched_bytes, consistent) if fetched_bytes else 0.0
    total = index_units + table_units
    # The aggregate alone, no read/write split (engine/capacity.consumed_capacity).
    result: dict[str, Any] = {"TableName": table_name, "CapacityUnits": total}
    if return_mode == "INDEXES":
        result["Table"] = {"CapacityUnits": table_units}
        kind, name = index
        result[kind] = {name: {"CapacityUnits": index_units}}
    return result
