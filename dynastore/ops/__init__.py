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

import functools
import importlib
import logging
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.errors import (
    DynamoDBError,
    InternalServerError,
    ResourceNotFoundException,
    UnknownOperationException,
    ValidationException,
    table_not_found,
)
from dynastore.ops import describe_endpoints
from dynastore.ops.shapes import validate_request
from dynastore.storage.base import CatalogueChanged

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

logger = logging.getLogger("dynastore.ops")

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


READ_OPERATIONS: frozenset[str] = frozenset(
    operation for operation in ALL_OPERATIONS
    if operation.startswith(("Describe", "List"))
    or operation in ("GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "GetResourcePolicy")
)
"""What a ``readonly`` access key may call (docs/security.md): reads of items
and the Describe/List calls; every DynamoDB Streams call is a read too."""


def reads_only(operation: str, request: Any) -> bool:
    """Whether a PartiQL call holds SELECTs only (a ``readonly`` key may run
    it, as an IAM policy allowing dynamodb:PartiQLSelect would let it). A
    statement that does not parse writes nothing: the operation answers it."""
    if operation not in ("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction"):
        return False
    from dynastore import partiql

    if operation == "ExecuteStatement":
        entries: Any = [request]
    else:
        entries = request.get("Statements" if operation == "BatchExecuteStatement" else "TransactStatements")
    if not isinstance(entries, list):
        return True
    for entry in entries:
        text = entry.get("Statement") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            continue
        try:
            statement = partiql.parse(text)
        except DynamoDBError:
            continue
        if not isinstance(statement, partiql.ast.Select):
            return False
    return True


def module_name(operation: str) -> str:
    """``BatchGetItem`` -> ``batch_get_item``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower()


_PACKAGE_DIRECTORY = Path(__file__).resolve().parent

IMPLEMENTED: frozenset[str] = frozenset(
    operation
    for operation in ALL_OPERATIONS
    if (_PACKAGE_DIRECTORY / f"{module_name(operation)}.py").exists()
)
"""Operations with a module here. Modules are imported on first use, so a
server answers its first request without importing every operation."""


class _Handlers(dict[str, Handler]):
    """operation -> handler, importing the operation's module on first use."""

    def __missing__(self, operation: str) -> Handler:
        if operation not in IMPLEMENTED:
            raise KeyError(operation)
        handler: Handler = importlib.import_module(f"{__name__}.{module_name(operation)}").handle
        self[operation] = handler
        return handler


OPERATIONS: dict[str, Handler] = _Handlers()


def load_all() -> None:
    """Import every operation now (a server calls it once it is listening)."""
    for operation in IMPLEMENTED:
        OPERATIONS[operation]


def dispatch(
    database: Database, operation: str, request: dict[str, Any], region: str | None = None
) -> dict[str, Any] | bytes:
    """Run one operation. Raises a DynamoDBError for anything DynamoDB refuses.
    ``region`` is the one the request was signed for, where that differs from
    ``database.region`` (``--single-region`` keeps every region's tables in
    us-east-1's namespace): DescribeEndpoints names it."""
    try:
        handler = OPERATIONS[operation]
    except KeyError:
        if operation in ALL_OPERATIONS:
            raise UnknownOperationException(
                f"dynastore does not implement {operation} yet "
                "(see docs/compatibility.md)"
            ) from None
        raise UnknownOperationException() from None
    validate_request(operation, request)
    database.faults.armed and database.faults.before(operation, request)  # docs/faults.md
    if database.replication is not None:  # global tables: replicated writes now due arrive first
        database.replication.catch_up(database)
        if database.replication.paused:  # a partition: a STRONG table's region without a quorum
            from dynastore.replication.strong import check_strong_read

            check_strong_read(database, operation, request)
    if operation == "DescribeEndpoints":  # needs no catalogue
        if region is not None and region != database.region:
            handler = functools.partial(describe_endpoints.handle, region=region)
    elif not database.storage.exclusive:  # other servers change the catalogue too
        database.refresh_catalogue(check=operation in CATALOGUE_OPERATIONS)
        handler = _CURRENT.get(handler) or _CURRENT.setdefault(
            handler, _on_the_current_catalogue(handler, writes_catalogue=operation in CATALOGUE_WRITES))
    try:
        if database.throughput is not None:  # docs/throughput.md: off unless asked for
            result: dict[str, Any] | bytes = database.throughput.run(operation, handler, request)
            return result
        return handler(database, request)
    except ResourceNotFoundException as error:
        if operation in DATA_PLANE_OPERATIONS and (error.message or "").startswith(TABLE_NOT_FOUND_PREFIX):
            raise table_not_found() from None
        raise


DATA_PLANE_OPERATIONS = frozenset((
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
    "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
    "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
))
"""Operations whose missing table DynamoDB answers with the bare "Requested
resource not found" (boto3 and Terraform reports 2024-2025, ExtendDB's
capture against the service 2026); the control plane names the table
("Requested resource not found: Table: T not found"). The batch and
transaction calls are taken as data plane (unconfirmed: docs/compatibility.md)."""
TABLE_NOT_FOUND_PREFIX = "Requested resource not found: Table: "


CATALOGUE_OPERATIONS = frozenset((
    "CreateTable", "DeleteTable", "DescribeTable", "ListTables", "UpdateTable",
    "DescribeTimeToLive", "UpdateTimeToLive", "ListTagsOfResource", "TagResource",
    "UntagResource", "DescribeContributorInsights", "ListContributorInsights",
    "UpdateContributorInsights",
    # Backups, PITR and exports read the table's change-log settings from its
    # definition, and restores check the target name (issue 19).
    "CreateBackup", "DescribeContinuousBackups", "UpdateContinuousBackups",
    "RestoreTableFromBackup", "RestoreTableToPointInTime", "ExportTableToPointInTime",
    # The legacy global-table calls read and change the members' definitions (issue 20).
    "CreateGlobalTable", "DescribeGlobalTable", "UpdateGlobalTable", "ListGlobalTables",
    "DescribeGlobalTableSettings", "UpdateGlobalTableSettings",
    "DescribeTableReplicaAutoScaling", "UpdateTableReplicaAutoScaling",
))
"""Operations that read or change the catalogue itself: on a shared store
they check first that this server's copy is current (one query), so a
table another server created, changed or deleted is described as it is."""
CATALOGUE_ATTEMPTS = 3
_CURRENT: dict[Handler, Handler] = {}
"""Each operation's handler wrapped by _on_the_current_catalogue (made once)."""


CATALOGUE_WRITES = frozenset((
    "UpdateTable", "UpdateTimeToLive", "TagResource", "UntagResource", "UpdateContributorInsights",
))
"""Operations that change a table's definition (a compare-and-set on its
generation): once refused, they run again under the table's lock."""


def _on_the_current_catalogue(handler: Handler, writes_catalogue: bool = False) -> Handler:
    """``handler``, run again on a reloaded catalogue when its table (or
    index) was not found here but may exist now (CATALOGUE_ATTEMPTS runs),
    or when its commit or its change of the table's definition (a
    compare-and-set on the table's generation: Database.update_table) was
    refused because another server changed the table meanwhile. The handler
    reads the table anew each time, so its change is derived again from the
    definition as it is now and nobody's change is lost. An operation that
    changes the definition (``writes_catalogue``) runs again under the
    table's lock (_under_the_tables_lock), so many servers changing one
    table at once each get through in turn; each retry follows a short
    random pause. After limits.CATALOGUE_CHANGE_ATTEMPTS runs:
    InternalServerError (retryable), never a change made on a stale
    definition. A handler's writes before its refused one are in the same
    storage transaction or are safe to make again (ops/update_table.py)."""

    def run(database: Database, request: dict[str, Any]) -> dict[str, Any] | bytes:
        stale_lookups = CATALOGUE_ATTEMPTS - 1
        attempts = limits.CATALOGUE_CHANGE_ATTEMPTS
        locked = False
        for attempt in range(1, attempts + 1):
            try:
                if locked:
                    return _under_the_tables_lock(handler, database, request)
                return handler(database, request)
            except CatalogueChanged as changed:
                if attempt == attempts:
                    logger.warning("the table kept changing under %s: %s", getattr(handler, "__module__", handler),
                                   changed)
                    raise InternalServerError() from None
                locked = writes_catalogue
                database.storage.pause(random.uniform(0, limits.CATALOGUE_CHANGE_BACKOFF_SECONDS * attempt))
                database.refresh_catalogue(check=True)
            except (ResourceNotFoundException, ValidationException) as error:
                if stale_lookups == 0 or not _may_be_stale(error) or not database.refresh_catalogue(check=True):
                    raise
                stale_lookups -= 1
        raise AssertionError("unreachable")

    return run


def _under_the_tables_lock(handler: Handler, database: Database, request: dict[str, Any]) -> dict[str, Any] | bytes:
    """``handler`` in one storage transaction that first takes the lock of
    the request's table (Storage.lock_table), then reloads the catalogue:
    every other change of the table's definition takes that lock first, so
    none can come between the definition read here and the one written
    (the compare-and-set still checks it: a table re-created under the name
    meanwhile is another table, another lock)."""
    schema = _requested_table(database, request)
    if schema is None or "replication" in schema.extensions:
        # A global table's changes go on to its replicas' definitions (other
        # tables, other locks: taken inside this one, two servers changing
        # two replicas could wait for each other). It runs again as it is.
        return handler(database, request)
    with database.storage.transaction():
        database.storage.lock_table(schema.table_id)
        database.refresh_catalogue(check=True)
        return handler(database, request)


def _requested_table(database: Database, request: dict[str, Any]) -> TableSchema | None:
    """The table a control-plane request names (by TableName, or by
    ResourceArn for tagging); None if it names none here."""
    from dynastore.engine.table_arns import table_name_from_arn

    try:
        if "ResourceArn" in request:
            name = table_name_from_arn(request["ResourceArn"], database.region, database.account_id)
            return database.tables.get(name)
        return database.table(request.get("TableName", ""))
    except DynamoDBError:
        return None


def _may_be_stale(error: DynamoDBError) -> bool:
    return isinstance(error, ResourceNotFoundException) or (error.message or "").startswith(MISSING_INDEX)


MISSING_INDEX = "The table does not have the specified index"
