"""Mutated requests against a server: any 5xx (or dropped connection) is a bug.

    python bench/fuzz.py                          # 20,000 requests on dynastore serve --in-memory
    python bench/fuzz.py --requests 1000000 --seed 7
    python bench/fuzz.py --url http://127.0.0.1:8000/

    python bench/fuzz.py --requests 1000000 --minutes 30   # stop early after 30 minutes

Each request is a valid one of the operations dynastore implements with one
to three mutations at random places: a value replaced by a JSON null, a
wrong type, an empty or huge container, a document nested up to 450 levels,
an expression of unbalanced parentheses, an extra member, a member removed,
a map of thousands of long invalid keys, megabytes of multibyte text.
One request in ten is also broken as bytes: cut short (broken JSON), an
invalid UTF-8 sequence put into it, or a number out of any range spliced
in. DynamoDB answers all of them with a 4xx; so must dynastore. Requests go
over one persistent connection, as an SDK sends them: a connection the
server drops counts as a failure (and is reopened). Each distinct 5xx
(operation and the start of its body) is printed once with the request that
caused it, and the run ends with the count. This is the quick explorer; the
suite keeps what it found as tests (tests/api/test_malformed_requests.py,
tests/api/test_property_malformed.py).
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.setrecursionlimit(100_000)  # json.dumps of the deep documents made here

REPOSITORY = Path(__file__).resolve().parent.parent
REQUEST_BODY_MAX_BYTES = 16 * 1024 * 1024  # dynastore.limits.REQUEST_BODY_MAX_BYTES
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
    "UntagResource": {"ResourceArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}", "TagKeys": ["a"]},
    "ListTagsOfResource": {"ResourceArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}",
                           "NextToken": "x"},
    "DeleteTable": {"TableName": "fuzz-created"},
    "DescribeTimeToLive": {"TableName": TABLE},
    "DescribeContributorInsights": {"TableName": TABLE, "IndexName": "gi"},
    "ListContributorInsights": {"TableName": TABLE, "MaxResults": 5, "NextToken": "x"},
    "UpdateContributorInsights": {"TableName": TABLE, "ContributorInsightsAction": "ENABLE",
                                  "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"},
    "DescribeLimits": {},
    "DescribeEndpoints": {},
}
BYTE_BREAKS: list[bytes] = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\\", b'"',
                            b"{", b"]", b"1e999999", b"-0", b"123456789012345678901234567890123456789012"]
ODD_VALUES: list[Any] = [None, None, None, [None, None], [], {}, "", "x", 0, -1, 1.5, True, 10**30, "\ud800",
                         {"S": None}, {"N": "1e999"}, [None], {"": {}}, "a" * 70_000]


class Fuzzer:
    def __init__(self, url: str, seed: int) -> None:
        address = urlsplit(url)
        self.host, self.port = address.hostname or "127.0.0.1", address.port or 80
        self.rng = random.Random(seed)

        self.connection: http.client.HTTPConnection | None = None

    def call(self, operation: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` on the persistent connection (opened again after a drop)."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            self.connection.request("POST", "/", body, {
                "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "X-Amz-Date": "20260101T000000Z", "Authorization": AUTHORIZATION})
            response = self.connection.getresponse()
            return response.status, response.read()
        except BaseException:
            self.connection.close()
            self.connection = None
            raise

    def encode(self, request: Any) -> bytes:
        """The request as JSON bytes, one in ten broken as bytes."""
        data = json.dumps(request, ensure_ascii=False).encode(errors="surrogatepass")
        if self.rng.random() >= 0.1:
            return data
        place = self.rng.randrange(len(data) + 1)
        chance = self.rng.random()
        if chance < 0.3:
            return data[:place]  # cut short
        if chance < 0.6:  # an invalid byte sequence inside a string
            quote = data.find(b'"', place)
            place = quote + 1 if quote >= 0 else place
        return data[:place] + self.rng.choice(BYTE_BREAKS) + data[place:]

    def nested(self) -> dict[str, Any]:
        value: dict[str, Any] = {"S": "x"}
        wrap_list = self.rng.random() < 0.5
        for _ in range(self.rng.randint(30, 450)):
            value = {"L": [value]} if wrap_list else {"M": {"a": value}}
        return value

    def wide(self, value: Any) -> Any:
        """A map of many long, invalid keys, or a string of megabytes of
        multibyte characters (what a constraint message may echo)."""
        if self.rng.random() < 0.5:
            return self.rng.choice(["é", "\U0001F600"]) * self.rng.choice([70_000, 1_000_000])
        inner = value if len(json.dumps(value)) < 200 else {"S": "x"}
        return {f"{'x' * 300}{index}!": inner for index in range(self.rng.choice([26, 101, 4_000]))}

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
        if chance < 0.57:
            parent[last] = self.rng.choice(ODD_VALUES)
        elif chance < 0.6:
            parent[last] = self.wide(parent[last])
        elif chance < 0.75:
            parent[last] = self.nested()
        elif chance < 0.85 and isinstance(parent[last], str):
            parent[last] = "(" * self.rng.randint(10, 2000) + "a" + ")" * self.rng.randint(0, 5)
        elif chance < 0.95 and isinstance(parent, dict):
            parent[self.rng.choice(["Zz", "S", "M", "Item"])] = self.rng.choice(ODD_VALUES)
        elif isinstance(parent, dict):
            del parent[last]
        return mutated

    def run(self, requests: int, seconds: float) -> tuple[int, int]:
        """(requests sent, failures); stops after ``seconds``."""
        self.call("CreateTable", json.dumps({
            "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "N"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}]}).encode())
        failures, seen = 0, set()
        deadline = time.monotonic() + seconds
        operations = list(TEMPLATES)
        previous = b""
        for sent in range(1, requests + 1):
            operation = self.rng.choice(operations)
            body = TEMPLATES[operation]
            for _ in range(self.rng.randint(1, 3)):
                body = self.mutate(body)
            # Past the 16 MB limit the server answers 413 and closes the
            # connection without reading the body (protocol/http.py): cut it.
            data = self.encode(body)[:REQUEST_BODY_MAX_BYTES]
            try:
                status, answer = self.call(operation, data)
            except (OSError, http.client.HTTPException) as error:
                failures += 1
                print(f"connection failed: {operation} {error!r} {data[:300]!r}; the request before: "
                      f"{previous[:300]!r}", flush=True)
                continue
            finally:
                previous = b"%s %s (%d bytes)" % (operation.encode(), data[:300], len(data))
            if status >= 500:
                failures += 1
                if (operation, answer[:120]) not in seen:
                    seen.add((operation, answer[:120]))
                    print(f"{status} {operation} {answer[:200]!r} {data[:400]!r}", flush=True)
            if sent % 50_000 == 0:
                print(f"... {sent:,} requests, {failures} failures", flush=True)
            if sent % 1_000 == 0 and time.monotonic() > deadline:
                return sent, failures
        return requests, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="", help="a running server (default: start dynastore serve --in-memory)")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--front", action="store_true",
                        help="the started server answers through its HTTP front process (DYNASTORE_ENGINE_CONNECTIONS=0)")
    parser.add_argument("--minutes", type=float, default=float("inf"), help="stop after this long")
    arguments = parser.parse_args()
    server = None
    url = arguments.url
    if not url:
        port = 18000 + arguments.seed % 1000
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the server below too
        server = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(port),
                                   "--log-level", "error"], cwd=REPOSITORY,
                                  env={**os.environ, **({"DYNASTORE_ENGINE_CONNECTIONS": "0"} if arguments.front else {})})
        url = f"http://127.0.0.1:{port}/"
        time.sleep(2.0)
        if server.poll() is not None:
            sys.exit(f"dynastore serve exited with code {server.returncode}")
    try:
        started = time.monotonic()
        sent, failures = Fuzzer(url, arguments.seed).run(arguments.requests, arguments.minutes * 60)
        print(f"{sent:,} requests in {time.monotonic() - started:.0f} s: "
              f"{failures} answered 5xx or dropped")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
