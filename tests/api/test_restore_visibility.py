"""A table being restored, as DynamoDB shows it (issue 19; API reference:
RestoreTableFromBackup, RestoreTableToPointInTime, RestoreSummary):

- while the restore runs, DescribeTable and ListTables find the target with
  TableStatus CREATING and a RestoreSummary (SourceBackupArn for a backup,
  SourceTableArn, RestoreDateTime, RestoreInProgress true);
- CreateTable with its name gets ResourceInUseException, another restore
  TableAlreadyExistsException ("Table already exists: T"), DeleteTable
  ResourceInUseException ("... Table is being created: T");
- reads and writes of the CREATING table get the data plane's
  ResourceNotFoundException ("Requested resource not found");
- once ACTIVE, the table keeps its RestoreSummary, RestoreInProgress false.

The servers here run their jobs slowly (5 items a step, 150 ms between
steps: DYNASTORE_BACKUP_PAGE_ROWS, DYNASTORE_BACKUP_STEP_DELAY_MS), so a
restore of 100 items lasts about 3 s: long enough to look at it.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.api.conftest import make_client, start_server, stop_server
from tests.api.helpers import error_of
from tests.api.test_backups import fill, scan_all, wait_active

SLOW_JOBS = {"DYNASTORE_BACKUP_PAGE_ROWS": "5", "DYNASTORE_BACKUP_STEP_DELAY_MS": "150"}
ITEMS = 100


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgres"])
def slow_client(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A client of a server whose backup jobs run slowly."""
    if request.param == "memory":
        arguments: tuple[str, ...] = ("--in-memory",)
    elif request.param == "sqlite":
        arguments = ("--data-dir", tempfile.mkdtemp(prefix="dynastore-restore-"))
    else:
        arguments = ("--postgres", request.getfixturevalue("postgres_server").new_database())
    process, url = start_server(*arguments, environment=SLOW_JOBS)
    try:
        yield make_client(url)
    finally:
        stop_server(process)


def _table(client: Any) -> str:
    name = f"vis-{uuid.uuid4().hex[:12]}"
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    return name


def _available_backup(client: Any, name: str) -> str:
    arn: str = client.create_backup(TableName=name, BackupName="vis")["BackupDetails"]["BackupArn"]
    deadline = time.monotonic() + 60
    while client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] != "AVAILABLE":
        assert time.monotonic() < deadline, "the backup never became AVAILABLE"
        time.sleep(0.2)
    return arn


def _assert_creating(client: Any, target: str, source_arn: str, backup_arn: str | None) -> None:
    table = client.describe_table(TableName=target)["Table"]
    assert table["TableStatus"] == "CREATING"
    assert table["TableName"] == target and table["ItemCount"] == 0
    summary = table["RestoreSummary"]
    assert summary["RestoreInProgress"] is True
    assert summary["SourceTableArn"] == source_arn
    assert isinstance(summary["RestoreDateTime"], datetime)
    if backup_arn is None:
        assert "SourceBackupArn" not in summary
    else:
        assert summary["SourceBackupArn"] == backup_arn
    assert target in client.list_tables(ExclusiveStartTableName=target[:-1], Limit=10)["TableNames"]


def _assert_refused_while_creating(client: Any, target: str, backup_arn: str) -> None:
    with pytest.raises(client.exceptions.ResourceInUseException) as excinfo:
        client.create_table(TableName=target, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
    assert error_of(excinfo) == ("ResourceInUseException", f"Table already exists: {target}")
    with pytest.raises(client.exceptions.TableAlreadyExistsException) as excinfo:
        client.restore_table_from_backup(BackupArn=backup_arn, TargetTableName=target)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {target}")
    with pytest.raises(client.exceptions.ResourceInUseException) as excinfo:  # dynalite's text, DynamoDB's type
        client.delete_table(TableName=target)
    assert error_of(excinfo) == ("ResourceInUseException",
                                 f"Attempt to change a resource which is still in use: Table is being created: {target}")
    key = {"pk": {"S": "p1"}, "sk": {"S": "s1"}}
    for call in (lambda: client.put_item(TableName=target, Item={**key, "v": {"S": "early"}}),
                 lambda: client.get_item(TableName=target, Key=key),
                 lambda: client.delete_item(TableName=target, Key=key)):
        with pytest.raises(client.exceptions.ResourceNotFoundException) as excinfo:
            call()
        assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found")


def test_a_table_being_restored_from_a_backup_is_creating_then_active(slow_client: Any) -> None:
    client = slow_client
    name = _table(client)
    fill(client, name, ITEMS)
    backup = _available_backup(client, name)
    source_arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    target = f"vis-{uuid.uuid4().hex[:12]}"
    answer = client.restore_table_from_backup(BackupArn=backup, TargetTableName=target)["TableDescription"]
    assert answer["TableStatus"] == "CREATING"
    _assert_creating(client, target, source_arn, backup)
    _assert_refused_while_creating(client, target, backup)
    table = wait_active(client, target)
    assert table["TableStatus"] == "ACTIVE" and table["ItemCount"] == ITEMS
    assert table["RestoreSummary"] == {**answer["RestoreSummary"], "RestoreInProgress": False}
    assert scan_all(client, target) == scan_all(client, name)
    assert "RestoreSummary" not in client.describe_table(TableName=name)["Table"]
    for table_name in (name, target):
        client.delete_table(TableName=table_name)
    client.delete_backup(BackupArn=backup)


def test_a_table_being_restored_to_a_point_in_time_is_creating_then_active(slow_client: Any) -> None:
    client = slow_client
    name = _table(client)
    fill(client, name, ITEMS)
    client.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    source_arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    target = f"vis-{uuid.uuid4().hex[:12]}"
    answer = client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                                   UseLatestRestorableTime=True)["TableDescription"]
    _assert_creating(client, target, source_arn, None)
    with pytest.raises(client.exceptions.TableAlreadyExistsException) as excinfo:
        client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                              UseLatestRestorableTime=True)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {target}")
    table = wait_active(client, target)
    assert table["RestoreSummary"] == {**answer["RestoreSummary"], "RestoreInProgress": False}
    assert scan_all(client, target) == scan_all(client, name)
    for table_name in (name, target):
        client.delete_table(TableName=table_name)
