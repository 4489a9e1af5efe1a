"""Transactions under real concurrency: many threads, each with its own
client (its own connections), against one server.

Every test draws its random choices from a seed it prints (run with
DYNASTORE_TEST_SEED=<seed> to replay the same choices; the interleaving
itself is the scheduler's). Invariants checked: bank transfers keep the
total constant and no balance negative, also as seen by concurrent
TransactGetItems snapshots; exactly one claim of a username wins; stock never
goes below zero and every sold unit has exactly one order; kill -9 during a
transaction load loses no acknowledged transaction and leaves none half
applied.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from tests.api.conftest import make_client, start_server, stop_server
from tests.api.helpers import SIGV4, kill_9_under_load

THREADS = 8
TRANSFERS_PER_THREAD = 30
ACCOUNTS = 10
OPENING_BALANCE = 100


def replayable_seed() -> int:
    seed = int(os.environ.get("DYNASTORE_TEST_SEED") or random.randrange(1 << 32))
    print(f"transaction concurrency seed: {seed} (replay with DYNASTORE_TEST_SEED={seed})")
    return seed


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def account(index: int) -> dict[str, Any]:
    return {"pk": {"S": f"acct-{index}"}}


def transfer(table: str, source: int, target: int, amount: int) -> list[dict[str, Any]]:
    values = {":amount": n(amount)}
    return [
        {"Update": {"TableName": table, "Key": account(source), "UpdateExpression": "SET balance = balance - :amount",
                    "ConditionExpression": "balance >= :amount", "ExpressionAttributeValues": values}},
        {"Update": {"TableName": table, "Key": account(target), "UpdateExpression": "SET balance = balance + :amount",
                    "ExpressionAttributeValues": values}},
    ]


def balances(client: Any, table: str) -> list[int]:
    """All balances in one TransactGetItems snapshot."""
    response = client.transact_get_items(
        TransactItems=[{"Get": {"TableName": table, "Key": account(i)}} for i in range(ACCOUNTS)]
    )
    return [int(entry["Item"]["balance"]["N"]) for entry in response["Responses"]]


def test_bank_transfers_keep_the_total_and_snapshots_never_see_half(
    endpoint: str, client: Any, make_table: Any
) -> None:
    seed = replayable_seed()
    table = make_table(sk=None)
    for i in range(ACCOUNTS):
        client.put_item(TableName=table, Item={**account(i), "balance": n(OPENING_BALANCE)})
    total = ACCOUNTS * OPENING_BALANCE
    done = threading.Event()
    snapshots: list[list[int]] = []

    def read_snapshots() -> None:
        reader = make_client(endpoint)
        while not done.is_set():
            snapshots.append(balances(reader, table))

    def work(thread_index: int) -> tuple[int, int]:
        rng = random.Random(seed + thread_index)
        thread_client = make_client(endpoint)
        committed = cancelled = 0
        for _ in range(TRANSFERS_PER_THREAD):
            source, target = rng.sample(range(ACCOUNTS), 2)
            try:
                thread_client.transact_write_items(TransactItems=transfer(table, source, target, rng.randint(1, 60)))
                committed += 1
            except ClientError as error:
                assert error.response["Error"]["Code"] == "TransactionCanceledException"
                cancelled += 1
        return committed, cancelled

    reader = threading.Thread(target=read_snapshots)
    reader.start()
    try:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            outcomes = list(pool.map(work, range(THREADS)))
    finally:
        done.set()
        reader.join()
    assert sum(committed for committed, _ in outcomes) > 0
    final = balances(client, table)
    assert sum(final) == total
    assert min(final) >= 0
    assert snapshots, "the reader took no snapshot"
    for snapshot in snapshots:
        assert sum(snapshot) == total, f"a snapshot saw half a transfer (seed {seed})"
        assert min(snapshot) >= 0


def test_exactly_one_username_claim_wins(endpoint: str, client: Any, make_table: Any) -> None:
    seed = replayable_seed()
    users, names = make_table(sk=None), make_table(sk=None)
    candidates = [f"name-{i}" for i in range(5)]

    def claim(thread_index: int) -> list[str]:
        rng = random.Random(seed + thread_index)
        thread_client = make_client(endpoint)
        won = []
        for name in rng.sample(candidates, len(candidates)):
            user = f"user-{thread_index}-{name}"
            try:
                thread_client.transact_write_items(TransactItems=[
                    {"Put": {"TableName": names, "Item": {"pk": {"S": name}, "owner": {"S": user}},
                             "ConditionExpression": "attribute_not_exists(pk)"}},
                    {"Put": {"TableName": users, "Item": {"pk": {"S": user}, "name": {"S": name}}}},
                ])
                won.append(name)
            except ClientError as error:
                # The name was taken; or, on a store several servers (or a
                # server's request threads) share, it was being taken at that
                # moment by a transaction this one then lost to (DynamoDB says
                # TransactionConflict for that).
                code = error.response["CancellationReasons"][0]["Code"]
                assert code in ("ConditionalCheckFailed", "TransactionConflict")
        return won

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        wins = [name for won in pool.map(claim, range(THREADS)) for name in won]
    assert sorted(wins) == sorted(candidates), f"seed {seed}"
    assert client.scan(TableName=users, Select="COUNT")["Count"] == len(candidates)
    for item in client.scan(TableName=names)["Items"]:
        owner = client.get_item(TableName=users, Key={"pk": item["owner"]})["Item"]
        assert owner["name"] == item["pk"]


def test_stock_never_goes_negative(endpoint: str, client: Any, make_table: Any) -> None:
    seed = replayable_seed()
    stock, orders = make_table(sk=None), make_table(sk=None)
    initial = 50
    client.put_item(TableName=stock, Item={"pk": {"S": "widget"}, "count": n(initial)})

    def buy(thread_index: int) -> int:
        rng = random.Random(seed + thread_index)
        thread_client = make_client(endpoint)
        bought = 0
        for attempt in range(15):
            quantity = rng.randint(1, 3)
            try:
                thread_client.transact_write_items(TransactItems=[
                    {"Update": {"TableName": stock, "Key": {"pk": {"S": "widget"}},
                                "UpdateExpression": "SET #c = #c - :q", "ConditionExpression": "#c >= :q",
                                "ExpressionAttributeNames": {"#c": "count"},
                                "ExpressionAttributeValues": {":q": n(quantity)}}},
                    {"Put": {"TableName": orders, "Item": {"pk": {"S": f"{thread_index}-{attempt}"},
                                                           "quantity": n(quantity)}}},
                ])
                bought += quantity
            except ClientError as error:
                assert error.response["Error"]["Code"] == "TransactionCanceledException"
        return bought

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        sold = sum(pool.map(buy, range(THREADS)))
    left = int(client.get_item(TableName=stock, Key={"pk": {"S": "widget"}})["Item"]["count"]["N"])
    ordered = sum(int(item["quantity"]["N"]) for item in client.scan(TableName=orders)["Items"])
    assert left >= 0
    assert sold == ordered == initial - left, f"seed {seed}"


# --- kill -9 during a transaction load ---------------------------------------------------------

KILL_WRITERS = 4
KILL_LOAD_SECONDS = 1.0
ITEMS_PER_TRANSACTION = 4


def transaction_keys(writer: int, sequence: int) -> list[str]:
    return [f"w{writer}-{sequence}-{part}" for part in range(ITEMS_PER_TRANSACTION)]


def transact_until_killed(port: int, table: str, writer: int, acknowledged: list[int]) -> None:
    """TransactWriteItems of 4 puts over one keep-alive connection until the
    server goes away; records each acknowledged sequence number."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.TransactWriteItems",
        "X-Amz-Date": "20261129T000000Z",
        "Authorization": SIGV4,
    }
    sequence = 0
    try:
        while True:
            items = [{"Put": {"TableName": table, "Item": {"pk": {"S": key}, "seq": n(sequence)}}}
                     for key in transaction_keys(writer, sequence)]
            connection.request("POST", "/", json.dumps({"TransactItems": items}).encode(), headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise AssertionError(f"TransactWriteItems answered {response.status}")
            acknowledged.append(sequence)
            sequence += 1
    except (OSError, http.client.HTTPException):
        return  # the server was killed
    finally:
        connection.close()


def present_keys(client: Any, table: str, keys: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(keys), 100):
        request: dict[str, Any] = {table: {"Keys": [{"pk": {"S": key}} for key in keys[start:start + 100]]}}
        while request:
            answer = client.batch_get_item(RequestItems=request)
            found.update(item["pk"]["S"] for item in answer["Responses"].get(table, []))
            request = answer.get("UnprocessedKeys") or {}
    return found


def test_kill_9_during_transactions_loses_none_and_leaves_none_half_applied(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    process, url = start_server("--data-dir", data_dir)
    acknowledged: list[list[int]] = [[] for _ in range(KILL_WRITERS)]
    try:
        make_client(url).create_table(
            TableName="ledger",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        port = int(url.rsplit(":", 1)[1])
        writers = [
            threading.Thread(target=transact_until_killed, args=(port, "ledger", index, acknowledged[index]))
            for index in range(KILL_WRITERS)
        ]
        kill_9_under_load(
            process, writers, KILL_LOAD_SECONDS, lambda: sum(map(len, acknowledged)), 51
        )
    finally:
        stop_server(process)
    assert sum(map(len, acknowledged)) > 50, "the transaction load never got going"

    process, url = start_server("--data-dir", data_dir)
    try:
        client = make_client(url)
        for writer, sequences in enumerate(acknowledged):
            # Sequences 0..last were acknowledged; last + 1 was in flight at the kill.
            last = sequences[-1] if sequences else -1
            keys = [key for sequence in range(last + 2) for key in transaction_keys(writer, sequence)]
            found = present_keys(client, "ledger", keys)
            for sequence in range(last + 2):
                present = [key in found for key in transaction_keys(writer, sequence)]
                if sequence <= last:
                    assert all(present), f"acknowledged transaction w{writer}-{sequence} lost"
                assert all(present) or not any(present), f"transaction w{writer}-{sequence} half applied"
    finally:
        stop_server(process)
