"""Errors of the DynamoDB Streams API (candidates for dynastore/errors.py) and
the messages the Streams operations share."""

from __future__ import annotations

from dynastore.errors import DynamoDBError, ResourceNotFoundException, ValidationException


class ExpiredIteratorException(DynamoDBError):
    default_message = "Shard iterator has expired"


class TrimmedDataAccessException(DynamoDBError):
    default_message = "The operation attempted to read past the oldest stream record in a shard."


def stream_not_found(arn: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: Stream: {arn} not found")


def shard_not_found(arn: str, shard_id: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(
        f"Requested resource not found: Shard: {shard_id} in Stream: {arn} not found"
    )


def invalid_iterator() -> ValidationException:
    return ValidationException("Invalid ShardIterator")
