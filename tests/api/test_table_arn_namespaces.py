"""A TableName given as an ARN names a table only in the request's own
(account, region) namespace (issue 17). An ARN of another region or
partition is refused as DynamoDB refuses it on DescribeTable (ack-api-quirks'
live catalogue: "1 validation error detected: Invalid AWS region in '<ARN>'");
one of another account names no table here. Before, any ARN reached the
local table of the same name."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


def test_an_arn_of_another_namespace_does_not_reach_the_local_table(client: Any, make_table: Any) -> None:
    name = make_table(sk=None)
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    _, partition, service, region, account, resource = arn.split(":", 5)
    assert client.describe_table(TableName=arn)["Table"]["TableName"] == name
    client.put_item(TableName=arn, Item={"pk": {"S": "a"}})
    other_region = ":".join(["arn", partition, service, "eu-north-9", account, resource])
    other_partition = ":".join(["arn", "aws-cn", service, region, account, resource])
    other_account = ":".join(["arn", partition, service, region, "123456789012", resource])
    for call in (client.describe_table, client.describe_time_to_live, client.describe_contributor_insights):
        assert refused(call, TableName=other_region) == (
            "ValidationException", f"1 validation error detected: Invalid AWS region in '{other_region}'")
        assert refused(call, TableName=other_partition) == (
            "ValidationException", f"1 validation error detected: Invalid AWS partition in '{other_partition}'")
    assert refused(client.describe_table, TableName=other_account) == (
        "ResourceNotFoundException", f"Requested resource not found: Table: {other_account} not found")
    assert refused(client.get_item, TableName=other_account, Key={"pk": {"S": "a"}}) == (
        "ResourceNotFoundException", "Requested resource not found")
    assert refused(client.get_item, TableName=other_region, Key={"pk": {"S": "a"}}) == (
        "ValidationException", f"1 validation error detected: Invalid AWS region in '{other_region}'")
    assert client.get_item(TableName=arn, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
