"""``serve --postgres``: a connection that breaks at the worst moment.

- during the COMMIT of a write (a deferred constraint trigger holds the
  COMMIT while the test ends the backend with pg_terminate_backend): the
  write gets InternalServerError (HTTP 500), never a 200 for an item that is
  not in the store (issue 22, fixed in the pipeline's Sync handling);
- while many writes are read in one turn of the server's loop and their
  connection is closed, or PostgreSQL is down: every one of them gets a 500
  in bounded time, none hangs (a connection that failed inside a request
  greenlet switched to the other requests and was never resumed);
- while PostgreSQL hangs (SIGSTOP): the health check answers at once (new
  connections are opened off the loop) and writes get a 500 in bounded time.

Each test runs on a cluster of this module's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from dynastore import limits
from dynastore.storage.postgres.storage import CONNECT_TIMEOUT_SECONDS
from tests import postgres_server as throwaway
from tests.api.conftest import TEST_CLIENT_CONFIG
from tests.api.test_postgres_server import REQUEST_MAX_SECONDS, Served, boto3_client, serving_on
from tests.conftest import skip_or_fail_without_postgres


@pytest.fixture(scope="module")
def cluster() -> Iterator[throwaway.ThrowawayPostgres]:
    skip_or_fail_without_postgres()
    with throwaway.started_cluster() as server:
        yield server


@pytest.fixture
def served(cluster: throwaway.ThrowawayPostgres) -> Iterator[Served]:
    yield from serving_on(cluster)


def result_of(function: Callable[[], Any]) -> str:
    """"ok", "500" (InternalServerError, HTTP 500), or what else came back."""
    try:
        function()
        return "ok"
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return "500" if (code, status) == ("InternalServerError", 500) else f"{code} (HTTP {status})"
    except Exception as error:  # noqa: BLE001 - a timeout, a dropped connection: reported
        return f"{type(error).__name__}: {error}"


def terminated_during_commit(served: Served, write: Callable[[], Any]) -> str:
    """Run ``write`` while the server's backends are ended during its
    COMMIT, and return the write's result."""
    outcome: list[str] = []
    done = served.postgres.end_backends_during_a_commit(
        served.database, lambda: outcome.append(result_of(write)), join_seconds=REQUEST_MAX_SECONDS + 5)
    assert done, "the write hung"
    assert len(outcome) == 1
    return outcome[0]


def stored(served: Served, key: str) -> dict[str, Any] | None:
    client = boto3_client(served.endpoint)
    deadline = time.monotonic() + 10
    while True:
        try:
            found: dict[str, Any] | None = client.get_item(
                TableName=served.table, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
            return found
        except ClientError:  # a 500 while the server replaces its connections
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_put_whose_commit_is_interrupted_gets_a_500_not_a_200(served: Served) -> None:
    client = boto3_client(served.endpoint)
    item = {"pk": {"S": "interrupted"}, "v": {"S": "never committed"}}
    result = terminated_during_commit(
        served, lambda: client.put_item(TableName=served.table, Item=item))
    found = stored(served, "interrupted")
    assert found is None, f"the put rolled back, yet the item is there: {found}"
    assert result == "500", f"a put whose COMMIT was rolled back answered {result}\n{served.log()[-3000:]}"
    assert served.process.poll() is None
    assert "Traceback" not in served.log(), served.log()[-5000:]


def test_an_update_add_whose_commit_is_interrupted_gets_a_500_and_adds_nothing(served: Served) -> None:
    client = boto3_client(served.endpoint)
    key = {"pk": {"S": "counter"}}
    client.put_item(TableName=served.table, Item={**key, "n": {"N": "10"}})
    result = terminated_during_commit(served, lambda: client.update_item(
        TableName=served.table, Key=key, UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}}))
    found = stored(served, "counter")
    assert found is not None and found["n"] == {"N": "10"}, found
    assert result == "500", f"an ADD whose COMMIT was rolled back answered {result}\n{served.log()[-3000:]}"
    assert client.update_item(
        TableName=served.table, Key=key, UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW",
    )["Attributes"]["n"] == {"N": "11"}


