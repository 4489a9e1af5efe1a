"""kill -9 of the server during a backup and during a restore (issue 19,
section 5), on SQLite (a data directory) and on PostgreSQL.

The server's jobs run slowly here (20 items a step, 100 ms apart:
DYNASTORE_BACKUP_PAGE_ROWS / DYNASTORE_BACKUP_STEP_DELAY_MS), so the kill
lands mid-copy, once the job's record says part of it is done. Then:

- nothing half-made is visible: the backup is CREATING (never AVAILABLE
  with part of the items), the restore's table CREATING (never ACTIVE with
  part of the items; reads of it ResourceNotFoundException);
- after a restart on the same store the job goes on from where its record
  says and completes: the backup restores to exactly the source's items,
  the restored table holds exactly them.
"""

from __future__ import annotations

import json
import signal
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.api.conftest import make_client, start_server, stop_server
from tests.api.test_backups import scan_all

SLOW_JOBS = {"DYNASTORE_BACKUP_PAGE_ROWS": "20", "DYNASTORE_BACKUP_STEP_DELAY_MS": "100"}
ITEMS = 400
WAIT_SECONDS = 60.0


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Any) -> list[str]:
    """``serve``'s arguments for a store that outlives its server."""
    if request.param == "sqlite":
        return ["--data-dir", str(tmp_path / "data")]
    return ["--postgres", request.getfixturevalue("postgres_server").new_database()]


class Server:
    """One server at a time over ``store``; ``restart`` after a kill -9."""

    def __init__(self, store: list[str]) -> None:
        self.store = store
        self.process: Any = None
        self.url = ""
        self.start()

    def start(self, step_delay_ms: int | None = None) -> None:
        environment = dict(SLOW_JOBS)
        if step_delay_ms is not None:
            environment["DYNASTORE_BACKUP_STEP_DELAY_MS"] = str(step_delay_ms)
        self.process, self.url = start_server(*self.store, environment=environment)
        self.client = make_client(self.url)

    def kill_9(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        stop_server(self.process)  # closes its log

    def jobs(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/_dynastore/backups/jobs", timeout=10) as reply:
            return list(json.loads(reply.read())["Jobs"])


@pytest.fixture
def server(store: list[str]) -> Iterator[Server]:
    running = Server(store)
    yield running
    if running.process.poll() is None:
        stop_server(running.process)


def fill_table(client: Any) -> str:
    name = f"kill-{uuid.uuid4().hex[:10]}"
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    for start in range(0, ITEMS, 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": f"k{n:04d}"}, "n": {"N": str(n)}, "pad": {"S": "p" * 100}}}}
            for n in range(start, start + 25)]})
    return name


