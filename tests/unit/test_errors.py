"""Pins the wire shape of every error in the catalogue."""

from __future__ import annotations

import pytest

from dynastore import errors

EXPECTED_NAMESPACES = {
    "SerializationException": "com.amazon.coral.service#",
    "UnknownOperationException": "com.amazon.coral.service#",
    "MissingAuthenticationTokenException": "com.amazon.coral.service#",
    "IncompleteSignatureException": "com.amazon.coral.service#",
    "InvalidSignatureException": "com.amazon.coral.service#",
    "UnrecognizedClientException": "com.amazon.coral.service#",
    "AccessDeniedException": "com.amazon.coral.service#",
    "RequestEntityTooLargeException": "com.amazon.coral.service#",
    "ThrottlingException": "com.amazon.coral.service#",
    "ValidationException": "com.amazon.coral.validate#",
}


@pytest.mark.parametrize("name", sorted(errors.CATALOGUE))
def test_wire_shape(name: str) -> None:
    cls = errors.CATALOGUE[name]
    error = cls("a message")
    wire = error.to_wire()
    namespace = EXPECTED_NAMESPACES.get(name, "com.amazonaws.dynamodb.v20120810#")
    field = "Message" if name == "AccessDeniedException" else "message"  # as DynamoDB words each
    assert wire == {"__type": namespace + name, field: "a message"}
    assert cls.status == (500 if name == "InternalServerError" else 413 if name == "RequestEntityTooLargeException" else 400)


def test_every_error_class_is_in_the_catalogue() -> None:
    defined = {
        value.__name__
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.DynamoDBError) and value is not errors.DynamoDBError
    }
    assert defined == set(errors.CATALOGUE)


def test_extra_fields_are_carried() -> None:
    error = errors.ConditionalCheckFailedException(Item={"pk": {"S": "a"}})
    assert error.to_wire() == {
        "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
        "message": "The conditional request failed",
        "Item": {"pk": {"S": "a"}},
    }


def test_table_not_found_names_the_table() -> None:
    assert errors.table_not_found("orders").message == (
        "Requested resource not found: Table: orders not found"
    )
