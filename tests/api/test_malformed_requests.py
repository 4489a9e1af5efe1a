"""Malformed requests a fuzzer found answered with InternalServerError.

DynamoDB never answers bad input with a 5xx, so neither may dynastore: each
request here got HTTP 500 before and must now get HTTP 400 with the error
DynamoDB gives (or, where no capture of the service is known, the one its
request layer gives for the same fault elsewhere: docs/compatibility.md,
"Judgement calls"). Sent as raw JSON, since an SDK would not send them.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.api.helpers import SIGV4

NESTING = ("Nesting Levels have exceeded supported limits: "
           "Attributes in the item have nested levels beyond supported limit")


class Raw(str):
    """JSON text put into a request body as it is (json.dumps would recurse
    through a document nested hundreds of levels)."""


def encoded(body: Any) -> str:
    if isinstance(body, Raw):
        return str(body)
    if isinstance(body, dict):
        return "{" + ",".join(f"{json.dumps(key)}:{encoded(value)}" for key, value in body.items()) + "}"
    if isinstance(body, list):
        return "[" + ",".join(encoded(value) for value in body) + "]"
    return json.dumps(body)


def send(endpoint: str, operation: str, body: Any) -> tuple[int, dict[str, Any]]:
    address = urlsplit(endpoint)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=20)
    try:
        connection.request("POST", "/", encoded(body).encode(), {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
            "X-Amz-Date": "20261129T000000Z",
            "Authorization": SIGV4,
        })
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def nested(levels: int, kind: str) -> Raw:
    opening, closing = ('{"L":[', "]}") if kind == "L" else ('{"M":{"a":', "}}")
    return Raw(opening * levels + '{"S":"x"}' + closing * levels)


def assert_validation(answer: tuple[int, dict[str, Any]], message: str, *, ending: bool = False) -> None:
    status, body = answer
    assert status == 400, body
    assert body["__type"].endswith("#ValidationException"), body
    if ending:  # the check that refused it may name the parameter first
        assert body["message"].endswith(message), body["message"]
    else:
        assert body["message"] == message


@pytest.fixture
def table(make_table: Any) -> str:
    return str(make_table())


@pytest.mark.parametrize("kind", ["L", "M"])
def test_documents_nested_hundreds_of_levels_are_refused_as_too_deep(
    endpoint: str, table: str, kind: str
) -> None:
    """Deep enough that the request checks would pass Python's recursion
    limit (they recurse along M and L), in places no item check reaches."""
    deep = nested(450, kind)
    key = {"pk": {"S": "a"}, "sk": deep}
    assert_validation(send(endpoint, "GetItem", {"TableName": table, "Key": key}), NESTING, ending=True)
    assert_validation(send(endpoint, "Query", {
        "TableName": table, "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "a"}}, "ExclusiveStartKey": key}), NESTING, ending=True)
    assert_validation(send(endpoint, "BatchGetItem", {"RequestItems": {table: {"Keys": [key]}}}),
                      NESTING, ending=True)
    assert_validation(send(endpoint, "PutItem", {
        "TableName": table, "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}, "doc": deep}}), NESTING, ending=True)


def test_a_null_member_of_a_list_must_not_be_null(endpoint: str, table: str) -> None:
    definition = {"AttributeName": "pk", "AttributeType": "S"}
    create = {"TableName": f"{table}-x", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
              "BillingMode": "PAY_PER_REQUEST"}
    assert_validation(
        send(endpoint, "CreateTable", {**create, "AttributeDefinitions": [None]}),
        "1 validation error detected: Value null at 'attributeDefinitions.1.member' failed to satisfy "
        "constraint: Member must not be null")
    assert_validation(
        send(endpoint, "CreateTable", {**create, "AttributeDefinitions": [definition],
                                       "GlobalSecondaryIndexes": [None]}),
        "1 validation error detected: Value null at 'globalSecondaryIndexes.1.member' failed to satisfy "
        "constraint: Member must not be null")
    assert_validation(
        send(endpoint, "TransactWriteItems", {"TransactItems": [None]}),
        "1 validation error detected: Value null at 'transactItems.1.member' failed to satisfy "
        "constraint: Member must not be null")
    assert_validation(
        send(endpoint, "BatchWriteItem", {"RequestItems": {table: [None]}}),
        f"1 validation error detected: Value null at 'requestItems.{table}.member.1.member' failed to "
        "satisfy constraint: Member must not be null")


def test_a_null_request_of_a_batch_must_not_be_null(endpoint: str, table: str) -> None:
    for operation in ("BatchGetItem", "BatchWriteItem"):
        assert_validation(
            send(endpoint, operation, {"RequestItems": {table: None}}),
            f"1 validation error detected: Value null at 'requestItems.{table}.member' failed to "
            "satisfy constraint: Member must not be null")


def test_a_null_expression_attribute_name_is_an_empty_one(endpoint: str, table: str) -> None:
    assert_validation(
        send(endpoint, "GetItem", {"TableName": table, "Key": {"pk": {"S": "a"}, "sk": {"S": "b"}},
                                   "ProjectionExpression": "#p", "ExpressionAttributeNames": {"#p": None}}),
        "ExpressionAttributeNames contains invalid value: Empty attribute name for key #p")


def test_a_null_member_of_an_expression_value_is_absent_in_a_transaction(endpoint: str, table: str) -> None:
    """{"N": "1", "S": null} is the number 1, as in UpdateItem (the
    transaction's request size was counted before the values were checked)."""
    key = {"pk": {"S": "t"}, "sk": {"S": "1"}}
    status, body = send(endpoint, "TransactWriteItems", {"TransactItems": [{"Update": {
        "TableName": table, "Key": key, "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": {"N": "1", "S": None}}}}]})
    assert status == 200, body
    status, body = send(endpoint, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    assert body["Item"] == {**key, "v": {"N": "1"}}


MAP_KEYS_CONSTRAINT = ("Map keys must satisfy constraint: [Member must have length less than or equal to 255, "
                       "Member must have length greater than or equal to 3, "
                       "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]")


def test_a_map_of_thousands_of_bad_keys_is_reported_in_ten_errors_at_once(endpoint: str) -> None:
    """Each bad table name of RequestItems is an error showing the whole map:
    all 4,000 were rendered (~116 s of the engine's one thread, every other
    client waiting) before the first ten were kept. Now the report stops at
    the ten it lists, and shows at most 65,536 characters of a value."""
    names = [f"{'x' * 300}{number}!" for number in range(4000)]
    status, body = send(endpoint, "BatchGetItem", {"RequestItems": {
        name: {"Keys": [{"a": {"S": "b"}}]} for name in names}})
    assert status == 400, body
    assert body["__type"] == "com.amazon.coral.validate#ValidationException"
    shown = body["message"].split("Value '", 2)[1].split("' at 'requestItems'", 1)[0]
    assert len(shown) == 65_536 and shown.startswith("{" + names[0] + "=KeysAndAttributes(keys=[{a=")
    errors = [f"Value '{shown}' at 'requestItems' failed to satisfy constraint: "
              "Member must have length less than or equal to 100"]
    errors += [f"Value '{shown}' at 'requestItems' failed to satisfy constraint: {MAP_KEYS_CONSTRAINT}"] * 9
    assert body["message"] == "10 validation errors detected: " + "; ".join(errors)


def test_a_reply_never_echoes_megabytes_of_a_bad_value(endpoint: str) -> None:
    """A 12 MB Scan of two bad names got a 24 MB ValidationException (each
    value shown twice), past the link's frame bound: the HTTP front process
    took the reply for a corrupt frame and exited, dropping the connection
    (and every other one it held)."""
    names = {"TableName": "é" * 2_000_000, "IndexName": "\U0001F600" * 2_000_000}
    status, body = send(endpoint, "Scan", Raw(json.dumps(names, ensure_ascii=False)))  # in UTF-8: 12 MB
    assert status == 400, body
    table, index = "é" * 65_536, "\U0001F600" * 65_536
    pattern = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
    length = "Member must have length less than or equal to 255"
    assert_validation((status, body), (
        f"4 validation errors detected: Value '{table}' at 'tableName' failed to satisfy constraint: {pattern}; "
        f"Value '{table}' at 'tableName' failed to satisfy constraint: {length}; "
        f"Value '{index}' at 'indexName' failed to satisfy constraint: {pattern}; "
        f"Value '{index}' at 'indexName' failed to satisfy constraint: {length}"))
