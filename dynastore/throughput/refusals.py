"""A throttled request: why it may not run now (``Refusal``) and the error
-- or the transaction's cancellation reason -- DynamoDB answers with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynastore.errors import (
    DYNAMODB,
    DynamoDBError,
    ProvisionedThroughputExceededException,
    ThrottlingException,
)
from dynastore.throughput.state import Resource

MESSAGE_TABLE_PROVISIONED = ProvisionedThroughputExceededException.default_message or ""
MESSAGE_INDEX_PROVISIONED = (
    "The level of configured provisioned throughput for one or more global secondary indexes "
    "of the table was exceeded. Consider increasing your provisioning level for the "
    "under-provisioned global secondary indexes with the UpdateTable API"
)
MESSAGE_TABLE_ON_DEMAND = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
    "scaling your table or index so please try again shortly. If exceptions persist, check if "
    "you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-partition-key-design.html"
)
MESSAGE_INDEX_ON_DEMAND = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)


class DataPlaneThrottlingException(ThrottlingException):
    """ThrottlingException of an on-demand table, in DynamoDB's namespace."""

    namespace = DYNAMODB

    @classmethod
    def type_name(cls) -> str:
        return "ThrottlingException"



# --- a throttled request ---------------------------------------------------------------


@dataclass
class Refusal:
    """Why one request (or one batch item) may not run now."""

    resource: Resource
    reason: str
    on_demand: bool

    def wire(self) -> dict[str, str]:
        return {"reason": self.reason, "resource": self.resource.arn}


def throttle_error(refusals: list[Refusal]) -> DynamoDBError:
    first = refusals[0]
    fields = {"ThrottlingReasons": [refusal.wire() for refusal in refusals]}
    index = first.resource.kind == "Index"
    if first.on_demand:
        return DataPlaneThrottlingException(MESSAGE_INDEX_ON_DEMAND if index else MESSAGE_TABLE_ON_DEMAND, **fields)
    return ProvisionedThroughputExceededException(
        MESSAGE_INDEX_PROVISIONED if index else MESSAGE_TABLE_PROVISIONED, **fields
    )


def cancellation_reason(refusal: Refusal | None) -> dict[str, Any]:
    if refusal is None:
        return {"Code": "None"}
    index = refusal.resource.kind == "Index"
    if refusal.on_demand:
        return {"Code": "ThrottlingError", "Message": MESSAGE_INDEX_ON_DEMAND if index else MESSAGE_TABLE_ON_DEMAND}
    return {
        "Code": "ProvisionedThroughputExceeded",
        "Message": MESSAGE_INDEX_PROVISIONED if index else MESSAGE_TABLE_PROVISIONED,
    }
