"""Embedded API speed: GetItem through the in-process boto3 client, against
boto3's own client-side floor and a direct engine call.

    python bench/embedded.py [--requests 5000]

- floor: a boto3 client whose ``before-send`` hook returns a canned GetItem
  response at once, so what is measured is botocore alone (serialise the
  request, parse the response) -- no client can be faster than this;
- embedded: ``dynastore.open().client()``: the same botocore work plus
  dynastore serving the request in-process;
- engine: ``dynastore.ops.dispatch`` called directly with the request dict
  (no boto3, no JSON, no HTTP).

Prints microseconds per GetItem (CPU time) and the embedded/floor ratio; the
target (issue 8) is embedded within 2x of the floor and the engine call in
the tens of microseconds.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from botocore.awsrequest import AWSResponse

import dynastore

KEY = {"pk": {"S": "user#1"}, "sk": {"S": "profile"}}
ITEM = {**KEY, "name": {"S": "Ada"}, "data": {"S": "x" * 900}}


class _Body:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


def per_call_us(function: Any, requests: int) -> float:
    for _ in range(min(200, requests)):
        function()
    started = time.process_time()
    for _ in range(requests):
        function()
    return (time.process_time() - started) / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    arguments = parser.parse_args()

    database = dynastore.open()
    client = database.client()
    client.create_table(
        TableName="bench",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName="bench", Item=ITEM)
    canned = client.get_item(TableName="bench", Key=KEY)
    canned_body = b'{"Item":' + __import__("json").dumps(canned["Item"]).encode() + b"}"

    floor_client = database.client()
    floor_client.meta.events.unregister("before-send", database._send)

    def canned_send(request: Any, **_: Any) -> AWSResponse:
        return AWSResponse(request.url, 200, {"Content-Type": "application/x-amz-json-1.0"}, _Body(canned_body))

    floor_client.meta.events.register_first("before-send", canned_send)

    from dynastore.ops import dispatch

    engine_request = {"TableName": "bench", "Key": KEY}
    results = {
        "floor (botocore only)": per_call_us(lambda: floor_client.get_item(TableName="bench", Key=KEY), arguments.requests),
        "embedded client": per_call_us(lambda: client.get_item(TableName="bench", Key=KEY), arguments.requests),
        "engine call (dispatch)": per_call_us(lambda: dispatch(database.database, "GetItem", dict(engine_request)), arguments.requests * 4),
    }
    for name, value in results.items():
        print(f"{name:24s} {value:8.1f} us per GetItem")
    ratio = results["embedded client"] / results["floor (botocore only)"]
    print(f"embedded / floor = {ratio:.2f} (target <= 2)")
    database.close()


if __name__ == "__main__":
    main()
