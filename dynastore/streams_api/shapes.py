"""Request shapes of the DynamoDB Streams API (service model
streams-dynamodb-2012-08-10), validated by the same compiled checkers as
DynamoDB's own operations (dynastore.ops.shapes): SerializationException for
JSON type errors, then one ValidationException listing every violated
constraint ("1 validation error detected: Value '0' at 'limit' failed to
satisfy constraint: Member must have value greater than or equal to 1")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynastore.engine.streams import (
    DESCRIBE_STREAM_MAX_LIMIT,
    GET_RECORDS_MAX_LIMIT,
    LIST_STREAMS_MAX_LIMIT,
)
from dynastore.ops.shapes import _Compiler, _operation_validator

STREAMS_SHAPES: dict[str, Any] = {
    "ListStreamsInput": {
        "type": "structure",
        "members": {"TableName": "TableName", "Limit": "ListStreamsLimit",
                    "ExclusiveStartStreamArn": "StreamArn"},
        "required": [], "order": ["TableName", "Limit", "ExclusiveStartStreamArn"],
    },
    "DescribeStreamInput": {
        "type": "structure",
        "members": {"StreamArn": "StreamArn", "Limit": "DescribeStreamLimit",
                    "ExclusiveStartShardId": "ShardId", "ShardFilter": "ShardFilter"},
        "required": ["StreamArn"],
        "order": ["StreamArn", "Limit", "ExclusiveStartShardId", "ShardFilter"],
    },
    "GetShardIteratorInput": {
        "type": "structure",
        "members": {"StreamArn": "StreamArn", "ShardId": "ShardId",
                    "ShardIteratorType": "ShardIteratorType", "SequenceNumber": "SequenceNumber"},
        "required": ["StreamArn", "ShardId", "ShardIteratorType"],
        "order": ["StreamArn", "ShardId", "ShardIteratorType", "SequenceNumber"],
    },
    "GetRecordsInput": {
        "type": "structure",
        "members": {"ShardIterator": "ShardIterator", "Limit": "GetRecordsLimit"},
        "required": ["ShardIterator"], "order": ["ShardIterator", "Limit"],
    },
    "ShardFilter": {
        "type": "structure",
        "members": {"Type": "ShardFilterType", "ShardId": "ShardId"},
        "required": [], "order": ["Type", "ShardId"],
    },
    "TableName": {"type": "string", "min": 3, "max": 255, "pattern": "[a-zA-Z0-9_.-]+"},
    # The model says only min 1; the service caps each Limit (and says so).
    "ListStreamsLimit": {"type": "integer", "min": 1, "max": LIST_STREAMS_MAX_LIMIT},
    "DescribeStreamLimit": {"type": "integer", "min": 1, "max": DESCRIBE_STREAM_MAX_LIMIT},
    "GetRecordsLimit": {"type": "integer", "min": 1, "max": GET_RECORDS_MAX_LIMIT},
    "StreamArn": {"type": "string", "min": 37, "max": 1024},
    "ShardId": {"type": "string", "min": 28, "max": 65},
    "ShardIterator": {"type": "string", "min": 1, "max": 2048},
    "SequenceNumber": {"type": "string", "min": 21, "max": 40},
    "ShardIteratorType": {
        "type": "string",
        "enum": ["TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"],
    },
    "ShardFilterType": {"type": "string", "enum": ["CHILD_SHARDS"]},
}

_COMPILER = _Compiler(STREAMS_SHAPES)
VALIDATORS: dict[str, Callable[[Any], None]] = {
    operation: _operation_validator(_COMPILER, {"input": f"{operation}Input"})
    for operation in ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords")
}


def validate_streams_request(operation: str, request: dict[str, Any]) -> None:
    validator = VALIDATORS.get(operation)
    if validator is not None:
        validator(request)
