"""Point-in-time recovery over boto3 (issue 19, section 2):
Update/DescribeContinuousBackups and RestoreTableToPointInTime on every
store, the window on the database clock (POST /_dynastore/clock), deletes and
TTL expiries rolled back. LatestRestorableDateTime is 5 minutes behind the
clock, as DynamoDB's (limits.PITR_LATEST_RESTORABLE_LAG_SECONDS): the tests
move the clock on past it before they restore recent writes."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dynastore import limits
from tests.api.helpers import error_of
from tests.api.test_backups import scan_all, wait_active

LAG = limits.PITR_LATEST_RESTORABLE_LAG_SECONDS


def clock(endpoint: str, advance: float | None = None, sweep: bool = False) -> float:
    """The database clock's time (after moving it ``advance`` seconds)."""
    if advance is None:
        with urllib.request.urlopen(f"{endpoint}/_dynastore/clock", timeout=10) as reply:
            return float(json.loads(reply.read())["Now"])
    body: dict[str, Any] = {"advance_seconds": advance}
    if sweep:
        body["sweep"] = True
    request = urllib.request.Request(f"{endpoint}/_dynastore/clock", method="POST", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return float(json.loads(reply.read())["Now"])


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


@pytest.fixture
def restored(client: Any) -> Any:
    names: list[str] = []
    yield names
    for name in names:
        try:
            wait_active(client, name)
            client.delete_table(TableName=name)
        except Exception:
            pass


def enable(client: Any, name: str, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = client.update_continuous_backups(
        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True, **extra})
    return answer["ContinuousBackupsDescription"]


def test_describe_on_every_table(client: Any, make_table: Callable[..., str],
                                 unique_name: Callable[[str], str]) -> None:
    """What Terraform reads on every plan: continuous backups on, PITR off."""
    name = make_table()
    answer = client.describe_continuous_backups(TableName=name)
    assert set(answer) == {"ContinuousBackupsDescription", "ResponseMetadata"}
    assert answer["ContinuousBackupsDescription"] == {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
    }
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    assert client.describe_continuous_backups(TableName=arn)["ContinuousBackupsDescription"] == answer[
        "ContinuousBackupsDescription"]
    missing = unique_name("missing")
    for call in (lambda: client.describe_continuous_backups(TableName=missing),
                 lambda: client.update_continuous_backups(TableName=missing, PointInTimeRecoverySpecification={
                     "PointInTimeRecoveryEnabled": True})):
        with pytest.raises(client.exceptions.TableNotFoundException) as excinfo:
            call()
        assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {missing}")


@pytest.mark.one_server
def test_enable_disable_and_period(client: Any, endpoint: str, make_table: Callable[..., str]) -> None:
    name = make_table()
    before = clock(endpoint)
    described = enable(client, name)
    assert described["ContinuousBackupsStatus"] == "ENABLED"
    recovery = described["PointInTimeRecoveryDescription"]
    assert recovery["PointInTimeRecoveryStatus"] == "ENABLED"
    assert recovery["RecoveryPeriodInDays"] == 35
    assert recovery["EarliestRestorableDateTime"] >= at(before) - timedelta(seconds=1)
    assert recovery["LatestRestorableDateTime"] >= recovery["EarliestRestorableDateTime"]
    assert client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    earliest = recovery["EarliestRestorableDateTime"]
    later = enable(client, name, RecoveryPeriodInDays=7)["PointInTimeRecoveryDescription"]
    assert later["RecoveryPeriodInDays"] == 7
    assert later["EarliestRestorableDateTime"] == earliest  # the window goes on
    assert later["LatestRestorableDateTime"] == earliest  # 5 minutes behind now, never before the earliest
    now = clock(endpoint, LAG + 120)
    latest = client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["LatestRestorableDateTime"]
    assert at(now - LAG) - timedelta(seconds=1) <= latest <= at(clock(endpoint) - LAG) + timedelta(seconds=1)
    assert latest >= earliest + timedelta(seconds=119)
    for period in (0, 36):
        with pytest.raises(client.exceptions.ClientError) as excinfo:
            enable(client, name, RecoveryPeriodInDays=period)
        assert error_of(excinfo)[0] == "ValidationException"
    off = client.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": False})["ContinuousBackupsDescription"]
    assert off == {"ContinuousBackupsStatus": "ENABLED",
                   "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}
    again = enable(client, name)["PointInTimeRecoveryDescription"]
    assert again["EarliestRestorableDateTime"] > earliest  # a new window


@pytest.mark.one_server
def test_restore_to_any_second(client: Any, endpoint: str, make_table: Callable[..., str],
                               restored: list[str], unique_name: Callable[[str], str]) -> None:
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    for n in range(20):
        client.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": f"{n:02d}"}, "g": {"S": "x"}})
    enable(client, name)
    clock(endpoint, 5)
    moments: list[tuple[float, list[dict[str, Any]]]] = []
    for step in range(4):
        moments.append((clock(endpoint), scan_all(client, name)))
        clock(endpoint, 3)
        client.delete_item(TableName=name, Key={"pk": {"S": "a"}, "sk": {"S": f"{step:02d}"}})
        client.put_item(TableName=name, Item={"pk": {"S": "b"}, "sk": {"S": f"{step:02d}"}, "g": {"S": "y"}})
        client.update_item(TableName=name, Key={"pk": {"S": "a"}, "sk": {"S": "19"}},
                           UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"N": str(step)}})
        clock(endpoint, 3)
    clock(endpoint, LAG + 1)  # every moment restorable now
    for when, expected in moments[1::2]:
        target = unique_name("pitr")
        restored.append(target)
        answer = client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                                       RestoreDateTime=at(when))["TableDescription"]
        assert answer["TableStatus"] == "CREATING"
        summary = answer["RestoreSummary"]
        assert "SourceBackupArn" not in summary
        assert summary["SourceTableArn"].endswith(f":table/{name}")
        assert summary["RestoreInProgress"] is True
        table = wait_active(client, target)
        assert scan_all(client, target) == expected
        assert table["GlobalSecondaryIndexes"][0]["ItemCount"] == len(expected)
    target = unique_name("latest")
    restored.append(target)
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    client.restore_table_to_point_in_time(SourceTableArn=arn, TargetTableName=target,
                                          UseLatestRestorableTime=True)
    wait_active(client, target)
    assert scan_all(client, target) == scan_all(client, name)


