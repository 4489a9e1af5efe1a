"""The messages the Streams operations share (the error classes themselves
live in the one catalogue, dynastore/errors.py). Where each text comes from,
and which are unconfirmed, is in docs/compatibility.md (Streams rows)."""

from __future__ import annotations

from dynastore.errors import (
    ExpiredIteratorException,
    ResourceNotFoundException,
    TrimmedDataAccessException,
    ValidationException,
)

INVALID_STREAM_ARN = "Invalid StreamArn"
INVALID_SHARD_ITERATOR = "Invalid ShardIterator"
SHARD_NOT_FOUND = "Requested resource not found: Shard does not exist"
ITERATOR_SHARD_NOT_FOUND = "Invalid ShardId in ShardIterator"
ITERATOR_EXPIRED = "Shard iterator has expired"
DATA_TRIMMED = "The data you are trying to access has been trimmed"
INVALID_SEQUENCE_NUMBER = "Invalid SequenceNumber for the shard"
INVALID_PARAMETER = "One or more parameter values were invalid: "


def stream_not_found(arn: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: Stream: {arn} not found")


def invalid_stream_arn() -> ValidationException:
    return ValidationException(INVALID_STREAM_ARN)


def shard_not_found() -> ResourceNotFoundException:
    """GetShardIterator for a shard the stream does not have."""
    return ResourceNotFoundException(SHARD_NOT_FOUND)


def iterator_shard_not_found() -> ResourceNotFoundException:
    """GetRecords with an iterator whose shard (or stream) is gone."""
    return ResourceNotFoundException(ITERATOR_SHARD_NOT_FOUND)


def invalid_iterator() -> ValidationException:
    return ValidationException(INVALID_SHARD_ITERATOR)


def iterator_expired() -> ExpiredIteratorException:
    return ExpiredIteratorException(ITERATOR_EXPIRED)


def data_trimmed() -> TrimmedDataAccessException:
    return TrimmedDataAccessException(DATA_TRIMMED)


def invalid_sequence_number() -> ValidationException:
    return ValidationException(INVALID_SEQUENCE_NUMBER)


def sequence_number_required(kind: str) -> ValidationException:
    return ValidationException(
        f"{INVALID_PARAMETER}SequenceNumber must be specified for ShardIteratorType {kind}"
    )


def sequence_number_not_allowed(kind: str) -> ValidationException:
    return ValidationException(
        f"{INVALID_PARAMETER}SequenceNumber must not be specified for ShardIteratorType {kind}"
    )


def shard_filter_member_missing(member: str) -> ValidationException:
    """ShardFilter without its Type or its ShardId (the model marks neither required)."""
    return ValidationException(
        f"1 validation error detected: Value null at 'shardFilter.{member}' failed to satisfy "
        "constraint: Member must not be null"
    )
