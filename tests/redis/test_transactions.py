"""MULTI/EXEC/WATCH between clients, and pub/sub."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.redis.conftest import Served


def test_watch_aborts_exec_when_another_client_changed_the_key(served: Served, r: redis.Redis, key: str) -> None:
    other = served.client()
    try:
        r.set(key, 1)
        pipe = r.pipeline()
        pipe.watch(key)
        other.incr(key)
        pipe.multi()
        pipe.incr(key)
        with pytest.raises(redis.WatchError):
            pipe.execute()
        assert r.get(key) == b"2"
    finally:
        other.close()


def test_concurrent_watch_increments_lose_nothing(served: Served, key: str) -> None:
    def worker() -> None:
        client = served.client()
        for _ in range(25):
            while True:
                try:
                    with client.pipeline() as pipe:
                        pipe.watch(key)
                        value = int(pipe.get(key) or 0)
                        pipe.multi()
                        pipe.set(key, value + 1)
                        pipe.execute()
                        break
                except redis.WatchError:
                    continue
        client.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    client = served.client()
    assert client.get(key) == b"100"
    client.close()


def test_exec_reports_each_commands_error(r: redis.Redis, key: str) -> None:
    pipe = r.pipeline()
    pipe.set(key, "text")
    pipe.incr(key)
    pipe.get(key)
    results = pipe.execute(raise_on_error=False)
    assert results[0] is True
    assert isinstance(results[1], redis.ResponseError)
    assert results[2] == b"text"


@pytest.mark.parametrize("which", ["dynastore", "redis-server"])
def test_a_watched_key_that_expires_before_exec_aborts_it(
    which: str, request: pytest.FixtureRequest, key: str
) -> None:
    if which == "dynastore":
        client = request.getfixturevalue("served").client()
    else:
        client = redis.Redis(port=request.getfixturevalue("real_redis_port"))
    try:
        client.set(key, "v", px=100)
        pipe = client.pipeline()
        pipe.watch(key)
        pipe.multi()
        pipe.get(key)
        time.sleep(0.25)
        with pytest.raises(redis.WatchError):
            pipe.execute()
    finally:
        client.close()


def test_publish_reaches_channel_and_pattern_subscribers(served: Served, r: redis.Redis, key: str) -> None:
    subscriber = served.client()
    pubsub = subscriber.pubsub()
    pubsub.subscribe(key)
    pubsub.psubscribe(key[:6] + "*")
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    assert pubsub.get_message(timeout=2)["type"] == "psubscribe"
    assert r.publish(key, "hello") == 2
    messages = [pubsub.get_message(timeout=2) for _ in range(2)]
    assert {message["type"] for message in messages} == {"message", "pmessage"}
    assert all(message["data"] == b"hello" for message in messages)
    assert r.pubsub_numsub(key) == [(key.encode(), 1)]
    pubsub.close()
    subscriber.close()


def test_pubsub_over_resp3(served: Served, key: str) -> None:
    subscriber = served.client(protocol=3)
    publisher = served.client(protocol=3)
    pubsub = subscriber.pubsub()
    pubsub.subscribe(key)
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    publisher.publish(key, "x")
    message = pubsub.get_message(timeout=2)
    assert message["type"] == "message" and message["data"] == b"x"
    pubsub.close()
    subscriber.close()
    publisher.close()
