"""``dynastore serve --postgres URL`` when PostgreSQL is not what it should be.

- unreachable at start (a closed port, a refused login, a missing
  database): one line on stderr naming the server, and a non-zero exit;
- a database of another dynastore schema version: refused, naming both
  versions; an empty database gets the schema, even with two servers
  starting on it at once;
- a dropped connection, a PostgreSQL restart or a stopped PostgreSQL while
  serving: the affected requests get InternalServerError (HTTP 500, which
  every SDK retries), never another error, a wrong answer, a half-written
  item or half a transaction, and the server reconnects by itself.

The tests that stop, restart or kill the backends of PostgreSQL do it on a
cluster of their own (``own_postgres``), never on the session's shared one.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from dynastore.storage.postgres.schema import SCHEMA_VERSION
from tests import postgres_server as throwaway
from tests.api.conftest import TEST_CLIENT_CONFIG, free_port, server_log, start_server, stop_server
from tests.conftest import skip_or_fail_without_postgres

STARTUP_FAILURE_MAX_SECONDS = 10.0
"""How long ``serve`` may take to give up on an unusable PostgreSQL."""
REQUEST_MAX_SECONDS = 15.0
"""No request may take longer, whatever PostgreSQL is doing (a hang otherwise)."""
RECOVERY_MAX_SECONDS = 5.0
"""Requests succeed again this soon after PostgreSQL is back."""
LOAD_THREADS = 3


# --- startup ---------------------------------------------------------------------


@dataclass
class Exited:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def serve_expecting_exit(*arguments: str, cwd: Path,
                         environment: dict[str, str] | None = None) -> Exited:
    """Run ``python -m dynastore serve --port 0 ARGS`` until it exits (in a
    session of its own, killed whole if it does not exit in time)."""
    environ = {name: value for name, value in os.environ.items() if name != "DYNASTORE_POSTGRES"}
    environ.update(environment or {})
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--port", "0", *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=environ,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=STARTUP_FAILURE_MAX_SECONDS * 2)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"serve {' '.join(arguments)} did not exit in "
                    f"{STARTUP_FAILURE_MAX_SECONDS * 2:.0f} s; stdout: {stdout!r} stderr: {stderr!r}")
    return Exited(process.returncode, stdout.decode(errors="replace"),
                  stderr.decode(errors="replace"), time.monotonic() - started)


def assert_one_clear_line(exited: Exited, host_port: str) -> str:
    """A non-zero exit, soon, and one stderr line "dynastore: ..." naming the server."""
    report = f"exit {exited.returncode} after {exited.seconds:.1f} s; stderr: {exited.stderr!r}"
    assert exited.returncode != 0, report
    assert exited.seconds < STARTUP_FAILURE_MAX_SECONDS, report
    lines = exited.stderr.splitlines()
    assert len(lines) == 1, report
    line = lines[0]
    assert line.startswith("dynastore: "), report
    assert host_port in line, report
    assert "Traceback" not in exited.stderr, report
    return line


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    return free_port()


def test_unreachable_postgres_at_start_is_one_line_and_a_failure(tmp_path: Path) -> None:
    port = closed_port()
    exited = serve_expecting_exit("--postgres", f"postgresql://postgres@127.0.0.1:{port}/x",
                                  cwd=tmp_path)
    line = assert_one_clear_line(exited, f"127.0.0.1:{port}")
    assert re.search(r"cannot (connect|use|reach)", line), line
    assert not (tmp_path / "dynastore-data").exists()


def test_unreachable_postgres_from_the_environment_is_one_line_and_a_failure(
    tmp_path: Path,
) -> None:
    port = closed_port()
    exited = serve_expecting_exit(
        cwd=tmp_path, environment={"DYNASTORE_POSTGRES": f"postgresql://postgres@127.0.0.1:{port}/x"}
    )
    line = assert_one_clear_line(exited, f"127.0.0.1:{port}")
    assert re.search(r"cannot (connect|use|reach)", line), line
    assert not (tmp_path / "dynastore-data").exists(), "the variable was ignored"


def test_missing_database_is_one_line_and_a_failure(
    tmp_path: Path, postgres_server: throwaway.ThrowawayPostgres
) -> None:
    exited = serve_expecting_exit("--postgres", postgres_server.url("no_such_database"), cwd=tmp_path)
    line = assert_one_clear_line(exited, f"127.0.0.1:{postgres_server.port}")
    assert "no_such_database" in line and "does not exist" in line, line


def test_refused_login_is_one_line_and_a_failure(
    tmp_path: Path, postgres_server: throwaway.ThrowawayPostgres
) -> None:
    url = f"postgresql://no_such_role@127.0.0.1:{postgres_server.port}/postgres"
    exited = serve_expecting_exit("--postgres", url, cwd=tmp_path)
    line = assert_one_clear_line(exited, f"127.0.0.1:{postgres_server.port}")
    assert "no_such_role" in line, line


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def schema_rows(server: throwaway.ThrowawayPostgres, url: str) -> str:
    return server.psql("SELECT count(*) || ' ' || max(version) FROM dynastore_schema",
                       database_name(url))


def test_a_database_of_another_schema_version_is_refused_naming_both_versions(
    tmp_path: Path, postgres_server: throwaway.ThrowawayPostgres
) -> None:
    from dynastore.storage.postgres import PostgresStorage

    url = postgres_server.new_database()
    PostgresStorage(url).close()  # an empty database gets the schema
    assert schema_rows(postgres_server, url) == f"1 {SCHEMA_VERSION}"
    postgres_server.psql("UPDATE dynastore_schema SET version = 999", database_name(url))

    exited = serve_expecting_exit("--postgres", url, cwd=tmp_path)
    line = assert_one_clear_line(exited, f"127.0.0.1:{postgres_server.port}")
    # The versions, not digits of the address: drop the URL before looking.
    words = line.replace(f"127.0.0.1:{postgres_server.port}", "").replace(database_name(url), "")
    numbers = re.findall(r"(?<![\w.])\d+(?![\w.])", words)
    assert "999" in numbers, line
    assert str(SCHEMA_VERSION) in numbers, line
    assert schema_rows(postgres_server, url) == "1 999", "the refused database was changed"


def test_a_fresh_database_gets_the_schema_when_served(
    postgres_server: throwaway.ThrowawayPostgres,
) -> None:
    url = postgres_server.new_database()
    process, endpoint = start_server("--postgres", url)
    try:
        client = boto3_client(endpoint)
        assert client.list_tables()["TableNames"] == []
        assert schema_rows(postgres_server, url) == f"1 {SCHEMA_VERSION}"
    finally:
        stop_server(process)


def test_two_servers_starting_at_once_on_an_empty_database_both_come_up(
    postgres_server: throwaway.ThrowawayPostgres,
) -> None:
    url = postgres_server.new_database()
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def start() -> None:
        barrier.wait()
        try:
            started.append(start_server("--postgres", url))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert not errors, errors
        assert len(started) == 2
        first, second = (boto3_client(endpoint) for _, endpoint in started)
        assert first.list_tables()["TableNames"] == []
        assert second.list_tables()["TableNames"] == []
        name = "made-on-the-first"
        create_table(first, name)
        assert second.describe_table(TableName=name)["Table"]["TableName"] == name
        for process, _ in started:
            assert process.poll() is None, server_log(process)
            assert "Traceback" not in server_log(process), server_log(process)
        assert schema_rows(postgres_server, url) == f"1 {SCHEMA_VERSION}"
    finally:
        for process, _ in started:
            stop_server(process)


# --- serving through PostgreSQL's failures ---------------------------------------


def boto3_client(endpoint: str) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=TEST_CLIENT_CONFIG.merge(
            Config(connect_timeout=5, read_timeout=REQUEST_MAX_SECONDS, max_pool_connections=4)
        ),
    )


def create_table(client: Any, name: str) -> None:
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    client.get_waiter("table_exists").wait(TableName=name,
                                           WaiterConfig={"Delay": 1, "MaxAttempts": 20})


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[throwaway.ThrowawayPostgres]:
    """A cluster of this module's own, which its tests stop and restart."""
    skip_or_fail_without_postgres()
    with throwaway.started_cluster() as server:
        yield server


