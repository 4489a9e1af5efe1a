"""ResourceNotFoundException for a table that does not exist, worded per
operation as DynamoDB words it: the data plane says only "Requested resource
not found" (boto3's and Terraform's users quoting the service, 2024-2025;
ExtendDB's capture against it, 2026), the control plane names the table
(Terraform matches "Requested resource not found: Table: ")."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

KEY = {"pk": {"S": "a"}}
DATA_PLANE = "Requested resource not found"


def control_plane(name: str) -> str:
    return f"Requested resource not found: Table: {name} not found"


CALLS: dict[str, Any] = {
    "GetItem": lambda c, t: c.get_item(TableName=t, Key=KEY),
    "PutItem": lambda c, t: c.put_item(TableName=t, Item=KEY),
    "UpdateItem": lambda c, t: c.update_item(TableName=t, Key=KEY),
    "DeleteItem": lambda c, t: c.delete_item(TableName=t, Key=KEY),
    "Query": lambda c, t: c.query(TableName=t, KeyConditionExpression="pk = :p",
                                  ExpressionAttributeValues={":p": {"S": "a"}}),
    "Scan": lambda c, t: c.scan(TableName=t),
    "BatchGetItem": lambda c, t: c.batch_get_item(RequestItems={t: {"Keys": [KEY]}}),
    "BatchWriteItem": lambda c, t: c.batch_write_item(RequestItems={t: [{"PutRequest": {"Item": KEY}}]}),
    "TransactGetItems": lambda c, t: c.transact_get_items(TransactItems=[{"Get": {"TableName": t, "Key": KEY}}]),
    "TransactWriteItems": lambda c, t: c.transact_write_items(TransactItems=[{"Put": {"TableName": t, "Item": KEY}}]),
    "DescribeTable": lambda c, t: c.describe_table(TableName=t),
    "DeleteTable": lambda c, t: c.delete_table(TableName=t),
    "UpdateTable": lambda c, t: c.update_table(TableName=t, BillingMode="PAY_PER_REQUEST"),
    "DescribeTimeToLive": lambda c, t: c.describe_time_to_live(TableName=t),
}
CONTROL_PLANE = {"DescribeTable", "DeleteTable", "UpdateTable", "DescribeTimeToLive"}


@pytest.mark.parametrize("operation", sorted(CALLS))
def test_a_missing_table_is_worded_per_operation(client: Any, unique_name: Any, operation: str) -> None:
    name = unique_name("missing")
    with pytest.raises(ClientError) as excinfo:
        CALLS[operation](client, name)
    error = excinfo.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert error["Message"] == (control_plane(name) if operation in CONTROL_PLANE else DATA_PLANE)
