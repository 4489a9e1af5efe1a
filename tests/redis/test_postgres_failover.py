"""The Redis keyspace over PostgreSQL: durable across restarts and kill -9,
served by one server at a time (the lease, redis/lease.py), taken over by a
standby when the owner dies, and never a wrong answer when the owner's
PostgreSQL connections drop."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
import redis
from botocore.config import Config

from tests.api.helpers import kill_9_under_load
from tests.redis.conftest import RawConnection, Served, start_dynastore
from tests.redis.test_admin import admin

WRITERS = 4


@pytest.fixture
def database_url(postgres_server: Any) -> str:
    return str(postgres_server.new_database())


@pytest.fixture
def started() -> Iterator[Callable[..., Served]]:
    servers: list[Served] = []

    def start(*arguments: str) -> Served:
        server = start_dynastore(*arguments)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def wait_until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def answers(server: Served) -> str:
    """PONG, LOADING (a standby) or the error a ping got."""
    client = server.client(retry_on_error=[], retry=None)
    try:
        return "PONG" if client.ping() else "?"
    except redis.BusyLoadingError:
        return "LOADING"
    except redis.RedisError as error:
        return type(error).__name__
    finally:
        client.close()


def dynamodb(server: Served) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=f"http://127.0.0.1:{server.http_port}", region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(parameter_validation=False, retries={"total_max_attempts": 1}),
    )


def test_every_type_survives_a_restart(database_url: str, started: Callable[..., Served]) -> None:
    server = started("--postgres", database_url)
    r = server.client()
    r.set("s", "value")
    r.set("t", "temporary", ex=1000)
    r.incrby("n", 41)
    r.incr("n")
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hdel("h", "b")
    r.rpush("l", "a", "b", "c")
    r.lpop("l")
    r.sadd("set", "x", "y")
    r.zadd("z", {"a": 1, "b": 2})
    r.zincrby("z", 10, "a")
    r.xadd("x", {"f": "v"}, id="1-1")
    r.xgroup_create("x", "g", id="0")
    r.execute_command("SELECT", 3)
    r.set("in-db-3", "x")
    r.close()
    server.stop()
    server = started("--postgres", database_url)
    r = server.client()
    assert r.get("s") == b"value"
    assert 990 < r.ttl("t") <= 1000
    assert r.get("n") == b"42"
    assert r.hgetall("h") == {b"a": b"1"}
    assert r.lrange("l", 0, -1) == [b"b", b"c"]
    assert r.smembers("set") == {b"x", b"y"}
    assert r.zrange("z", 0, -1, withscores=True) == [(b"b", 2.0), (b"a", 11.0)]
    assert r.xrange("x") == [(b"1-1", {b"f": b"v"})]
    assert r.xinfo_groups("x")[0]["name"] == b"g"
    assert r.dbsize() == 8
    assert server.client(db=3).get("in-db-3") == b"x"


def _write_until_killed(server: Served, acknowledged: list[int], index: int) -> None:
    """INCR a counter, then a MULTI that moves two keys together; record
    what the server acknowledged."""
    client = server.client(retry_on_error=[], retry=None)
    try:
        while True:
            acknowledged[index] = int(client.incr(f"counter:{index}"))
            pipe = client.pipeline(transaction=True)
            pipe.set(f"last:{index}", acknowledged[index])
            pipe.incr(f"pair:{index}:a")
            pipe.incr(f"pair:{index}:b")
            pipe.execute()
    except (redis.ConnectionError, redis.TimeoutError, ConnectionError):
        return
    finally:
        client.close()


def _check_acknowledged(r: redis.Redis, acknowledged: list[int]) -> None:
    for index in range(WRITERS):
        counter = int(r.get(f"counter:{index}") or 0)
        assert acknowledged[index] <= counter <= acknowledged[index] + 1
        assert int(r.get(f"last:{index}") or 0) >= acknowledged[index] - 1
        # a MULTI's rows commit together: never one without the other
        assert r.get(f"pair:{index}:a") == r.get(f"pair:{index}:b")


@pytest.mark.slow
def test_kill_9_loses_no_acknowledged_write(database_url: str, started: Callable[..., Served]) -> None:
    server = started("--postgres", database_url)
    acknowledged = [0] * WRITERS
    writers = [threading.Thread(target=_write_until_killed, args=(server, acknowledged, index))
               for index in range(WRITERS)]
    kill_9_under_load(server.process, writers, 1.0, lambda: sum(acknowledged), 200)
    server.stop()
    server = started("--postgres", database_url)
    r = server.client()
    _check_acknowledged(r, acknowledged)


@pytest.mark.slow
def test_a_standby_takes_over_when_the_owner_is_killed(database_url: str, started: Callable[..., Served]) -> None:
    owner = started("--postgres", database_url)
    standby = started("--postgres", database_url)
    assert answers(owner) == "PONG"
    assert answers(standby) == "LOADING"
    assert admin(owner, "GET", "/_dynastore/redis")[1]["Role"] == "owner"
    assert admin(standby, "GET", "/_dynastore/redis")[1]["Role"] == "standby"
    # connecting and INFO work on a standby, as on a Redis that loads; keys do not
    raw = RawConnection(standby.redis_port)
    try:
        assert raw.call("HELLO", "3").startswith(b"%")
        assert b"loading:1\r\n" in raw.call("INFO", "persistence")
        assert raw.call("GET", "k") == b"-LOADING Redis is loading the dataset in memory\r\n"
        assert raw.call("PING") == b"-LOADING Redis is loading the dataset in memory\r\n"
    finally:
        raw.close()
    raw = RawConnection(owner.redis_port)
    try:
        assert b"loading:0\r\n" in raw.call("INFO", "persistence")
    finally:
        raw.close()
    wait_until(lambda: "redis: standby, the keyspace is served by another server" in standby.output())
    assert standby.output().count("standby") == 1  # one line, not one per poll
    # the DynamoDB API works on both servers, over the one database
    dynamodb(owner).create_table(
        TableName="tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    wait_until(lambda: dynamodb(standby).describe_table(TableName="tab")["Table"]["TableStatus"] == "ACTIVE")
    dynamodb(standby).put_item(TableName="tab", Item={"k": {"S": "from-standby"}})
    assert "Item" in dynamodb(owner).get_item(TableName="tab", Key={"k": {"S": "from-standby"}})

    acknowledged = [0] * WRITERS
    writers = [threading.Thread(target=_write_until_killed, args=(owner, acknowledged, index))
               for index in range(WRITERS)]
    kill_9_under_load(owner.process, writers, 1.0, lambda: sum(acknowledged), 200)
    killed_at = time.monotonic()
    wait_until(lambda: answers(standby) == "PONG")
    took_over = time.monotonic() - killed_at
    assert took_over < 10, took_over
    assert "redis: serving the keyspace" in standby.output()
    assert admin(standby, "GET", "/_dynastore/redis")[1]["Role"] == "owner"
    r = standby.client()
    _check_acknowledged(r, acknowledged)
    assert r.incr("counter:0") == int(r.get("counter:0") or 0)
    # the survivor's DynamoDB API is unaffected
    assert "Item" in dynamodb(standby).get_item(TableName="tab", Key={"k": {"S": "from-standby"}})


def test_a_stopped_owner_hands_over_and_a_restarted_one_is_standby(
        database_url: str, started: Callable[..., Served]) -> None:
    first = started("--postgres", database_url)
    second = started("--postgres", database_url)
    first.client().set("k", "1")
    first.stop()
    wait_until(lambda: answers(second) == "PONG")
    assert second.client().get("k") == b"1"
    second.client().set("k", "2")
    again = started("--postgres", database_url)
    assert answers(again) == "LOADING"
    assert second.client().get("k") == b"2"


def test_dropped_postgres_connections_give_errors_never_wrong_answers(
        database_url: str, postgres_server: Any, started: Callable[..., Served]) -> None:
    server = started("--postgres", database_url)
    database = database_url.rsplit("/", 1)[1]
    outcomes: list[object] = []
    stop = threading.Event()

    def increment() -> None:
        client = server.client(retry_on_error=[], retry=None)
        while not stop.is_set():
            try:
                outcomes.append(int(client.incr("c")))
            except redis.ResponseError as error:
                outcomes.append(str(error))
            except redis.BusyLoadingError:
                outcomes.append("LOADING")
                time.sleep(0.01)
            except redis.ConnectionError:
                outcomes.append("closed")
                time.sleep(0.01)
                client = server.client(retry_on_error=[], retry=None)
        client.close()

    thread = threading.Thread(target=increment)
    thread.start()
    try:
        for _ in range(5):
            time.sleep(0.3)
            postgres_server.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")
        time.sleep(0.3)
        try:
            wait_until(lambda: answers(server) == "PONG")
        except AssertionError:  # seen once under load (2026-12-04): say what the server did
            raise AssertionError(f"no PONG after the drops (now: {answers(server)}); the server's log ends:\n"
                                 + server.output()[-6000:]) from None
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(timeout=30)
    numbers = [outcome for outcome in outcomes if isinstance(outcome, int)]
    failures = [outcome for outcome in outcomes if not isinstance(outcome, int)]
    assert numbers
    assert "lost a PostgreSQL connection" in server.output()  # the drops happened while it served
    for failure in failures:
        assert failure in ("LOADING", "closed") or str(failure).startswith("the store could not commit")
    # every INCR that answered answered a new, larger number: no acknowledged one undone
    assert all(later > earlier for earlier, later in zip(numbers, numbers[1:], strict=False))
    final = int(server.client().get("c") or 0)
    assert numbers[-1] <= final <= len(numbers) + len(failures)
    assert server.process.poll() is None


def test_a_connection_dropped_while_postgres_commits_is_an_error_not_an_acknowledgement(
        database_url: str, postgres_server: Any, started: Callable[..., Served]) -> None:
    """The connection is ended while PostgreSQL runs the turn's COMMIT (a
    deferred trigger holds it there): the transaction rolls back, and libpq
    hands over the FATAL error where the pipeline's Sync was due. That is a
    failed commit (-ERR ... could not commit), never an INCR answered whose
    row is not in the store (it came back after a restart one smaller)."""
    server = started("--postgres", database_url)
    database = database_url.rsplit("/", 1)[1]
    r = server.client(retry_on_error=[], retry=None)
    assert r.set("c", 10) is True
    outcome: list[object] = []

    def increment() -> None:
        try:
            outcome.append(int(r.incr("c")))
        except redis.RedisError as error:
            outcome.append(error)

    assert postgres_server.end_backends_during_a_commit(database, increment, join_seconds=30)
    assert len(outcome) == 1
    assert isinstance(outcome[0], redis.ResponseError), outcome
    assert str(outcome[0]).startswith("the store could not commit"), outcome
    wait_until(lambda: answers(server) == "PONG")
    assert r.get("c") == b"10"  # reloaded from the store: the INCR did not happen
    assert r.incr("c") == 11
    server.stop()
    again = started("--postgres", database_url)
    assert again.client().get("c") == b"11"


def test_a_commit_refused_at_commit_time_is_retried_not_acknowledged(
        database_url: str, postgres_server: Any, started: Callable[..., Served]) -> None:
    """The COMMIT itself fails once (a deferred trigger raises a
    serialization failure, SQLSTATE 40001, at commit time): the write path
    retries the turn's rows, and the INCR answers only once they are in."""
    server = started("--postgres", database_url)
    database = database_url.rsplit("/", 1)[1]
    r = server.client(retry_on_error=[], retry=None)
    assert r.set("c", 10) is True
    postgres_server.psql("CREATE SEQUENCE refusals", database)
    postgres_server.psql(
        "CREATE FUNCTION refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF nextval('refusals') = 1 THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = '40001'; "
        "END IF; RETURN NULL; END $$", database)
    postgres_server.psql(
        "CREATE CONSTRAINT TRIGGER refuse_once AFTER INSERT OR UPDATE ON dynastore_items "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_once()", database)
    try:
        assert r.incr("c") == 11
    finally:
        postgres_server.psql("DROP TRIGGER refuse_once ON dynastore_items", database)
    server.stop()
    again = started("--postgres", database_url)
    assert again.client().get("c") == b"11"  # the answer is in the store
    assert int(postgres_server.psql("SELECT last_value FROM refusals", database)) >= 2  # refused once, retried


def test_an_unreachable_postgres_stops_the_server_before_it_listens() -> None:
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--postgres", "postgresql://nobody@127.0.0.1:1/x",
         "--redis-port", "0", "--port", "0"],
        capture_output=True, text=True, timeout=30,
    )
    assert completed.returncode == 1
    assert "cannot use postgresql://127.0.0.1:1/x" in completed.stderr
    assert "--redis-port does not work" not in completed.stderr


