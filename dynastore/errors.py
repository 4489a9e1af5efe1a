"""The error catalogue: one class per DynamoDB error, with its wire ``__type``,
its HTTP status and the message templates the rest of the code uses.

Everything that fails a request raises one of these; the protocol layer turns
it into ``{"__type": ..., "message": ...}`` with ``status``. Nothing else in
the code base builds error bodies, so a wire shape is pinned here and in
tests/unit/test_errors.py.

Messages are DynamoDB's own wording (checked against the service and against
dynalite's conformance tests). Keep templates here when a message is used from
more than one place.
"""

from __future__ import annotations

from typing import Any, ClassVar

DYNAMODB = "com.amazonaws.dynamodb.v20120810#"
CORAL_SERVICE = "com.amazon.coral.service#"
CORAL_VALIDATE = "com.amazon.coral.validate#"


class DynamoDBError(Exception):
    """Base of every error that reaches a client."""

    namespace: ClassVar[str] = DYNAMODB
    status: ClassVar[int] = 400
    default_message: ClassVar[str | None] = None
    message_field: ClassVar[str] = "message"

    def __init__(self, message: str | None = None, **extra_fields: Any) -> None:
        self.message = message if message is not None else self.default_message
        # Extra top-level wire fields, e.g. CancellationReasons or Item.
        self.extra_fields = extra_fields
        super().__init__(self.message)

    @classmethod
    def type_name(cls) -> str:
        return cls.__name__

    @classmethod
    def wire_type(cls) -> str:
        return cls.namespace + cls.type_name()

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"__type": self.wire_type()}
        if self.message is not None:
            body[self.message_field] = self.message
        body.update(self.extra_fields)
        return body


# --- Protocol-level errors (coral service framework) -------------------------


class SerializationException(DynamoDBError):
    namespace = CORAL_SERVICE


class UnknownOperationException(DynamoDBError):
    namespace = CORAL_SERVICE


class MissingAuthenticationTokenException(DynamoDBError):
    namespace = CORAL_SERVICE
    default_message = "Request is missing Authentication Token"


class IncompleteSignatureException(DynamoDBError):
    namespace = CORAL_SERVICE


class InvalidSignatureException(DynamoDBError):
    namespace = CORAL_SERVICE


class UnrecognizedClientException(DynamoDBError):
    namespace = CORAL_SERVICE
    default_message = "The security token included in the request is invalid."


class AccessDeniedException(DynamoDBError):
    """DynamoDB words this one's message field with a capital M (as IAM does)."""

    namespace = CORAL_SERVICE
    message_field = "Message"


class RequestEntityTooLargeException(DynamoDBError):
    """DynamoDB answers a body over the 16 MB request limit with HTTP 413."""

    namespace = CORAL_SERVICE
    status = 413
    default_message = "Request must be smaller than 16777216 bytes for the operation"


class ValidationException(DynamoDBError):
    namespace = CORAL_VALIDATE


# --- Service errors ------------------------------------------------------------


class ResourceNotFoundException(DynamoDBError):
    default_message = "Requested resource not found"


class ResourceInUseException(DynamoDBError):
    pass


class LimitExceededException(DynamoDBError):
    pass


class ConditionalCheckFailedException(DynamoDBError):
    default_message = "The conditional request failed"


class ItemCollectionSizeLimitExceededException(DynamoDBError):
    default_message = "Collection size exceeded."


class ProvisionedThroughputExceededException(DynamoDBError):
    default_message = (
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API."
    )


class ThrottlingException(DynamoDBError):
    namespace = CORAL_SERVICE
    default_message = "Rate of requests exceeds the allowed throughput."


class RequestLimitExceeded(DynamoDBError):
    default_message = "Throughput exceeds the current throughput limit for your account."


class TransactionCanceledException(DynamoDBError):
    pass


class TransactionConflictException(DynamoDBError):
    default_message = "Transaction is ongoing for the item"


class TransactionInProgressException(DynamoDBError):
    pass


class IdempotentParameterMismatchException(DynamoDBError):
    pass


class TableNotFoundException(DynamoDBError):
    pass


class GlobalTableNotFoundException(DynamoDBError):
    """The legacy (2017.11.29) global-table calls: no such global table."""


class GlobalTableAlreadyExistsException(DynamoDBError):
    """CreateGlobalTable (legacy, opt-in): a global table of that name exists."""


class ReplicaAlreadyExistsException(DynamoDBError):
    """UpdateGlobalTable (legacy, opt-in): the region is a member already."""


class ReplicaNotFoundException(DynamoDBError):
    """UpdateGlobalTable / UpdateGlobalTableSettings (legacy, opt-in): the region is no member."""


class IndexNotFoundException(DynamoDBError):
    """UpdateGlobalTableSettings (legacy, opt-in): no such global secondary index."""


class ReplicatedWriteConflictException(DynamoDBError):
    """MRSC global tables: another region is writing the same item."""

    default_message = "One or more items in this request are being modified by a request in another Region."


class DuplicateItemException(DynamoDBError):
    """PartiQL: an INSERT of a key that exists."""

    default_message = "Duplicate primary key exists in table"


class ExpiredIteratorException(DynamoDBError):
    """DynamoDB Streams: a shard iterator older than 15 minutes."""

    default_message = "Shard iterator has expired"


class TrimmedDataAccessException(DynamoDBError):
    """DynamoDB Streams: reading records already trimmed (older than 24 hours)."""

    default_message = "The operation attempted to read past the oldest stream record in a shard."


class InternalServerError(DynamoDBError):
    status = 500
    default_message = "Internal server error"


#: Every error class, by type name; tests pin each wire shape from this.
CATALOGUE: dict[str, type[DynamoDBError]] = {
    cls.__name__: cls
    for cls in [
        SerializationException,
        UnknownOperationException,
        MissingAuthenticationTokenException,
        IncompleteSignatureException,
        InvalidSignatureException,
        UnrecognizedClientException,
        AccessDeniedException,
        RequestEntityTooLargeException,
        ValidationException,
        ResourceNotFoundException,
        ResourceInUseException,
        LimitExceededException,
        ConditionalCheckFailedException,
        ItemCollectionSizeLimitExceededException,
        ProvisionedThroughputExceededException,
        ThrottlingException,
        RequestLimitExceeded,
        TransactionCanceledException,
        TransactionConflictException,
        TransactionInProgressException,
        IdempotentParameterMismatchException,
        TableNotFoundException,
        GlobalTableNotFoundException,
        GlobalTableAlreadyExistsException,
        ReplicaAlreadyExistsException,
        ReplicaNotFoundException,
        IndexNotFoundException,
        ReplicatedWriteConflictException,
        DuplicateItemException,
        ExpiredIteratorException,
        TrimmedDataAccessException,
        InternalServerError,
    ]
}


# --- Message templates used from several places -------------------------------


def table_not_found(table_name: str | None = None) -> ResourceNotFoundException:
    """The control plane's text names the table; without a name, the data
    plane's bare text (ops.DATA_PLANE_OPERATIONS answers with it)."""
    if table_name is None:
        return ResourceNotFoundException("Requested resource not found")
    return ResourceNotFoundException(f"Requested resource not found: Table: {table_name} not found")


def invalid_parameter(detail: str) -> ValidationException:
    """``One or more parameter values were invalid: <detail>``."""
    return ValidationException(f"One or more parameter values were invalid: {detail}")


def key_schema_mismatch() -> ValidationException:
    return ValidationException("The provided key element does not match the schema")
