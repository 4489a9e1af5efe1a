"""BatchExecuteStatement: up to 25 PartiQL statements, all reads or all
writes, each with its own result: ``{"TableName", "Item"?}`` or an
``Error`` of ``Code`` (DynamoDB's short codes: ValidationError,
ConditionalCheckFailed, DuplicateItem, ...), ``Message`` and, for a failed
condition with ReturnValuesOnConditionCheckFailure=ALL_OLD, ``Item``. The
call itself answers HTTP 200 whatever its statements did.

Each read must fix the whole primary key (it is a GetItem, costing what
one costs); each write runs as the PutItem/UpdateItem/DeleteItem it
translates to. ConsumedCapacity is summed per table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import partiql
from dynastore.errors import (
    DynamoDBError,
    InternalServerError,
    ResourceNotFoundException,
    ValidationException,
)
from dynastore.ops.execute_statement import (
    bound_parameters,
    call,
    decoded,
    merge_capacity,
    run_write,
    table_of,
    with_options,
)
from dynastore.partiql import ast
from dynastore.partiql import messages as text
from dynastore.partiql.translate import check_operand_types, translate_select, translate_write
from dynastore.storage.base import CatalogueChanged

CATALOGUE_ATTEMPTS = 3

if TYPE_CHECKING:
    from dynastore.database import Database

ERROR_CODES = {
    "ValidationException": "ValidationError",
    "ConditionalCheckFailedException": "ConditionalCheckFailed",
    "DuplicateItemException": "DuplicateItem",
    "ResourceNotFoundException": "ResourceNotFound",
    "ItemCollectionSizeLimitExceededException": "ItemCollectionSizeLimitExceeded",
    "ProvisionedThroughputExceededException": "ProvisionedThroughputExceeded",
    "ThrottlingException": "ThrottlingError",
    "TransactionConflictException": "TransactionConflict",
    "RequestLimitExceeded": "RequestLimitExceeded",
    "InternalServerError": "InternalServerError",
    "AccessDeniedException": "AccessDenied",
}
"""An exception's name -> the BatchStatementErrorCodeEnum value reported for it."""


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = request["Statements"]
    parsed: list[ast.Statement | DynamoDBError] = []
    for entry in entries:
        try:
            parsed.append(partiql.parse(entry["Statement"]))
        except ValidationException as error:
            parsed.append(error)
    kinds = {ast.is_read(statement) for statement in parsed if not isinstance(statement, DynamoDBError)}
    if len(kinds) > 1:
        raise ValidationException(text.BATCH_MIXED)
    outer = {"ReturnConsumedCapacity": request.get("ReturnConsumedCapacity")}
    responses: list[dict[str, Any]] = []
    capacities: dict[str, dict[str, Any] | None] = {}
    for entry, statement in zip(entries, parsed, strict=True):
        table: str | None = None
        try:
            if isinstance(statement, DynamoDBError):
                raise statement
            if isinstance(statement, ast.Exists):
                raise ValidationException(text.EXISTS_OUTSIDE_TRANSACTION)
            table = statement.source.table
            answer = _on_the_current_catalogue(database, statement, entry, outer)
        except DynamoDBError as error:
            responses.append(_error_response(error, table))
            continue
        if "ConsumedCapacity" in answer and table is not None:
            capacities[table] = merge_capacity(capacities.get(table), answer.pop("ConsumedCapacity"))
        responses.append({"TableName": table, **answer})
    response: dict[str, Any] = {"Responses": responses}
    if request.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES"):
        response["ConsumedCapacity"] = [capacity for capacity in capacities.values() if capacity is not None]
    return response


def _on_the_current_catalogue(
    database: Database, statement: ast.Statement, entry: dict[str, Any], outer: dict[str, Any]
) -> dict[str, Any]:
    """One statement, run again on a reloaded catalogue when its table was
    not found here but another server may have created it, or when its
    commit was refused because another server changed the table (statement
    by statement: the batch's earlier statements must not run twice, as
    they would if dispatch ran the whole request again)."""
    for attempt in range(CATALOGUE_ATTEMPTS):
        last = attempt == CATALOGUE_ATTEMPTS - 1
        try:
            return _run_one(database, statement, entry, outer)
        except CatalogueChanged:
            if last:
                raise InternalServerError() from None
            database.refresh_catalogue(check=True)
        except ResourceNotFoundException:
            if last or not database.refresh_catalogue(check=True):
                raise
    raise InternalServerError()


def _run_one(
    database: Database, statement: ast.Statement, entry: dict[str, Any], outer: dict[str, Any]
) -> dict[str, Any]:
    assert not isinstance(statement, ast.Exists)
    parameters = bound_parameters(statement, entry.get("Parameters"))
    check_operand_types(statement, parameters)
    schema = table_of(database, statement.source)
    if isinstance(statement, ast.Select):
        plan = partiql.deep(translate_select, statement, parameters, schema, entry.get("ConsistentRead"))
        if plan.operation != "GetItem":
            raise ValidationException(text.BATCH_READ_NOT_BY_KEY)
        get = with_options(dict(plan.requests[0]), outer, "ReturnConsumedCapacity")
        page = decoded(call(database, "GetItem", get))
        answer: dict[str, Any] = {}
        if "Item" in page:
            answer["Item"] = page["Item"]
        if "ConsumedCapacity" in page:
            answer["ConsumedCapacity"] = page["ConsumedCapacity"]
        return answer
    assert isinstance(statement, (ast.Insert, ast.Update, ast.Delete))
    write = partiql.deep(translate_write, statement, parameters, schema)
    options = dict(outer, ReturnValuesOnConditionCheckFailure=entry.get("ReturnValuesOnConditionCheckFailure"))
    result = run_write(database, write, options)
    returned = result.pop("Items", None)
    if returned:  # RETURNING is honoured in a batch (not refused, as ExecuteTransaction refuses it)
        result["Item"] = returned[0]
    return result


def _error_response(error: DynamoDBError, table: str | None) -> dict[str, Any]:
    name = error.type_name()
    message = error.message or ""
    if isinstance(error, ResourceNotFoundException):
        message = "Requested resource not found"
    body: dict[str, Any] = {"Code": ERROR_CODES.get(name, name), "Message": message}
    item = error.extra_fields.get("Item")
    if item is not None:
        body["Item"] = item
    response: dict[str, Any] = {"Error": body}
    if table is not None:
        response["TableName"] = table
    return response
