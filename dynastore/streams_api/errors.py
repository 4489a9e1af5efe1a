"""The messages the Streams operations share (the error classes themselves
live in the one catalogue, dynastore/errors.py)."""

from __future__ import annotations

from dynastore.errors import (
    ExpiredIteratorException,
    ResourceNotFoundException,
    TrimmedDataAccessException,
    ValidationException,
)

__all__ = ["ExpiredIteratorException", "TrimmedDataAccessException"]


def stream_not_found(arn: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: Stream: {arn} not found")


def shard_not_found(arn: str, shard_id: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(
        f"Requested resource not found: Shard: {shard_id} in Stream: {arn} not found"
    )


def invalid_iterator() -> ValidationException:
    return ValidationException("Invalid ShardIterator")