@dataclass
class Served:
    postgres: throwaway.ThrowawayPostgres
    database: str
    process: subprocess.Popen[bytes]
    endpoint: str
    table: str = "items"

    def log(self) -> str:
        return server_log(self.process)


@pytest.fixture
def served(own_postgres: throwaway.ThrowawayPostgres) -> Iterator[Served]:
    yield from serving_on(own_postgres)


def serving_on(cluster: throwaway.ThrowawayPostgres) -> Iterator[Served]:
    """A server on a new database of ``cluster``, with a table "items".
    PostgreSQL is running again at the end, whatever the test did."""
    url = cluster.new_database()
    process, endpoint = start_server("--postgres", url)
    serving = Served(cluster, database_name(url), process, endpoint)
    try:
        create_table(boto3_client(endpoint), serving.table)
        yield serving
    finally:
        stop_server(process)
        ensure_running(cluster)


def ensure_running(server: throwaway.ThrowawayPostgres) -> None:
    try:
        server.psql("SELECT 1")
    except subprocess.CalledProcessError:
        server.start()


@dataclass
class Outcome:
    operation: str
    started: float
    ended: float
    result: str
    """"ok", "500" (InternalServerError, HTTP 500), or what else came back."""
    response: Any = None


def call(outcomes: list[Outcome], operation: str, function: Callable[..., Any],
         **arguments: Any) -> Outcome:
    started = time.monotonic()
    response: Any = None
    try:
        response = function(**arguments)
        result = "ok"
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        result = "500" if (code, status) == ("InternalServerError", 500) else f"{code} (HTTP {status})"
    except Exception as error:  # noqa: BLE001 - a timeout, a dropped connection: recorded
        result = f"{type(error).__name__}: {error}"
    outcome = Outcome(operation, started, time.monotonic(), result, response)
    outcomes.append(outcome)
    return outcome


