"""ExecuteTransaction: up to 100 PartiQL statements, all applied or none,
run as one TransactWriteItems (INSERT -> Put, UPDATE -> Update, DELETE ->
Delete, ``EXISTS(SELECT ...)`` -> ConditionCheck) or one TransactGetItems
(every SELECT by its full key). Reads and writes do not mix.

A statement that fails to parse or translate fails the request with
``Validation failed in TransactStatements[i]: ...``. A cancelled
transaction is TransactWriteItems' TransactionCanceledException, with an
INSERT whose key exists reported as ``DuplicateItem``. ClientRequestToken
gives TransactWriteItems' idempotency (the translated request is the same
for the same statements and parameters).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import partiql
from dynastore.engine import transactions
from dynastore.errors import (
    ResourceNotFoundException,
    TransactionCanceledException,
    ValidationException,
)
from dynastore.ops.execute_statement import (
    call,
    decoded,
    table_of,
    validated_parameters,
    with_options,
)
from dynastore.partiql import ast
from dynastore.partiql import messages as text
from dynastore.partiql.translate import (
    check_operand_types,
    check_parameters,
    transact_get,
    transact_write,
)

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = request["TransactStatements"]
    # A bad parameter value answers as itself, not "Validation failed in ..." (as the service does).
    values = [validated_parameters(entry.get("Parameters")) for entry in entries]
    statements = [_parsed(position, entry) for position, entry in enumerate(entries)]
    reads = [ast.is_read(statement) for statement in statements]
    if any(reads) and not all(reads):
        raise ValidationException(text.TRANSACTION_MIXED)
    items = [_action(database, position, statement, entry, parameters, reads[0])
             for position, (statement, entry, parameters) in enumerate(zip(statements, entries, values, strict=True))]
    inner = with_options({"TransactItems": items}, request, "ReturnConsumedCapacity")
    if reads[0]:
        page = decoded(call(database, "TransactGetItems", inner))
        response: dict[str, Any] = {"Responses": page.get("Responses", [])}
    else:
        with_options(inner, request, "ClientRequestToken")
        try:
            page = decoded(call(database, "TransactWriteItems", inner))
        except TransactionCanceledException as error:
            raise _with_duplicates(error, statements) from None
        response = {}
    if "ConsumedCapacity" in page:
        response["ConsumedCapacity"] = page["ConsumedCapacity"]
    return response


def _parsed(position: int, entry: dict[str, Any]) -> ast.Statement:
    try:
        return partiql.parse(entry["Statement"])
    except ValidationException as error:
        raise _member_failed(position, error) from None


def _action(
    database: Database,
    position: int,
    statement: ast.Statement,
    entry: dict[str, Any],
    values: list[dict[str, Any]],
    read: bool,
) -> dict[str, Any]:
    try:
        parameters = check_parameters(statement, values)
        check_operand_types(statement, parameters)
        source = statement.select.source if isinstance(statement, ast.Exists) else statement.source
        schema = table_of(database, source)
        if read:
            assert isinstance(statement, ast.Select)
            return partiql.deep(transact_get, statement, parameters, schema)
        action = partiql.deep(transact_write, statement, parameters, schema)
    except ResourceNotFoundException:
        raise ResourceNotFoundException("Requested resource not found") from None
    except ValidationException as error:
        raise _member_failed(position, error) from None
    on_failure = entry.get("ReturnValuesOnConditionCheckFailure")
    if on_failure is not None:
        next(iter(action.values()))["ReturnValuesOnConditionCheckFailure"] = on_failure
    return action


def _member_failed(position: int, error: ValidationException) -> ValidationException:
    return ValidationException(text.TRANSACTION_MEMBER_FAILED.format(position, error.message))


def _with_duplicates(
    error: TransactionCanceledException, statements: list[ast.Statement]
) -> TransactionCanceledException:
    """An INSERT cancelled by its attribute_not_exists condition is a DuplicateItem."""
    reasons = list(error.extra_fields.get("CancellationReasons", ()))
    changed = False
    for position, reason in enumerate(reasons):
        if isinstance(statements[position], ast.Insert) and reason.get("Code") == "ConditionalCheckFailed":
            reasons[position] = transactions.cancellation_reason("DuplicateItem", text.DUPLICATE_ITEM)
            changed = True
    if not changed:
        return error
    rewritten = transactions.cancelled(reasons)
    rewritten.write_units_consumed = getattr(error, "write_units_consumed", 0)  # type: ignore[attr-defined]
    return rewritten
