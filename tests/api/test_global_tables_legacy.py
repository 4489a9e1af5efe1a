"""The legacy global-tables API (version 2017.11.29), opt-in (issue 20):
with ``dynastore serve --legacy-global-tables`` (``$DYNASTORE_LEGACY_GLOBAL_TABLES=1``,
``dynastore.open(..., legacy_global_tables=True)``) CreateGlobalTable,
DescribeGlobalTable, UpdateGlobalTable, ListGlobalTables and the Settings
calls work as the API reference documents them, the writes replicating
through the one replicator. Without the flag they are refused as DynamoDB
refuses them today (test_global_tables.py).

Each store gets its own server with the flag: the in-memory store (a server
process, the flag), SQLite (the embedded database, the open() option) and
PostgreSQL (a server process, the environment variable)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import TEST_CLIENT_CONFIG, start_server, stop_server
from tests.api.helpers import error_of

EAST, WEST, EUROPE = "us-east-1", "us-west-2", "eu-west-1"
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


class Legacy:
    """A server with the legacy API on: its URL and a client per region."""

    def __init__(self, endpoint: str, embedded: Any = None) -> None:
        self.endpoint = endpoint
        self.embedded = embedded
        self.clients: dict[str, Any] = {}

    def __call__(self, region: str) -> Any:
        if region not in self.clients:
            if self.embedded is not None:
                self.clients[region] = self.embedded.client(region_name=region, config=TEST_CLIENT_CONFIG)
            else:
                self.clients[region] = boto3.client(
                    "dynamodb", endpoint_url=self.endpoint, region_name=region, aws_access_key_id="AKIDTEST",
                    aws_secret_access_key="secret", config=TEST_CLIENT_CONFIG)
        return self.clients[region]

    def advance(self, seconds: float) -> None:
        request = urllib.request.Request(
            self.endpoint + "/_dynastore/clock", data=json.dumps({"advance_seconds": seconds}).encode(),
            method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgres"])
def legacy(request: pytest.FixtureRequest) -> Iterator[Legacy]:
    if request.param == "sqlite":
        import dynastore

        directory = tempfile.mkdtemp(prefix="dynastore-legacy-")
        database = dynastore.open(directory, legacy_global_tables=True)
        try:
            yield Legacy(database.serve().endpoint_url, database)
        finally:
            database.close()
            shutil.rmtree(directory, ignore_errors=True)
        return
    if request.param == "memory":
        process, url = start_server("--in-memory", "--legacy-global-tables",
                                    environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    else:
        postgres = request.getfixturevalue("postgres_server")
        process, url = start_server("--postgres", str(postgres.new_database()), environment={
            "DYNASTORE_ENGINE_CONNECTIONS": "0", "DYNASTORE_LEGACY_GLOBAL_TABLES": "1"})
    try:
        yield Legacy(url)
    finally:
        stop_server(process)


def make_tables(legacy: Legacy, regions: tuple[str, ...], **extra: Any) -> str:
    """A table of one new name in each of ``regions`` (hash key ``pk``, a
    NEW_AND_OLD_IMAGES stream unless ``extra`` says otherwise)."""
    name = f"legacy-{uuid.uuid4().hex[:10]}"
    for region in regions:
        legacy(region).create_table(**{
            "TableName": name, "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST", "StreamSpecification": NEW_AND_OLD, **extra,
        })
    return name


def error(call: Callable[..., Any], **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


def item(client: Any, name: str, key: str) -> dict[str, Any] | None:
    found = client.get_item(TableName=name, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return None if found is None else dict(found)


def group(description: dict[str, Any]) -> list[str]:
    return [replica["RegionName"] for replica in description["ReplicationGroup"]]


def test_a_legacy_global_table_is_created_described_listed_and_replicates(legacy: Legacy) -> None:
    name = make_tables(legacy, (EAST, WEST))
    east, west = legacy(EAST), legacy(WEST)
    created = east.create_global_table(GlobalTableName=name,
                                       ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    description = created["GlobalTableDescription"]
    assert description["GlobalTableName"] == name
    assert description["GlobalTableArn"] == f"arn:aws:dynamodb::000000000000:global-table/{name}"
    assert description["GlobalTableStatus"] == "CREATING"
    assert group(description) == [EAST, WEST]
    assert description["CreationDateTime"].timestamp() > 0
    described = west.describe_global_table(GlobalTableName=name)["GlobalTableDescription"]
    assert described["GlobalTableStatus"] == "ACTIVE" and group(described) == [EAST, WEST]
    assert described["CreationDateTime"] == description["CreationDateTime"]
    # DescribeTable does not show a legacy group (that is how the versions are told apart).
    table = east.describe_table(TableName=name)["Table"]
    assert "Replicas" not in table and "GlobalTableVersion" not in table
    # Writes replicate both ways after the replication lag, through the one replicator.
    east.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"S": "from east"}})
    west.put_item(TableName=name, Item={"pk": {"S": "b"}, "v": {"S": "from west"}})
    assert item(west, name, "a") is None
    legacy.advance(2)
    assert item(west, name, "a") == {"pk": {"S": "a"}, "v": {"S": "from east"}}
    assert item(east, name, "b") == {"pk": {"S": "b"}, "v": {"S": "from west"}}
    # ListGlobalTables: by region, a page at a time.
    other = make_tables(legacy, (WEST,))
    west.create_global_table(GlobalTableName=other, ReplicationGroup=[{"RegionName": WEST}])
    listed = {entry["GlobalTableName"]: entry for entry in east.list_global_tables()["GlobalTables"]}
    assert listed[name]["ReplicationGroup"] == [{"RegionName": EAST}, {"RegionName": WEST}]
    assert listed[other]["ReplicationGroup"] == [{"RegionName": WEST}]
    in_east = [entry["GlobalTableName"] for entry in east.list_global_tables(RegionName=EAST)["GlobalTables"]]
    assert name in in_east and other not in in_east
    names, start, pages = [], None, 0
    while True:
        page = east.list_global_tables(Limit=1, **({"ExclusiveStartGlobalTableName": start} if start else {}))
        names += [entry["GlobalTableName"] for entry in page["GlobalTables"]]
        pages += 1
        start = page.get("LastEvaluatedGlobalTableName")
        if start is None:
            break
    assert names == sorted(names) and {name, other} <= set(names) and pages >= 2
    # A 2019.11.21 table is not a legacy global table.
    assert error(east.describe_global_table, GlobalTableName="nope-" + name) == (
        "GlobalTableNotFoundException", f"Global table not found: Global table with name: 'nope-{name}' does not exist.")
    assert error(east.create_global_table, GlobalTableName=name, ReplicationGroup=[{"RegionName": EAST}]) == (
        "GlobalTableAlreadyExistsException", "The specified global table already exists.")


def test_create_global_table_checks_the_documented_preconditions(legacy: Legacy) -> None:
    east = legacy(EAST)
    name = make_tables(legacy, (EAST,))
    assert error(east.create_global_table, GlobalTableName=name,
                 ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}]) == (
        "TableNotFoundException",
        f"A source table with the name {name} does not currently exist within the subscriber's account or the "
        "subscriber is operating in the wrong Amazon Web Services Region.")
    legacy(WEST).create_table(
        TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    code, message = error(east.create_global_table, GlobalTableName=name,
                          ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    assert code == "ValidationException" and "NEW_AND_OLD_IMAGES" in message
    other_keys = f"legacy-{uuid.uuid4().hex[:10]}"
    for region, key in ((EAST, "pk"), (WEST, "id")):
        legacy(region).create_table(
            TableName=other_keys, KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
            StreamSpecification=NEW_AND_OLD)
    code, message = error(east.create_global_table, GlobalTableName=other_keys,
                          ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    assert code == "ValidationException" and "key schema" in message
    full = make_tables(legacy, (EAST, WEST))
    legacy(WEST).put_item(TableName=full, Item={"pk": {"S": "x"}})
    code, message = error(east.create_global_table, GlobalTableName=full,
                          ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    assert code == "ValidationException" and "empty" in message
    # Nothing was made by the refused calls.
    assert error(east.describe_global_table, GlobalTableName=full)[0] == "GlobalTableNotFoundException"
    assert "Replicas" not in east.describe_table(TableName=full)["Table"]


def test_update_global_table_adds_a_filled_replica_and_removes_one(legacy: Legacy) -> None:
    name = make_tables(legacy, (EAST, WEST, EUROPE))
    east, west, europe = legacy(EAST), legacy(WEST), legacy(EUROPE)
    east.create_global_table(GlobalTableName=name, ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    east.put_item(TableName=name, Item={"pk": {"S": "old"}, "v": {"N": "1"}})
    assert error(east.update_global_table, GlobalTableName=name,
                 ReplicaUpdates=[{"Create": {"RegionName": WEST}}]) == (
        "ReplicaAlreadyExistsException", "The specified replica is already part of the global table.")
    assert error(east.update_global_table, GlobalTableName=name,
                 ReplicaUpdates=[{"Delete": {"RegionName": "ap-south-1"}}]) == (
        "ReplicaNotFoundException", "The specified replica is no longer part of the global table.")
    assert error(east.update_global_table, GlobalTableName="missing-" + name,
                 ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]) == (
        "GlobalTableNotFoundException", f"Global table with name: 'missing-{name}' does not exist.")
    updated = east.update_global_table(GlobalTableName=name, ReplicaUpdates=[{"Create": {"RegionName": EUROPE}}])
    assert group(updated["GlobalTableDescription"]) == [EUROPE, EAST, WEST]
    for _ in range(200):  # the new replica is filled from the existing items
        described = east.describe_global_table(GlobalTableName=name)["GlobalTableDescription"]
        if described["GlobalTableStatus"] == "ACTIVE":
            break
        time.sleep(0.02)
    assert all(replica["ReplicaStatus"] == "ACTIVE" for replica in described["ReplicationGroup"])
    assert item(europe, name, "old") == {"pk": {"S": "old"}, "v": {"N": "1"}}
    europe.put_item(TableName=name, Item={"pk": {"S": "eu"}})
    legacy.advance(2)
    assert item(east, name, "eu") is not None and item(west, name, "eu") is not None
    # A removed replica keeps its table, as a regional table that no longer replicates.
    removed = west.update_global_table(GlobalTableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}])
    assert group(removed["GlobalTableDescription"]) == [EUROPE, EAST]
    assert west.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    east.put_item(TableName=name, Item={"pk": {"S": "after"}})
    legacy.advance(2)
    assert item(europe, name, "after") is not None and item(west, name, "after") is None
    code, _ = error(east.update_table, TableName=name, ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}])
    assert code == "ValidationException"  # a legacy member's replicas change with UpdateGlobalTable


def test_global_table_settings_are_described_and_updated(legacy: Legacy) -> None:
    provisioned: dict[str, Any] = {
        "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "GlobalSecondaryIndexes": [{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"},
                                    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}],
    }
    name = make_tables(legacy, (EAST, WEST), **provisioned)
    east = legacy(EAST)
    east.create_global_table(GlobalTableName=name, ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}])
    settings = east.describe_global_table_settings(GlobalTableName=name)
    assert settings["GlobalTableName"] == name
    assert [entry["RegionName"] for entry in settings["ReplicaSettings"]] == [EAST, WEST]
    first = settings["ReplicaSettings"][0]
    assert first["ReplicaStatus"] == "ACTIVE"
    assert first["ReplicaProvisionedReadCapacityUnits"] == 5 and first["ReplicaProvisionedWriteCapacityUnits"] == 5
    assert first["ReplicaGlobalSecondaryIndexSettings"] == [
        {"IndexName": "by-g", "IndexStatus": "ACTIVE", "ProvisionedReadCapacityUnits": 5,
         "ProvisionedWriteCapacityUnits": 5}]
    updated = east.update_global_table_settings(
        GlobalTableName=name, GlobalTableProvisionedWriteCapacityUnits=12,
        GlobalTableGlobalSecondaryIndexSettingsUpdate=[{"IndexName": "by-g", "ProvisionedWriteCapacityUnits": 7}],
        ReplicaSettingsUpdate=[{"RegionName": WEST, "ReplicaProvisionedReadCapacityUnits": 9,
                                "ReplicaGlobalSecondaryIndexSettingsUpdate": [
                                    {"IndexName": "by-g", "ProvisionedReadCapacityUnits": 3}]}])
    by_region = {entry["RegionName"]: entry for entry in updated["ReplicaSettings"]}
    assert by_region[EAST]["ReplicaProvisionedWriteCapacityUnits"] == by_region[WEST][
        "ReplicaProvisionedWriteCapacityUnits"] == 12
    assert by_region[EAST]["ReplicaProvisionedReadCapacityUnits"] == 5
    assert by_region[WEST]["ReplicaProvisionedReadCapacityUnits"] == 9
    assert by_region[WEST]["ReplicaGlobalSecondaryIndexSettings"][0]["ProvisionedReadCapacityUnits"] == 3
    assert by_region[EAST]["ReplicaGlobalSecondaryIndexSettings"][0]["ProvisionedWriteCapacityUnits"] == 7
    west_table = legacy(WEST).describe_table(TableName=name)["Table"]  # the tables themselves changed
    assert west_table["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert west_table["ProvisionedThroughput"]["WriteCapacityUnits"] == 12
    assert error(east.update_global_table_settings, GlobalTableName=name,
                 ReplicaSettingsUpdate=[{"RegionName": EUROPE, "ReplicaProvisionedReadCapacityUnits": 2}]) == (
        "ReplicaNotFoundException", "The specified replica is no longer part of the global table.")
    assert error(east.update_global_table_settings, GlobalTableName=name,
                 GlobalTableGlobalSecondaryIndexSettingsUpdate=[
                     {"IndexName": "nope", "ProvisionedWriteCapacityUnits": 2}]) == (
        "IndexNotFoundException", "The operation tried to access a nonexistent index.")
    code, _ = error(east.update_global_table_settings, GlobalTableName=name, GlobalTableBillingMode="PAY_PER_REQUEST",
                    GlobalTableProvisionedWriteCapacityUnits=3)
    assert code == "ValidationException"
    on_demand = east.update_global_table_settings(GlobalTableName=name, GlobalTableBillingMode="PAY_PER_REQUEST")
    assert {entry["ReplicaBillingModeSummary"]["BillingMode"] for entry in on_demand["ReplicaSettings"]} == {
        "PAY_PER_REQUEST"}
    assert legacy(WEST).describe_table(TableName=name)["Table"]["BillingModeSummary"]["BillingMode"] == \
        "PAY_PER_REQUEST"
    assert error(east.describe_global_table_settings, GlobalTableName="missing-" + name) == (
        "GlobalTableNotFoundException", f"Global table with name: 'missing-{name}' does not exist.")
