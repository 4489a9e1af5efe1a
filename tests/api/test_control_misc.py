"""DescribeLimits, DescribeEndpoints, and the table catalogue across a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import make_client, start_server, stop_server


def test_describe_limits(client: Any) -> None:
    limits = client.describe_limits()
    assert {key: value for key, value in limits.items() if key != "ResponseMetadata"} == {
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000,
    }


def test_describe_limits_reports_quotas_not_headroom(client: Any, unique_name: Any) -> None:
    name = unique_name("limits")
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
    )
    try:
        assert client.describe_limits()["AccountMaxReadCapacityUnits"] == 80000
    finally:
        client.delete_table(TableName=name)


def test_describe_endpoints(client: Any) -> None:
    answer = client.describe_endpoints()
    assert answer["Endpoints"] == [
        {"Address": "dynamodb.us-east-1.amazonaws.com", "CachePeriodInMinutes": 1440}
    ]


@pytest.fixture
def data_dir_server(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """A server on a data directory, restartable: yields (client factory, restart)."""
    if request.config.getoption("--endpoint"):
        pytest.skip("restarts need a server this test starts itself")
    state: dict[str, Any] = {}

    def start() -> Any:
        state["process"], url = start_server("--data-dir", str(tmp_path / "data"))
        return make_client(url)

    def stop() -> None:
        process = state.pop("process", None)
        if process is not None:
            stop_server(process)
            if process.stderr is not None:
                process.stderr.close()

    def restart() -> Any:
        stop()
        return start()

    yield start, restart
    stop()


def test_catalogue_survives_restart(data_dir_server: Any) -> None:
    start, restart = data_dir_server
    client = start()
    description = client.create_table(
        TableName="kept",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 2},
        Tags=[{"Key": "team", "Value": "core"}],
        DeletionProtectionEnabled=True,
    )["TableDescription"]
    client.create_table(
        TableName="dropped",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName="kept", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    client.update_table(
        TableName="kept", ProvisionedThroughput={"ReadCapacityUnits": 4, "WriteCapacityUnits": 2}
    )
    client.delete_table(TableName="dropped")

    client = restart()
    assert client.list_tables()["TableNames"] == ["kept"]
    table = client.describe_table(TableName="kept")["Table"]
    assert table["TableId"] == description["TableId"]
    assert table["CreationDateTime"] == description["CreationDateTime"]
    assert table["KeySchema"] == description["KeySchema"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 4
    assert table["DeletionProtectionEnabled"] is True
    assert table["ItemCount"] == 1
    assert client.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == [
        {"Key": "team", "Value": "core"}
    ]
    assert client.get_item(TableName="kept", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    # The restarted catalogue writes to the right table ids.
    client.update_table(TableName="kept", DeletionProtectionEnabled=False)
    client.delete_table(TableName="kept")
    client = restart()
    assert client.list_tables()["TableNames"] == []
