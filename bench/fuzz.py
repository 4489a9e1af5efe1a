"""Mutated requests against a server: any 5xx (or dropped connection) is a bug.

    python bench/fuzz.py                          # 20,000 requests on dynastore serve --in-memory
    python bench/fuzz.py --requests 1000000 --seed 7
    python bench/fuzz.py --url http://127.0.0.1:8000/

Each request is a valid one of a dozen operations (issue 17's list) with one
to three mutations at random places: a value replaced by a JSON null, a
wrong type, an empty or huge container, a document nested up to 450 levels,
an expression of unbalanced parentheses, an extra member, a member removed.
DynamoDB answers all of them with a 4xx; so must dynastore. Each distinct
5xx (operation and the start of its body) is printed once with the request
that caused it, and the run ends with the count. This is the quick
explorer; the suite keeps what it found as tests
(tests/api/test_malformed_requests.py).
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.setrecursionlimit(100_000)  # json.dumps of the deep documents made here

REPOSITORY = Path(__file__).resolve().parent.parent
TABLE = "fuzz"
AUTHORIZATION = ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
                 "SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + "0" * 64)
ITEM = {"pk": {"S": "a"}, "sk": {"N": "1"}, "m": {"M": {"x": {"L": [{"S": "y"}, {"N": "2"}]}}},
        "ss": {"SS": ["a", "b"]}, "b": {"B": "AAAA"}}
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
TEMPLATES: dict[str, dict[str, Any]] = {
    "PutItem": {"TableName": TABLE, "Item": ITEM, "ConditionExpression": "attribute_not_exists(#p) OR m.x[0] = :v",
                "ExpressionAttributeNames": {"#p": "pk"}, "ExpressionAttributeValues": {":v": {"S": "y"}},
                "ReturnValues": "ALL_OLD"},
    "GetItem": {"TableName": TABLE, "Key": KEY, "ProjectionExpression": "#p, m.x[1]",
                "ExpressionAttributeNames": {"#p": "pk"}, "ConsistentRead": True},
    "UpdateItem": {"TableName": TABLE, "Key": KEY,
                   "UpdateExpression": "SET m.x[0] = :v, c = if_not_exists(c, :z) + :o REMOVE q ADD n :o DELETE ss :s",
                   "ConditionExpression": "size(ss) > :z",
                   "ExpressionAttributeValues": {":v": {"S": "q"}, ":z": {"N": "0"}, ":o": {"N": "1"},
                                                 ":s": {"SS": ["a"]}},
                   "ReturnValues": "UPDATED_NEW"},
    "DeleteItem": {"TableName": TABLE, "Key": KEY, "ConditionExpression": "attribute_exists(pk)",
                   "ReturnValues": "ALL_OLD"},
    "Query": {"TableName": TABLE, "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
              "FilterExpression": "contains(ss, :s)",
              "ExpressionAttributeValues": {":p": {"S": "a"}, ":a": {"N": "0"}, ":b": {"N": "9"}, ":s": {"S": "a"}},
              "Limit": 5, "ScanIndexForward": False, "ExclusiveStartKey": KEY, "Select": "ALL_ATTRIBUTES"},
    "Scan": {"TableName": TABLE, "FilterExpression": "begins_with(pk, :p)",
             "ExpressionAttributeValues": {":p": {"S": "a"}}, "Segment": 0, "TotalSegments": 2, "Limit": 10},
    "BatchGetItem": {"RequestItems": {TABLE: {"Keys": [KEY], "ProjectionExpression": "pk"}}},
    "BatchWriteItem": {"RequestItems": {TABLE: [{"PutRequest": {"Item": ITEM}},
                                                {"DeleteRequest": {"Key": {"pk": {"S": "b"}, "sk": {"N": "2"}}}}]}},
    "TransactWriteItems": {"TransactItems": [
        {"Put": {"TableName": TABLE, "Item": ITEM}},
        {"Update": {"TableName": TABLE, "Key": {"pk": {"S": "c"}, "sk": {"N": "1"}}, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"N": "1"}}}},
        {"ConditionCheck": {"TableName": TABLE, "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}},
                            "ConditionExpression": "attribute_not_exists(pk)"}}],
        "ClientRequestToken": "token"},
    "TransactGetItems": {"TransactItems": [{"Get": {"TableName": TABLE, "Key": KEY}}]},
    "CreateTable": {"TableName": "fuzz-created",
                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                             {"AttributeName": "g", "AttributeType": "S"}],
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
                    "GlobalSecondaryIndexes": [{"IndexName": "gi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}}],
                    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
                    "Tags": [{"Key": "k", "Value": "v"}]},
    "UpdateTable": {"TableName": TABLE, "BillingMode": "PROVISIONED",
                    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                    "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [{"Create": {
                        "IndexName": "g2", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "ALL"},
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}]},
    "DescribeTable": {"TableName": TABLE},
    "ListTables": {"Limit": 5, "ExclusiveStartTableName": "a"},
    "UpdateTimeToLive": {"TableName": TABLE, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}},
    "TagResource": {"ResourceArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}",
                    "Tags": [{"Key": "a", "Value": "b"}]},
}
ODD_VALUES: list[Any] = [None, None, None, [None, None], [], {}, "", "x", 0, -1, 1.5, True, 10**30, "\ud800",
                         {"S": None}, {"N": "1e999"}, [None], {"": {}}, "a" * 70_000]


class Fuzzer:
    def __init__(self, url: str, seed: int) -> None:
        address = urlsplit(url)
        self.host, self.port = address.hostname or "127.0.0.1", address.port or 80
        self.rng = random.Random(seed)

    def call(self, operation: str, body: Any) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request("POST", "/", json.dumps(body).encode(), {
                "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "X-Amz-Date": "20260101T000000Z", "Authorization": AUTHORIZATION})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def nested(self) -> dict[str, Any]:
        value: dict[str, Any] = {"S": "x"}
        wrap_list = self.rng.random() < 0.5
        for _ in range(self.rng.randint(30, 450)):
            value = {"L": [value]} if wrap_list else {"M": {"a": value}}
        return value

    def mutate(self, request: Any) -> Any:
        mutated = copy.deepcopy(request)
        paths: list[list[Any]] = []

        def walk(value: Any, path: list[Any]) -> None:
            paths.append(path)
            if isinstance(value, dict):
                for key, inner in value.items():
                    walk(inner, [*path, key])
            elif isinstance(value, list):
                for index, inner in enumerate(value):
                    walk(inner, [*path, index])

        walk(mutated, [])
        path = self.rng.choice(paths)
        if not path:
            return self.rng.choice([*ODD_VALUES, self.nested()])
        parent = mutated
        for step in path[:-1]:
            parent = parent[step]
        chance, last = self.rng.random(), path[-1]
        if chance < 0.6:
            parent[last] = self.rng.choice(ODD_VALUES)
        elif chance < 0.75:
            parent[last] = self.nested()
        elif chance < 0.85 and isinstance(parent[last], str):
            parent[last] = "(" * self.rng.randint(10, 2000) + "a" + ")" * self.rng.randint(0, 5)
        elif chance < 0.95 and isinstance(parent, dict):
            parent[self.rng.choice(["Zz", "S", "M", "Item"])] = self.rng.choice(ODD_VALUES)
        elif isinstance(parent, dict):
            del parent[last]
        return mutated

    def run(self, requests: int) -> int:
        self.call("CreateTable", {
            "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "N"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]})
        failures, seen = 0, set()
        for _ in range(requests):
            operation = self.rng.choice(list(TEMPLATES))
            body = TEMPLATES[operation]
            for _ in range(self.rng.randint(1, 3)):
                body = self.mutate(body)
            try:
                status, answer = self.call(operation, body)
            except (OSError, http.client.HTTPException) as error:
                failures += 1
                print(f"connection failed: {operation} {error!r} {json.dumps(body)[:300]}")
                continue
            if status >= 500:
                failures += 1
                if (operation, answer[:120]) not in seen:
                    seen.add((operation, answer[:120]))
                    print(f"{status} {operation} {answer[:200]!r} {json.dumps(body)[:400]}")
        return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="", help="a running server (default: start dynastore serve --in-memory)")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    server = None
    url = arguments.url
    if not url:
        port = 18000 + arguments.seed % 1000
        server = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(port),
                                   "--log-level", "error"], cwd=REPOSITORY)
        url = f"http://127.0.0.1:{port}/"
        time.sleep(2.0)
    try:
        started = time.monotonic()
        failures = Fuzzer(url, arguments.seed).run(arguments.requests)
        print(f"{arguments.requests:,} requests in {time.monotonic() - started:.0f} s: "
              f"{failures} answered 5xx or dropped")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
