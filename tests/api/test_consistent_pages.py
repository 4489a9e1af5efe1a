"""A Query or Scan page is one consistent view of what it reads, even when the
store reads it in several chunks and other writers (other servers, on
PostgreSQL) commit transactions in between: a transaction that moves value
between the first and the last item of a partition is seen whole or not at
all by every page that reads both."""

from __future__ import annotations

import threading
from typing import Any

from tests.api.conftest import make_client

ITEMS = 150
"""Rows in the partition: more than a store's first read chunk (32), so a
page is read in several."""
BALANCE = 10


def _fill(client: Any, table: str) -> None:
    for start in range(0, ITEMS, 25):
        client.batch_write_item(RequestItems={table: [
            {"PutRequest": {"Item": {"pk": {"S": "p"}, "sk": {"S": f"{n:04d}"}, "balance": {"N": str(BALANCE)}}}}
            for n in range(start, min(start + 25, ITEMS))
        ]})


def _transfer(client: Any, table: str, stop: threading.Event, errors: list[str]) -> None:
    amount = 1
    while not stop.is_set():
        try:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": table, "Key": {"pk": {"S": "p"}, "sk": {"S": "0000"}},
                            "UpdateExpression": "ADD balance :minus",
                            "ExpressionAttributeValues": {":minus": {"N": str(-amount)}}}},
                {"Update": {"TableName": table, "Key": {"pk": {"S": "p"}, "sk": {"S": f"{ITEMS - 1:04d}"}},
                            "UpdateExpression": "ADD balance :plus",
                            "ExpressionAttributeValues": {":plus": {"N": str(amount)}}}},
            ])
        except client.exceptions.TransactionCanceledException:
            pass  # a conflict with the other mover: nothing applied
        except Exception as error:  # noqa: BLE001 - reported by the test
            errors.append(repr(error))
            return


def _totals(pages: list[dict[str, Any]]) -> list[int]:
    return [sum(int(item["balance"]["N"]) for item in page["Items"]) for page in pages]


def test_every_page_sees_a_transaction_whole(endpoint: str, client: Any, make_table: Any) -> None:
    table = make_table()
    _fill(client, table)
    stop = threading.Event()
    errors: list[str] = []
    movers = [threading.Thread(target=_transfer, args=(make_client(endpoint), table, stop, errors))
              for _ in range(2)]
    for mover in movers:
        mover.start()
    try:
        queries = [client.query(TableName=table, KeyConditionExpression="pk = :p",
                                ExpressionAttributeValues={":p": {"S": "p"}}) for _ in range(25)]
        scans = [client.scan(TableName=table) for _ in range(10)]
    finally:
        stop.set()
        for mover in movers:
            mover.join()
    assert errors == []
    assert all(page["Count"] == ITEMS and "LastEvaluatedKey" not in page for page in queries + scans)
    assert set(_totals(queries)) == {ITEMS * BALANCE}
    assert set(_totals(scans)) == {ITEMS * BALANCE}
