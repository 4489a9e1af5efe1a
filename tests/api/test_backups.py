"""On-demand backups over boto3 (issue 19, section 1): CreateBackup,
DescribeBackup, ListBackups, DeleteBackup, RestoreTableFromBackup, with
DynamoDB's shapes, statuses, ARNs, sizes, errors and messages, on every
store the fixtures provide."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.api.helpers import error_of

BACKUP_ARN = re.compile(r"arn:aws:dynamodb:us-east-1:\d{12}:table/(?P<table>[^/]+)/backup/\d{14}-[0-9a-f]{8}")
WAIT_SECONDS = 30.0


def wait_available(client: Any, arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        description: dict[str, Any] = client.describe_backup(BackupArn=arn)["BackupDescription"]
        if description["BackupDetails"]["BackupStatus"] == "AVAILABLE":
            return description
        assert time.monotonic() < deadline, description
        time.sleep(0.05)


def wait_active(client: Any, name: str) -> dict[str, Any]:
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    table: dict[str, Any] = client.describe_table(TableName=name)["Table"]
    return table


def scan_all(client: Any, name: str, **extra: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"TableName": name, "ConsistentRead": True, **extra}
    while True:
        page = client.scan(**arguments)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def fill(client: Any, name: str, count: int, prefix: str = "p") -> None:
    for start in range(0, count, 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": f"{prefix}{n % 7}"}, "sk": {"S": f"{n:05d}"},
                                     "g": {"S": f"g{n % 3}"}, "n": {"N": str(n)}}}}
            for n in range(start, min(start + 25, count))
        ]})


@pytest.fixture
def restored(client: Any) -> Any:
    """Names of restored tables to delete after the test."""
    names: list[str] = []
    yield names
    for name in names:
        try:
            wait_active(client, name)
            client.delete_table(TableName=name)
        except Exception:
            pass


def test_backup_shape_and_lifecycle(client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    fill(client, name, 60)
    before = client.describe_table(TableName=name)["Table"]
    created = client.create_backup(TableName=name, BackupName="nightly.1")["BackupDetails"]
    assert BACKUP_ARN.fullmatch(created["BackupArn"]).group("table") == name  # type: ignore[union-attr]
    assert created["BackupName"] == "nightly.1"
    assert created["BackupStatus"] in ("CREATING", "AVAILABLE")
    assert created["BackupType"] == "USER"
    assert isinstance(created["BackupCreationDateTime"], datetime)
    assert "BackupExpiryDateTime" not in created
    description = wait_available(client, created["BackupArn"])
    details = description["BackupDetails"]
    assert details["BackupSizeBytes"] == before["TableSizeBytes"]
    assert details["BackupCreationDateTime"] == created["BackupCreationDateTime"]
    source = description["SourceTableDetails"]
    assert source["TableName"] == name
    assert source["TableId"] == before["TableId"]
    assert source["TableArn"] == before["TableArn"]
    assert source["ItemCount"] == 60
    assert source["TableSizeBytes"] == before["TableSizeBytes"]
    assert source["KeySchema"] == before["KeySchema"]
    assert source["BillingMode"] == "PAY_PER_REQUEST"
    assert source["ProvisionedThroughput"] == {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    assert source["TableCreationDateTime"] == before["CreationDateTime"]
    assert "SourceTableFeatureDetails" not in description

    deleted = client.delete_backup(BackupArn=created["BackupArn"])["BackupDescription"]
    assert deleted["BackupDetails"]["BackupStatus"] == "DELETED"
    assert deleted["SourceTableDetails"]["TableName"] == name
    with pytest.raises(client.exceptions.BackupNotFoundException) as excinfo:
        client.describe_backup(BackupArn=created["BackupArn"])
    assert error_of(excinfo) == ("BackupNotFoundException", f"Backup not found: {created['BackupArn']}")
    with pytest.raises(client.exceptions.BackupNotFoundException):
        client.delete_backup(BackupArn=created["BackupArn"])


def test_backup_is_one_point_in_time(client: Any, make_table: Callable[..., str], restored: list[str],
                                     unique_name: Callable[[str], str]) -> None:
    """Writes right after CreateBackup answered (while the copy may still be
    running) are not in the backup; the table was never blocked."""
    name = make_table()
    fill(client, name, 1500)
    expected = scan_all(client, name)
    arn = client.create_backup(TableName=name, BackupName="point")["BackupDetails"]["BackupArn"]
    for n in range(0, 1500, 50):
        client.delete_item(TableName=name, Key={"pk": {"S": f"p{n % 7}"}, "sk": {"S": f"{n:05d}"}})
        client.put_item(TableName=name, Item={"pk": {"S": "new"}, "sk": {"S": f"{n:05d}"}})
    client.update_item(TableName=name, Key={"pk": {"S": "p1"}, "sk": {"S": "00001"}},
                       UpdateExpression="SET n = :n", ExpressionAttributeValues={":n": {"N": "-1"}})
    assert wait_available(client, arn)["SourceTableDetails"]["ItemCount"] == 1500
    target = unique_name("restored")
    restored.append(target)
    client.restore_table_from_backup(TargetTableName=target, BackupArn=arn)
    assert wait_active(client, target)["ItemCount"] == 1500
    assert scan_all(client, target) == expected


def test_restore_keeps_indexes_not_ttl_stream_or_tags(
    client: Any, make_table: Callable[..., str], restored: list[str], unique_name: Callable[[str], str]
) -> None:
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"},
                              {"AttributeName": "n", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[{"IndexName": "by-n", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        Tags=[{"Key": "team", "Value": "data"}],
    )
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    fill(client, name, 90)
    arn = client.create_backup(TableName=name, BackupName="full")["BackupDetails"]["BackupArn"]
    features = wait_available(client, arn)["SourceTableFeatureDetails"]
    assert features["GlobalSecondaryIndexes"] == [{
        "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}}]
    assert features["LocalSecondaryIndexes"] == [{
        "IndexName": "by-n", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                           {"AttributeName": "n", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}]
    assert features["StreamDescription"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    assert features["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}

    target = unique_name("restored")
    restored.append(target)
    answer = client.restore_table_from_backup(TargetTableName=target, BackupArn=arn)["TableDescription"]
    assert answer["TableName"] == target
    assert answer["TableStatus"] == "CREATING"
    summary = answer["RestoreSummary"]
    assert summary["SourceBackupArn"] == arn
    assert summary["SourceTableArn"].endswith(f":table/{name}")
    assert summary["RestoreInProgress"] is True
    assert isinstance(summary["RestoreDateTime"], datetime)
    table = wait_active(client, target)
    assert table["ItemCount"] == 90
    assert [index["IndexName"] for index in table["GlobalSecondaryIndexes"]] == ["by-g"]
    assert [index["IndexName"] for index in table["LocalSecondaryIndexes"]] == ["by-n"]
    assert table["GlobalSecondaryIndexes"][0]["ItemCount"] == 90
    assert table["LocalSecondaryIndexes"][0]["ItemCount"] == 90
    assert "StreamSpecification" not in table
    assert client.describe_time_to_live(TableName=target)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "DISABLED"}
    assert client.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == []
    assert table["TableId"] != client.describe_table(TableName=name)["Table"]["TableId"]
    counted = client.query(TableName=target, IndexName="by-g", KeyConditionExpression="g = :g",
                           ExpressionAttributeValues={":g": {"S": "g1"}}, Select="COUNT")["Count"]
    assert counted == 30
    in_order = client.query(TableName=target, IndexName="by-n", KeyConditionExpression="pk = :p",
                            ExpressionAttributeValues={":p": {"S": "p3"}})["Items"]
    assert [int(item["n"]["N"]) for item in in_order] == sorted(n for n in range(90) if n % 7 == 3)
    assert scan_all(client, target) == scan_all(client, name)


def test_restore_overrides(client: Any, make_table: Callable[..., str], restored: list[str],
                           unique_name: Callable[[str], str]) -> None:
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by-sk", "KeySchema": [{"AttributeName": "sk", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
        ],
    )
    fill(client, name, 40)
    arn = client.create_backup(TableName=name, BackupName="over")["BackupDetails"]["BackupArn"]
    wait_available(client, arn)
    target = unique_name("restored")
    restored.append(target)
    client.restore_table_from_backup(
        TargetTableName=target, BackupArn=arn, BillingModeOverride="PROVISIONED",
        ProvisionedThroughputOverride={"ReadCapacityUnits": 7, "WriteCapacityUnits": 3},
        GlobalSecondaryIndexOverride=[{
            "IndexName": "by-sk", "KeySchema": [{"AttributeName": "sk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}],
        SSESpecificationOverride={"Enabled": False},
    )
    table = wait_active(client, target)
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 3
    assert table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED") == "PROVISIONED"
    (index,) = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-sk"
    assert index["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert index["ItemCount"] == 40
    assert sorted(d["AttributeName"] for d in table["AttributeDefinitions"]) == ["pk", "sk"]
    # Switching to provisioned needs throughput, as CreateTable does.
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.restore_table_from_backup(TargetTableName=unique_name("x"), BackupArn=arn,
                                         BillingModeOverride="PROVISIONED")
    assert error_of(excinfo)[0] == "ValidationException"
    # An index the source does not have cannot be asked for.
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.restore_table_from_backup(TargetTableName=unique_name("x"), BackupArn=arn,
                                         GlobalSecondaryIndexOverride=[{
                                             "IndexName": "other", "KeySchema": [
                                                 {"AttributeName": "g", "KeyType": "HASH"}],
                                             "Projection": {"ProjectionType": "ALL"}}])
    assert error_of(excinfo)[0] == "ValidationException"


def test_errors(client: Any, make_table: Callable[..., str], unique_name: Callable[[str], str]) -> None:
    missing = unique_name("missing")
    with pytest.raises(client.exceptions.TableNotFoundException) as excinfo:
        client.create_backup(TableName=missing, BackupName="b1x")
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {missing}")
    name = make_table()
    other = make_table()
    arn = client.create_backup(TableName=name, BackupName="err")["BackupDetails"]["BackupArn"]
    wait_available(client, arn)
    with pytest.raises(client.exceptions.TableAlreadyExistsException) as excinfo:
        client.restore_table_from_backup(TargetTableName=other, BackupArn=arn)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {other}")
    unknown = arn[:-8] + "00000000"
    for call in (lambda: client.describe_backup(BackupArn=unknown),
                 lambda: client.delete_backup(BackupArn=unknown),
                 lambda: client.restore_table_from_backup(TargetTableName=unique_name("r"), BackupArn=unknown)):
        with pytest.raises(client.exceptions.BackupNotFoundException) as excinfo:
            call()
        assert error_of(excinfo) == ("BackupNotFoundException", f"Backup not found: {unknown}")
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.create_backup(TableName=name, BackupName="no spaces allowed")
    assert error_of(excinfo)[0] == "ValidationException"
    client.delete_backup(BackupArn=arn)


def advance_clock(endpoint: str, seconds: float) -> float:
    """Move the database clock (POST /_dynastore/clock); returns its new time."""
    request = urllib.request.Request(f"{endpoint}/_dynastore/clock", method="POST",
                                     data=json.dumps({"advance_seconds": seconds}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return float(json.loads(reply.read())["Now"])


@pytest.mark.one_server
def test_list_backups_filters_and_pages(client: Any, endpoint: str, make_table: Callable[..., str]) -> None:
    first, second = make_table(), make_table()
    arns = []
    for table, backup_name in ((first, "a-1"), (second, "b-1"), (first, "a-2"), (first, "a-3")):
        arns.append(client.create_backup(TableName=table, BackupName=backup_name)["BackupDetails"]["BackupArn"])
        advance_clock(endpoint, 2)  # botocore sends time bounds in whole seconds
    for arn in arns:
        wait_available(client, arn)
    mine = [s for s in client.list_backups()["BackupSummaries"] if s["BackupArn"] in arns]
    assert [s["BackupArn"] for s in mine] == arns  # oldest first
    summary = mine[0]
    assert set(summary) == {"TableName", "TableId", "TableArn", "BackupArn", "BackupName",
                            "BackupCreationDateTime", "BackupStatus", "BackupType", "BackupSizeBytes"}
    assert summary["BackupStatus"] == "AVAILABLE" and summary["BackupType"] == "USER"
    of_first = client.list_backups(TableName=first)["BackupSummaries"]
    assert [s["BackupName"] for s in of_first] == ["a-1", "a-2", "a-3"]
    arn_of_first = client.describe_table(TableName=first)["Table"]["TableArn"]
    assert client.list_backups(TableName=arn_of_first)["BackupSummaries"] == of_first
    assert client.list_backups(TableName=first, BackupType="SYSTEM")["BackupSummaries"] == []
    assert len(client.list_backups(TableName=first, BackupType="ALL")["BackupSummaries"]) == 3
    page = client.list_backups(TableName=first, Limit=2)
    assert [s["BackupName"] for s in page["BackupSummaries"]] == ["a-1", "a-2"]
    rest = client.list_backups(TableName=first, Limit=2, ExclusiveStartBackupArn=page["LastEvaluatedBackupArn"])
    assert [s["BackupName"] for s in rest["BackupSummaries"]] == ["a-3"]
    assert "LastEvaluatedBackupArn" not in rest
    created = [s["BackupCreationDateTime"] for s in of_first]
    ranged = client.list_backups(TableName=first, TimeRangeLowerBound=created[1],
                                 TimeRangeUpperBound=created[2])["BackupSummaries"]
    assert [s["BackupName"] for s in ranged] == ["a-2"]  # lower bound inclusive, upper exclusive
    later = client.list_backups(TableName=first, TimeRangeLowerBound=created[2] + timedelta(seconds=1))
    assert later["BackupSummaries"] == []
    paginated = [s["BackupName"] for page in client.get_paginator("list_backups").paginate(
        TableName=first, PaginationConfig={"PageSize": 1}) for s in page["BackupSummaries"]]
    assert paginated == ["a-1", "a-2", "a-3"]
    for arn in arns:
        client.delete_backup(BackupArn=arn)


def test_backup_outlives_its_table(client: Any, make_table: Callable[..., str], restored: list[str],
                                   unique_name: Callable[[str], str]) -> None:
    name = make_table()
    fill(client, name, 30)
    expected = scan_all(client, name)
    arn = client.create_backup(TableName=name, BackupName="keep")["BackupDetails"]["BackupArn"]
    wait_available(client, arn)
    client.delete_table(TableName=name)
    assert arn in [s["BackupArn"] for s in client.list_backups()["BackupSummaries"]]
    restored.append(name)
    client.restore_table_from_backup(TargetTableName=name, BackupArn=arn)  # under the old name
    wait_active(client, name)
    assert scan_all(client, name) == expected
    client.delete_backup(BackupArn=arn)


def test_aws_cli(endpoint: str, make_table: Callable[..., str], client: Any,
                 unique_name: Callable[[str], str], restored: list[str]) -> None:
    name = make_table()
    fill(client, name, 10)

    def aws(*arguments: str) -> Any:
        completed = subprocess.run(
            [sys.executable, "-m", "awscli", "dynamodb", *arguments, "--endpoint-url", endpoint,
             "--region", "us-east-1", "--output", "json"],
            capture_output=True, text=True, timeout=60,
            env={"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "PATH": "/usr/bin:/bin"},
        )
        assert completed.returncode == 0, completed.stderr
        return json.loads(completed.stdout) if completed.stdout.strip() else None

    status = aws("describe-continuous-backups", "--table-name", name)
    assert status["ContinuousBackupsDescription"]["ContinuousBackupsStatus"] == "ENABLED"
    arn = aws("create-backup", "--table-name", name, "--backup-name", "cli")["BackupDetails"]["BackupArn"]
    wait_available(client, arn)
    listed = aws("list-backups", "--table-name", name)["BackupSummaries"]
    assert [s["BackupArn"] for s in listed] == [arn]
    target = unique_name("cli")
    restored.append(target)
    aws("restore-table-from-backup", "--target-table-name", target, "--backup-arn", arn)
    wait_active(client, target)
    assert scan_all(client, target) == scan_all(client, name)
    assert aws("delete-backup", "--backup-arn", arn)["BackupDescription"]["BackupDetails"][
        "BackupStatus"] == "DELETED"


# --- DeleteTable of a table with PITR on: a SYSTEM backup ---------------------------------------


SYSTEM_RETENTION = timedelta(days=35)


def _system_backups(client: Any, name: str, backup_type: str = "SYSTEM") -> list[dict[str, Any]]:
    summaries: list[dict[str, Any]] = client.list_backups(TableName=name, BackupType=backup_type)["BackupSummaries"]
    return [summary for summary in summaries if summary["BackupType"] == "SYSTEM"]


def test_deleting_a_table_with_pitr_on_keeps_a_system_backup(client: Any, make_table: Callable[..., str],
                                                             restored: list[str]) -> None:
    """DynamoDB (API reference, BackupDetails): "If you delete a table with
    point-in-time recovery enabled, a SYSTEM backup is automatically created
    and is retained for 35 days"; named ``<table>$DeletedTableBackup``,
    listed by ListBackups with BackupType SYSTEM or ALL (not by the default
    USER), restorable like any backup, and DeleteBackup deletes it."""
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    fill(client, name, 40)
    client.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    client.delete_item(TableName=name, Key={"pk": {"S": "p0"}, "sk": {"S": "00000"}})
    expected = scan_all(client, name)
    table_arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    deleted = client.delete_table(TableName=name)["TableDescription"]
    assert deleted["TableStatus"] == "DELETING"
    assert _system_backups(client, name, "USER") == []  # the default lists USER backups only
    (summary,) = _system_backups(client, name)
    assert _system_backups(client, name, "ALL") == [summary]
    assert client.list_backups(TableName=name, BackupType="AWS_BACKUP")["BackupSummaries"] == []
    assert summary["BackupName"] == f"{name}$DeletedTableBackup"
    assert (summary["BackupStatus"], summary["BackupType"], summary["TableArn"]) == ("AVAILABLE", "SYSTEM", table_arn)
    assert summary["BackupExpiryDateTime"] - summary["BackupCreationDateTime"] == SYSTEM_RETENTION
    assert BACKUP_ARN.fullmatch(summary["BackupArn"])["table"] == name  # type: ignore[index]
    assert summary["BackupSizeBytes"] > 0
    described = client.describe_backup(BackupArn=summary["BackupArn"])["BackupDescription"]
    details = described["BackupDetails"]
    assert (details["BackupType"], details["BackupStatus"], details["BackupName"]) == (
        "SYSTEM", "AVAILABLE", f"{name}$DeletedTableBackup")
    assert details["BackupExpiryDateTime"] == summary["BackupExpiryDateTime"]
    assert described["SourceTableDetails"]["ItemCount"] == 39
    assert [index["IndexName"] for index in described["SourceTableFeatureDetails"]["GlobalSecondaryIndexes"]] == [
        "by-g"]
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.describe_table(TableName=name)
    restored.append(name)  # the deleted table's name is free: restore into it
    client.restore_table_from_backup(BackupArn=summary["BackupArn"], TargetTableName=name)
    table = wait_active(client, name)
    assert table["ItemCount"] == 39 and table["GlobalSecondaryIndexes"][0]["IndexName"] == "by-g"
    assert scan_all(client, name) == expected
    assert client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"  # not carried over
    gone = client.delete_backup(BackupArn=summary["BackupArn"])["BackupDescription"]["BackupDetails"]
    assert (gone["BackupStatus"], gone["BackupType"]) == ("DELETED", "SYSTEM")
    with pytest.raises(client.exceptions.BackupNotFoundException):
        client.describe_backup(BackupArn=summary["BackupArn"])


def test_deleting_a_table_without_pitr_keeps_no_backup(client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    fill(client, name, 5)
    client.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    client.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": False})
    client.delete_table(TableName=name)
    assert client.list_backups(TableName=name, BackupType="ALL")["BackupSummaries"] == []


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_system_backup_expires_after_35_days(store: str, tmp_path: Any) -> None:
    """On the database clock (here a manual one): after 35 days the SYSTEM
    backup is gone (its storage too); a day before, it is still there."""
    import dynastore

    now = [1_800_000_000.0]
    database = dynastore.open(None if store == "memory" else tmp_path / "data", clock=lambda: now[0])
    try:
        client = database.client()
        client.create_table(TableName="expiring", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
        client.put_item(TableName="expiring", Item={"pk": {"S": "one"}})
        client.update_continuous_backups(TableName="expiring", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        client.delete_table(TableName="expiring")
        (summary,) = _system_backups(client, "expiring")
        assert summary["BackupCreationDateTime"].timestamp() == now[0]
        storage_tables = len(database.database.storage.load_tables())
        now[0] += SYSTEM_RETENTION.total_seconds() - 86_400
        assert client.describe_backup(BackupArn=summary["BackupArn"])["BackupDescription"]["BackupDetails"][
            "BackupStatus"] == "AVAILABLE"
        now[0] += 86_400
        assert _system_backups(client, "expiring", "ALL") == []
        with pytest.raises(client.exceptions.BackupNotFoundException):
            client.describe_backup(BackupArn=summary["BackupArn"])
        assert len(database.database.storage.load_tables()) == storage_tables - 1
    finally:
        database.close()


def test_a_system_backup_over_the_aws_cli(endpoint: str, client: Any, make_table: Callable[..., str]) -> None:
    name = make_table()
    fill(client, name, 3)

    def aws(*arguments: str) -> Any:
        completed = subprocess.run(
            [sys.executable, "-m", "awscli", "dynamodb", *arguments, "--endpoint-url", endpoint,
             "--region", "us-east-1", "--output", "json"],
            capture_output=True, text=True, timeout=60,
            env={"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "PATH": "/usr/bin:/bin"},
        )
        assert completed.returncode == 0, completed.stderr
        return json.loads(completed.stdout) if completed.stdout.strip() else None

    aws("update-continuous-backups", "--table-name", name,
        "--point-in-time-recovery-specification", "PointInTimeRecoveryEnabled=true")
    aws("delete-table", "--table-name", name)
    assert aws("list-backups", "--table-name", name)["BackupSummaries"] == []
    (listed,) = aws("list-backups", "--table-name", name, "--backup-type", "SYSTEM")["BackupSummaries"]
    assert (listed["BackupName"], listed["BackupType"]) == (f"{name}$DeletedTableBackup", "SYSTEM")
    assert "BackupExpiryDateTime" in listed
    assert aws("delete-backup", "--backup-arn", listed["BackupArn"])["BackupDescription"]["BackupDetails"][
        "BackupStatus"] == "DELETED"
