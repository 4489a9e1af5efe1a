"""Time to Live, the pure part: UpdateTimeToLive's rules and messages, the
DescribeTimeToLive answer, and which items have expired.

The table's TTL setting lives in ``TableSchema.extensions["ttl"]`` as
``{"attribute": name or None, "enabled": bool, "changed_at": epoch seconds}``.

Behaviour as observed on DynamoDB (captures of 2026, see
docs/ttl-and-streams.md): the content checks (already enabled, already
disabled, a different attribute) come before the cooldown check; a second
successful change within about 31 minutes of the previous one is refused; and
DescribeTimeToLive shows the settled status (ENABLED / DISABLED) at once --
ENABLING and DISABLING exist in the API but were never observed.
"""

from __future__ import annotations

from typing import Any

import orjson

from dynastore import limits
from dynastore.errors import ValidationException

TTL_EXTENSION = "ttl"

# Candidates for dynastore/limits.py.
TTL_CHANGE_COOLDOWN_SECONDS = limits.TTL_CHANGE_COOLDOWN_SECONDS
"""Refused at 1811.6 s after a change, accepted at 1871.7 s ("~31 min")."""
TTL_MAX_PAST_SECONDS = limits.TTL_MAX_PAST_SECONDS
"""Expiry times more than five years in the past are ignored by the sweeper
(DynamoDB only processes items that expired within the last five years)."""

COOLDOWN_MESSAGE = "Time to live has been modified multiple times within a fixed interval"


def ttl_state(extensions: dict[str, Any]) -> dict[str, Any] | None:
    return extensions.get(TTL_EXTENSION)


def enabled_attribute(extensions: dict[str, Any]) -> str | None:
    """The TTL attribute name when TTL is enabled on the table, else None."""
    state = extensions.get(TTL_EXTENSION)
    if state is None or not state.get("enabled"):
        return None
    return str(state["attribute"])


def updated_state(
    state: dict[str, Any] | None, enabled: bool, attribute: str, now: float
) -> dict[str, Any]:
    """The TTL state after UpdateTimeToLive, or DynamoDB's ValidationException."""
    active = state is not None and bool(state.get("enabled"))
    current = state.get("attribute") if state is not None else None
    if active and current != attribute:
        raise ValidationException(
            f"TimeToLive is active on a different AttributeName: current AttributeName is {current}"
        )
    if active and enabled:
        raise ValidationException("TimeToLive is already enabled")
    if not active and not enabled:
        raise ValidationException("TimeToLive is already disabled")
    changed_at = state.get("changed_at") if state is not None else None
    if changed_at is not None and now - changed_at < TTL_CHANGE_COOLDOWN_SECONDS:
        raise ValidationException(COOLDOWN_MESSAGE)
    return {"attribute": attribute if enabled else None, "enabled": enabled, "changed_at": now}


def description(state: dict[str, Any] | None) -> dict[str, Any]:
    """DescribeTimeToLive's TimeToLiveDescription: a disabled table shows no
    attribute (DynamoDB cannot tell never-configured from disabled)."""
    if state is None or not state.get("enabled"):
        return {"TimeToLiveStatus": "DISABLED"}
    return {"TimeToLiveStatus": "ENABLED", "AttributeName": state["attribute"]}


def attribute_marker(attribute: str) -> bytes:
    """Bytes every stored item with a Number in ``attribute`` contains
    (stored items are compact orjson), to skip most items without decoding."""
    return orjson.dumps(attribute) + b':{"N":'


def expiry_of(item: dict[str, Any], attribute: str) -> float | None:
    """The item's expiry time: its TTL attribute when that is a Number; None
    otherwise (strings, sets, maps... are never expired, as in DynamoDB)."""
    value = item.get(attribute)
    if not isinstance(value, dict) or "N" not in value or len(value) != 1:
        return None
    try:
        return float(value["N"])
    except (TypeError, ValueError):
        return None


def is_expired(item: dict[str, Any], attribute: str, now: float) -> bool:
    """True when the sweeper deletes the item: an expiry time in the past, but
    no more than five years in the past."""
    expiry = expiry_of(item, attribute)
    return expiry is not None and now - TTL_MAX_PAST_SECONDS <= expiry < now