@dataclass
class Load:
    """Threads that each repeat ``step(client, worker, i, outcomes, wrong)``
    until stopped, recording every request's outcome and every wrong answer."""

    endpoint: str
    step: Callable[[Any, int, int, list[Outcome], list[str]], None]
    outcomes: list[Outcome] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    events: list[tuple[str, float]] = field(default_factory=list)
    """What the test did to PostgreSQL, and when (for the failure messages)."""

    def start(self) -> Load:
        for worker in range(LOAD_THREADS):
            thread = threading.Thread(target=self._run, args=(worker,), daemon=True)
            self.threads.append(thread)
            thread.start()
        return self

    def _run(self, worker: int) -> None:
        client = boto3_client(self.endpoint)
        i = 0
        while not self.stopping.is_set():
            i += 1
            try:
                self.step(client, worker, i, self.outcomes, self.wrong)
            except Exception as error:  # noqa: BLE001 - an assertion of the step: a wrong answer
                self.wrong.append(f"worker {worker} step {i}: {error!r}")

    def successes_after(self, moment: float) -> set[str]:
        return {o.operation for o in list(self.outcomes) if o.started >= moment and o.result == "ok"}

    def wait_for_recovery(self, since: float, operations: set[str]) -> float:
        """Seconds from ``since`` until each of ``operations`` succeeded
        (sent after ``since``); fails after RECOVERY_MAX_SECONDS."""
        deadline = since + RECOVERY_MAX_SECONDS
        while time.monotonic() < deadline:
            ok = [o for o in list(self.outcomes) if o.started >= since and o.result == "ok"]
            if operations <= {o.operation for o in ok}:
                return max(min(o.ended for o in ok if o.operation == operation)
                           for operation in operations) - since
            time.sleep(0.05)
        recent = [(o.operation, o.result) for o in list(self.outcomes) if o.started >= since][-10:]
        pytest.fail(f"no recovery {RECOVERY_MAX_SECONDS} s after PostgreSQL was back: {recent}")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=REQUEST_MAX_SECONDS + 10)
        assert not any(thread.is_alive() for thread in self.threads), "a request hung"

    def check(self, served: Served) -> None:
        """Every request: a correct 200 or InternalServerError/500, in bounded time."""
        log = served.log()
        others = [self.describe(o) for o in self.outcomes if o.result not in ("ok", "500")]
        assert not others, (f"errors other than InternalServerError: {others[:10]}; events: "
                            f"{self.describe_events()}\n{log[-3000:]}")
        assert not self.wrong, f"wrong answers: {self.wrong[:10]}\n{log[-3000:]}"
        slowest = max(o.ended - o.started for o in self.outcomes)
        assert slowest < REQUEST_MAX_SECONDS, f"a request took {slowest:.1f} s"
        assert served.process.poll() is None, f"the server exited:\n{log[-3000:]}"
        assert "Traceback" not in log, f"tracebacks in the server's log:\n{log[-5000:]}"

    def event(self, name: str) -> float:
        now = time.monotonic()
        wall = time.strftime("%H:%M:%S", time.localtime()) + f".{int(time.time() * 1000) % 1000:03d}"
        self.events.append((f"{name} ({wall})", now))
        return now

    def origin(self) -> float:
        return self.events[0][1] if self.events else 0.0

    def describe(self, outcome: Outcome) -> str:
        return (f"{outcome.operation} sent at {outcome.started - self.origin():+.2f} s, "
                f"took {outcome.ended - outcome.started:.2f} s: {outcome.result}")

    def describe_events(self) -> str:
        return ", ".join(f"{name} at {moment - self.origin():+.2f} s" for name, moment in self.events)

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.result] = counts.get(outcome.result, 0) + 1
        return ", ".join(f"{result}: {count}" for result, count in sorted(counts.items()))


