"""The HTTP listener's clock (dynastore/protocol/http.py)."""

from __future__ import annotations

import asyncio
import time

from dynastore.protocol.http import HttpListener


def test_ticks_that_fire_early_do_not_age_connections() -> None:
    """Connections age by the monotonic clock, not by counting ticks: libuv
    keeps time in milliseconds, so the once-a-second tick can fire just
    before the second turns and again right after; counting those made idle
    and stalled connections expire many times too early."""

    async def burst_of_ticks() -> int:
        listener = HttpListener()
        for _ in range(50):
            listener._tick()
        assert listener._date_timer is not None
        listener._date_timer.cancel()
        return listener.clock_seconds

    clock_seconds = asyncio.run(burst_of_ticks())
    assert abs(clock_seconds - time.monotonic()) < 2


def test_the_next_tick_is_due_when_the_second_turns() -> None:
    async def next_tick_in_seconds() -> float:
        loop = asyncio.get_running_loop()
        listener = HttpListener()
        listener._tick()
        assert listener._date_timer is not None
        listener._date_timer.cancel()
        return listener._date_timer.when() - loop.time()

    delay = asyncio.run(next_tick_in_seconds())
    assert 0.04 < delay <= 1.06  # never a burst: at least TICK_MINIMUM_SECONDS away