def wait_midway(server: Server, is_ours: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The job's record once it has copied some of the items but not all."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        job = next((job for job in server.jobs() if is_ours(job)), None)
        if job is not None and 0 < job["Items"] < ITEMS:
            return job
        assert job is not None, "the job ended before it could be killed midway"
        time.sleep(0.05)
    raise AssertionError("the job never got going")


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen in {WAIT_SECONDS} s"
        time.sleep(0.2)


def backup_status(client: Any, arn: str) -> str:
    details = client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
    return str(details["BackupStatus"])


def restored_table_is_whole_or_creating(client: Any, name: str, expected: list[dict[str, Any]]) -> bool:
    """True once ACTIVE (with exactly ``expected``); while CREATING, nothing of it can be read."""
    table = client.describe_table(TableName=name)["Table"]
    if table["TableStatus"] == "CREATING":
        try:
            client.scan(TableName=name, Limit=1)
        except client.exceptions.ResourceNotFoundException:
            return False
        # The restore can end between the two calls: then the table must be
        # ACTIVE by now, and whole (checked below), never readable half-made.
        table = client.describe_table(TableName=name)["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert scan_all(client, name) == expected
    return True


def test_kill_9_during_a_backup(server: Server) -> None:
    table = fill_table(server.client)
    expected = scan_all(server.client, table)
    arn = server.client.create_backup(TableName=table, BackupName="killed")["BackupDetails"]["BackupArn"]
    wait_midway(server, lambda job: job["Kind"] == "backup" and job["Arn"] == arn)
    server.kill_9()
    server.start()
    assert backup_status(server.client, arn) in ("CREATING", "AVAILABLE")  # never a partial AVAILABLE:
    wait_until(lambda: backup_status(server.client, arn) == "AVAILABLE", "the backup's completion")
    described = server.client.describe_backup(BackupArn=arn)["BackupDescription"]
    assert described["SourceTableDetails"]["ItemCount"] == ITEMS
    target = f"{table}-back"
    server.client.restore_table_from_backup(BackupArn=arn, TargetTableName=target)
    wait_until(lambda: restored_table_is_whole_or_creating(server.client, target, expected), "the restore")


def test_kill_9_during_a_restore_from_a_backup(server: Server) -> None:
    table = fill_table(server.client)
    expected = scan_all(server.client, table)
    arn = server.client.create_backup(TableName=table, BackupName="source")["BackupDetails"]["BackupArn"]
    wait_until(lambda: backup_status(server.client, arn) == "AVAILABLE", "the backup")
    target = f"{table}-back"
    server.client.restore_table_from_backup(BackupArn=arn, TargetTableName=target)
    wait_midway(server, lambda job: job["Kind"] == "restore" and job["Table"] == target)
    server.kill_9()
    server.start()
    wait_until(lambda: restored_table_is_whole_or_creating(server.client, target, expected), "the restore")
    assert server.client.describe_table(TableName=target)["Table"]["RestoreSummary"]["RestoreInProgress"] is False


def test_kill_9_during_a_point_in_time_restore(server: Server) -> None:
    table = fill_table(server.client)
    server.client.update_continuous_backups(TableName=table, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    expected = scan_all(server.client, table)
    target = f"{table}-then"
    server.client.restore_table_to_point_in_time(SourceTableName=table, TargetTableName=target,
                                                 UseLatestRestorableTime=True)
    # Writes after the restore's time must not reach the restored table.
    server.client.delete_item(TableName=table, Key={"pk": {"S": "k0000"}})
    server.client.put_item(TableName=table, Item={"pk": {"S": "late"}})
    wait_midway(server, lambda job: job["Kind"] == "restore" and job["Table"] == target)
    server.kill_9()
    server.start()
    wait_until(lambda: restored_table_is_whole_or_creating(server.client, target, expected), "the restore")


def test_a_restore_whose_backup_is_gone_after_a_kill_ends_failed_with_a_reason(server: Server) -> None:
    """A source deleted while the server was down: after the restart the
    restore ends FAILED with the reason, and leaves no table."""
    table = fill_table(server.client)
    server.client.update_continuous_backups(TableName=table, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    target = f"{table}-then"
    server.client.restore_table_to_point_in_time(SourceTableName=table, TargetTableName=target,
                                                 UseLatestRestorableTime=True)
    wait_midway(server, lambda job: job["Kind"] == "restore" and job["Table"] == target)
    server.kill_9()
    # The resumed restore must still be running when the source goes: at a
    # second a step its remaining pages take ten seconds and more, however
    # slowly a loaded machine makes this client (it once finished first).
    server.start(step_delay_ms=1000)
    server.client.delete_table(TableName=table)

    def failed() -> bool:
        job = next((job for job in server.jobs() if job["Kind"] == "restore" and job["Table"] == target), None)
        return job is not None and job["Status"] == "FAILED"

    wait_until(failed, "the restore's failure")
    job = next(job for job in server.jobs() if job["Kind"] == "restore" and job["Table"] == target)
    assert "deleted" in job["Reason"], job
    with pytest.raises(server.client.exceptions.ResourceNotFoundException):
        server.client.describe_table(TableName=target)
    assert target not in server.client.list_tables()["TableNames"]