@pytest.mark.xfail(strict=True, reason="a standby answers -LOADING, where a Redis replica answers reads "
                   "(docs/compatibility.md)")
def test_a_standby_answers_reads_as_a_replica_would(database_url: str, started: Callable[..., Served]) -> None:
    owner = started("--postgres", database_url)
    standby = started("--postgres", database_url)
    owner.client().set("k", "v")
    assert standby.client(retry_on_error=[], retry=None).get("k") == b"v"


def test_an_owner_that_lost_its_lease_unnoticed_cannot_write(
        database_url: str, postgres_server: Any, started: Callable[..., Served]) -> None:
    """The owner's lock session is ended behind its back (its other
    connections live on): the standby takes over and writes the fence; the
    old owner's next write fails (its commit checks the fence) or finds it
    standing down, and never lands over the new owner's keys."""
    from dynastore.redis.lease import LEASE_LOCK
    from dynastore.storage.postgres.storage import JOB_LOCK_CLASS

    old = started("--postgres", database_url)
    new = started("--postgres", database_url)
    old_client = old.client(retry_on_error=[], retry=None)
    old_client.set("k", "old")
    database = database_url.rsplit("/", 1)[1]
    object_id = zlib.crc32(LEASE_LOCK.encode()) & 0x7FFFFFFF
    ended = postgres_server.psql(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        f"WHERE l.locktype = 'advisory' AND l.classid = {JOB_LOCK_CLASS} AND l.objid = {object_id} "
        f"AND a.datname = '{database}'")
    assert ended.strip() == "t"
    wait_until(lambda: answers(new) == "PONG")
    new.client().set("k", "new")
    try:
        old_client.set("k", "from the deposed owner")
        wrote: object = "acknowledged"
    except redis.BusyLoadingError:
        wrote = "LOADING"
    except redis.ResponseError as error:
        wrote = str(error)
    assert wrote == "LOADING" or str(wrote).startswith("the store could not commit"), wrote
    assert new.client().get("k") == b"new"
    wait_until(lambda: answers(old) == "LOADING")