@pytest.mark.one_server
def test_restore_rolls_back_ttl_expiries(client: Any, endpoint: str, make_table: Callable[..., str],
                                         restored: list[str], unique_name: Callable[[str], str]) -> None:
    name = make_table()
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    enable(client, name)
    now = clock(endpoint)
    client.put_item(TableName=name, Item={"pk": {"S": "gone"}, "sk": {"S": "1"}, "exp": {"N": str(int(now) + 60)}})
    client.put_item(TableName=name, Item={"pk": {"S": "stays"}, "sk": {"S": "1"}})
    clock(endpoint, 2)
    before_expiry = clock(endpoint)
    clock(endpoint, 3600, sweep=True)
    assert [item["pk"]["S"] for item in scan_all(client, name)] == ["stays"]
    back = unique_name("ttl")
    restored.append(back)
    client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=back,
                                          RestoreDateTime=at(before_expiry))
    wait_active(client, back)
    assert sorted(item["pk"]["S"] for item in scan_all(client, back)) == ["gone", "stays"]
    latest = unique_name("ttl")
    restored.append(latest)
    clock(endpoint, LAG + 1)  # the sweep's deletes restorable now
    client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=latest,
                                          UseLatestRestorableTime=True)
    wait_active(client, latest)
    assert [item["pk"]["S"] for item in scan_all(client, latest)] == ["stays"]


def test_restore_errors(client: Any, endpoint: str, make_table: Callable[..., str],
                        unique_name: Callable[[str], str]) -> None:
    name = make_table()
    other = make_table()
    target = unique_name("never")
    with pytest.raises(client.exceptions.PointInTimeRecoveryUnavailableException) as excinfo:
        client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                              UseLatestRestorableTime=True)
    assert error_of(excinfo)[0] == "PointInTimeRecoveryUnavailableException"
    assert name in error_of(excinfo)[1]
    missing = unique_name("missing")
    with pytest.raises(client.exceptions.TableNotFoundException) as excinfo:
        client.restore_table_to_point_in_time(SourceTableName=missing, TargetTableName=target,
                                              UseLatestRestorableTime=True)
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {missing}")
    enable(client, name)
    earliest = client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["EarliestRestorableDateTime"]
    clock(endpoint, 60)  # LatestRestorableDateTime is still the earliest: 5 minutes not gone by
    for when in (earliest - timedelta(seconds=10), at(clock(endpoint)) + timedelta(hours=1),
                 earliest + timedelta(seconds=30), at(clock(endpoint) - 1)):
        with pytest.raises(client.exceptions.InvalidRestoreTimeException) as excinfo:
            client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                                  RestoreDateTime=when)
        assert error_of(excinfo) == ("InvalidRestoreTimeException", "RestoreDateTime must be between "
                                     "EarliestRestorableDateTime and LatestRestorableDateTime")
    with pytest.raises(client.exceptions.TableAlreadyExistsException) as excinfo:
        client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=other,
                                              UseLatestRestorableTime=True)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {other}")
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target)
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(client.exceptions.ResourceNotFoundException):  # no refused restore left a table
        client.describe_table(TableName=target)


@pytest.mark.one_server
def test_latest_restorable_time_is_five_minutes_behind(client: Any, endpoint: str, make_table: Callable[..., str],
                                                       restored: list[str], unique_name: Callable[[str], str]) -> None:
    """DynamoDB: "LatestRestorableDateTime is typically 5 minutes before the
    current time" (API reference); UseLatestRestorableTime restores to it,
    and a RestoreDateTime after it is refused."""
    name = make_table()
    client.put_item(TableName=name, Item={"pk": {"S": "before"}, "sk": {"S": "1"}})
    recovery = enable(client, name)["PointInTimeRecoveryDescription"]
    assert recovery["LatestRestorableDateTime"] == recovery["EarliestRestorableDateTime"]
    client.put_item(TableName=name, Item={"pk": {"S": "after"}, "sk": {"S": "1"}})
    early = unique_name("early")
    restored.append(early)
    answer = client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=early,
                                                   UseLatestRestorableTime=True)["TableDescription"]
    assert answer["RestoreSummary"]["RestoreDateTime"] == recovery["EarliestRestorableDateTime"]
    wait_active(client, early)
    assert [item["pk"]["S"] for item in scan_all(client, early)] == ["before"]
    written = clock(endpoint)
    clock(endpoint, LAG - 30)
    with pytest.raises(client.exceptions.InvalidRestoreTimeException):  # 4.5 minutes ago: not yet restorable
        client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=unique_name("no"),
                                              RestoreDateTime=at(written + 1))
    now = clock(endpoint, 31)
    latest = client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["LatestRestorableDateTime"]
    assert abs(latest.timestamp() - (now - LAG)) < 2
    late = unique_name("late")
    restored.append(late)
    answer = client.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=late,
                                                   UseLatestRestorableTime=True)["TableDescription"]
    assert answer["RestoreSummary"]["RestoreDateTime"] >= latest
    wait_active(client, late)
    assert sorted(item["pk"]["S"] for item in scan_all(client, late)) == ["after", "before"]
