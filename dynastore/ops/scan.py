"""Scan: every item of a table, or of one parallel-scan segment.

Items come in ``(pk_hash, pk, sk)`` order. A segment is a contiguous range of
the 32-bit partition-hash space (storage.base.HASH_SPACE split evenly), so the
segments of one TotalSegments partition the table exactly and each partition's
items stay together. Filters, projections, Select, Limit, the 1 MB page and
capacity work as in Query (ops/query.py, engine/pagination.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.engine import indexes, legacy
from dynastore.engine.schema import IndexDefinition, TableSchema
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionContext
from dynastore.ops.query import (
    Expressions,
    TableFetch,
    check_attributes_to_get,
    check_key_paths,
    check_limit,
    check_select,
    check_start_key_shape,
    check_start_key_values,
    compile_read_expressions,
    index_read_setup,
    read_plan,
    resolve_index,
    respond,
)
from dynastore.storage.base import HASH_SPACE
from dynastore.types.keys import partition_hash

if TYPE_CHECKING:
    from dynastore.database import Database


MESSAGE_START_KEY_INVALID = (
    "The provided starting key is invalid: The provided key element does not match the schema"
)


def segment_bounds(segment: int, total_segments: int) -> tuple[int, int]:
    """``[low, high)`` of the partition hashes that belong to ``segment``."""
    return (
        segment * HASH_SPACE // total_segments,
        (segment + 1) * HASH_SPACE // total_segments,
    )


def check_segments(request: dict[str, Any]) -> tuple[int, int]:
    """(Segment, TotalSegments) with DynamoDB's messages; (0, 1) for a plain Scan."""
    segment = request.get("Segment")
    total = request.get("TotalSegments")
    errors = []
    if segment is not None and segment < 0:
        errors.append(
            f"Value '{segment}' at 'segment' failed to satisfy constraint: "
            "Member must have value greater than or equal to 0"
        )
    if segment is not None and segment > limits.SCAN_TOTAL_SEGMENTS_MAX - 1:
        errors.append(
            f"Value '{segment}' at 'segment' failed to satisfy constraint: "
            f"Member must have value less than or equal to {limits.SCAN_TOTAL_SEGMENTS_MAX - 1}"
        )
    if total is not None and total < 1:
        errors.append(
            f"Value '{total}' at 'totalSegments' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1"
        )
    if total is not None and total > limits.SCAN_TOTAL_SEGMENTS_MAX:
        errors.append(
            f"Value '{total}' at 'totalSegments' failed to satisfy constraint: "
            f"Member must have value less than or equal to {limits.SCAN_TOTAL_SEGMENTS_MAX}"
        )
    if errors:
        plural = "s" if len(errors) > 1 else ""
        raise ValidationException(
            f"{len(errors)} validation error{plural} detected: {'; '.join(errors)}"
        )
    return _segment_pair(segment, total)


def _segment_pair(segment: int | None, total: int | None) -> tuple[int, int]:
    if segment is not None and total is None:
        raise ValidationException(
            "The TotalSegments parameter is required but was not present in the request "
            "when Segment parameter is present"
        )
    if total is not None and segment is None:
        raise ValidationException(
            "The Segment parameter is required but was not present in the request "
            "when parameter TotalSegments is present"
        )
    if segment is None or total is None:
        return 0, 1
    if segment >= total:
        raise ValidationException(
            "The Segment parameter is zero-based and must be less than parameter "
            f"TotalSegments: Segment: {segment} is not less than TotalSegments: {total}"
        )
    return segment, total


def _start_position(
    schema: TableSchema, start_key: dict[str, Any] | None, segment: int, total: int, low: int, high: int
) -> tuple[int, bytes, bytes] | None:
    """Where to resume: ExclusiveStartKey's place in scan order, which must lie
    in the requested segment."""
    if start_key is None:
        return None
    check_start_key_shape(schema, start_key, MESSAGE_START_KEY_INVALID)
    pk, sk = schema.encode_key(start_key)
    pk_hash = partition_hash(pk)
    if total > 1 and not low <= pk_hash < high:
        raise ValidationException(
            "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
            f"ExclusiveStartKey with correct Segment. TotalSegments: {total} Segment: {segment}"
        )
    return pk_hash, pk, sk


def handle(database: Database, request: dict[str, Any]) -> bytes:
    select = check_select(request, "Scan")
    check_limit(request)
    legacy.check_request("Scan", request)
    check_attributes_to_get(request)
    if request.get("ScanFilter"):
        legacy.validate_conditions(request["ScanFilter"])
    start_key = check_start_key_values(request)
    segment, total_segments = check_segments(request)
    context = ExpressionContext(
        request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
    )
    expressions = compile_read_expressions(request, context, "ScanFilter")
    context.check_all_used()
    schema = database.table(request["TableName"])
    index = resolve_index(schema, request, start_key)
    low, high = segment_bounds(segment, total_segments)
    if index is not None:
        return _scan_index(database, schema, index, request, expressions, select, start_key, (segment, total_segments))
    check_key_paths(schema, expressions)
    start = _start_position(schema, start_key, segment, total_segments, low, high)
    rows = database.storage.scan(schema.table_id, low, high, exclusive_start=start)
    return respond(database.storage, schema, request, read_plan(schema, request, expressions, select), rows)


def _scan_index(
    database: Database,
    schema: TableSchema,
    index: IndexDefinition,
    request: dict[str, Any],
    expressions: Expressions,
    select: str,
    start_key: dict[str, Any] | None,
    segments: tuple[int, int],
) -> bytes:
    """Scan over an index's entries (in the index's partition-hash order, so
    parallel segments split the index as they split a table)."""
    if index.is_global:
        database.propagate_index_changes()  # only pending under --gsi-lag-ms
    segment, total = segments
    low, high = segment_bounds(segment, total)
    start = None
    if start_key is not None:
        pk, sk = indexes.check_index_start_key(schema, index, start_key)
        pk_hash = partition_hash(pk)
        if total > 1 and not low <= pk_hash < high:
            raise ValidationException(
                "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
                f"ExclusiveStartKey with correct Segment. TotalSegments: {total} Segment: {segment}"
            )
        start = (pk_hash, pk, sk)
    plan, fetch = index_read_setup(database, schema, index, request, expressions, select)
    rows: Any = database.storage.scan(index.storage_id, low, high, exclusive_start=start)
    if fetch:
        rows = TableFetch(database.storage, schema, rows)
    return respond(database.storage, schema, request, plan, rows, index)
