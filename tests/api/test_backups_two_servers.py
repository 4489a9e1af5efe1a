"""Backups and PITR on two ``dynastore serve --postgres URL`` servers over one
database (issue 19): what one server changes, the other answers at once.

The cause of ``test_pitr.py::test_restore_errors[postgres-pair]``'s KeyError
under load: the backup and PITR operations read the table's definition (its
change-log settings live there) from the server's copy of the catalogue
without checking that copy is current, so the second server, asked right
after the first turned PITR on and before its catalogue notification
arrived, answered DescribeContinuousBackups with PITR DISABLED (no
EarliestRestorableDateTime: the test's KeyError). Every round here asks the
other server immediately after a change, so a stale answer fails the test.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from tests.api.conftest import TEST_CLIENT_CONFIG, server_log, start_server, stop_server
from tests.api.test_backups import scan_all, wait_active

ROUNDS = 12


def _client(url: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                        config=TEST_CLIENT_CONFIG)


@dataclass
class Servers:
    clients: list[Any]
    listeners: list[set[int]]
    """Per server, the PostgreSQL backends LISTENing for its catalogue notifications."""
    processes: list[Any]

    @contextmanager
    def quoting_logs(self) -> Iterator[None]:
        """A failure (a 500 seen once under load) quotes the end of both servers' logs."""
        try:
            yield
        except Exception as error:
            logs = "\n".join(f"--- server {'AB'[i]} log ---\n{server_log(p)[-3000:]}"
                             for i, p in enumerate(self.processes))
            raise AssertionError(f"{error}\n{logs}") from error


def _listening_backends(database_url: str) -> set[int]:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"
        ).fetchall()
    return {int(pid) for (pid,) in rows}


@pytest.fixture(scope="module")
def servers(postgres_server: Any) -> Iterator[Servers]:
    """Clients of two servers over one database (the first creates the schema)."""
    yield from _two_servers(postgres_server)


def _two_servers(postgres_server: Any, environment: dict[str, str] | None = None) -> Iterator[Servers]:
    database_url = postgres_server.new_database()
    processes, urls, listeners = [], [], []
    try:
        seen: set[int] = set()
        for _ in range(2):
            process, url = start_server("--postgres", database_url, environment=environment)
            processes.append(process)
            urls.append(url)
            now = _listening_backends(database_url)
            listeners.append(now - seen)
            seen |= now
        yield Servers([_client(url) for url in urls], listeners, processes)
    finally:
        for process in processes:
            stop_server(process)


@contextmanager
def notifications_held_back(backends: set[int]) -> Iterator[None]:
    """Freeze a server's listening backends (SIGSTOP): its catalogue
    notifications stop arriving, as when a loaded machine delivers them late."""
    assert backends, "no listening backend found"
    for pid in backends:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in backends:
            os.kill(pid, signal.SIGCONT)


def _new_table(client: Any) -> str:
    name = f"pair-{uuid.uuid4().hex[:12]}"
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    return name


