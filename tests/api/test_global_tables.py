"""Global tables version 2019.11.21 (issue 20): UpdateTable's ReplicaUpdates
Create and Delete, a replica being the table of the same name in another
region of the same server, filled from the existing items, and what
DescribeTable says of it in each region.

DynamoDB's messages are the ones measured live (ack-api-quirks'
DDB-TABLE-203/223/265 findings; ScyllaDB's test_global_tables.py, run
against DynamoDB, for the stream rules)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import TEST_CLIENT_CONFIG, alternate_endpoints
from tests.api.helpers import error_of

EAST = "us-east-1"
WEST = "us-west-2"
EUROPE = "eu-west-1"


@pytest.fixture
def regional(endpoint: str, embedded_database: Any, second_endpoint: str | None) -> Callable[[str], Any]:
    """``regional(region)``: a client of the test server signed for ``region``."""
    made: dict[str, Any] = {}

    def make(region: str) -> Any:
        if region in made:
            return made[region]
        if embedded_database is not None:
            client = embedded_database.client(region_name=region, config=TEST_CLIENT_CONFIG)
        else:
            client = boto3.client(
                "dynamodb", endpoint_url=endpoint, region_name=region, aws_access_key_id="AKIDTEST",
                aws_secret_access_key="secret", config=TEST_CLIENT_CONFIG,
            )
            if second_endpoint is not None:
                alternate_endpoints(client, [endpoint, second_endpoint])
        made[region] = client
        return client

    return make


@pytest.fixture
def global_table(regional: Callable[[str], Any], unique_name: Callable[[str], str]) -> Iterator[Callable[..., str]]:
    """``global_table(**create_args)``: a PAY_PER_REQUEST table (hash key ``pk``)
    in us-east-1; every region's table of that name is deleted afterwards."""
    names: list[str] = []

    def make(**extra: Any) -> str:
        name = unique_name("global")
        regional(EAST).create_table(**{
            "TableName": name, "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST", **extra,
        })
        names.append(name)
        return name

    yield make
    for name in names:
        for region in (EUROPE, WEST, EAST):
            try:
                regional(region).delete_table(TableName=name)
            except ClientError:
                pass


def wait_active(client: Any, name: str, region: str | None = None) -> dict[str, Any]:
    """DescribeTable until the table (and the replica of ``region``) is ACTIVE."""
    for _ in range(200):
        table = client.describe_table(TableName=name)["Table"]
        replicas = {replica["RegionName"]: replica["ReplicaStatus"] for replica in table.get("Replicas", [])}
        if table["TableStatus"] == "ACTIVE" and (region is None or replicas.get(region) == "ACTIVE"):
            return dict(table)
        import time

        time.sleep(0.02)
    raise AssertionError(f"{name} did not become ACTIVE: {table}")


def add_replica(regional: Callable[[str], Any], name: str, region: str, home: str = EAST) -> dict[str, Any]:
    answer = regional(home).update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": region}}])
    wait_active(regional(home), name, region)
    wait_active(regional(region), name)
    return dict(answer["TableDescription"])


def refused(client: Any, name: str, updates: list[dict[str, Any]]) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.update_table(TableName=name, ReplicaUpdates=updates)
    return error_of(excinfo)


