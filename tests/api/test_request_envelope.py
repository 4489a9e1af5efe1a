"""Which errors come inside "1 validation error detected: " (issue 17).

PutItem and UpdateItem wrap their request-validation errors -- expression
syntax, size and static checks, placeholders, ExpressionAttributeValues,
legacy/expression mixing, ReturnValues, set shapes -- in the envelope; the
errors that depend on the table or the item stay bare, and every other
operation answers bare. A ``{"NULL": false}`` is refused by the request
parser before the per-key ExpressionAttributeValues check, so it never gets
the "contains invalid value" wrapper.

Sources: dynoxide's envelope matrix and floci's ADD/DELETE operand tests,
both captured from the service (eu-west-2, 2026); the static errors come
first, before the table is looked up (floci). Whole messages asserted.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

ENVELOPE = "1 validation error detected: "
NULL_FALSE = "One or more parameter values were invalid: Null attribute value types must have the value of true"
KEY = {"pk": {"S": "k1"}}


def refused(call: Any, **arguments: Any) -> str:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    return message


@pytest.fixture
def table(make_table: Any) -> str:
    return str(make_table(sk=None, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}]))


def test_put_item_envelopes_its_request_validation_errors(client: Any, table: str) -> None:
    def put(**extra: Any) -> str:
        return refused(client.put_item, TableName=table, Item=KEY, **extra)

    assert put(ConditionExpression="foo ==") == (
        ENVELOPE + 'Invalid ConditionExpression: Syntax error; token: "=", near: "=="')
    assert put(ConditionExpression="a" * 4200) == (
        ENVELOPE + "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; "
        "expression size: 4200")
    assert put(ConditionExpression="((attribute_exists(a)))") == (
        ENVELOPE + "Invalid ConditionExpression: The expression has redundant parentheses;")
    assert put(ConditionExpression="contains(a, a)") == (
        ENVELOPE + "Invalid ConditionExpression: The first operand must be distinct from the remaining operands "
        "for this operator or function; operator: contains, first operand: [a]")
    assert put(ExpressionAttributeValues={":v": {"S": "v"}}) == (
        ENVELOPE + "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null")
    assert put(ConditionExpression="flag = :n", ExpressionAttributeValues={":n": {"NULL": False}}) == ENVELOPE + NULL_FALSE


def test_update_item_envelopes_its_request_validation_errors(client: Any, table: str) -> None:
    def update(table_name: str = table, **extra: Any) -> str:
        return refused(client.update_item, TableName=table_name, Key=KEY, **extra)

    assert update(UpdateExpression="SET") == ENVELOPE + 'Invalid UpdateExpression: Syntax error; token: "<EOF>", near: "SET"'
    assert update(UpdateExpression="a" * 4200) == (
        ENVELOPE + "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; "
        "expression size: 4200")
    assert update(UpdateExpression="SET tags = :t", ExpressionAttributeValues={":t": {"SS": ["a", "b", "a"]}}) == (
        ENVELOPE + "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: "
        "Input collection [a, b, a] contains duplicates. for key :t")
    assert update(UpdateExpression="SET a = :v") == (
        ENVELOPE + "Invalid UpdateExpression: An expression attribute value used in expression is not defined; "
        "attribute value: :v")
    assert update(UpdateExpression="SET a = :v", ExpressionAttributeValues={":v": {"S": "x"}, ":w": {"S": "y"}}) == (
        ENVELOPE + "Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}")
    assert update(UpdateExpression="SET flag = :n", ExpressionAttributeValues={":n": {"NULL": False}}) == (
        ENVELOPE + NULL_FALSE)
    # Static checks come before the table is looked up.
    assert update(table_name=table + "-missing", UpdateExpression="ADD n :v", ExpressionAttributeValues={
        ":v": {"S": "x"}}) == (
        ENVELOPE + "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, "
        "operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND")


def test_errors_that_need_the_table_or_the_item_stay_bare(client: Any, table: str) -> None:
    assert refused(client.update_item, TableName=table, Key=KEY, UpdateExpression="SET pk = :v",
                   ExpressionAttributeValues={":v": {"S": "k2"}}) == (
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key")
    assert refused(client.update_item, TableName=table, Key=KEY, UpdateExpression="SET a = nosuch") == (
        "The provided expression refers to an attribute that does not exist in the item")
    assert refused(client.put_item, TableName=table, Item={"pk": {"N": "1"}}) == (
        "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N")
    assert refused(client.put_item, TableName=table, Item={"pk": {"S": "p"}, "g": {"S": "notnum"}}) == (
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: N Actual: S IndexName: gsi1")
    assert refused(client.put_item, TableName=table, Item={**KEY, "big": {"S": "a" * 410_000}}) == (
        "Item size has exceeded the maximum allowed size")


def test_other_operations_answer_bare(client: Any, table: str) -> None:
    assert refused(client.delete_item, TableName=table, Key=KEY, ConditionExpression="foo ==") == (
        'Invalid ConditionExpression: Syntax error; token: "=", near: "=="')
    assert refused(client.delete_item, TableName=table, Key=KEY, ConditionExpression="flag = :n",
                   ExpressionAttributeValues={":n": {"NULL": False}}) == NULL_FALSE
    assert refused(client.scan, TableName=table, FilterExpression="a = :n",
                   ExpressionAttributeValues={":n": {"NULL": False}}) == NULL_FALSE
    assert refused(client.get_item, TableName=table, Key=KEY, ProjectionExpression="a" * 4200) == (
        "Invalid ProjectionExpression: Expression size has exceeded the maximum allowed size; expression size: 4200")
    assert refused(client.query, TableName=table, KeyConditionExpression="a" * 4200) == (
        "Invalid KeyConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 4200")
    assert refused(client.scan, TableName=table, FilterExpression="a" * 4200) == (
        "Invalid FilterExpression: Expression size has exceeded the maximum allowed size; expression size: 4200")
    # A transaction's Update reports the same text without the envelope (floci's capture).
    assert refused(client.transact_write_items, TransactItems=[{"Update": {
        "TableName": table, "Key": KEY, "UpdateExpression": "ADD n :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}}]) == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: "
        "STRING, typeSet: ALLOWED_FOR_ADD_OPERAND")
