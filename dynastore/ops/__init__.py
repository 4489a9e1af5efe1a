"""The registry of DynamoDB operations.

Each implemented operation is a module ``dynastore/ops/<snake_name>.py``
exposing ``handle(database, request) -> dict | bytes``: ``request`` is the
decoded JSON body; the result is the response object, or response bytes
already serialised (the fast path for reads that return stored item bytes).

``dispatch`` is the one entry point used by the HTTP server, the embedded
client and the tests: it validates the request's shape against DynamoDB's
service model (ops/shapes.py), then calls the handler.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynastore.errors import UnknownOperationException
from dynastore.ops.shapes import validate_request

if TYPE_CHECKING:
    from dynastore.database import Database

Handler = Callable[["Database", dict[str, Any]], "dict[str, Any] | bytes"]

#: Every operation of DynamoDB's API (service model 2012-08-10).
ALL_OPERATIONS: tuple[str, ...] = (
    "BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CreateBackup",
    "CreateGlobalTable", "CreateTable", "DeleteBackup", "DeleteItem",
    "DeleteResourcePolicy", "DeleteTable", "DescribeBackup",
    "DescribeContinuousBackups", "DescribeContributorInsights", "DescribeEndpoints",
    "DescribeExport", "DescribeGlobalTable", "DescribeGlobalTableSettings",
    "DescribeImport", "DescribeKinesisStreamingDestination", "DescribeLimits",
    "DescribeTable", "DescribeTableReplicaAutoScaling", "DescribeTimeToLive",
    "DisableKinesisStreamingDestination", "EnableKinesisStreamingDestination",
    "ExecuteStatement", "ExecuteTransaction", "ExportTableToPointInTime",
    "GetItem", "GetResourcePolicy", "ImportTable", "ListBackups",
    "ListContributorInsights", "ListExports", "ListGlobalTables", "ListImports",
    "ListTables", "ListTagsOfResource", "PutItem", "PutResourcePolicy", "Query",
    "RestoreTableFromBackup", "RestoreTableToPointInTime", "Scan", "TagResource",
    "TransactGetItems", "TransactWriteItems", "UntagResource",
    "UpdateContinuousBackups", "UpdateContributorInsights", "UpdateGlobalTable",
    "UpdateGlobalTableSettings", "UpdateItem", "UpdateKinesisStreamingDestination",
    "UpdateTable", "UpdateTableReplicaAutoScaling", "UpdateTimeToLive",
)


def module_name(operation: str) -> str:
    """``BatchGetItem`` -> ``batch_get_item``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower()


def _load_handlers() -> dict[str, Handler]:
    handlers: dict[str, Handler] = {}
    for operation in ALL_OPERATIONS:
        name = f"{__name__}.{module_name(operation)}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        handlers[operation] = module.handle
    return handlers


OPERATIONS: dict[str, Handler] = _load_handlers()


def dispatch(database: Database, operation: str, request: dict[str, Any]) -> dict[str, Any] | bytes:
    """Run one operation. Raises a DynamoDBError for anything DynamoDB refuses."""
    handler = OPERATIONS.get(operation)
    if handler is None:
        if operation in ALL_OPERATIONS:
            raise UnknownOperationException(
                f"dynastore does not implement {operation} yet "
                "(see docs/compatibility.md)"
            )
        raise UnknownOperationException()
    validate_request(operation, request)
    database.faults.armed and database.faults.before(operation, request)  # docs/faults.md
    return handler(database, request)
