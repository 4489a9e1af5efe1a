"""Group commit (dynastore/protocol/group_commit.py) over real connections.

The server runs in this process on its own event loop thread, on a real data
directory, so the test can make SQLite itself refuse a COMMIT: a TEMP trigger
adds a row that violates a deferred foreign key to every new item, and SQLite
then fails the COMMIT of the group that wrote it ("FOREIGN KEY constraint
failed"), exactly as it would on a full disk.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from dynastore.database import Database
from dynastore.protocol.server import Server
from dynastore.storage.sqlite import SQLiteStorage
from dynastore.types.keys import encode_key_value
from tests.api.conftest import make_client
from tests.api.helpers import SIGV4

KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFINITIONS = [{"AttributeName": "pk", "AttributeType": "S"}]


class LoopServer:
    """A group-committing Server on a loop in a background thread."""

    def __init__(self, data_dir: Path) -> None:
        self.database = Database.open(data_dir)
        self.server = Server(self.database, "127.0.0.1", 0, group_commit=True)
        self.stopped_itself = threading.Event()
        self.server.on_failure = lambda error: self.stopped_itself.set()
        self.loop = asyncio.new_event_loop()
        started: Future[tuple[str, int]] = Future()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        host, port = started.result(timeout=10)
        self.url = f"http://{host}:{port}"

    def _run(self, started: Future[tuple[str, int]]) -> None:
        asyncio.set_event_loop(self.loop)
        started.set_result(self.loop.run_until_complete(self.server.start()))
        self.loop.run_forever()
        self.loop.run_until_complete(self.server.stop())
        self.loop.close()

    def on_loop(self, action: Any) -> None:
        """Run ``action()`` on the server's loop, between requests."""
        done: Future[None] = Future()

        def run() -> None:
            action()
            done.set_result(None)

        self.loop.call_soon_threadsafe(run)
        done.result(timeout=10)

    def close(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            self.database.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LoopServer]:
    running = LoopServer(tmp_path / "data")
    try:
        yield running
    finally:
        running.close()


def make_commits_fail(database: Database) -> None:
    connection = database.storage._connection  # type: ignore[attr-defined]
    connection.execute("PRAGMA foreign_keys = ON")
    connection.execute("CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)")
    connection.execute(
        "CREATE TEMP TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
    )
    connection.execute(
        "CREATE TEMP TRIGGER doom AFTER INSERT ON main.items BEGIN INSERT INTO child VALUES (42); END"
    )


def test_writes_and_reads_of_a_group_are_answered_after_it_commits(served: LoopServer) -> None:
    client = make_client(served.url)
    client.create_table(TableName="grouped", KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS,
                        BillingMode="PAY_PER_REQUEST")
    client.put_item(TableName="grouped", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    client.update_item(TableName="grouped", Key={"pk": {"S": "a"}}, UpdateExpression="ADD n :one",
                       ExpressionAttributeValues={":one": {"N": "1"}})
    assert client.get_item(TableName="grouped", Key={"pk": {"S": "a"}})["Item"]["n"] == {"N": "2"}
    # The GetItem's group wrote nothing, so its reply left before the COMMIT;
    # the COMMIT still ran in the same turn, ahead of anything queued after it.
    in_transaction: list[bool] = []
    connection = served.database.storage._connection  # type: ignore[attr-defined]
    served.on_loop(lambda: in_transaction.append(connection.in_transaction))
    assert in_transaction == [False]


def test_a_failed_commit_answers_500_loses_nothing_acknowledged_and_stops_the_server(
    served: LoopServer, tmp_path: Path
) -> None:
    client = make_client(served.url)
    client.create_table(TableName="grouped", KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS,
                        BillingMode="PAY_PER_REQUEST")
    client.put_item(TableName="grouped", Item={"pk": {"S": "kept"}})
    served.on_loop(lambda: make_commits_fail(served.database))

    with pytest.raises(ClientError) as failure:
        client.put_item(TableName="grouped", Item={"pk": {"S": "doomed"}})
    assert failure.value.response["Error"]["Code"] == "InternalServerError"
    assert failure.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert served.stopped_itself.wait(timeout=10)
    assert served.server.failure is not None
    with pytest.raises((EndpointConnectionError, ClientError)):
        make_client(served.url).list_tables()

    served.close()
    storage = SQLiteStorage(tmp_path / "data")
    try:
        table_id = next(record.table_id for record in storage.load_tables() if record.name == "grouped")
        assert storage.get(table_id, encode_key_value("S", "kept"), b"") is not None
        assert storage.get(table_id, encode_key_value("S", "doomed"), b"") is None
    finally:
        storage.close()


def raw_request(target: str, body: dict[str, Any]) -> bytes:
    payload = json.dumps(body).encode()
    return (
        f"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.{target}\r\nX-Amz-Date: 20261129T000000Z\r\n"
        f"Authorization: {SIGV4}\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload


def read_responses(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    """``count`` HTTP responses from ``sock``, bodies decoded, in arrival order."""
    buffer = b""
    bodies: list[dict[str, Any]] = []
    while len(bodies) < count:
        head_end = buffer.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buffer[:head_end].decode()
            length = int(head.lower().split("content-length: ")[1].split("\r\n")[0])
            if len(buffer) >= head_end + 4 + length:
                bodies.append(json.loads(buffer[head_end + 4: head_end + 4 + length]))
                buffer = buffer[head_end + 4 + length:]
                continue
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        buffer += chunk
    return bodies


@pytest.mark.parametrize("write_first", [True, False])
def test_pipelined_reads_and_writes_in_one_group_answer_in_order(served: LoopServer, write_first: bool) -> None:
    """Requests read in one turn form one group, whether the group's first
    request reads (answered at once) or writes (held until COMMIT)."""
    client = make_client(served.url)
    client.create_table(TableName="grouped", KeySchema=KEY_SCHEMA, AttributeDefinitions=DEFINITIONS,
                        BillingMode="PAY_PER_REQUEST")
    client.put_item(TableName="grouped", Item={"pk": {"S": "k"}, "v": {"S": "old"}})
    put = raw_request("PutItem", {"TableName": "grouped", "Item": {"pk": {"S": "k"}, "v": {"S": "new"}}})
    get = raw_request("GetItem", {"TableName": "grouped", "Key": {"pk": {"S": "k"}}})
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(put + get + get if write_first else get + put + get)
        answers = read_responses(sock, 3)
    seen = [answer["Item"]["v"]["S"] for answer in answers if "Item" in answer]
    assert seen == (["new", "new"] if write_first else ["old", "new"])
    assert client.get_item(TableName="grouped", Key={"pk": {"S": "k"}})["Item"]["v"] == {"S": "new"}
