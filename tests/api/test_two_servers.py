"""Two ``dynastore serve --postgres URL`` servers over one database are one endpoint.

The two servers' writes meet only in PostgreSQL, through the
conditional-commit write path (a compare-and-set on each row's version,
retried on a conflict; write_path.py), so every test here races requests of
both servers on the same rows (and, where a server runs several operations
at once, of one server's own threads). What a client must see, whichever
server it talks to:

- a conditional put has exactly one winner, and the item is the winner's;
- no ``ADD`` is lost, and single-item writes among themselves never fail
  with TransactionConflictException (they retry);
- transactions keep a bank's total and every balance exactly as the
  committed transfers say; one that loses an item to another transaction is
  cancelled with a TransactionConflict reason; a TransactGetItems on either
  server never sees half of a transfer;
- a single-item write that loses its item to a transaction gets
  TransactionConflictException, and nothing either side acknowledged is lost;
- kill -9 of a third server under write load loses no acknowledged write;
- a table created, changed (a new GSI) or deleted through one server is at
  once so on the other, and an item the other writes meanwhile is in the
  index;
- a ClientRequestToken is one server-wide token: a transaction replayed on
  the other server is not applied again.

Random choices come from a printed seed (DYNASTORE_TEST_SEED=<seed> replays
them; the interleaving itself is the scheduler's). No request may answer
5xx: an assertion about one quotes the end of both servers' logs.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from dynastore.storage.postgres.storage import JOB_LOCK_CLASS
from dynastore.streams_api.triggers import TRIGGERS_LOCK
from dynastore.workers.ttl_sweeper import SWEEPER_LOCK
from tests.api.conftest import TEST_CLIENT_CONFIG, server_log, start_server, stop_server
from tests.api.helpers import SIGV4, children_of
from tests.api.server_pair import CLIENT_CONFIG, ServerPair, make_client, started_pair

THREADS = 8
"""Client threads in the heavy tests: half on each server."""

PROBE_CONFIG = TEST_CLIENT_CONFIG.merge(Config(connect_timeout=5, read_timeout=5))


@dataclass
class Pair(ServerPair):
    """Two servers over one database, and clients of each (one per thread)."""

    clients: list[list[Any]] = field(default_factory=list)
    broken: str = ""
    """Why the servers cannot be tested any more (one died or stopped answering)."""

    def client(self, server: int, index: int = 0) -> Any:
        return self.clients[server][index]

    def thread_client(self, thread: int) -> Any:
        """Thread ``thread``'s client: even threads on server A, odd ones on B."""
        return self.clients[thread % 2][thread // 2]


@pytest.fixture(scope="module")
def pair(postgres_server: Any) -> Iterator[Pair]:
    with started_pair(postgres_server.new_database(), Pair) as found:
        found.clients = [[make_client(url) for _ in range(THREADS // 2)] for url in found.urls]
        yield found


@pytest.fixture(autouse=True)
def servers_stay_up(pair: Pair) -> Iterator[None]:
    """After each test both servers still run and answer (else: their logs,
    and the module's later tests fail at once instead of timing out)."""
    if pair.broken:
        pytest.fail(f"not run: {pair.broken}")
    yield
    for i, process in enumerate(pair.processes):
        if process.poll() is not None:
            pair.broken = f"server {'AB'[i]} exited with code {process.returncode}"
        else:
            try:
                make_client(pair.urls[i], PROBE_CONFIG).list_tables(Limit=1)
            except (BotoCoreError, ClientError) as error:
                pair.broken = f"server {'AB'[i]} does not answer ListTables: {error!r}"
        if pair.broken:
            pytest.fail(f"{pair.broken}\n{pair.logs(20000)}")


def replayable_seed() -> int:
    seed = int(os.environ.get("DYNASTORE_TEST_SEED") or random.randrange(1 << 32))
    print(f"two-server seed: {seed} (replay with DYNASTORE_TEST_SEED={seed})")
    return seed


def new_table(client: Any) -> str:
    """A PAY_PER_REQUEST table keyed by ``pk`` (S) with a unique name."""
    name = f"two-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


@pytest.fixture
def table(pair: Pair) -> Iterator[str]:
    """A fresh table, created through server A, deleted after the test."""
    name = new_table(pair.client(0))
    yield name
    try:
        pair.client(0).delete_table(TableName=name)
    except ClientError:
        pass


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def key(value: str) -> dict[str, Any]:
    return {"pk": {"S": value}}


@dataclass(frozen=True)
class Outcome:
    """How one request ended: ``code`` is "ok" or the error code."""

    code: str
    status: int
    response: dict[str, Any]

    @property
    def server_error(self) -> bool:
        return self.status >= 500


def attempt(call: Callable[..., Any], **arguments: Any) -> Outcome:
    """Send one request; a DynamoDB error is an outcome, not an exception
    (a connection error still raises: the servers must stay up)."""
    try:
        response = call(**arguments)
        return Outcome("ok", response["ResponseMetadata"]["HTTPStatusCode"], response)
    except ClientError as error:
        return Outcome(str(error.response["Error"]["Code"]),
                       int(error.response["ResponseMetadata"]["HTTPStatusCode"]), error.response)


def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(work, range(count)))


class Background:
    """Functions run in threads; ``join`` waits for them all and raises the
    first exception one of them raised (in the test's thread, so it fails
    the test instead of being printed and lost)."""

    def __init__(self, *calls: Callable[[], Any]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=len(calls))
        self._futures = [self._pool.submit(call) for call in calls]

    def running(self) -> bool:
        return not all(future.done() for future in self._futures)

    def join(self) -> None:
        try:
            for future in self._futures:
                future.result()
        finally:
            self._pool.shutdown()


def read(pair: Pair, server: int, table: str, pk: str) -> dict[str, Any] | None:
    answer = pair.client(server).get_item(TableName=table, Key=key(pk), ConsistentRead=True)
    item: dict[str, Any] | None = answer.get("Item")
    return item


# --- 1. one winner ------------------------------------------------------------------------------

ROUNDS = 30


@pytest.mark.slow
def test_exactly_one_conditional_put_wins_across_servers(pair: Pair, table: str) -> None:
    """Each round every thread (half on A, half on B) puts one new key with
    attribute_not_exists(pk), all released at once by a barrier."""
    start = threading.Barrier(THREADS, timeout=30)
    outcomes: list[list[str]] = [[""] * THREADS for _ in range(ROUNDS)]

    def contend(thread: int) -> None:
        client = pair.thread_client(thread)
        for round_number in range(ROUNDS):
            start.wait()
            outcome = attempt(client.put_item, TableName=table, ConditionExpression="attribute_not_exists(pk)",
                              Item={**key(f"round-{round_number}"), "owner": n(thread)})
            outcomes[round_number][thread] = outcome.code

    in_threads(THREADS, contend)
    for round_number, codes in enumerate(outcomes):
        winners = [thread for thread, code in enumerate(codes) if code == "ok"]
        assert len(winners) == 1, f"round {round_number}: {codes}\n{pair.logs()}"
        assert Counter(codes)["ConditionalCheckFailedException"] == THREADS - 1, codes
        for server in (0, 1):
            stored = read(pair, server, table, f"round-{round_number}")
            assert stored == {**key(f"round-{round_number}"), "owner": n(winners[0])}, (
                f"round {round_number}: server {'AB'[server]} reads {stored}, the winner was thread {winners[0]}")
    wins_by_server = Counter(codes.index("ok") % 2 for codes in outcomes)
    print(f"rounds won by server A: {wins_by_server[0]}, by B: {wins_by_server[1]}")


# --- 2. exact counters --------------------------------------------------------------------------

UPDATES_PER_THREAD = 40
COUNTERS = ["hot", "hot", "hot", "hot", "warm-1", "warm-2", "warm-3"]
"""Which counter each update picks from (the hot one 4 times in 7)."""


@pytest.mark.slow
def test_no_add_is_lost_across_servers(pair: Pair, table: str) -> None:
    """ADD from both servers on a hot counter and a few others: every count
    is the number of acknowledged ADDs, every ADD saw a distinct value (each
    UPDATED_NEW is the counter's next value), and none failed."""
    seed = replayable_seed()

    def increment(thread: int) -> tuple[list[tuple[str, int]], list[Outcome]]:
        rng = random.Random(seed + thread)
        client = pair.thread_client(thread)
        seen, failures = [], []
        for _ in range(UPDATES_PER_THREAD):
            counter = rng.choice(COUNTERS)
            outcome = attempt(client.update_item, TableName=table, Key=key(counter),
                              UpdateExpression="ADD hits :one", ExpressionAttributeValues={":one": n(1)},
                              ReturnValues="UPDATED_NEW")
            if outcome.code == "ok":
                seen.append((counter, int(outcome.response["Attributes"]["hits"]["N"])))
            else:
                failures.append(outcome)
        return seen, failures

    results = in_threads(THREADS, increment)
    failures = [failure for _, thread_failures in results for failure in thread_failures]
    assert failures == [], (
        f"{len(failures)} ADDs failed (seed {seed}): {Counter(f.code for f in failures)}\n{pair.logs()}")
    values: dict[str, list[int]] = {}
    for seen, _ in results:
        for counter, value in seen:
            values.setdefault(counter, []).append(value)
    assert sum(map(len, values.values())) == THREADS * UPDATES_PER_THREAD
    for counter, answered in values.items():
        assert sorted(answered) == list(range(1, len(answered) + 1)), (
            f"{counter}: two ADDs saw the same value, or one was skipped (seed {seed})")
        for server in (0, 1):
            stored = read(pair, server, table, counter)
            assert stored is not None and stored["hits"] == n(len(answered)), (
                f"{counter}: {len(answered)} ADDs acknowledged, server {'AB'[server]} reads {stored}")


# --- 2b. a stream under concurrent writes ------------------------------------------------------

STREAM_WRITES_PER_THREAD = 30
STREAM_KEYS = ["s-hot", "s-hot", "s-hot", "s-warm-1", "s-warm-2"]


def read_stream(url: str, table: str) -> list[dict[str, Any]]:
    """Every record of the table's stream, shard by shard (parents first), in
    each shard's order, through the server at ``url``."""
    streams = make_client(url, service="dynamodbstreams")
    arn = make_client(url).describe_table(TableName=table)["Table"]["LatestStreamArn"]
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    records: list[dict[str, Any]] = []
    for shard in shards:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            records += page["Records"]
            if not page["Records"]:
                break
            iterator = page.get("NextShardIterator")
    return records


@pytest.mark.slow
def test_a_stream_records_every_concurrent_write_once_in_each_items_order(pair: Pair) -> None:
    """ADDs from both servers (a hot key among a few) on a table with a
    stream: one record per acknowledged write; sequence numbers unique and
    increasing; and for each key, in sequence order, the new images count
    1, 2, 3... with each record's old image the previous record's new image
    (records numbered in an order other than the one the writes took
    effect in would break the chain)."""
    client = pair.client(0)
    name = f"two-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    seed = replayable_seed()

    def write(thread: int) -> list[Outcome]:
        rng = random.Random(seed + thread)
        writer = pair.thread_client(thread)
        failures = []
        for _ in range(STREAM_WRITES_PER_THREAD):
            outcome = attempt(writer.update_item, TableName=name, Key=key(rng.choice(STREAM_KEYS)),
                              UpdateExpression="ADD hits :one", ExpressionAttributeValues={":one": n(1)})
            if outcome.code != "ok":
                failures.append(outcome)
        return failures

    try:
        failures = [failure for failed in in_threads(THREADS, write) for failure in failed]
        assert failures == [], f"seed {seed}: {Counter(f.code for f in failures)}\n{pair.logs()}"
        records = read_stream(pair.urls[1], name)  # the writes came through both
        assert len(records) == THREADS * STREAM_WRITES_PER_THREAD, f"seed {seed}"
        numbers = [int(record["dynamodb"]["SequenceNumber"]) for record in records]
        assert len(set(numbers)) == len(numbers), "two records share a sequence number"
        assert numbers == sorted(numbers), "a shard's records are not in sequence order"
        last: dict[str, dict[str, Any]] = {}
        for record in sorted(records, key=lambda record: int(record["dynamodb"]["SequenceNumber"])):
            image = record["dynamodb"]["NewImage"]
            pk = image["pk"]["S"]
            previous = last.get(pk)
            assert record["dynamodb"].get("OldImage") == previous, f"{pk}: the images do not chain (seed {seed})"
            assert int(image["hits"]["N"]) == (0 if previous is None else int(previous["hits"]["N"])) + 1
            last[pk] = image
        for pk, image in last.items():
            assert read(pair, 0, name, pk) == image, f"{pk}: the table is not the stream's last image"
    finally:
        client.delete_table(TableName=name)


# --- 3. bank transfers --------------------------------------------------------------------------

ACCOUNTS = 6
TRANSFERS_PER_THREAD = 30
OPENING_BALANCE = 100


def account(index: int) -> dict[str, Any]:
    return key(f"acct-{index}")


def transfer(table: str, source: int, target: int, amount: int) -> list[dict[str, Any]]:
    values = {":amount": n(amount)}
    return [
        {"Update": {"TableName": table, "Key": account(source), "UpdateExpression": "SET balance = balance - :amount",
                    "ConditionExpression": "balance >= :amount", "ExpressionAttributeValues": values}},
        {"Update": {"TableName": table, "Key": account(target), "UpdateExpression": "SET balance = balance + :amount",
                    "ExpressionAttributeValues": values}},
    ]


def snapshot(client: Any, table: str) -> Outcome:
    """All balances in one TransactGetItems."""
    return attempt(client.transact_get_items,
                   TransactItems=[{"Get": {"TableName": table, "Key": account(i)}} for i in range(ACCOUNTS)])


def balances_of(outcome: Outcome) -> list[int]:
    return [int(entry["Item"]["balance"]["N"]) for entry in outcome.response["Responses"]]


@dataclass
class Transfers:
    committed: list[tuple[int, int, int]] = field(default_factory=list)
    cancelled: Counter[str] = field(default_factory=Counter)
    """Cancellations by their reasons' codes (e.g. "ConditionalCheckFailed,None")."""
    unexpected: list[Outcome] = field(default_factory=list)


def run_transfers(pair: Pair, table: str, seed: int, transfers_per_thread: int) -> list[Transfers]:
    """THREADS threads (half on each server) each try ``transfers_per_thread``
    random transfers between the ACCOUNTS accounts."""

    def work(thread: int) -> Transfers:
        rng = random.Random(seed + thread)
        client = pair.thread_client(thread)
        outcome = Transfers()
        for _ in range(transfers_per_thread):
            source, target = rng.sample(range(ACCOUNTS), 2)
            amount = rng.randint(1, 60)
            answer = attempt(client.transact_write_items, TransactItems=transfer(table, source, target, amount))
            if answer.code == "ok":
                outcome.committed.append((source, target, amount))
            elif answer.code == "TransactionCanceledException":
                reasons = [reason["Code"] for reason in answer.response["CancellationReasons"]]
                outcome.cancelled[",".join(reasons)] += 1
            else:
                outcome.unexpected.append(answer)
        return outcome

    return in_threads(THREADS, work)


def open_accounts(pair: Pair, table: str) -> None:
    for i in range(ACCOUNTS):
        pair.client(0).put_item(TableName=table, Item={**account(i), "balance": n(OPENING_BALANCE)})


@pytest.mark.slow
def test_transfers_across_servers_keep_every_balance_exact(pair: Pair, table: str) -> None:
    """Transfers between few accounts from both servers: the final balances
    are exactly what the committed transfers make of the opening ones (so
    the total is kept and none is negative), every attempt either committed
    or was cancelled, and some were cancelled for a TransactionConflict."""
    seed = replayable_seed()
    open_accounts(pair, table)
    results = run_transfers(pair, table, seed, TRANSFERS_PER_THREAD)
    unexpected = [outcome for result in results for outcome in result.unexpected]
    assert unexpected == [], f"seed {seed}: {unexpected[:3]}\n{pair.logs()}"
    committed = [move for result in results for move in result.committed]
    cancelled: Counter[str] = sum((result.cancelled for result in results), Counter())
    print(f"committed {len(committed)}, cancelled {dict(cancelled)}")
    assert len(committed) + sum(cancelled.values()) == THREADS * TRANSFERS_PER_THREAD
    assert committed, "no transfer committed"
    for reasons in cancelled:
        assert set(reasons.split(",")) <= {"None", "ConditionalCheckFailed", "TransactionConflict"}, reasons
    conflicts = sum(count for reasons, count in cancelled.items() if "TransactionConflict" in reasons)
    assert conflicts > 0, f"no transfer was cancelled for a TransactionConflict (seed {seed}): {dict(cancelled)}"

    expected = [OPENING_BALANCE] * ACCOUNTS
    for source, target, amount in committed:
        expected[source] -= amount
        expected[target] += amount
    assert sum(expected) == ACCOUNTS * OPENING_BALANCE and min(expected) >= 0
    for server in (0, 1):
        final = [int((read(pair, server, table, f"acct-{i}") or {})["balance"]["N"]) for i in range(ACCOUNTS)]
        assert final == expected, f"server {'AB'[server]} (seed {seed})"


@pytest.mark.slow
def test_transact_get_items_never_sees_half_a_transfer_of_the_other_server(pair: Pair, table: str) -> None:
    """TransactGetItems is serializable with TransactWriteItems: a reader on
    each server, while both servers run transfers, never sees a total other
    than the opening one (a snapshot cancelled by a conflict is allowed)."""
    seed = replayable_seed()
    open_accounts(pair, table)
    done = threading.Event()
    snapshots: list[list[int]] = []
    cancelled: list[Outcome] = []
    unexpected: list[Outcome] = []

    def take_snapshots(server: int) -> None:
        reader = make_client(pair.urls[server])
        while not done.is_set():
            taken = snapshot(reader, table)
            if taken.code == "ok":
                snapshots.append(balances_of(taken))
            elif taken.code == "TransactionCanceledException":
                cancelled.append(taken)  # a conflict with a transfer: DynamoDB may do so
            else:
                unexpected.append(taken)
                return

    readers = Background(lambda: take_snapshots(0), lambda: take_snapshots(1))
    try:
        results = run_transfers(pair, table, seed, TRANSFERS_PER_THREAD // 2)
    finally:
        done.set()
        readers.join()
    unexpected += [outcome for result in results for outcome in result.unexpected]
    assert unexpected == [], f"seed {seed}: {unexpected[:3]}\n{pair.logs()}"
    for outcome in cancelled:
        reasons = {reason["Code"] for reason in outcome.response.get("CancellationReasons", [])}
        assert reasons <= {"None", "TransactionConflict"} and "TransactionConflict" in reasons, outcome
    assert snapshots, "the readers took no snapshot"
    total = ACCOUNTS * OPENING_BALANCE
    torn = [seen for seen in snapshots if sum(seen) != total or min(seen) < 0]
    print(f"{len(snapshots)} snapshots, {len(cancelled)} cancelled, {len(torn)} torn")
    assert torn == [], (
        f"{len(torn)} of {len(snapshots)} TransactGetItems snapshots saw half a transfer, e.g. {torn[:3]}"
        f" (totals {sorted({sum(seen) for seen in torn})[:5]}, not {total}; seed {seed})")


# --- 4. a single-item write racing transactions ---------------------------------------------------

RACE_BUDGET_SECONDS = 10.0


@pytest.mark.slow
def test_update_item_racing_transactions_gets_transaction_conflict(pair: Pair, table: str) -> None:
    """Server A keeps running TransactWriteItems on a hot item and another
    item; server B keeps updating the hot item, until B has seen a
    TransactionConflictException (and a success, and A a commit) or the time
    budget runs out. B must have seen one, and every acknowledged write of
    either side must be counted in the items."""
    stop = threading.Event()
    deadline = time.monotonic() + RACE_BUDGET_SECONDS
    lock = threading.Lock()
    tally: Counter[str] = Counter()
    unexpected: list[Outcome] = []

    def note(name: str, outcome: Outcome | None = None) -> None:
        with lock:
            tally[name] += 1
            if outcome is not None:
                unexpected.append(outcome)
                stop.set()

    def transact(thread: int) -> None:
        client = pair.client(0, thread)
        while not stop.is_set() and time.monotonic() < deadline:
            items = [{"Update": {"TableName": table, "Key": key(pk), "UpdateExpression": "ADD #by_a :one",
                                 "ExpressionAttributeNames": {"#by_a": "by_a"},
                                 "ExpressionAttributeValues": {":one": n(1)}}} for pk in ("hot", "other")]
            outcome = attempt(client.transact_write_items, TransactItems=items)
            if outcome.code == "ok":
                note("A committed")
            elif outcome.code == "TransactionCanceledException" and "TransactionConflict" in {
                    reason["Code"] for reason in outcome.response["CancellationReasons"]}:
                note("A cancelled")  # lost the hot item to B too many times in a row
            else:
                note("A unexpected", outcome)

    def update(thread: int) -> None:
        client = pair.client(1, thread)
        while not stop.is_set() and time.monotonic() < deadline:
            outcome = attempt(client.update_item, TableName=table, Key=key("hot"),
                              UpdateExpression="ADD by_b :one", ExpressionAttributeValues={":one": n(1)})
            if outcome.code == "ok":
                note("B updated")
            elif (outcome.code == "TransactionConflictException"
                  and outcome.response["Error"]["Message"] == "Transaction is ongoing for the item"):
                note("B conflicted")
            else:
                note("B unexpected", outcome)
            with lock:  # done once each kind of outcome has been seen
                if tally["B conflicted"] and tally["B updated"] and tally["A committed"]:
                    stop.set()

    # Two threads a side keep each server's queue full, so commits overlap.
    try:
        Background(*(partial(work, i) for work in (transact, update) for i in range(2))).join()
    finally:
        stop.set()
    print(dict(tally))
    assert unexpected == [], f"{unexpected[:3]}\n{pair.logs()}"
    assert tally["B conflicted"] > 0, (
        f"no UpdateItem got TransactionConflictException in {RACE_BUDGET_SECONDS} s: {dict(tally)}")
    assert tally["A committed"] > 0 and tally["B updated"] > 0, dict(tally)
    for server in (0, 1):
        hot, other = (read(pair, server, table, pk) or {} for pk in ("hot", "other"))
        assert hot.get("by_a") == n(tally["A committed"]) and hot.get("by_b") == n(tally["B updated"]), (
            f"server {'AB'[server]}: hot is {hot}, acknowledged {dict(tally)}")
        assert other.get("by_a") == n(tally["A committed"]), f"other is {other}, acknowledged {dict(tally)}"


# --- 5. kill -9 of a third server -----------------------------------------------------------------

KILL_WRITERS = 4
KILL_LOAD_SECONDS = 2.0
KILL_AT_LEAST = 50
"""Acknowledged writes to wait for before the kill (a busy machine warms up slowly)."""
PAYLOAD = "p" * 300


def put_until_killed(port: int, table: str, writer: int, acknowledged: dict[str, str]) -> None:
    """PutItem over one keep-alive connection until the server goes away;
    records each acknowledged key with the value it wrote."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.PutItem",
        "X-Amz-Date": "20261129T000000Z",
        "Authorization": SIGV4,
    }
    sequence = 0
    try:
        while True:
            pk, value = f"w{writer}-{sequence}", f"{PAYLOAD}-{writer}-{sequence}-{uuid.uuid4().hex}"
            body = json.dumps({"TableName": table, "Item": {**key(pk), "value": {"S": value}}}).encode()
            connection.request("POST", "/", body, headers)
            response = connection.getresponse()
            answer = response.read()
            if response.status != 200:
                raise AssertionError(f"PutItem answered {response.status}: {answer[:300]!r}")
            acknowledged[pk] = value  # one key per writer: no lock needed under the GIL
            sequence += 1
    except (OSError, http.client.HTTPException):
        return  # the server was killed
    finally:
        connection.close()


def kill_9(process: Any) -> None:
    """SIGKILL the server and its child processes (an HTTP front process,
    where the server runs one). The server shares pytest's process group
    (start_server), so the group is not the target: the server and its
    children are, each by pid."""
    assert process.poll() is None, f"the server died under load:\n{server_log(process)[-3000:]}"
    front = children_of(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    for pid in front:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


def read_values(client: Any, table: str, keys: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(keys), 100):
        request: dict[str, Any] = {table: {"Keys": [key(pk) for pk in keys[start:start + 100]],
                                           "ConsistentRead": True}}
        while request:
            answer = client.batch_get_item(RequestItems=request)
            found.update((item["pk"]["S"], item["value"]["S"]) for item in answer["Responses"].get(table, []))
            request = answer.get("UnprocessedKeys") or {}
    return found


@pytest.mark.slow
def test_kill_9_of_a_third_server_loses_no_acknowledged_write(pair: Pair, table: str) -> None:
    process, url = start_server("--postgres", pair.database_url)
    acknowledged: list[dict[str, str]] = [{} for _ in range(KILL_WRITERS)]
    try:
        port = int(url.rsplit(":", 1)[1])
        writers = Background(*(partial(put_until_killed, port, table, index, acknowledged[index])
                               for index in range(KILL_WRITERS)))
        try:
            time.sleep(KILL_LOAD_SECONDS)
            deadline = time.monotonic() + 20
            while sum(map(len, acknowledged)) < KILL_AT_LEAST and time.monotonic() < deadline:
                if not writers.running():
                    break  # each writer stops at an error: join raises it
                time.sleep(0.05)
        finally:
            try:
                kill_9(process)
            finally:
                writers.join()  # each writer ends when its connection fails (a 10 s timeout at most)
        log = server_log(process)[-3000:]
    finally:
        stop_server(process)
    written = {pk: value for writes in acknowledged for pk, value in writes.items()}
    assert len(written) >= KILL_AT_LEAST, f"the write load never got going ({len(written)} writes)\n{log}"
    print(f"{len(written)} acknowledged writes before the kill")
    found = read_values(pair.client(0), table, sorted(written))
    missing = sorted(set(written) - set(found))
    assert missing == [], f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
    wrong = [pk for pk, value in written.items() if found[pk] != value]
    assert wrong == [], f"{len(wrong)} acknowledged writes read back with another value, e.g. {wrong[:5]}"
    # Server A also still writes the keys the killed server left in flight.
    for index in range(KILL_WRITERS):
        pk = f"w{index}-{len(acknowledged[index])}"
        pair.client(0).put_item(TableName=table, Item={**key(pk), "value": {"S": "after"}})
        assert read(pair, 1, table, pk) == {**key(pk), "value": {"S": "after"}}


# --- 6. schema changes ---------------------------------------------------------------------------

INDEX = "by-group"
ACTIVE_TIMEOUT_SECONDS = 30


def index_item(number: int, writer: str) -> dict[str, Any]:
    return {**key(f"item-{number:04d}"), "grp": {"S": "g"}, "seq": n(number), "writer": {"S": writer}}


def index_status(client: Any, table: str) -> str | None:
    description = client.describe_table(TableName=table)["Table"]
    for index in description.get("GlobalSecondaryIndexes", []):
        if index["IndexName"] == INDEX:
            return str(index["IndexStatus"])
    return None


def query_index(client: Any, table: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    arguments: dict[str, Any] = {
        "TableName": table, "IndexName": INDEX, "KeyConditionExpression": "grp = :g",
        "ExpressionAttributeValues": {":g": {"S": "g"}}, "Limit": 100,
    }
    while True:
        page = client.query(**arguments)
        found.update((item["pk"]["S"], item) for item in page["Items"])
        if "LastEvaluatedKey" not in page:
            return found
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_create_and_delete_table_reach_the_other_server_at_once(pair: Pair) -> None:
    a, b = pair.client(0), pair.client(1)
    name = new_table(a)
    described = b.describe_table(TableName=name)["Table"]  # no sleep: the other server knows it now
    assert described["TableName"] == name and described["TableStatus"] in ("CREATING", "ACTIVE")
    assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    b.put_item(TableName=name, Item={**key("first"), "v": n(1)})
    assert b.get_item(TableName=name, Key=key("first"))["Item"] == {**key("first"), "v": n(1)}
    assert a.get_item(TableName=name, Key=key("first"), ConsistentRead=True)["Item"]["v"] == n(1)
    assert name in b.list_tables(Limit=100, ExclusiveStartTableName=name[:-1])["TableNames"]

    a.delete_table(TableName=name)
    for call, arguments in (
        (b.describe_table, {}),
        (b.get_item, {"Key": key("first")}),
        (b.put_item, {"Item": {**key("late"), "v": n(2)}}),
    ):
        outcome = attempt(call, TableName=name, **arguments)
        assert outcome.code == "ResourceNotFoundException", (call.__name__, outcome)

    # The name is free again on both, and the new table is empty.
    b.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                   BillingMode="PAY_PER_REQUEST")
    try:
        assert "Item" not in a.get_item(TableName=name, Key=key("first"), ConsistentRead=True)
        assert b.scan(TableName=name)["Count"] == 0
    finally:
        a.delete_table(TableName=name)


@pytest.mark.slow
def test_items_written_while_the_other_server_adds_a_gsi_are_all_in_it(pair: Pair, table: str) -> None:
    """Server B writes items before, while and after server A adds a GSI; once
    the index is ACTIVE (as B describes it) every item B wrote is in it, as
    A queries it and as B does."""
    a, b = pair.client(0), pair.client(1, 1)
    before = 40
    for number in range(before):
        b.put_item(TableName=table, Item=index_item(number, "B-before"))
    written = list(range(before))
    updating = threading.Event()
    stop = threading.Event()
    failures: list[Outcome] = []

    def write_through_b() -> None:
        number = before
        client = pair.client(1, 2)
        updating.wait()
        while not stop.is_set():
            outcome = attempt(client.put_item, TableName=table, Item=index_item(number, "B-during"))
            if outcome.code != "ok":
                failures.append(outcome)
                return
            written.append(number)
            number += 1

    writer = Background(write_through_b)
    try:
        updating.set()
        a.update_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "grp", "AttributeType": "S"},
                                  {"AttributeName": "seq", "AttributeType": "N"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": INDEX,
                "KeySchema": [{"AttributeName": "grp", "KeyType": "HASH"},
                              {"AttributeName": "seq", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }}],
        )
        # B, right after A's answer: its next writes must be indexed (or backfilled).
        assert index_status(b, table) in ("CREATING", "ACTIVE")
        deadline = time.monotonic() + ACTIVE_TIMEOUT_SECONDS
        while index_status(b, table) != "ACTIVE":
            assert time.monotonic() < deadline, f"the index is not ACTIVE after {ACTIVE_TIMEOUT_SECONDS} s"
            time.sleep(0.05)
        time.sleep(0.2)  # a few more writes by B, now on an ACTIVE index
    finally:
        stop.set()
        writer.join()
    assert failures == [], f"{failures[:3]}\n{pair.logs()}"
    after = written[-1] + 1
    for number in range(after, after + 20):
        b.put_item(TableName=table, Item=index_item(number, "B-after"))
        written.append(number)
    print(f"{len(written)} items written through B, {len(written) - before - 20} while the index was added")
    assert len(written) > before + 20, "B wrote nothing while A added the index"

    expected = {f"item-{number:04d}" for number in written}
    for server in (0, 1):
        indexed = query_index(pair.client(server), table)
        missing = sorted(expected - set(indexed))
        extra = sorted(set(indexed) - expected)
        assert missing == [] and extra == [], (
            f"server {'AB'[server]}'s query of the index: {len(missing)} items missing, e.g. {missing[:5]};"
            f" {len(extra)} unexpected, e.g. {extra[:5]}\n{pair.logs()}")
        for pk, item in indexed.items():
            assert item == index_item(int(pk.split("-")[1]), item["writer"]["S"])


# --- 7. ClientRequestToken across servers ----------------------------------------------------------


def add_one(table: str, pk: str, amount: int = 1) -> list[dict[str, Any]]:
    return [{"Update": {"TableName": table, "Key": key(pk), "UpdateExpression": "ADD #c :v",
                        "ExpressionAttributeNames": {"#c": "count"},
                        "ExpressionAttributeValues": {":v": n(amount)}}}]


def test_a_transaction_token_is_shared_by_both_servers(pair: Pair, table: str) -> None:
    a, b = pair.client(0), pair.client(1)
    token = uuid.uuid4().hex
    a.transact_write_items(TransactItems=add_one(table, "once"), ClientRequestToken=token)
    b.transact_write_items(TransactItems=add_one(table, "once"), ClientRequestToken=token)
    a.transact_write_items(TransactItems=add_one(table, "once"), ClientRequestToken=token)
    for server in (0, 1):
        assert read(pair, server, table, "once") == {**key("once"), "count": n(1)}

    outcome = attempt(b.transact_write_items, TransactItems=add_one(table, "once", 2), ClientRequestToken=token)
    assert outcome.code == "IdempotentParameterMismatchException", outcome
    assert read(pair, 0, table, "once") == {**key("once"), "count": n(1)}


TOKEN_ROUNDS = 20


@pytest.mark.slow
def test_one_token_sent_to_both_servers_at_once_applies_at_most_once(pair: Pair, table: str) -> None:
    """Each round one transaction with one token goes to A and to B at the
    same moment: the counter moves by one if either answered success, by
    none if neither did; the loser is told the request is in progress or
    cancelled for a conflict, never anything else."""
    start = threading.Barrier(2, timeout=30)
    outcomes: list[list[Outcome | None]] = [[None, None] for _ in range(TOKEN_ROUNDS)]
    tokens = [uuid.uuid4().hex for _ in range(TOKEN_ROUNDS)]

    def send(server: int) -> None:
        for round_number, token in enumerate(tokens):
            start.wait()
            outcomes[round_number][server] = attempt(
                pair.client(server, 3).transact_write_items,
                TransactItems=add_one(table, f"round-{round_number}"), ClientRequestToken=token)

    in_threads(2, send)
    codes: Counter[str] = Counter()
    for round_number, pair_of_outcomes in enumerate(outcomes):
        applied = False
        for outcome in pair_of_outcomes:
            assert outcome is not None
            codes[outcome.code] += 1
            assert not outcome.server_error, f"{outcome}\n{pair.logs()}"
            if outcome.code == "TransactionCanceledException":
                reasons = {reason["Code"] for reason in outcome.response["CancellationReasons"]}
                assert "TransactionConflict" in reasons, outcome.response
            else:
                assert outcome.code in ("ok", "TransactionInProgressException"), outcome
            applied = applied or outcome.code == "ok"
        stored = read(pair, 0, table, f"round-{round_number}")
        count = int(stored["count"]["N"]) if stored else 0
        assert count == (1 if applied else 0), f"round {round_number}: {pair_of_outcomes}, count {count}"
    print(dict(codes))


# --- 8. background jobs run once, and move when their server dies -----------------------------------

SWEEPER_LOCK_OBJID = zlib.crc32(SWEEPER_LOCK.encode()) & 0x7FFFFFFF
"""The advisory lock's second key (storage/postgres/storage.py, hold_lock)."""
TRIGGERS_LOCK_OBJID = zlib.crc32(TRIGGERS_LOCK.encode()) & 0x7FFFFFFF
SWEEP_TIMEOUT_SECONDS = 20.0
EXPIRED_PER_ROUND = 20


def sweeper_holder(postgres_server: Any, database: str) -> str:
    """The application_name of the connection holding the TTL sweeper's lock ('' if none)."""
    return str(postgres_server.psql(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        f" WHERE l.locktype = 'advisory' AND l.granted AND l.classid = {JOB_LOCK_CLASS}"
        f" AND l.objid = {SWEEPER_LOCK_OBJID}", database=database))


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = SWEEP_TIMEOUT_SECONDS) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.05)


def put_expired(client: Any, table: str, prefix: str) -> list[str]:
    keys = [f"{prefix}-{number}" for number in range(EXPIRED_PER_ROUND)]
    for pk in keys:
        client.put_item(TableName=table, Item={**key(pk), "expires": n(int(time.time()) - 60)})
    return keys


def scan_keys(client: Any, table: str) -> set[str]:
    return {item["pk"]["S"] for item in client.scan(TableName=table, ConsistentRead=True)["Items"]}


@dataclass
class NamedServers:
    """Servers X and Y on a database of their own, each connection of
    each carrying its server's name as application_name (pg_locks says
    who holds a job's lock)."""

    database: str
    processes: dict[str, Any]

    def kill(self, name: str) -> None:
        killed = self.processes.pop(name)
        kill_9(killed)
        stop_server(killed)  # closes its log


@contextmanager
def named_servers(postgres_server: Any) -> Iterator[NamedServers]:
    database_url = postgres_server.new_database()
    servers = NamedServers(database_url.rsplit("/", 1)[1], {})
    try:
        for name in ("dynastore-x", "dynastore-y"):
            servers.processes[name], url = start_server("--postgres", f"{database_url}?application_name={name}")
            servers.processes[name].url = url
        yield servers
    finally:
        for process in servers.processes.values():
            stop_server(process)


@pytest.mark.slow
def test_the_ttl_sweeper_runs_once_and_moves_when_its_server_is_killed(postgres_server: Any) -> None:
    """Two servers on a database of their own: one of them holds the
    sweeper's lock (seen in pg_locks by the connections' application_name);
    expired items written through both are each deleted once (one REMOVE
    record by the service each); after kill -9 of the holder, the other
    server takes the lock and sweeps what is written next."""
    with named_servers(postgres_server) as servers:
        database, processes = servers.database, servers.processes
        x = make_client(processes["dynastore-x"].url)
        x.create_table(
            TableName="expiring", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "OLD_IMAGE"},
        )
        x.update_time_to_live(TableName="expiring",
                              TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
        holder = wait_for(lambda: sweeper_holder(postgres_server, database), "a server holds the sweeper's lock")
        assert holder in processes, holder
        survivor = next(name for name in processes if name != holder)
        clients = {name: make_client(process.url) for name, process in processes.items()}

        expired = put_expired(clients[holder], "expiring", "a") + put_expired(clients[survivor], "expiring", "b")
        wait_for(lambda: not scan_keys(clients[survivor], "expiring"), "the first expired items are swept")

        servers.kill(holder)
        expired += put_expired(clients[survivor], "expiring", "c")
        wait_for(lambda: sweeper_holder(postgres_server, database) == survivor,
                 f"{survivor} takes the sweeper's lock after {holder} was killed")
        wait_for(lambda: not scan_keys(clients[survivor], "expiring"), "the items written after the kill are swept")

        removed = Counter(record["dynamodb"]["Keys"]["pk"]["S"]
                          for record in read_stream(processes[survivor].url, "expiring")
                          if record["eventName"] == "REMOVE")
        assert removed == Counter(expired), "each expired item must be deleted exactly once"


BACKFILL_ITEMS = 12000


def job_lock_holders(postgres_server: Any, database: str) -> dict[int, str]:
    """Held job locks other than the sweeper's: objid -> the holder's application_name."""
    found = postgres_server.psql(
        "SELECT l.objid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        f" WHERE l.locktype = 'advisory' AND l.granted AND l.classid = {JOB_LOCK_CLASS}"
        f" AND l.objid NOT IN ({SWEEPER_LOCK_OBJID}, {TRIGGERS_LOCK_OBJID})", database=database)
    return {int(objid): name for objid, name in (line.split("|") for line in found.splitlines() if line)}


def gsi_status(client: Any, table: str) -> str:
    (index,) = client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    return str(index["IndexStatus"])


@pytest.mark.slow
def test_a_gsi_backfill_moves_when_its_server_is_killed(postgres_server: Any) -> None:
    """A GSI added through server X on a table of 12,000 items: X backfills
    it (its job lock in pg_locks); kill -9 of X half-way; server Y, asked
    nothing, takes the job over where X stopped (the lock is Y's) and the
    index ends ACTIVE with every item in it."""
    with named_servers(postgres_server) as servers:
        database, processes = servers.database, servers.processes
        x, y = make_client(processes["dynastore-x"].url), make_client(processes["dynastore-y"].url)
        x.create_table(
            TableName="filled", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        )
        for start in range(0, BACKFILL_ITEMS, 25):
            request = {"filled": [{"PutRequest": {"Item": {**key(f"item-{number}"), "g": {"S": f"g{number % 7}"}}}}
                                  for number in range(start, start + 25)]}
            while request:
                request = x.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
        x.update_table(
            TableName="filled", AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}}],
        )
        wait_for(lambda: "dynastore-x" in job_lock_holders(postgres_server, database).values(),
                 "server X backfills the index it added", timeout=10)
        servers.kill("dynastore-x")
        # No request reaches Y meanwhile: it takes the job up by itself (BackfillWatch).
        wait_for(lambda: "dynastore-y" in job_lock_holders(postgres_server, database).values(),
                 "server Y takes over the backfill", timeout=15)
        wait_for(lambda: gsi_status(y, "filled") == "ACTIVE", "server Y finishes the backfill", timeout=60)
        indexed: list[str] = []
        for group in range(7):
            request: dict[str, Any] = {"TableName": "filled", "IndexName": "by_g",
                                       "KeyConditionExpression": "g = :g",
                                       "ExpressionAttributeValues": {":g": {"S": f"g{group}"}}}
            while True:
                page = y.query(**request)
                indexed += [item["pk"]["S"] for item in page["Items"]]
                if "LastEvaluatedKey" not in page:
                    break
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        assert sorted(indexed) == sorted(f"item-{number}" for number in range(BACKFILL_ITEMS))


def test_regions_are_namespaces_across_servers(pair: Pair) -> None:
    """A table made in one region on server A is that region's on server B
    at once (its catalogue hears of it), and no other region's; items
    written through B are read through A; deleting it on B is seen on A."""
    def regional(server: int, region: str) -> Any:
        return boto3.client("dynamodb", endpoint_url=pair.urls[server], region_name=region,
                            aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", config=CLIENT_CONFIG)

    name = f"regional-{uuid.uuid4().hex[:8]}"
    a_west, b_west, b_east = regional(0, "eu-west-3"), regional(1, "eu-west-3"), regional(1, "us-east-1")
    assert b_west.list_tables()["TableNames"] == []  # B opens the namespace before A makes the table
    a_west.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    b_west.put_item(TableName=name, Item={"pk": {"S": "through-b"}})
    assert a_west.get_item(TableName=name, Key={"pk": {"S": "through-b"}})["Item"] == {"pk": {"S": "through-b"}}
    assert name not in b_east.list_tables()["TableNames"]
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        b_east.describe_table(TableName=name)
    b_west.delete_table(TableName=name)
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        a_west.put_item(TableName=name, Item={"pk": {"S": "late"}})
