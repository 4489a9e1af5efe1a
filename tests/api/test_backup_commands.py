"""``dynastore backup`` and ``dynastore restore`` as a person runs them: a
real subprocess against a real server (``--endpoint``; also under
``serve --credentials``, where the jobs' route needs an admin key and the
command signs it) and against a data directory (``--data-dir``, jobs run in
the command's process). The summary line (stdout) and the error line
(stderr) are what is asserted, with the tables' contents afterwards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

import dynastore
from tests.api.conftest import start_server, stop_server
from tests.api.test_backups import scan_all

COMMAND_TIMEOUT_SECONDS = 120
ITEMS = 300
SUMMARY = re.compile(r": ([\d,]+) items, [\d.]+ k?M?B in [\d.]+ s \([\d,]+ items/s, [\d.]+ k?M?B/s\)$")
ADMIN_KEY = ("AKIAOPS", "ops-secret")
PLAIN_KEY = ("AKIAAPP", "app-secret")


def dynastore_command(*arguments: str, environment: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return subprocess.run([sys.executable, "-m", "dynastore", *arguments], capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_SECONDS, env={**clean, **(environment or {})})


def items_of(summary: str) -> int:
    found = SUMMARY.search(summary.strip())
    assert found, summary
    return int(found.group(1).replace(",", ""))


@dataclass
class Place:
    """Where the commands run: ``where`` is their --endpoint / --data-dir
    arguments; ``_Opened(place)`` a boto3 client of the same tables (a data
    directory is opened only while no command has it open)."""

    where: list[str]
    endpoint_client: Any = None
    data_dir: str | None = None
    keys: tuple[str, str] | None = None

    def run(self, *arguments: str, keys: tuple[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        keys = keys or self.keys
        extra = [] if keys is None else ["--access-key-id", keys[0], "--secret-access-key", keys[1]]
        return dynastore_command(*arguments, *self.where, *extra)


def _client(url: str, keys: tuple[str, str]) -> Any:
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id=keys[0],
                        aws_secret_access_key=keys[1], config=Config(retries={"total_max_attempts": 1}))


@pytest.fixture(scope="module", params=["endpoint", "credentials", "data-dir"])
def place(request: pytest.FixtureRequest) -> Iterator[Place]:
    directory = tempfile.mkdtemp(prefix="dynastore-commands-")
    if request.param == "data-dir":
        yield Place(["--data-dir", directory], data_dir=directory)
        return
    arguments: list[str] = ["--data-dir", directory]
    keys = None
    if request.param == "credentials":
        credentials = Path(directory) / "credentials"
        credentials.write_text(f"{ADMIN_KEY[0]}:{ADMIN_KEY[1]}:000000000000:admin\n"
                               f"{PLAIN_KEY[0]}:{PLAIN_KEY[1]}:000000000000\n")
        arguments = ["--data-dir", str(Path(directory) / "data"), "--credentials", str(credentials)]
        keys = ADMIN_KEY
    process, url = start_server(*arguments)
    try:
        yield Place(["--endpoint", url], endpoint_client=_client(url, keys or ("AKIDTEST", "secret")), keys=keys)
    finally:
        stop_server(process)


class _Opened:
    """A boto3 client of ``place``'s tables, closed after use (a data dir's database)."""

    def __init__(self, place: Place) -> None:
        self.place = place
        self.database: Any = None

    def __enter__(self) -> Any:
        if self.place.endpoint_client is not None:
            return self.place.endpoint_client
        assert self.place.data_dir is not None
        self.database = dynastore.open(self.place.data_dir)
        return self.database.client()

    def __exit__(self, *_: Any) -> None:
        if self.database is not None:
            self.database.close()


def make_filled_table(place: Place) -> str:
    name = f"cmd-{uuid.uuid4().hex[:10]}"
    with _Opened(place) as client:
        client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
        for start in range(0, ITEMS, 25):
            client.batch_write_item(RequestItems={name: [
                {"PutRequest": {"Item": {"pk": {"S": f"k{n:04d}"}, "body": {"S": "x" * 200}}}}
                for n in range(start, start + 25)]})
    return name


def test_backup_then_restore_with_a_summary(place: Place) -> None:
    table = make_filled_table(place)
    made = place.run("backup", table, "--name", "before-migration")
    assert made.returncode == 0, made.stderr
    summary = made.stdout.strip().splitlines()[-1]
    assert " of " + table + " is AVAILABLE: " in summary and "(before-migration)" in summary
    assert items_of(summary) == ITEMS
    arn = re.search(r"Backup (arn:\S+)", summary)
    assert arn is not None
    new_table = f"{table}-restored"
    restored = place.run("restore", arn.group(1), new_table)
    assert restored.returncode == 0, restored.stderr
    line = restored.stdout.strip().splitlines()[-1]
    assert f"into {new_table} (ACTIVE)" in line and items_of(line) == ITEMS
    with _Opened(place) as client:
        assert scan_all(client, new_table) == scan_all(client, table)
        assert client.describe_table(TableName=new_table)["Table"]["RestoreSummary"]["SourceBackupArn"] == arn.group(1)


def test_restore_to_a_point_in_time(place: Place) -> None:
    """--latest is LatestRestorableDateTime, 5 minutes behind now
    (limits.PITR_LATEST_RESTORABLE_LAG_SECONDS): just after PITR went on,
    the table as it was then; a later --at is refused with DynamoDB's error."""
    table = make_filled_table(place)
    with _Opened(place) as client:
        client.update_continuous_backups(TableName=table, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
    time.sleep(1.1)
    moment = time.time()
    time.sleep(1.1)
    with _Opened(place) as client:
        client.delete_item(TableName=table, Key={"pk": {"S": "k0000"}})
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1e6):06d}Z"
    then = place.run("restore", "--table", table, "--at", at, f"{table}-then")
    assert then.returncode == 1
    assert then.stderr == ("dynastore: error: InvalidRestoreTimeException: RestoreDateTime must be between "
                           "EarliestRestorableDateTime and LatestRestorableDateTime\n"), then.stderr
    latest = place.run("restore", "--table", table, "--latest", f"{table}-now")
    assert latest.returncode == 0, latest.stderr
    assert items_of(latest.stdout.strip().splitlines()[-1]) == ITEMS  # the delete is not restorable yet
    with _Opened(place) as client:
        assert len(scan_all(client, f"{table}-now")) == ITEMS == len(scan_all(client, table)) + 1


