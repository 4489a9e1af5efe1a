"""The ConsumedCapacity the client asked for: the model runs every
operation with ReturnConsumedCapacity=INDEXES, charges what it reports, and
answers in the client's mode (or without it)."""

from __future__ import annotations

from typing import Any

import orjson

TOTAL_MEMBERS = ("TableName", "CapacityUnits", "ReadCapacityUnits", "WriteCapacityUnits")
CAPACITY_MARK = b'"ConsumedCapacity":'


def as_asked(capacity: Any, asked: Any) -> Any:
    """An INDEXES-mode ConsumedCapacity (or list of them) in the client's mode."""
    if asked == "INDEXES":
        return capacity
    if isinstance(capacity, list):
        return [as_asked(one, asked) for one in capacity]
    return {name: capacity[name] for name in TOTAL_MEMBERS if name in capacity}


def wants(asked: Any) -> bool:
    return asked in ("TOTAL", "INDEXES")


def strip_capacity(body: dict[str, Any], asked: Any) -> dict[str, Any]:
    capacity = body.pop("ConsumedCapacity", None)
    if capacity is not None and wants(asked):
        body["ConsumedCapacity"] = as_asked(capacity, asked)
    return body


def finish_dict(response: dict[str, Any], asked: Any) -> dict[str, Any]:
    return strip_capacity(response, asked)


def finish_bytes_full(response: bytes, asked: Any) -> bytes:
    return orjson.dumps(strip_capacity(orjson.loads(response), asked))


def split_capacity(response: Any, asked: Any) -> tuple[Any, list[dict[str, Any]]]:
    """(the response as the client asked it, the ConsumedCapacity objects
    computed). Byte responses (GetItem, Query, Scan) end with their
    ConsumedCapacity member, so it is cut off without decoding the items."""
    if isinstance(response, dict):
        capacity = response.get("ConsumedCapacity")
        strip_capacity(response, asked)
        return response, [capacity] if isinstance(capacity, dict) else list(capacity or [])
    at = response.rfind(CAPACITY_MARK)
    if at < 0:
        return response, []
    capacity = orjson.loads(response[at + len(CAPACITY_MARK):-1])
    head = response[:at]
    if wants(asked):
        return head + CAPACITY_MARK + orjson.dumps(as_asked(capacity, asked)) + b"}", [capacity]
    head = head[:-1] if head.endswith(b",") else head
    return head + b"}", [capacity]