CONCURRENT_WRITES = 24
"""More than limits.POSTGRES_MIN_EXTRA_BATCH_CALLS: a request greenlet then
sends the batch itself (Hub.execute -> Hub._flush), not the loop."""


PAD = "x" * 4000
"""A batch of a few such items is larger than libpq's 8 KB output buffer:
libpq flushes while the batch is still being queued."""


def put_item(client: Any, table: str, key: str) -> Callable[[], Any]:
    return lambda: client.put_item(TableName=table, Item={"pk": {"S": key}, "pad": {"S": PAD}})


def writes_while_stopped(served: Served, clients: list[Any], round_: int,
                         meanwhile: Callable[[], Any] = lambda: None) -> list[tuple[str, str]]:
    """Stop the server (SIGSTOP), let every client send a PutItem, run
    ``meanwhile``, let the server run again (it then reads every write in
    one turn of its loop); (key, result) of each write."""
    results: list[tuple[str, str]] = []

    def put(client: Any, key: str) -> None:
        results.append((key, result_of(put_item(client, served.table, key))))

    threads = [threading.Thread(target=put, args=(client, f"r{round_}-{index}"), daemon=True)
               for index, client in enumerate(clients)]
    served.process.send_signal(signal.SIGSTOP)
    try:
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # the requests wait in the server's sockets
        meanwhile()
    finally:
        served.process.send_signal(signal.SIGCONT)
    for thread in threads:
        thread.join(timeout=REQUEST_MAX_SECONDS + 10)
    assert not any(thread.is_alive() for thread in threads), "a request hung"
    return results


def terminate_backends(served: Served) -> None:
    """End the server's (idle) backends; their goodbyes reach the server's
    sockets after the writes the clients sent."""
    served.postgres.psql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        f"WHERE datname = '{served.database}' AND pid <> pg_backend_pid()")
    time.sleep(0.3)


def test_writes_batched_on_connections_postgres_closed_unseen_get_500s_none_hang(served: Served) -> None:
    """When the server runs again it reads the writes before it notices
    that its connections are gone, so a request greenlet sends a batch of
    them on a closed connection: libpq's send (or flush) fails inside the
    request greenlet. Every write gets a 200 or a 500 in bounded time (they
    hung: the failed calls were resumed from that greenlet, which was never
    switched back to), and every 200 is in the store."""
    clients = [boto3_client(served.endpoint) for _ in range(CONCURRENT_WRITES)]
    for round_ in range(3):
        warm = [result_of(put_item(client, served.table, f"warm-{round_}-{index}"))
                for index, client in enumerate(clients)]
        assert set(warm) == {"ok"}, warm  # every client has its HTTP connection open
        results = writes_while_stopped(served, clients, round_, lambda: terminate_backends(served))
        others = [result for _, result in results if result not in ("ok", "500")]
        assert not others, (f"round {round_}: {len(others)} of {len(results)}: {others[:3]}\n"
                            f"{served.log()[-3000:]}")
        for key, result in results:
            if result == "ok":
                assert stored(served, key) is not None, f"{key} was acknowledged and is not stored"
    assert served.process.poll() is None
    assert "Traceback" not in served.log(), served.log()[-5000:]


