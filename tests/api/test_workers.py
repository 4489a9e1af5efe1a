"""``dynastore serve --postgres URL --workers N``: one port served by N
processes over one database (dynastore/worker_processes.py), through boto3
over real connections to real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import TEST_CLIENT_CONFIG, free_port, start_server, stop_server

KEY = {"k": {"S": "counter"}}


def client(url: str) -> Any:
    """A new client: its own connection pool, so its first request opens a new
    connection, which the kernel may hand to any worker."""
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                        config=TEST_CLIENT_CONFIG)


def create_table(url: str, name: str) -> None:
    client(url).create_table(
        TableName=name, KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def request_id_prefix(url: str, table: str) -> str:
    """The answering process's request-id prefix (32 random characters drawn
    once per process, protocol/http.py): which worker served this connection."""
    answer = client(url).get_item(TableName=table, Key=KEY)
    return str(answer["ResponseMetadata"]["RequestId"])[:32]


def answering_processes(url: str, table: str, wanted: int = 2) -> set[str]:
    """Request-id prefixes seen over new connections, until ``wanted`` differ (or 30 s)."""
    prefixes: set[str] = set()
    deadline = time.monotonic() + 30
    while len(prefixes) < wanted and time.monotonic() < deadline:
        prefixes.add(request_id_prefix(url, table))
    return prefixes


def run_at_once(target: Any, arguments: list[tuple[Any, ...]]) -> None:
    """``target(*each)`` for every entry of ``arguments``, in threads started together."""
    threads = [threading.Thread(target=target, args=each) for each in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def workers_of(process: subprocess.Popen[bytes]) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def wait_for(condition: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.fixture
def database_url(postgres_server: Any) -> str:
    return str(postgres_server.new_database())


@pytest.fixture
def served(database_url: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``serve --postgres --workers 2`` over a new database: (first process, url)."""
    process, url = start_server("--postgres", database_url, "--workers", "2")
    try:
        yield process, url
    finally:
        stop_server(process)


def test_workers_need_postgres(tmp_path: Any) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--port", str(free_port()),
         "--data-dir", str(tmp_path), "--workers", "2"],
        capture_output=True, text=True, timeout=60,
    )
    assert finished.returncode == 1
    assert "--workers needs --postgres" in finished.stderr


def test_a_bad_workers_count_is_refused(database_url: str) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--port", str(free_port()),
         "--postgres", database_url, "--workers", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert finished.returncode == 1
    assert "--workers must be at least 1, not 0" in finished.stderr


def test_every_worker_serves_one_endpoint(served: tuple[subprocess.Popen[bytes], str]) -> None:
    process, url = served
    assert len(wait_for(lambda: workers_of(process))) == 1
    create_table(url, "spread")
    # New connections land on both processes; each knows the table at
    # once (a worker is told of the catalogue change, or reloads it on a
    # miss, as a second server does).
    assert len(answering_processes(url, "spread")) == 2

    # ADD from many connections at once, over both workers: none lost.
    def add(count: int) -> None:
        for _ in range(count):
            client(url).update_item(TableName="spread", Key=KEY, UpdateExpression="ADD n :one",
                                    ExpressionAttributeValues={":one": {"N": "1"}})

    run_at_once(add, [(15,)] * 4)
    item = client(url).get_item(TableName="spread", Key=KEY, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": "60"}


def test_conditional_inserts_have_one_winner_across_workers(served: tuple[subprocess.Popen[bytes], str]) -> None:
    process, url = served
    create_table(url, "winners")
    wins: list[int] = []
    losses: list[int] = []

    def insert(writer: int) -> None:
        try:
            client(url).put_item(TableName="winners", Item={"k": {"S": "once"}, "w": {"N": str(writer)}},
                                 ConditionExpression="attribute_not_exists(k)")
            wins.append(writer)
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
            losses.append(writer)

    run_at_once(insert, [(writer,) for writer in range(8)])
    assert len(wins) == 1 and len(losses) == 7
    stored = client(url).get_item(TableName="winners", Key={"k": {"S": "once"}}, ConsistentRead=True)
    assert stored["Item"]["w"] == {"N": str(wins[0])}


def test_a_killed_worker_is_started_again(served: tuple[subprocess.Popen[bytes], str]) -> None:
    process, url = served
    create_table(url, "restarts")
    [worker] = wait_for(lambda: workers_of(process))
    os.kill(worker, signal.SIGKILL)
    replacement = wait_for(lambda: [pid for pid in workers_of(process) if pid != worker])
    assert len(replacement) == 1
    # The port keeps answering throughout, and the new worker serves too.
    assert len(answering_processes(url, "restarts")) == 2


def test_workers_stop_with_the_first_process(database_url: str) -> None:
    process, url = start_server("--postgres", database_url, "--workers", "2")
    [worker] = wait_for(lambda: workers_of(process))
    stop_server(process)  # SIGTERM: the first process stops its workers
    assert process.returncode == 0
    wait_for(lambda: not os.path.exists(f"/proc/{worker}") or _is_zombie(worker), timeout=15)


def test_workers_stop_when_the_first_process_is_killed(database_url: str) -> None:
    process, url = start_server("--postgres", database_url, "--workers", "2")
    try:
        [worker] = wait_for(lambda: workers_of(process))
        process.kill()  # no chance to stop them: each notices it was orphaned
        process.wait()
        wait_for(lambda: not os.path.exists(f"/proc/{worker}") or _is_zombie(worker), timeout=15)
    finally:
        stop_server(process)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
