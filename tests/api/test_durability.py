"""kill -9 under write load loses no acknowledged write.

Several client threads PutItem distinct keys as fast as they can and record
each key the server acknowledged (HTTP 200). The server is then killed with
SIGKILL mid-stream, restarted on the same data directory, and every
acknowledged item must be there, intact. (Writes in flight at the kill may or
may not have landed: the client never heard back, so either is correct.)
"""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import pytest

from tests.api.conftest import make_client, start_server, stop_server
from tests.api.helpers import SIGV4, kill_9_under_load

WRITER_THREADS = 4
LOAD_SECONDS = 1.0
PAYLOAD = "x" * 512


def put_item_request(table: str, key: str) -> bytes:
    item = {"pk": {"S": key}, "payload": {"S": PAYLOAD}, "n": {"N": str(len(key))}}
    return json.dumps({"TableName": table, "Item": item}).encode()


def write_until_failure(port: int, table: str, writer: int, acknowledged: list[str]) -> None:
    """PutItem over one keep-alive connection until the server goes away."""
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
            key = f"w{writer}-{sequence}"
            connection.request("POST", "/", put_item_request(table, key), headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise AssertionError(f"PutItem answered {response.status}")
            acknowledged.append(key)  # list.append is atomic under the GIL
            sequence += 1
    except (OSError, http.client.HTTPException):
        return  # the server was killed
    finally:
        connection.close()


@pytest.mark.parametrize("mode", [(), ("--single-process",)], ids=["front", "single-process"])
def test_kill_9_under_write_load_loses_no_acknowledged_write(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    """In both server modes: with the HTTP front process (the default; a reply
    crosses the link only after its COMMIT) and in one process."""
    data_dir = str(tmp_path / "data")
    process, url = start_server("--data-dir", data_dir, *mode)
    try:
        client = make_client(url)
        client.create_table(
            TableName="durable",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        port = int(url.rsplit(":", 1)[1])
        acknowledged: list[str] = []
        writers = [
            threading.Thread(target=write_until_failure, args=(port, "durable", index, acknowledged))
            for index in range(WRITER_THREADS)
        ]
        kill_9_under_load(process, writers, LOAD_SECONDS, lambda: len(acknowledged), 21)
    finally:
        stop_server(process)
    assert len(acknowledged) > 20, "the write load never got going"

    process, url = start_server("--data-dir", data_dir)
    try:
        client = make_client(url)
        found: set[str] = set()
        for start in range(0, len(acknowledged), 100):
            keys = [{"pk": {"S": key}} for key in acknowledged[start : start + 100]]
            request = {"durable": {"Keys": keys}}
            while request:
                answer = client.batch_get_item(RequestItems=request)
                for item in answer["Responses"].get("durable", []):
                    assert item["payload"] == {"S": PAYLOAD}
                    assert item["n"] == {"N": str(len(item["pk"]["S"]))}
                    found.add(item["pk"]["S"])
                request = answer.get("UnprocessedKeys") or {}
        missing = sorted(set(acknowledged) - found)
        assert missing == [], f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
    finally:
        stop_server(process)
        if process.stderr is not None:
            process.stderr.close()
