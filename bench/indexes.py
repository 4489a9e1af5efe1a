"""Secondary-index costs, in-process (issue 3):

- Query (one partition, Limit 25) on the table against the same Query on a GSI
  whose key mirrors the table's (target: within 20%);
- PutItem of a 1 KB item on a table without indexes against one with 2 GSIs.

    python bench/indexes.py [--items 20000] [--requests 5000]

CPU time per request through ``Application.handle`` (JSON in, JSON out, no
sockets), so the figures compare engine paths, not the HTTP server.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import orjson

from dynastore.database import Database
from dynastore.protocol.app import Application

HEADERS = {
    b"content-type": b"application/x-amz-json-1.0",
    b"authorization": b"AWS4-HMAC-SHA256 Credential=a/20260101/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=host;x-amz-date, Signature=abc",
    b"x-amz-date": b"20260101T000000Z",
}
PAYLOAD = "x" * 900


def call(app: Application, operation: str, request: dict[str, Any]) -> bytes:
    status, _, body, _ = app.handle(b"POST", b"/", {**HEADERS, b"x-amz-target": b"DynamoDB_20120810." + operation.encode()}, orjson.dumps(request))
    assert status == 200, body
    return body


def gsi(name: str, pk: str, sk: str) -> dict[str, Any]:
    return {"IndexName": name, "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}]}


def create(app: Application, name: str, indexes: list[dict[str, Any]]) -> None:
    names = {"pk", "sk"} | {key["AttributeName"] for index in indexes for key in index["KeySchema"]}
    request: dict[str, Any] = {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in sorted(names)],
    }
    if indexes:
        request["GlobalSecondaryIndexes"] = indexes
    call(app, "CreateTable", request)


def item(number: int) -> dict[str, Any]:
    partition, sort = f"p{number % 200:04d}", f"s{number:08d}"
    return {"pk": {"S": partition}, "sk": {"S": sort}, "gpk": {"S": partition}, "gsk": {"S": sort},
            "other": {"S": f"o{number % 50}"}, "data": {"S": PAYLOAD}}


def timed(app: Application, requests: list[tuple[str, bytes]]) -> float:
    started = time.process_time()
    for operation, body in requests:
        app.handle(b"POST", b"/", {**HEADERS, b"x-amz-target": b"DynamoDB_20120810." + operation.encode()}, body)
    return (time.process_time() - started) / len(requests) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=5000)
    arguments = parser.parse_args()
    app = Application(Database.open(None))
    create(app, "plain", [])
    create(app, "indexed", [gsi("by-g", "gpk", "gsk"), gsi("by-other", "other", "sk")])
    for start in range(0, arguments.items, 25):
        batch = [{"PutRequest": {"Item": item(n)}} for n in range(start, min(start + 25, arguments.items))]
        call(app, "BatchWriteItem", {"RequestItems": {"indexed": batch}})

    def query(index: str | None, n: int) -> bytes:
        key = "gpk" if index else "pk"
        request: dict[str, Any] = {"TableName": "indexed", "Limit": 25,
                                   "KeyConditionExpression": f"{key} = :p",
                                   "ExpressionAttributeValues": {":p": {"S": f"p{n % 200:04d}"}}}
        if index:
            request["IndexName"] = index
        return orjson.dumps(request)

    n = arguments.requests
    table_query = timed(app, [("Query", query(None, i)) for i in range(n)])
    index_query = timed(app, [("Query", query("by-g", i)) for i in range(n)])
    base = arguments.items * 10
    put_plain = timed(app, [("PutItem", orjson.dumps({"TableName": "plain", "Item": item(base + i)})) for i in range(n)])
    put_indexed = timed(app, [("PutItem", orjson.dumps({"TableName": "indexed", "Item": item(base + i)})) for i in range(n)])
    print(f"Query, table            {table_query:8.1f} us")
    print(f"Query, GSI              {index_query:8.1f} us  ({index_query / table_query - 1:+.0%} vs table; target within 20%)")
    print(f"PutItem, no index       {put_plain:8.1f} us")
    print(f"PutItem, 2 GSIs         {put_indexed:8.1f} us  ({put_indexed / put_plain:.2f}x)")


if __name__ == "__main__":
    main()