def _recovery(client: Any, name: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.describe_continuous_backups(TableName=name)
    return dict(answer["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"])


def test_pitr_switched_on_one_server_is_so_on_the_other_at_once(servers: Servers) -> None:
    """B's notifications are held back: it must check its catalogue itself."""
    a, b = servers.clients
    name = _new_table(a)
    try:
        with servers.quoting_logs():
            with notifications_held_back(servers.listeners[1]):
                _toggle_rounds(a, b, name)
            _toggle_rounds(a, b, name)
    finally:
        a.delete_table(TableName=name)


def _toggle_rounds(a: Any, b: Any, name: str) -> None:
    for round_number in range(ROUNDS):
        first, other = (a, b) if round_number % 2 == 0 else (b, a)
        first.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        recovery = _recovery(other, name)  # no sleep: the other server knows it now
        assert recovery["PointInTimeRecoveryStatus"] == "ENABLED", (round_number, recovery)
        assert "EarliestRestorableDateTime" in recovery
        first.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": False})
        assert _recovery(other, name) == {"PointInTimeRecoveryStatus": "DISABLED"}, round_number


def test_a_restore_on_one_server_sees_the_other_servers_changes(servers: Servers) -> None:
    """PITR turned on, a backup taken and a table deleted through one server:
    the other restores, and refuses, as if it had made each change itself."""
    a, b = servers.clients
    name = _new_table(a)
    made: list[str] = []
    with notifications_held_back(servers.listeners[1]):
        a.put_item(TableName=name, Item={"pk": {"S": "one"}})
        a.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        target = f"pair-{uuid.uuid4().hex[:12]}"
        b.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                         UseLatestRestorableTime=True)
        made.append(target)
        wait_active(a, target)
        assert scan_all(a, target) == [{"pk": {"S": "one"}}]
        backup = b.create_backup(TableName=target, BackupName="pair")["BackupDetails"]["BackupArn"]
        # The copy is done before the table goes: a table deleted while its
        # backup is still being copied abandons the backup (docs/compatibility.md).
        for _ in range(100):
            if a.describe_backup(BackupArn=backup)["BackupDescription"]["BackupDetails"][
                    "BackupStatus"] == "AVAILABLE":
                break
            time.sleep(0.2)
        a.delete_table(TableName=target)
        made.remove(target)
        b.restore_table_from_backup(BackupArn=backup, TargetTableName=target)  # the name is free on B too
        made.append(target)
        assert wait_active(a, target)["TableStatus"] == "ACTIVE"
        # The restore job may have run on A, and B hears of A's catalogue
        # changes late here (notifications held back): a data-plane read on B
        # may run on the old definition until B checks (docs/postgres.md, "how
        # quickly schema changes reach other servers"). DescribeTable always
        # checks, as it would on any server of a real deployment.
        assert b.describe_table(TableName=target)["Table"]["TableStatus"] == "ACTIVE"
        assert scan_all(b, target) == [{"pk": {"S": "one"}}]
        with pytest.raises(b.exceptions.TableAlreadyExistsException):
            b.restore_table_from_backup(BackupArn=backup, TargetTableName=name)
    for table in [name, *made]:
        try:
            a.delete_table(TableName=table)
        except a.exceptions.ClientError:
            pass


# --- PITR changed on one server while the other holds a view (a backup, a restore) ----------------

SLOW_JOBS = {"DYNASTORE_BACKUP_PAGE_ROWS": "5", "DYNASTORE_BACKUP_STEP_DELAY_MS": "100"}
"""The backup jobs copy 5 items a step, 100 ms apart: 60 items take about 1.2 s."""


@pytest.fixture(scope="module")
def slow_servers(postgres_server: Any) -> Iterator[Servers]:
    """As ``servers``, with slow backup jobs (a job holds its view a while)."""
    yield from _two_servers(postgres_server, SLOW_JOBS)


def _keyed_table(client: Any, items: int) -> str:
    name = _new_table(client)
    for start in range(0, items, 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": f"k{n:04d}"}}}} for n in range(start, min(start + 25, items))]})
    return name


def _wait_available(client: Any, arn: str) -> None:
    deadline = time.monotonic() + 60
    while client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] != "AVAILABLE":
        assert time.monotonic() < deadline, "the backup never became AVAILABLE"
        time.sleep(0.1)


def test_a_table_deleted_while_its_backup_is_copied_leaves_no_partial_backup(slow_servers: Servers) -> None:
    """A deletes the table while B's job is copying it, and B hears of it
    late: the job reads an empty page of the dropped table, which looks like
    the end of the copy. The backup must then be abandoned (gone), never
    AVAILABLE with part of the items."""
    a, b = slow_servers.clients
    name = _keyed_table(a, 30)
    assert b.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"  # B knows the table
    with notifications_held_back(slow_servers.listeners[1]):
        arn = b.create_backup(TableName=name, BackupName="cut")["BackupDetails"]["BackupArn"]
        time.sleep(0.15)  # a page or so copied
        a.delete_table(TableName=name)
        deadline = time.monotonic() + 60
        while True:
            try:
                description = a.describe_backup(BackupArn=arn)["BackupDescription"]
            except a.exceptions.BackupNotFoundException:
                break  # abandoned: the table went before the copy was done
            if description["BackupDetails"]["BackupStatus"] == "AVAILABLE":
                assert description["SourceTableDetails"]["ItemCount"] == 30
                a.delete_backup(BackupArn=arn)
                break
            assert time.monotonic() < deadline, "the backup was neither finished nor abandoned"
            time.sleep(0.05)