def item_of(worker: int, i: int) -> dict[str, Any]:
    key = f"w{worker}-{i}"
    return {
        "pk": {"S": key},
        "n": {"N": str(i)},
        "check": {"S": hashlib.sha256(key.encode()).hexdigest()},
        "pad": {"S": f"{key}:" + "x" * 2000},
    }


@dataclass
class Puts:
    """The PutItem/GetItem load: each step writes a new item, reads it back
    and reads back the last item the worker had acknowledged."""

    table: str
    written: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    """key -> (the PutItem's result, the item)."""
    last_acknowledged: dict[int, dict[str, Any]] = field(default_factory=dict)

    def step(self, client: Any, worker: int, i: int, outcomes: list[Outcome], wrong: list[str]) -> None:
        item = item_of(worker, i)
        key = item["pk"]["S"]
        put = call(outcomes, "PutItem", client.put_item, TableName=self.table, Item=item)
        self.written[key] = (put.result, item)
        got = call(outcomes, "GetItem", client.get_item, TableName=self.table,
                   Key={"pk": {"S": key}}, ConsistentRead=True)
        if got.result == "ok":
            found = got.response.get("Item")
            if put.result == "ok" and found != item:
                wrong.append(f"{key}: acknowledged, read back as {short(found)}")
            elif put.result != "ok" and found not in (None, item):
                wrong.append(f"{key}: failed put, read back half-written: {short(found)}")
            if found == item:
                self.last_acknowledged[worker] = item
        if put.result == "ok":
            self.last_acknowledged[worker] = item
        earlier = self.last_acknowledged.get(worker)
        if earlier is not None and earlier is not item:
            again = call(outcomes, "GetItem", client.get_item, TableName=self.table,
                         Key={"pk": earlier["pk"]}, ConsistentRead=True)
            if again.result == "ok" and again.response.get("Item") != earlier:
                wrong.append(f"{earlier['pk']['S']}: acknowledged earlier, now "
                             f"{short(again.response.get('Item'))}")

    def check_stored(self, client: Any) -> None:
        stored = {item["pk"]["S"]: item for item in scan_all(client, self.table)}
        assert set(stored) <= set(self.written), set(stored) - set(self.written)
        for key, (result, item) in self.written.items():
            if result == "ok":
                assert stored.get(key) == item, f"acknowledged {key} is {short(stored.get(key))}"
            else:
                assert stored.get(key) in (None, item), f"half-written {key}: {short(stored.get(key))}"