def test_the_embedded_redis_client_over_postgres(database_url: str, started: Callable[..., Served]) -> None:
    import dynastore

    with dynastore.open(database_url) as db:
        r = db.redis()
        r.hset("session:1", mapping={"user": "ada"})
        assert r.incr("n") == 1
        r.close()
    with dynastore.open(database_url) as db:
        r = db.redis()
        assert r.hget("session:1", "user") == b"ada"
        assert r.get("n") == b"1"
        r.close()
    server = started("--postgres", database_url)  # the embedded client's lease is free again
    assert server.client().get("n") == b"1"
    with dynastore.open(database_url) as db, pytest.raises(RuntimeError, match="served by another server"):
        db.redis()


def test_with_workers_the_first_process_serves_redis(database_url: str, started: Callable[..., Served]) -> None:
    server = started("--postgres", database_url, "--workers", "2")
    r = server.client()
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert "redis: serving the keyspace" in server.output()
    assert "standby" not in server.output()  # the worker runs no Redis side at all


@pytest.mark.slow
def test_postgres_stopped_and_started_again_while_serving(started: Callable[..., Served]) -> None:
    """A cluster of its own (stopped here): while PostgreSQL is down a write
    gets the retryable -ERR or -LOADING, never OK; once it is back the server
    reloads the keyspace, without the write it refused, and serves again."""
    from tests import postgres_server
    from tests.conftest import skip_or_fail_without_postgres

    skip_or_fail_without_postgres()
    with postgres_server.started_cluster() as cluster:
        server = started("--postgres", cluster.new_database())
        r = server.client(retry_on_error=[], retry=None)
        assert r.set("k", "before") is True
        cluster.stop()
        outcomes = []
        for _ in range(3):
            try:
                outcomes.append(r.set("k", "while down"))
            except redis.BusyLoadingError:
                outcomes.append("LOADING")
            except redis.ResponseError as error:
                outcomes.append(str(error).split(";")[0])
            time.sleep(0.3)
        assert True not in outcomes
        assert set(outcomes) <= {"LOADING", "the store could not commit this command's writes"}, outcomes
        cluster.start()
        wait_until(lambda: answers(server) == "PONG", 30)
        assert r.get("k") == b"before"
        assert r.set("k", "after") is True
        assert r.get("k") == b"after"
        assert server.process.poll() is None


def test_release_lock_lets_another_session_take_the_lease(database_url: str) -> None:
    from dynastore.storage.postgres.storage import PostgresStorage

    first, second = PostgresStorage(database_url), PostgresStorage(database_url)
    try:
        assert first.hold_lock("redis-keyspace") is True
        assert second.hold_lock("redis-keyspace") is False
        first.release_lock("redis-keyspace")
        first.release_lock("redis-keyspace")  # not held: nothing to do
        assert second.hold_lock("redis-keyspace") is True
        assert first.hold_lock("redis-keyspace") is False  # asked again, not answered from memory
    finally:
        first.close()
        second.close()