def test_writes_read_in_one_turn_while_postgres_is_down_get_500s_none_hangs(served: Served) -> None:
    """PostgreSQL is stopped and the server knows its connections are gone;
    it reads many writes in one turn, so a request greenlet opens the new
    connection, which is refused: the calls waiting for one fail (they hung:
    they were resumed from that greenlet). Once PostgreSQL is back, writes
    succeed again."""
    clients = [boto3_client(served.endpoint) for _ in range(CONCURRENT_WRITES)]
    warm = [result_of(put_item(client, served.table, f"warm-{index}")) for index, client in enumerate(clients)]
    assert set(warm) == {"ok"}, warm
    served.postgres.stop()
    try:
        assert result_of(put_item(clients[0], served.table, "alone")) == "500"
        for round_ in range(3):
            results = writes_while_stopped(served, clients, round_)
            others = [result for _, result in results if result != "500"]
            assert not others, (f"round {round_}: {len(others)} of {len(results)}: {others[:3]}\n"
                                f"{served.log()[-3000:]}")
    finally:
        served.postgres.start()
    assert throwaway.wait_until(lambda: result_of(put_item(clients[0], served.table, "after")) == "ok", 10)
    results = writes_while_stopped(served, clients, 9)
    assert {result for _, result in results} == {"ok"}, results
    assert served.process.poll() is None
    assert "Traceback" not in served.log(), served.log()[-5000:]


HEALTH_MAX_SECONDS = 2.0
"""The health check (GET /, nothing asked of PostgreSQL) answers this soon
whatever PostgreSQL does: it used to wait behind a connect on the loop
(10 s, the connect timeout, back to back)."""


def postgres_processes(postgres: throwaway.ThrowawayPostgres) -> list[int]:
    postmaster = int((postgres.data / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout
    return [postmaster, *map(int, children.split())]


@pytest.mark.slow
def test_a_hung_postgres_leaves_the_health_check_prompt_and_writes_bounded(served: Served) -> None:
    """Every PostgreSQL process is stopped (SIGSTOP: a hung host, whose
    kernel still accepts connections) while writes keep coming: the server
    opens its new connections off the loop, so the health check answers at
    once, and each write gets a 500 (or, once PostgreSQL runs again, a 200)
    within the call timeout."""
    client = boto3_client(served.endpoint)
    assert result_of(put_item(client, served.table, "before")) == "ok"
    config = Config(read_timeout=limits.POSTGRES_CALL_TIMEOUT_SECONDS + 15)
    writes: list[tuple[float, str]] = []
    stopping = threading.Event()

    def write(worker: int) -> None:
        writer = boto3.client("dynamodb", endpoint_url=served.endpoint, region_name="us-east-1",
                              aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                              config=TEST_CLIENT_CONFIG.merge(config))
        i = 0
        while not stopping.is_set():
            i += 1
            started = time.monotonic()
            result = result_of(put_item(writer, served.table, f"w{worker}-{i}"))
            writes.append((time.monotonic() - started, result))
            time.sleep(0.2)

    processes = postgres_processes(served.postgres)
    for pid in processes:
        os.kill(pid, signal.SIGSTOP)
    health: list[float] = []
    writers = [threading.Thread(target=write, args=(worker,), daemon=True) for worker in range(2)]
    try:
        for thread in writers:
            thread.start()
        until = time.monotonic() + 2.5 * CONNECT_TIMEOUT_SECONDS
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                urllib.request.urlopen(served.endpoint + "/", timeout=30).read()
            except OSError:  # no answer in 30 s (a frozen loop): recorded as such
                pass
            health.append(time.monotonic() - started)
            time.sleep(0.1)
    finally:
        for pid in processes:
            os.kill(pid, signal.SIGCONT)
        stopping.set()
        for thread in writers:
            thread.join(timeout=limits.POSTGRES_CALL_TIMEOUT_SECONDS + 30)
    assert not any(thread.is_alive() for thread in writers), "a write hung"
    assert max(health) < HEALTH_MAX_SECONDS, (
        f"the health check took {max(health):.1f} s while PostgreSQL hung ({len(health)} checks)")
    others = [result for _, result in writes if result not in ("ok", "500")]
    assert not others, others[:3]
    assert "500" in {result for _, result in writes}, writes
    assert max(seconds for seconds, _ in writes) < limits.POSTGRES_CALL_TIMEOUT_SECONDS + 5, writes
    assert throwaway.wait_until(lambda: result_of(put_item(client, served.table, "after")) == "ok", 10)
    assert served.process.poll() is None