RACE_ROUNDS = 8


def test_pitr_switched_while_views_are_held_and_released_on_both_servers(slow_servers: Servers) -> None:
    """Each round: A and B each start a backup (a view held, released by the
    job when its copy is done, concurrently with what follows) while PITR is
    turned on through one server and off through the other, all at once.
    Every change of the table's change-log settings must be made on its
    definition as it is now (a compare-and-set on its generation, retried on
    a conflict), never on a copy another change overtook: else a backup's
    view is lost (its job gives it up: BackupNotFoundException) or PITR's
    last ENABLED is undone."""
    a, b = slow_servers.clients
    name = _keyed_table(a, 30)
    backups: list[str] = []
    errors: list[BaseException] = []

    def run(call: Any) -> threading.Thread:
        def target() -> None:
            try:
                call()
            except BaseException as error:  # reported below
                errors.append(error)

        thread = threading.Thread(target=target)
        thread.start()
        return thread

    try:
        for round_number in range(RACE_ROUNDS):
            first, other = (a, b) if round_number % 2 == 0 else (b, a)
            threads = [
                run(lambda: backups.append(a.create_backup(TableName=name, BackupName="race-a")[
                    "BackupDetails"]["BackupArn"])),
                run(lambda: backups.append(b.create_backup(TableName=name, BackupName="race-b")[
                    "BackupDetails"]["BackupArn"])),
                run(lambda enabler=first: enabler.update_continuous_backups(
                    TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})),
            ]
            for thread in threads:
                thread.join()
            assert not errors, errors
            for client in (a, b):
                assert _recovery(client, name)["PointInTimeRecoveryStatus"] == "ENABLED", round_number
            other.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": False})
        for arn in backups:
            _wait_available(a, arn)
            details = a.describe_backup(BackupArn=arn)["BackupDescription"]
            assert details["SourceTableDetails"]["ItemCount"] == 30, arn
        for client in (a, b):
            assert _recovery(client, name) == {"PointInTimeRecoveryStatus": "DISABLED"}
    finally:
        for arn in backups:
            try:
                a.delete_backup(BackupArn=arn)
            except a.exceptions.ClientError:
                pass
        a.delete_table(TableName=name)


def test_a_view_released_on_one_server_keeps_pitr_turned_on_through_the_other(slow_servers: Servers) -> None:
    """B's backup job holds a view of the table (its change log); A turns
    PITR on meanwhile, and B, whose catalogue notifications are held back,
    releases its view when the copy is done. The release must change the
    table's definition as it is now (a compare-and-set on its generation in
    the catalogue), not as B last loaded it: else PITR, which A answered
    ENABLED, is lost with the change log."""
    a, b = slow_servers.clients
    name = _keyed_table(a, 60)
    try:
        backup = b.create_backup(TableName=name, BackupName="held")["BackupDetails"]["BackupArn"]
        with notifications_held_back(slow_servers.listeners[1]):
            enabled = a.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": True})["ContinuousBackupsDescription"]
            assert enabled["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
            assert b.describe_backup(BackupArn=backup)["BackupDescription"]["BackupDetails"][
                "BackupStatus"] == "CREATING", "the backup was done before PITR went on: nothing was tested"
            _wait_available(a, backup)
            for client in (a, b):
                assert _recovery(client, name)["PointInTimeRecoveryStatus"] == "ENABLED"
        a.put_item(TableName=name, Item={"pk": {"S": "after"}})
        target = f"pair-{uuid.uuid4().hex[:12]}"
        b.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                         UseLatestRestorableTime=True)  # the log is still there
        try:
            assert len(scan_all(a, target if wait_active(a, target) else target)) == 60
        finally:
            a.delete_table(TableName=target)
        a.delete_backup(BackupArn=backup)
    finally:
        a.delete_table(TableName=name)