def test_errors_are_one_line_and_exit_1(place: Place) -> None:
    table = make_filled_table(place)
    missing = place.run("backup", f"missing-{uuid.uuid4().hex[:8]}")
    assert missing.returncode == 1
    assert re.fullmatch(r"dynastore: error: TableNotFoundException: Table not found: missing-\w+\n",
                        missing.stderr), missing.stderr
    taken = place.run("restore", "--table", table, "--latest", table)
    assert taken.returncode == 1
    assert taken.stderr == (f"dynastore: error: PointInTimeRecoveryUnavailableException: "
                            f"Point in time recovery is not enabled for table '{table}'\n")
    no_backup = place.run("restore", f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}/backup/"
                          "01700000000000-00000000", "elsewhere")
    assert no_backup.returncode == 1 and no_backup.stderr.startswith(
        "dynastore: error: BackupNotFoundException: Backup not found: arn:"), no_backup.stderr
    usage = place.run("restore", "--table", table, "only-new")
    assert usage.returncode == 2 and "--at TIME or --latest" in usage.stderr


def test_a_key_without_admin_still_backs_up_and_restores(place: Place) -> None:
    """Under serve --credentials the jobs' route needs an admin key: with a
    plain key the commands say once that they have no progress to show, wait
    on DescribeBackup / DescribeTable instead, and end with the summary."""
    if place.keys is None:
        pytest.skip("only a server with --credentials checks keys")
    table = make_filled_table(place)
    made = place.run("backup", table, keys=PLAIN_KEY)
    assert made.returncode == 0, made.stderr
    assert made.stderr.startswith("dynastore: no progress to show (AccessDeniedException: ")
    assert made.stderr.count("\n") == 1
    summary = made.stdout.strip().splitlines()[-1]
    assert items_of(summary) == ITEMS
    arn = summary.split()[1]
    restored = place.run("restore", arn, f"{table}-x", keys=PLAIN_KEY)
    assert restored.returncode == 0, restored.stderr
    assert items_of(restored.stdout.strip().splitlines()[-1]) == ITEMS
    assert scan_all(place.endpoint_client, f"{table}-x") == scan_all(place.endpoint_client, table)


def test_a_server_that_is_not_there() -> None:
    answer = dynastore_command("backup", "t", "--endpoint", "http://127.0.0.1:9", "--region", "us-east-1")
    assert answer.returncode == 1
    assert answer.stderr.startswith("dynastore: error: EndpointConnectionError: ") and answer.stderr.count("\n") == 1


def test_on_a_terminal_the_bar_shows_items_bytes_rate_and_eta(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: rich draws the bar while the (slowed)
    backup runs, then the summary goes to stdout."""
    import pty

    process, url = start_server("--data-dir", str(tmp_path / "data"), environment={
        "DYNASTORE_BACKUP_PAGE_ROWS": "10", "DYNASTORE_BACKUP_STEP_DELAY_MS": "100"})
    try:
        place = Place(["--endpoint", url], endpoint_client=_client(url, ("AKIDTEST", "secret")))
        table = make_filled_table(place)
        leader, follower = pty.openpty()
        clean = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
        completed = subprocess.run(
            [sys.executable, "-m", "dynastore", "backup", table, "--endpoint", url],
            stdout=subprocess.PIPE, stderr=follower, text=True, timeout=COMMAND_TIMEOUT_SECONDS,
            env={**clean, "COLUMNS": "200", "TERM": "xterm"})
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        os.close(leader)
    finally:
        stop_server(process)
    assert completed.returncode == 0
    assert items_of(completed.stdout.strip().splitlines()[-1]) == ITEMS
    screen = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", drawn).decode(errors="replace")
    assert f"Backing up {table}" in screen
    assert re.search(r"[\d,]+/300 items", screen), screen[-500:]
    assert "items/s" in screen and "ETA" in screen and "B/s" in screen


def test_a_data_directory_a_server_has_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    process, _url = start_server("--data-dir", str(data))
    try:
        answer = dynastore_command("backup", "t", "--data-dir", str(data))
    finally:
        stop_server(process)
    assert answer.returncode == 1
    assert answer.stderr.startswith("dynastore: error: ") and "already in use" in answer.stderr
    assert answer.stderr.count("\n") == 1