def short(item: Any) -> str:
    text = repr(item)
    return text if len(text) < 200 else text[:200] + "..."


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**arguments)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def load_until(load: Load, count: int, timeout_s: float = 10.0) -> None:
    """Let the load get going: ``count`` successful requests."""
    deadline = time.monotonic() + timeout_s
    while sum(o.result == "ok" for o in list(load.outcomes)) < count:
        assert time.monotonic() < deadline, f"the load did not get going: {load.summary()}"
        time.sleep(0.02)


def sent_between(load: Load, start: float, end: float) -> list[Outcome]:
    return [o for o in list(load.outcomes) if start <= o.started and o.ended <= end]


def overlapping(load: Load, start: float, end: float) -> list[Outcome]:
    return [o for o in list(load.outcomes) if o.started <= end and o.ended >= start]


@pytest.mark.slow
def restart_under_load(served: Served, step: Callable[..., Any], operations: set[str]) -> tuple[Load, float, float]:
    """Restart PostgreSQL while ``step`` runs in the load threads; returns
    the load (stopped) and when the restart began and ended."""
    load = Load(served.endpoint, step).start()
    try:
        load_until(load, 30)
        stopping = load.event("restarting")
        served.postgres.restart()
        back = load.event("restarted")
        recovery_s = load.wait_for_recovery(back, operations)
        time.sleep(0.5)
    finally:
        load.stop()
    print(f"restart took {back - stopping:.2f} s; recovered {recovery_s:.2f} s later; {load.summary()}")
    return load, stopping, back


def test_a_postgres_restart_while_serving_gets_500s_then_recovers(served: Served) -> None:
    puts = Puts(served.table)
    load, stopping, back = restart_under_load(served, puts.step, {"PutItem", "GetItem"})
    assert overlapping(load, stopping, back), "no request was in flight during the restart"
    load.check(served)
    puts.check_stored(boto3_client(served.endpoint))


@pytest.mark.slow
def test_terminated_backends_while_serving_get_500s_then_recover(served: Served) -> None:
    puts = Puts(served.table)
    load = Load(served.endpoint, puts.step).start()
    terminated = 0
    try:
        load_until(load, 30)
        first = load.event("terminating")
        for _ in range(3):
            load.event("terminate")
            terminated += int(served.postgres.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                f" WHERE datname = '{served.database}' AND pid <> pg_backend_pid()"
            ))
            time.sleep(0.3)
        last = load.event("terminated")
        recovery_s = load.wait_for_recovery(last, {"PutItem", "GetItem"})
        time.sleep(0.5)
    finally:
        load.stop()
    print(f"terminated {terminated} backends; recovered {recovery_s:.2f} s later; {load.summary()}")
    assert terminated > 0, "the server had no backend to terminate"
    assert overlapping(load, first, last)
    load.check(served)
    puts.check_stored(boto3_client(served.endpoint))


@pytest.mark.slow
def test_a_stopped_postgres_gets_500s_then_recovers_when_started(served: Served) -> None:
    puts = Puts(served.table)
    load = Load(served.endpoint, puts.step).start()
    try:
        load_until(load, 30)
        load.event("stopping")
        served.postgres.stop()
        down = load.event("stopped")
        time.sleep(3)
        starting = load.event("starting")
        served.postgres.start()
        back = load.event("started")
        recovery_s = load.wait_for_recovery(back, {"PutItem", "GetItem"})
        time.sleep(0.5)
    finally:
        load.stop()
    while_down = sent_between(load, down, starting)
    print(f"{len(while_down)} requests while PostgreSQL was down; recovered {recovery_s:.2f} s "
          f"after it was back; {load.summary()}")
    load.check(served)
    assert len(while_down) >= LOAD_THREADS, "too few requests while PostgreSQL was down"
    answered = {(o.operation, o.result) for o in while_down}
    assert all(o.result == "500" for o in while_down), (
        f"answered while PostgreSQL was down: {answered}\n{served.log()[-3000:]}")
    puts.check_stored(boto3_client(served.endpoint))


