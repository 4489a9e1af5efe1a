"""TTL rules (dynastore.engine.ttl) and the movable clock (dynastore.clock)."""

from __future__ import annotations

import pytest

from dynastore.clock import DatabaseClock, advance_clock, clock_offset, movable_clock
from dynastore.database import Database
from dynastore.engine import ttl
from dynastore.errors import ValidationException

NOW = 1_800_000_000.0


def message_of(state: dict | None, enabled: bool, attribute: str, now: float = NOW) -> str:
    with pytest.raises(ValidationException) as excinfo:
        ttl.updated_state(state, enabled, attribute, now)
    return str(excinfo.value.message)


def test_update_rules_in_dynamodbs_order() -> None:
    assert message_of(None, False, "x") == "TimeToLive is already disabled"
    enabled = ttl.updated_state(None, True, "x", NOW)
    assert enabled == {"attribute": "x", "enabled": True, "changed_at": NOW}
    # Content checks come before the cooldown.
    assert message_of(enabled, True, "x") == "TimeToLive is already enabled"
    assert message_of(enabled, True, "y") == (
        "TimeToLive is active on a different AttributeName: current AttributeName is x")
    assert message_of(enabled, False, "y").startswith("TimeToLive is active on a different")
    assert message_of(enabled, False, "x", NOW + 60) == ttl.COOLDOWN_MESSAGE
    later = NOW + ttl.TTL_CHANGE_COOLDOWN_SECONDS
    disabled = ttl.updated_state(enabled, False, "x", later)
    assert disabled == {"attribute": None, "enabled": False, "changed_at": later}
    assert message_of(disabled, False, "x", later) == "TimeToLive is already disabled"
    assert message_of(disabled, True, "y", later + 1) == ttl.COOLDOWN_MESSAGE


def test_descriptions() -> None:
    assert ttl.description(None) == {"TimeToLiveStatus": "DISABLED"}
    assert ttl.description({"attribute": None, "enabled": False}) == {"TimeToLiveStatus": "DISABLED"}
    assert ttl.description({"attribute": "e", "enabled": True}) == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "e"}
    assert ttl.enabled_attribute({"ttl": {"attribute": "e", "enabled": True}}) == "e"
    assert ttl.enabled_attribute({}) is None


@pytest.mark.parametrize(
    ("value", "expired"),
    [
        ({"N": str(int(NOW) - 1)}, True),
        ({"N": str(NOW)}, False),  # not before now
        ({"N": str(int(NOW) + 1)}, False),
        ({"N": str(int(NOW) - ttl.TTL_MAX_PAST_SECONDS)}, True),
        ({"N": str(int(NOW) - ttl.TTL_MAX_PAST_SECONDS - 1)}, False),  # more than five years ago
        ({"N": "1e3"}, False),
        ({"S": "1"}, False),
        ({"NS": ["1"]}, False),
        ({"NULL": True}, False),
    ],
)
def test_expiry(value: dict, expired: bool) -> None:
    assert ttl.is_expired({"exp": value}, "exp", NOW) is expired


def test_marker_matches_stored_items() -> None:
    import orjson

    assert ttl.attribute_marker("exp") in orjson.dumps({"pk": {"S": "a"}, "exp": {"N": "5"}})
    assert ttl.attribute_marker("exp") not in orjson.dumps({"exp": {"S": "5"}})


def test_the_clock_moves_forward_only() -> None:
    base = [100.0]
    clock = DatabaseClock(lambda: base[0])
    assert clock() == 100.0
    assert clock.advance(50) == 150.0
    base[0] = 101.0
    assert clock() == 151.0
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_a_database_clock_becomes_movable_on_first_advance() -> None:
    database = Database.open(clock=lambda: 10.0)
    assert clock_offset(database) == 0.0
    assert advance_clock(database, 5) == 15.0
    assert database.now() == 15.0 and clock_offset(database) == 5.0
    assert movable_clock(database) is database.clock


def test_the_sweeper_schedule_runs_passes_on_the_loop() -> None:
    import asyncio

    from dynastore.ops import dispatch
    from dynastore.workers.ttl_sweeper import SweeperSchedule

    database = Database.open()
    dispatch(database, "CreateTable", {
        "TableName": "sessions", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    })
    dispatch(database, "UpdateTimeToLive", {"TableName": "sessions", "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "exp"}})
    past = str(int(database.now()) - 10)
    for index in range(25):
        dispatch(database, "PutItem", {"TableName": "sessions", "Item": {
            "pk": {"S": f"k{index}"}, "exp": {"N": past}}})

    async def run() -> None:
        schedule = SweeperSchedule(database, asyncio.get_running_loop(), interval=0.01, max_items=10).start()
        for _ in range(200):
            await asyncio.sleep(0.01)
            if database.table_statistics(database.table("sessions"))[0] == 0:
                break
        schedule.stop()

    asyncio.run(run())
    assert database.table_statistics(database.table("sessions"))[0] == 0
