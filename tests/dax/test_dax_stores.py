"""The DAX endpoint on the other ways a server runs: one process
(--single-process: HTTP and DAX on the database's loop, group commit), and
on a data directory (SQLite), where a write DAX acknowledged survives kill -9
(its answer leaves after the COMMIT, as an HTTP write's does)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.dax.conftest import DaxServerProcess, create_table, dax_client, unique


def http_client(server: DaxServerProcess) -> Any:
    return boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id="any", aws_secret_access_key="any")


@pytest.mark.parametrize("options", [["--single-process"], ["--data-dir"]], ids=["single-process", "sqlite"])
def test_every_kind_of_request_on_this_store(options: list[str], tmp_path: Path) -> None:
    if options == ["--data-dir"]:
        options = ["--data-dir", str(tmp_path / "data")]
    server = DaxServerProcess(*options)
    dax = dax_client(server.dax_url)
    try:
        ddb = http_client(server)
        name = create_table(ddb)
        pk = {"S": unique()}
        dax.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": pk, "sk": {"N": str(n)}}}}
                                                  for n in range(5)]})
        dax.update_item(TableName=name, Key={"pk": pk, "sk": {"N": "0"}}, UpdateExpression="SET v = :v",
                        ExpressionAttributeValues={":v": {"N": "1"}})
        dax.transact_write_items(TransactItems=[{"Delete": {"TableName": name, "Key": {"pk": pk, "sk": {"N": "4"}}}}])
        assert dax.get_item(TableName=name, Key={"pk": pk, "sk": {"N": "0"}})["Item"]["v"] == {"N": "1"}
        assert dax.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": pk})["Count"] == 4
        assert ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": pk})["Count"] == 4
    finally:
        dax.close()
        server.stop()


def test_an_acknowledged_dax_write_survives_kill_9(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = DaxServerProcess("--data-dir", str(data))
    dax = dax_client(server.dax_url)
    keys = []
    try:
        name = create_table(http_client(server), sort_type=None)
        for number in range(50):
            key = {"pk": {"S": f"k{number}-{unique()}"}}
            dax.put_item(TableName=name, Item={**key, "n": {"N": str(number)}})
            keys.append(key)
    finally:
        dax.close()
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        server.stop()
    again = DaxServerProcess("--data-dir", str(data))
    try:
        ddb = http_client(again)
        found = ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})["Responses"][name]
        assert len(found) == 50
    finally:
        again.stop()
