"""Streams over redis-py: XREAD BLOCK, consumer groups end to end, durability."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import redis

from tests.redis.conftest import Served, start_dynastore


def test_xread_block_wakes_on_xadd_and_dollar_means_the_last_id(served: Served, r: redis.Redis, key: str) -> None:
    r.xadd(key, {"old": "1"})
    results: list[object] = []

    def reader() -> None:
        client = served.client()
        results.append(client.xread({key: "$"}, block=5000))
        client.close()

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.3)
    new_id = r.xadd(key, {"new": "2"})
    thread.join(timeout=5)
    assert results == [[[key.encode(), [(new_id, {b"new": b"2"})]]]]


def test_xread_block_times_out(r: redis.Redis, key: str) -> None:
    started = time.monotonic()
    assert r.xread({key: "$"}, block=200) == []
    assert time.monotonic() - started >= 0.15


def test_a_work_queue_with_a_consumer_group(served: Served, r: redis.Redis, key: str) -> None:
    r.xgroup_create(key, "workers", id="0", mkstream=True)
    ids = [r.xadd(key, {"job": str(n)}) for n in range(5)]
    first = r.xreadgroup("workers", "w1", {key: ">"}, count=3)
    second = r.xreadgroup("workers", "w2", {key: ">"})
    assert [entry_id for entry_id, _ in first[0][1]] == ids[:3]
    assert [entry_id for entry_id, _ in second[0][1]] == ids[3:]
    assert r.xack(key, "workers", *ids[:3]) == 3
    summary = r.xpending(key, "workers")
    assert summary["pending"] == 2
    claimed = r.xautoclaim(key, "workers", "w3", min_idle_time=0, start_id="0")
    assert [entry_id for entry_id, _ in claimed[1]] == ids[3:]
    consumers = {entry["name"]: entry["pending"] for entry in r.xinfo_consumers(key, "workers")}
    assert consumers == {b"w1": 0, b"w2": 0, b"w3": 2}
    groups = r.xinfo_groups(key)
    assert groups[0]["lag"] == 0 and groups[0]["pending"] == 2


def test_xreadgroup_block_wakes_on_xadd(served: Served, r: redis.Redis, key: str) -> None:
    r.xgroup_create(key, "g", id="$", mkstream=True)
    results: list[object] = []

    def reader() -> None:
        client = served.client()
        results.append(client.xreadgroup("g", "c", {key: ">"}, block=5000))
        client.close()

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.3)
    entry_id = r.xadd(key, {"f": "v"})
    thread.join(timeout=5)
    assert results == [[[key.encode(), [(entry_id, {b"f": b"v"})]]]]
    assert r.xpending(key, "g")["pending"] == 1


def test_streams_and_groups_survive_a_restart(data_dir: Path) -> None:
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        r.xgroup_create("events", "g", id="0", mkstream=True)
        ids = [r.xadd("events", {"n": str(n)}) for n in range(4)]
        r.xreadgroup("g", "alice", {"events": ">"}, count=2)
        r.xack("events", "g", ids[0])
        r.xdel("events", ids[3])
        before = (r.xrange("events"), r.xpending("events", "g"), r.xinfo_groups("events"))
    finally:
        server.stop()
    server = start_dynastore("--data-dir", str(data_dir))
    try:
        r = server.client()
        assert (r.xrange("events"), r.xpending("events", "g"), r.xinfo_groups("events")) == before
        assert r.xinfo_stream("events")["max-deleted-entry-id"] == ids[3]
        assert r.xreadgroup("g", "bob", {"events": ">"})[0][1][0][0] == ids[2]
    finally:
        server.stop()