@dataclass
class Transactions:
    """Each step: one TransactWriteItems that puts a new pair of items and
    adds 1 to both of the worker's two counters, then a TransactGetItems of
    the counters, which must always be equal and within what was sent."""

    table: str
    sent: dict[int, int] = field(default_factory=dict)
    acknowledged: dict[int, int] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    """pair key prefix -> the transaction's result."""

    def pair(self, worker: int, i: int) -> list[dict[str, Any]]:
        return [{"pk": {"S": f"w{worker}-{i}-{side}"}, "n": {"N": str(i)},
                 "pad": {"S": "y" * 1000}} for side in ("a", "b")]

    def counters(self, worker: int) -> list[dict[str, Any]]:
        return [{"pk": {"S": f"counter-w{worker}-{side}"}} for side in ("x", "y")]

    def step(self, client: Any, worker: int, i: int, outcomes: list[Outcome], wrong: list[str]) -> None:
        actions: list[dict[str, Any]] = [{"Put": {"TableName": self.table, "Item": item}}
                                         for item in self.pair(worker, i)]
        actions += [{"Update": {"TableName": self.table, "Key": key, "UpdateExpression": "ADD c :one",
                                "ExpressionAttributeValues": {":one": {"N": "1"}}}}
                    for key in self.counters(worker)]
        self.sent[worker] = self.sent.get(worker, 0) + 1
        written = call(outcomes, "TransactWriteItems", client.transact_write_items,
                       TransactItems=actions)
        self.results[f"w{worker}-{i}"] = written.result
        if written.result == "ok":
            self.acknowledged[worker] = self.acknowledged.get(worker, 0) + 1
        read = call(outcomes, "TransactGetItems", client.transact_get_items, TransactItems=[
            {"Get": {"TableName": self.table, "Key": key}} for key in self.counters(worker)])
        if read.result != "ok":
            return
        values = [int(answer.get("Item", {}).get("c", {}).get("N", "0"))
                  for answer in read.response["Responses"]]
        low, high = self.acknowledged.get(worker, 0), self.sent[worker]
        if values[0] != values[1] or not low <= values[0] <= high:
            wrong.append(f"worker {worker} counters {values}, acknowledged {low}, sent {high}")

    def check_stored(self, client: Any) -> None:
        stored = {item["pk"]["S"]: item for item in scan_all(client, self.table)}
        for worker in self.sent:
            counts = [int(stored.get(key["pk"]["S"], {}).get("c", {}).get("N", "0"))
                      for key in self.counters(worker)]
            applied = 0
            for prefix, result in self.results.items():
                if not prefix.startswith(f"w{worker}-"):
                    continue
                i = int(prefix.rsplit("-", 1)[1])
                found = [stored.get(item["pk"]["S"]) for item in self.pair(worker, i)]
                expected = self.pair(worker, i)
                if result == "ok":
                    assert found == expected, f"acknowledged transaction {prefix}: {short(found)}"
                else:
                    assert found in ([None, None], expected), f"half a transaction {prefix}: {short(found)}"
                applied += found == expected
            assert counts == [applied, applied], (
                f"worker {worker}: counters {counts}, {applied} transactions applied")


@pytest.mark.slow
def test_transactions_during_a_postgres_restart_apply_whole_or_not_at_all(served: Served) -> None:
    transactions = Transactions(served.table)
    load, stopping, back = restart_under_load(served, transactions.step, {"TransactWriteItems", "TransactGetItems"})
    assert overlapping(load, stopping, back), "no transaction was in flight during the restart"
    load.check(served)
    transactions.check_stored(boto3_client(served.endpoint))