def test_a_replica_is_the_table_in_another_region_filled_from_its_items(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    east.put_item(TableName=name, Item={"pk": {"S": "before"}, "n": {"N": "1"}})
    with pytest.raises(ClientError) as excinfo:  # no such table in us-west-2 yet
        west.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    answer = add_replica(regional, name, WEST)
    assert answer["TableStatus"] == "UPDATING"
    assert [(entry["RegionName"], entry["ReplicaStatus"]) for entry in answer["Replicas"]] == [(WEST, "CREATING")]
    assert answer["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    home = east.describe_table(TableName=name)["Table"]
    replica = west.describe_table(TableName=name)["Table"]
    assert home["GlobalTableVersion"] == replica["GlobalTableVersion"] == "2019.11.21"
    # An entry without overrides: what DynamoDB shows (ack-api-quirks DDB-TABLE-201/229).
    warm = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert home["Replicas"] == [{"RegionName": WEST, "ReplicaStatus": "ACTIVE", "WarmThroughput": warm,
                                 "GlobalTableSettingsReplicationMode": "ENABLED_WITH_OVERRIDES"}]
    assert replica["Replicas"] == [{"RegionName": EAST, "ReplicaStatus": "ACTIVE", "WarmThroughput": warm,
                                    "GlobalTableSettingsReplicationMode": "ENABLED_WITH_OVERRIDES"}]
    assert home["GlobalTableSettingsReplicationMode"] == "ENABLED_WITH_OVERRIDES"
    assert "MultiRegionConsistency" not in home  # shown only as STRONG
    assert replica["TableArn"] == home["TableArn"].replace(EAST, WEST)
    assert replica["TableId"] != home["TableId"]
    assert replica["KeySchema"] == home["KeySchema"]
    assert replica["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert replica["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert replica["LatestStreamArn"] != home["LatestStreamArn"]
    assert west.get_item(TableName=name, Key={"pk": {"S": "before"}})["Item"] == {
        "pk": {"S": "before"}, "n": {"N": "1"}}
    assert replica["ItemCount"] == 1


def test_a_regional_table_has_no_replicas(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    table = regional(EAST).describe_table(TableName=global_table())["Table"]
    assert "Replicas" not in table and "GlobalTableVersion" not in table


def test_replica_updates_refusals_carry_dynamodbs_messages(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east = regional(EAST)
    assert refused(east, name, [{"Create": {"RegionName": EAST}}]) == ("ValidationException", (
        "Cannot add or delete the local region through ReplicaUpdates. "
        "Use CreateTable, DeleteTable, or UpdateTable as required."))
    assert refused(east, name, [{"Delete": {"RegionName": EAST}}])[1].startswith("Cannot add or delete the local")
    code, message = refused(east, name, [{"Create": {"RegionName": "us-fake-1"}}])
    assert code == "ValidationException"
    assert message.startswith("Region us-fake-1 is not supported. The latest version of global tables are only "
                              "supported in the following regions: [")
    assert refused(east, name, [{"Create": {"RegionName": "EU-WEST-1"}}])[1].startswith("Region EU-WEST-1 is not")
    assert refused(east, name, [{}]) == (
        "ValidationException", "There are no actions specified in the Replica Update Action of the request.")
    assert refused(east, name, [{"Update": {"RegionName": WEST}}]) == (
        "ValidationException", "There are no actions specified in the Replica Update Action of the request.")
    assert refused(east, name, [{"Create": {"RegionName": WEST}, "Delete": {"RegionName": EUROPE}}]) == (
        "ValidationException", "Update table operation with more than one type of replica actions not allowed.")
    assert refused(east, name, [{"Create": {"RegionName": WEST}}, {"Create": {"RegionName": EUROPE}}]) == (
        "ValidationException",
        "Update table operation with more than one create or delete replica actions not allowed")
    assert refused(east, name, [{"Delete": {"RegionName": EUROPE}}]) == ("ValidationException", (
        "Update global table operation failed because one or more replicas were not part of the global table. "
        f"Please retry the request without these replicas: [{EUROPE}]."))
    assert "Replicas" not in east.describe_table(TableName=name)["Table"]  # nothing was changed


def test_a_replica_cannot_be_created_twice_or_over_a_table(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east, europe = regional(EAST), regional(EUROPE)
    # Two identical Create actions are taken once.
    east.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}] * 2)
    wait_active(east, name, WEST)
    already = ("ValidationException", (
        f"Failed to create a the new replica of table with name: '{name}' because one or more replicas "
        "already existed as tables."))
    assert refused(east, name, [{"Create": {"RegionName": WEST}}]) == already
    europe.create_table(
        TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
    )
    assert refused(east, name, [{"Create": {"RegionName": EUROPE}}]) == already
    assert "Replicas" not in europe.describe_table(TableName=name)["Table"]


def test_a_global_tables_stream_stays_on(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    east = regional(EAST)
    add_replica(regional, name, WEST)
    # A stream the table had stays as it was (DynamoDB keeps even KEYS_ONLY), on the replica too.
    assert east.describe_table(TableName=name)["Table"]["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    assert regional(WEST).describe_table(TableName=name)["Table"]["StreamSpecification"] == {
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    with pytest.raises(ClientError) as excinfo:
        east.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert error_of(excinfo) == ("ValidationException", (
        "One or more parameter values were invalid: Disabling Stream is not allowed for a Global Table replica."))


def test_deleting_the_last_replica_makes_a_regional_table_again(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    answer = east.update_table(TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}])["TableDescription"]
    assert answer["TableStatus"] == "UPDATING"
    assert [(entry["RegionName"], entry["ReplicaStatus"]) for entry in answer["Replicas"]] == [(WEST, "DELETING")]
    with pytest.raises(ClientError) as excinfo:
        west.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    table = wait_active(east, name)
    assert "Replicas" not in table and "GlobalTableVersion" not in table
    assert "GlobalTableSettingsReplicationMode" not in table
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    east.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})  # allowed again


def test_three_regions_each_list_the_others_and_a_deleted_member_is_forgotten(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    add_replica(regional, name, WEST)
    add_replica(regional, name, EUROPE, home=WEST)  # a Create may be sent to any member
    listed = {
        region: [replica["RegionName"] for replica in regional(region).describe_table(TableName=name)["Table"]["Replicas"]]
        for region in (EAST, WEST, EUROPE)
    }
    assert listed == {EAST: [WEST, EUROPE], WEST: [EAST, EUROPE], EUROPE: [EAST, WEST]}
    regional(EUROPE).delete_table(TableName=name)  # DeleteTable of a replica leaves the others global
    for region, other in ((EAST, WEST), (WEST, EAST)):
        assert [replica["RegionName"] for replica in regional(region).describe_table(TableName=name)["Table"]["Replicas"]] == [other]


def test_replica_updates_change_nothing_else(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    with pytest.raises(ClientError) as excinfo:
        regional(EAST).update_table(TableName=name, DeletionProtectionEnabled=True,
                                    ReplicaUpdates=[{"Create": {"RegionName": WEST}}])
    assert error_of(excinfo) == (
        "ValidationException", "Requests that modify replicas or witnesses must not also modify other fields")


def test_a_replica_update_sets_that_replicas_own_settings(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table(BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    east, west = regional(EAST), regional(WEST)
    east.update_table(TableName=name, ReplicaUpdates=[{"Create": {
        "RegionName": WEST, "ProvisionedThroughputOverride": {"ReadCapacityUnits": 7}}}])
    wait_active(east, name, WEST)
    assert west.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    answer = east.update_table(TableName=name, ReplicaUpdates=[{"Update": {
        "RegionName": WEST, "ProvisionedThroughputOverride": {"ReadCapacityUnits": 9},
        "TableClassOverride": "STANDARD_INFREQUENT_ACCESS"}}])["TableDescription"]
    assert answer["TableStatus"] == "UPDATING"
    replica = west.describe_table(TableName=name)["Table"]
    assert replica["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert replica["ProvisionedThroughput"]["WriteCapacityUnits"] == 5  # writes are the group's
    assert replica["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    entry = east.describe_table(TableName=name)["Table"]["Replicas"][0]
    assert entry["ProvisionedThroughputOverride"] == {"ReadCapacityUnits": 9}
    assert entry["ReplicaTableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    assert east.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert refused(east, name, [{"Update": {"RegionName": EUROPE, "TableClassOverride": "STANDARD"}}]) == (
        "ValidationException", (
            "Update global table operation failed because one or more replicas were not part of the global "
            f"table. Please retry the request without these replicas: [{EUROPE}]."))


def test_a_provisioned_override_on_an_on_demand_table_is_refused_by_update(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    add_replica(regional, name, WEST)
    assert refused(regional(EAST), name, [{"Update": {
        "RegionName": WEST, "ProvisionedThroughputOverride": {"ReadCapacityUnits": 9}}}]) == (
        "ValidationException",
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")


def test_describe_table_replica_auto_scaling(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    east = regional(EAST)
    with pytest.raises(ClientError) as excinfo:
        east.describe_table_replica_auto_scaling(TableName=name)
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Global table with name: '{name}' does not exist.")
    add_replica(regional, name, WEST)
    add_replica(regional, name, EUROPE)
    described = east.describe_table_replica_auto_scaling(TableName=name)["TableAutoScalingDescription"]
    assert described["TableName"] == name and described["TableStatus"] == "ACTIVE"
    assert [(replica["RegionName"], replica["ReplicaStatus"]) for replica in described["Replicas"]] == [
        (EUROPE, "ACTIVE"), (EAST, "ACTIVE"), (WEST, "ACTIVE")]
    with pytest.raises(ClientError) as excinfo:  # auto scaling manages provisioned capacity only
        east.update_table_replica_auto_scaling(TableName=name, ProvisionedWriteCapacityAutoScalingUpdate={
            "MinimumUnits": 1, "MaximumUnits": 10})
    assert error_of(excinfo) == ("ValidationException", (
        "One or more parameter values were invalid: Auto scaling settings cannot be specified for a table whose "
        "BillingMode is PAY_PER_REQUEST"))


def test_update_table_replica_auto_scaling_stores_and_shows_the_settings(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    """dynastore scales nothing, but keeps the settings and shows them: write
    settings for every replica, read settings per replica, per GSI too."""
    east, west = regional(EAST), regional(WEST)
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    name = global_table(
        BillingMode="PROVISIONED", ProvisionedThroughput=throughput,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": throughput}])

    def refused(**arguments: Any) -> tuple[str, str]:
        with pytest.raises(ClientError) as excinfo:
            east.update_table_replica_auto_scaling(TableName=name, **arguments)
        return error_of(excinfo)

    write = {"MinimumUnits": 5, "MaximumUnits": 100,
             "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70.0}}}
    assert refused(ProvisionedWriteCapacityAutoScalingUpdate=write) == (
        "ResourceNotFoundException", f"Global table with name: '{name}' does not exist.")
    add_replica(regional, name, WEST)
    answer = east.update_table_replica_auto_scaling(
        TableName=name, ProvisionedWriteCapacityAutoScalingUpdate=write,
        ReplicaUpdates=[{"RegionName": WEST, "ReplicaProvisionedReadCapacityAutoScalingUpdate": {
            "MinimumUnits": 2, "MaximumUnits": 20, "ScalingPolicyUpdate": {
                "PolicyName": "reads", "TargetTrackingScalingPolicyConfiguration": {
                    "TargetValue": 50.0, "ScaleInCooldown": 60, "DisableScaleIn": True}}},
            "ReplicaGlobalSecondaryIndexUpdates": [{"IndexName": "by-g", "ProvisionedReadCapacityAutoScalingUpdate": {
                "MinimumUnits": 3, "MaximumUnits": 30}}]}])["TableAutoScalingDescription"]
    assert answer["TableName"] == name and [replica["RegionName"] for replica in answer["Replicas"]] == [EAST, WEST]
    for client in (east, west):  # every region shows every replica's settings
        replicas = {replica["RegionName"]: replica for replica in client.describe_table_replica_auto_scaling(
            TableName=name)["TableAutoScalingDescription"]["Replicas"]}
        for region in (EAST, WEST):
            settings = replicas[region]["ReplicaProvisionedWriteCapacityAutoScalingSettings"]
            assert settings["MinimumUnits"] == 5 and settings["MaximumUnits"] == 100
            assert settings["AutoScalingDisabled"] is False
            assert settings["ScalingPolicies"] == [{
                "PolicyName": f"DynamoDBWriteCapacityUtilization:table/{name}",
                "TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70.0}}]
        assert "ReplicaProvisionedReadCapacityAutoScalingSettings" not in replicas[EAST]
        read = replicas[WEST]["ReplicaProvisionedReadCapacityAutoScalingSettings"]
        assert (read["MinimumUnits"], read["MaximumUnits"]) == (2, 20)
        assert read["ScalingPolicies"] == [{"PolicyName": "reads", "TargetTrackingScalingPolicyConfiguration": {
            "TargetValue": 50.0, "ScaleInCooldown": 60, "DisableScaleIn": True}}]
        index = replicas[WEST]["GlobalSecondaryIndexes"][0]
        assert index["IndexName"] == "by-g"
        assert index["ProvisionedReadCapacityAutoScalingSettings"]["MaximumUnits"] == 30
    # An update merges into what is stored.
    east.update_table_replica_auto_scaling(TableName=name, ProvisionedWriteCapacityAutoScalingUpdate={
        "MaximumUnits": 200, "AutoScalingDisabled": True})
    settings = west.describe_table_replica_auto_scaling(TableName=name)["TableAutoScalingDescription"][
        "Replicas"][1]["ReplicaProvisionedWriteCapacityAutoScalingSettings"]
    assert (settings["MinimumUnits"], settings["MaximumUnits"], settings["AutoScalingDisabled"]) == (5, 200, True)
    # The refusals.
    code, message = refused(ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 50, "MaximumUnits": 10})
    assert code == "ValidationException" and "MinimumUnits" in message
    assert refused(ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 0})[0] == "ValidationException"
    assert refused(ReplicaUpdates=[{"RegionName": EUROPE, "ReplicaProvisionedReadCapacityAutoScalingUpdate": {
        "MinimumUnits": 1}}]) == ("ValidationException", (
            "Update global table operation failed because one or more replicas were not part of the global table. "
            f"Please retry the request without these replicas: [{EUROPE}]."))
    assert refused(GlobalSecondaryIndexUpdates=[{"IndexName": "nope", "ProvisionedWriteCapacityAutoScalingUpdate": {
        "MinimumUnits": 1}}])[0] == "ResourceNotFoundException"


def test_the_legacy_api_answers_as_dynamodb_does_today(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    """DynamoDB no longer creates 2017.11.29 global tables (measured live:
    ack-api-quirks DDB-GLOBALTABLE-001/002/004), and its legacy calls do not
    see 2019.11.21 ones."""
    name = global_table()
    east = regional(EAST)
    add_replica(regional, name, WEST)
    refusal = ("ValidationException", (
        "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. "
        "We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy)."))

    def error(call: Any, **arguments: Any) -> tuple[str, str]:
        with pytest.raises(ClientError) as excinfo:
            call(**arguments)
        return error_of(excinfo)

    assert error(east.create_global_table, GlobalTableName=name,
                 ReplicationGroup=[{"RegionName": EAST}, {"RegionName": WEST}]) == refusal
    assert error(east.update_global_table, GlobalTableName=name,
                 ReplicaUpdates=[{"Create": {"RegionName": EUROPE}}]) == refusal
    missing = ("GlobalTableNotFoundException", f"Global table with name: '{name}' does not exist.")
    assert error(east.update_global_table, GlobalTableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]) == missing
    assert error(east.describe_global_table, GlobalTableName=name) == (
        "GlobalTableNotFoundException", f"Global table not found: Global table with name: '{name}' does not exist.")
    assert error(east.describe_global_table_settings, GlobalTableName=name) == missing
    assert error(east.update_global_table_settings, GlobalTableName=name,
                 GlobalTableBillingMode="PAY_PER_REQUEST") == missing
    assert east.list_global_tables()["GlobalTables"] == []
    assert east.list_global_tables(RegionName=WEST)["GlobalTables"] == []


def test_capacity_and_ttl_settings_apply_to_every_replica(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table(BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    east, west = regional(EAST), regional(WEST)
    add_replica(regional, name, WEST)
    # A manual throughput change in any region applies group-wide (ack-api-quirks DDB-TABLE-251).
    west.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 8, "WriteCapacityUnits": 9})
    throughput = east.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert (throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"]) == (8, 9)
    east.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert west.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    # Deletion protection is each region's own.
    east.update_table(TableName=name, DeletionProtectionEnabled=True)
    assert west.describe_table(TableName=name)["Table"]["DeletionProtectionEnabled"] is False
    east.update_table(TableName=name, DeletionProtectionEnabled=False)


def test_an_index_created_in_one_region_is_every_replicas(
    regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    east, west = regional(EAST), regional(WEST)
    east.put_item(TableName=name, Item={"pk": {"S": "a"}, "colour": {"S": "red"}})
    add_replica(regional, name, WEST)  # the item is in both regions
    east.update_table(TableName=name, AttributeDefinitions=[{"AttributeName": "colour", "AttributeType": "S"}],
                      GlobalSecondaryIndexUpdates=[{"Create": {
                          "IndexName": "by-colour", "Projection": {"ProjectionType": "ALL"},
                          "KeySchema": [{"AttributeName": "colour", "KeyType": "HASH"}]}}])
    for _ in range(500):  # both backfills done
        statuses = [(client.describe_table(TableName=name)["Table"].get("GlobalSecondaryIndexes") or [{}])[0]
                    .get("IndexStatus") for client in (east, west)]
        if statuses == ["ACTIVE", "ACTIVE"]:
            break
        import time

        time.sleep(0.02)
    assert statuses == ["ACTIVE", "ACTIVE"]
    found = west.query(TableName=name, IndexName="by-colour", KeyConditionExpression="colour = :c",
                       ExpressionAttributeValues={":c": {"S": "red"}})["Items"]
    assert [entry["pk"] for entry in found] == [{"S": "a"}]  # the replica's own index, backfilled there
