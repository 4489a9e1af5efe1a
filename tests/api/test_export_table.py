"""ExportTableToPointInTime, DescribeExport and ListExports over boto3 on every
store (issue 19, section 3): the description's shapes, the files DynamoDB
writes (manifests, gzip data files in DYNAMODB_JSON and ION), incremental
exports, errors, ClientToken idempotency; the AWS CLI; a real S3-compatible
server (moto_server); a kill -9 during an export; ``dynastore export``."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.api.conftest import free_port, make_client, start_server, stop_server, wait_for_port
from tests.api.helpers import error_of
from tests.api.test_pitr import clock, enable

WAIT_SECONDS = 60.0
ITEM_TYPES = {
    "s": {"S": "text \"quoted\" é"}, "n": {"N": "-12.5"}, "big": {"N": "1E+30"}, "b": {"B": b"\x00\x01bin"},
    "t": {"BOOL": True}, "z": {"NULL": True}, "l": {"L": [{"S": "a"}, {"N": "1"}]},
    "m": {"M": {"inner": {"S": "x"}, "odd name": {"N": "2"}}}, "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b"x", b"y"]},
}


# --- helpers ------------------------------------------------------------------------------


def bucket_root(embedded_database: Any) -> Path:
    """Where the server under test keeps its buckets (buckets.py's defaults)."""
    if embedded_database is not None:
        return Path(embedded_database.database.storage.directory) / "buckets"
    return Path("dynastore-buckets").resolve()


@pytest.fixture
def bucket(embedded_database: Any) -> Iterator[tuple[str, Path]]:
    """A fresh bucket name and its folder, removed afterwards."""
    name = f"bucket-{uuid.uuid4().hex[:10]}"
    folder = bucket_root(embedded_database) / name
    yield name, folder
    shutil.rmtree(folder, ignore_errors=True)


def table_arn(client: Any, name: str) -> str:
    return str(client.describe_table(TableName=name)["Table"]["TableArn"])


def wait_done(client: Any, arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        description: dict[str, Any] = client.describe_export(ExportArn=arn)["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS":
            return description
        assert time.monotonic() < deadline, description
        time.sleep(0.05)


def plain(item: dict[str, Any]) -> dict[str, Any]:
    """A boto3 item as DynamoDB JSON text has it (binary as base64)."""
    def value(attribute: dict[str, Any]) -> dict[str, Any]:
        ((kind, inner),) = attribute.items()
        if kind == "B":
            return {"B": base64.b64encode(inner).decode()}
        if kind == "BS":
            return {"BS": [base64.b64encode(element).decode() for element in inner]}
        if kind == "L":
            return {"L": [value(element) for element in inner]}
        if kind == "M":
            return {"M": {name: value(element) for name, element in inner.items()}}
        return {kind: inner}
    return {name: value(attribute) for name, attribute in item.items()}


def read_lines(folder: Path, key: str) -> list[bytes]:
    return gzip.decompress((folder / key).read_bytes()).splitlines()


def exported(folder: Path, summary_key: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(manifest-summary.json, manifest-files.json's entries), their checksums checked."""
    summary_bytes = (folder / summary_key).read_bytes()
    summary = json.loads(summary_bytes)
    files_bytes = (folder / summary["manifestFilesS3Key"]).read_bytes()
    base = summary_key.rpartition("/")[0]
    for name, body in (("manifest-summary", summary_bytes), ("manifest-files", files_bytes)):
        expected = base64.b64encode(hashlib.md5(body).digest())
        assert (folder / f"{base}/{name}.md5").read_bytes() == expected
    entries = [json.loads(line) for line in files_bytes.splitlines()]
    for entry in entries:
        data = (folder / entry["dataFileS3Key"]).read_bytes()
        assert entry["md5Checksum"] == base64.b64encode(hashlib.md5(data).digest()).decode()
        assert entry["etag"] == hashlib.md5(data).hexdigest()
        assert len(gzip.decompress(data).splitlines()) == entry["itemCount"]
    return summary, entries


def put_typed(client: Any, name: str, count: int) -> list[dict[str, Any]]:
    items = [{"pk": {"S": f"k{n:03d}"}, **ITEM_TYPES, "n": {"N": str(n)}} for n in range(count)]
    for item in items:
        client.put_item(TableName=name, Item=item)
    return items


def by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))


def scanned(client: Any, name: str) -> list[dict[str, Any]]:
    """The table's items now, as DynamoDB JSON text has them."""
    items: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"TableName": name, "ConsistentRead": True}
    while True:
        page = client.scan(**arguments)
        items.extend(plain(item) for item in page["Items"])
        if "LastEvaluatedKey" not in page:
            return by_key(items)
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


PITR_SETTLE_SECONDS = 1.1
"""botocore sends timestamps in whole seconds: a time taken right after PITR
was enabled would be sent as a moment before the window began."""


# --- FULL_EXPORT --------------------------------------------------------------------------


def test_full_export_shape_and_files(client: Any, make_table: Callable[..., str],
                                     bucket: tuple[str, Path]) -> None:
    name = make_table(sk=None)
    items = put_typed(client, name, 30)
    enable(client, name)
    arn = table_arn(client, name)
    started = client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], S3Prefix="nightly/run1",
                                                   ClientToken="token-1")["ExportDescription"]
    export_arn = started["ExportArn"]
    export_id = export_arn.rpartition("/export/")[2]
    assert export_arn.startswith(f"{arn}/export/")
    assert len(export_id) == 23 and export_id[:14].isdigit() and export_id[14] == "-"
    assert started["ExportStatus"] in ("IN_PROGRESS", "COMPLETED")
    assert started["TableArn"] == arn and started["S3Bucket"] == bucket[0]
    assert started["S3Prefix"] == "nightly/run1" and started["ClientToken"] == "token-1"
    assert started["ExportFormat"] == "DYNAMODB_JSON" and started["ExportType"] == "FULL_EXPORT"
    assert started["S3SseAlgorithm"] == "AES256"
    done = wait_done(client, export_arn)
    assert done["ExportStatus"] == "COMPLETED", done
    assert set(done) >= {"ExportArn", "ExportStatus", "StartTime", "EndTime", "ExportManifest", "TableArn",
                         "TableId", "ExportTime", "S3Bucket", "S3SseAlgorithm", "ExportFormat",
                         "BilledSizeBytes", "ItemCount", "ExportType"}
    assert "FailureCode" not in done
    assert done["ItemCount"] == 30 and done["BilledSizeBytes"] > 0
    assert done["TableId"] == client.describe_table(TableName=name)["Table"]["TableId"]
    assert done["StartTime"] <= done["EndTime"]
    base = f"nightly/run1/AWSDynamoDB/{export_id}"
    assert done["ExportManifest"] == f"{base}/manifest-summary.json"
    folder = bucket[1]
    assert (folder / base / "_started").read_bytes() == b""
    summary, entries = exported(folder, done["ExportManifest"])
    assert summary["version"] == "2020-06-30"
    assert summary["exportArn"] == export_arn and summary["tableArn"] == arn
    assert summary["itemCount"] == 30 and summary["billedSizeBytes"] == done["BilledSizeBytes"]
    assert summary["outputFormat"] == "DYNAMODB_JSON" and summary["exportType"] == "FULL_EXPORT"
    assert summary["s3Bucket"] == bucket[0] and summary["s3Prefix"] == "nightly/run1"
    assert summary["manifestFilesS3Key"] == f"{base}/manifest-files.json"
    for stamp in ("startTime", "endTime", "exportTime"):
        assert datetime.strptime(summary[stamp], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert all(entry["dataFileS3Key"].startswith(f"{base}/data/") and entry["dataFileS3Key"].endswith(".json.gz")
               for entry in entries)
    lines = [json.loads(line) for entry in entries for line in read_lines(folder, entry["dataFileS3Key"])]
    assert all(set(line) == {"Item"} for line in lines)
    assert len(items) == 30
    assert by_key([line["Item"] for line in lines]) == scanned(client, name)


@pytest.mark.one_server
def test_export_is_as_of_its_time(client: Any, endpoint: str, make_table: Callable[..., str],
                                  bucket: tuple[str, Path]) -> None:
    """ExportTime in the past: the table as it was then (later writes, deletes
    undone). Any time up to now may be exported, though LatestRestorableDateTime
    (a restore's bound) is 5 minutes behind."""
    name = make_table(sk=None)
    enable(client, name)
    for n in range(5):
        client.put_item(TableName=name, Item={"pk": {"S": f"k{n}"}, "v": {"N": "1"}})
    time.sleep(PITR_SETTLE_SECONDS)
    then = datetime.fromtimestamp(int(clock(endpoint)), tz=UTC)  # botocore sends whole seconds
    time.sleep(PITR_SETTLE_SECONDS)
    client.put_item(TableName=name, Item={"pk": {"S": "k0"}, "v": {"N": "2"}})
    client.delete_item(TableName=name, Key={"pk": {"S": "k1"}})
    client.put_item(TableName=name, Item={"pk": {"S": "k9"}, "v": {"N": "1"}})
    started = client.export_table_to_point_in_time(TableArn=table_arn(client, name), S3Bucket=bucket[0],
                                                   ExportTime=then)["ExportDescription"]
    done = wait_done(client, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    assert done["ExportTime"].timestamp() == int(then.timestamp())  # botocore sent whole seconds
    _, entries = exported(bucket[1], done["ExportManifest"])
    lines = [json.loads(line)["Item"] for entry in entries for line in read_lines(bucket[1], entry["dataFileS3Key"])]
    assert by_key(lines) == by_key([{"pk": {"S": f"k{n}"}, "v": {"N": "1"}} for n in range(5)])


def test_ion_export(client: Any, make_table: Callable[..., str], bucket: tuple[str, Path]) -> None:
    from amazon.ion import simpleion

    name = make_table(sk=None)
    items = put_typed(client, name, 3)
    enable(client, name)
    started = client.export_table_to_point_in_time(TableArn=table_arn(client, name), S3Bucket=bucket[0],
                                                   ExportFormat="ION")["ExportDescription"]
    assert started["ExportFormat"] == "ION"
    done = wait_done(client, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    summary, entries = exported(bucket[1], done["ExportManifest"])
    assert summary["outputFormat"] == "ION"
    assert all(entry["dataFileS3Key"].endswith(".ion.gz") for entry in entries)
    lines = [line for entry in entries for line in read_lines(bucket[1], entry["dataFileS3Key"])]
    assert len(lines) == 3 and all(line.startswith(b"$ion_1_0 {Item:{") for line in lines)
    values = [simpleion.loads(line.decode())["Item"] for line in lines]
    first = next(value for value in values if value["pk"] == "k000")
    assert first["s"] == ITEM_TYPES["s"]["S"]
    assert first["n"] == Decimal(0) and first["big"] == Decimal("1E+30")
    assert first["b"] == b"\x00\x01bin" and first["t"] == True  # noqa: E712 (Ion's bool)
    assert first["l"] == ["a", 1] and first["m"] == {"inner": "x", "odd name": 2}
    assert first["ss"].ion_annotations[0].text == "$dynamodb_SS" and list(first["ss"]) == ["a", "b"]
    assert first["ns"].ion_annotations[0].text == "$dynamodb_NS"
    assert [str(number) for number in first["ns"]] == ["1", "2.5"]
    assert first["bs"].ion_annotations[0].text == "$dynamodb_BS" and list(first["bs"]) == [b"x", b"y"]
    assert {value["pk"] for value in values} == {item["pk"]["S"] for item in items}


def test_empty_table(client: Any, make_table: Callable[..., str], bucket: tuple[str, Path]) -> None:
    name = make_table()
    enable(client, name)
    started = client.export_table_to_point_in_time(TableArn=table_arn(client, name),
                                                   S3Bucket=bucket[0])["ExportDescription"]
    done = wait_done(client, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED" and done["ItemCount"] == 0
    summary, entries = exported(bucket[1], done["ExportManifest"])
    assert summary["itemCount"] == 0 and sum(entry["itemCount"] for entry in entries) == 0


# --- INCREMENTAL_EXPORT -------------------------------------------------------------------------


@pytest.mark.one_server
def test_incremental_export(client: Any, endpoint: str, make_table: Callable[..., str],
                            bucket: tuple[str, Path]) -> None:
    name = make_table()
    enable(client, name)
    client.put_item(TableName=name, Item={"pk": {"S": "gone"}, "sk": {"S": "1"}, "v": {"N": "1"}})
    client.put_item(TableName=name, Item={"pk": {"S": "changed"}, "sk": {"S": "1"}, "v": {"N": "1"}})
    client.put_item(TableName=name, Item={"pk": {"S": "same"}, "sk": {"S": "1"}, "v": {"N": "1"}})
    time.sleep(PITR_SETTLE_SECONDS)
    start = float(int(clock(endpoint)))  # whole seconds, as botocore sends it
    time.sleep(0.01)
    client.put_item(TableName=name, Item={"pk": {"S": "new"}, "sk": {"S": "1"}, "v": {"N": "1"}})
    client.put_item(TableName=name, Item={"pk": {"S": "changed"}, "sk": {"S": "1"}, "v": {"N": "2"}})
    client.delete_item(TableName=name, Key={"pk": {"S": "gone"}, "sk": {"S": "1"}})
    written = clock(endpoint)
    end = clock(endpoint, advance=16 * 60)
    arn = table_arn(client, name)
    datetime_of: Callable[[float], datetime] = lambda seconds: datetime.fromtimestamp(seconds, tz=UTC)  # noqa: E731
    views = {}
    for view in ("NEW_AND_OLD_IMAGES", "NEW_IMAGE"):
        started = client.export_table_to_point_in_time(
            TableArn=arn, S3Bucket=bucket[0], ExportType="INCREMENTAL_EXPORT",
            IncrementalExportSpecification={"ExportFromTime": datetime_of(start), "ExportToTime": datetime_of(end),
                                            "ExportViewType": view})["ExportDescription"]
        assert started["ExportType"] == "INCREMENTAL_EXPORT" and "ExportTime" not in started
        assert started["IncrementalExportSpecification"]["ExportViewType"] == view
        done = wait_done(client, started["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED", done
        assert done["ItemCount"] == 3
        summary, entries = exported(bucket[1], done["ExportManifest"])
        assert summary["exportType"] == "INCREMENTAL_EXPORT"
        views[view] = {json.loads(line)["Keys"]["pk"]["S"]: json.loads(line) for entry in entries
                       for line in read_lines(bucket[1], entry["dataFileS3Key"])}
    both = views["NEW_AND_OLD_IMAGES"]
    assert set(both) == {"new", "changed", "gone"}
    for line in both.values():
        micros = int(line["Metadata"]["WriteTimestampMicros"]["N"])
        assert start * 1e6 <= micros <= written * 1e6 + 1
    assert both["new"]["Keys"] == {"pk": {"S": "new"}, "sk": {"S": "1"}}
    assert both["new"]["NewImage"]["v"] == {"N": "1"} and "OldImage" not in both["new"]
    assert both["changed"]["NewImage"]["v"] == {"N": "2"} and both["changed"]["OldImage"]["v"] == {"N": "1"}
    assert both["gone"]["OldImage"]["v"] == {"N": "1"} and "NewImage" not in both["gone"]
    assert (int(both["new"]["Metadata"]["WriteTimestampMicros"]["N"])
            < int(both["gone"]["Metadata"]["WriteTimestampMicros"]["N"]))
    new_only = views["NEW_IMAGE"]
    assert all("OldImage" not in line for line in new_only.values())
    assert "NewImage" not in new_only["gone"] and new_only["changed"]["NewImage"]["v"] == {"N": "2"}
    from amazon.ion import simpleion

    started = client.export_table_to_point_in_time(
        TableArn=arn, S3Bucket=bucket[0], ExportType="INCREMENTAL_EXPORT", ExportFormat="ION",
        IncrementalExportSpecification={"ExportFromTime": datetime_of(start), "ExportToTime": datetime_of(end)},
    )["ExportDescription"]
    assert started["IncrementalExportSpecification"]["ExportViewType"] == "NEW_AND_OLD_IMAGES"  # the default
    done = wait_done(client, started["ExportArn"])
    _, entries = exported(bucket[1], done["ExportManifest"])
    ion = {value["Keys"]["pk"]: value for value in (
        simpleion.loads(line.decode()) for entry in entries for line in read_lines(bucket[1], entry["dataFileS3Key"]))}
    assert set(ion) == {"new", "changed", "gone"}
    assert ion["changed"]["NewImage"]["v"] == 2 and ion["changed"]["OldImage"]["v"] == 1
    assert int(ion["gone"]["Metadata"]["WriteTimestampMicros"]) == int(
        both["gone"]["Metadata"]["WriteTimestampMicros"]["N"])


@pytest.mark.one_server
def test_incremental_errors(client: Any, endpoint: str, make_table: Callable[..., str],
                            bucket: tuple[str, Path]) -> None:
    name = make_table()
    arn = table_arn(client, name)
    now = clock(endpoint)

    def incremental(start: float, end: float | None = None) -> Any:
        specification: dict[str, Any] = {"ExportFromTime": datetime.fromtimestamp(start, tz=UTC)}
        if end is not None:
            specification["ExportToTime"] = datetime.fromtimestamp(end, tz=UTC)
        return client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0],
                                                    ExportType="INCREMENTAL_EXPORT",
                                                    IncrementalExportSpecification=specification)

    with pytest.raises(client.exceptions.PointInTimeRecoveryUnavailableException):
        incremental(now - 3600, now)
    enable(client, name)
    now = clock(endpoint, advance=3 * 3600)
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        incremental(now - 60, now)
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        incremental(now - 1800, now - 2400)
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(client.exceptions.InvalidExportTimeException):
        incremental(now - 1800, now + 3600)
    with pytest.raises(client.exceptions.InvalidExportTimeException):
        incremental(now - 5 * 3600, now - 3600)  # before PITR was on
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ExportType="INCREMENTAL_EXPORT")
    assert error_of(excinfo)[0] == "ValidationException"
    done = wait_done(client, incremental(now - 1800)["ExportDescription"]["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED" and done["ItemCount"] == 0


# --- errors, idempotency, listing ------------------------------------------------------------------


def test_errors(client: Any, endpoint: str, make_table: Callable[..., str], unique_name: Callable[[str], str],
                bucket: tuple[str, Path]) -> None:
    name = make_table()
    arn = table_arn(client, name)
    with pytest.raises(client.exceptions.PointInTimeRecoveryUnavailableException) as excinfo:
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0])
    assert error_of(excinfo) == ("PointInTimeRecoveryUnavailableException",
                                 f"Point in time recovery is not enabled for table '{name}'")
    missing = arn.rpartition("/")[0] + "/" + unique_name("missing")
    with pytest.raises(client.exceptions.TableNotFoundException) as excinfo:
        client.export_table_to_point_in_time(TableArn=missing, S3Bucket=bucket[0])
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {missing}")  # the ARN (live)
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.export_table_to_point_in_time(TableArn=arn)
    code, message = error_of(excinfo)
    assert code == "ValidationException" and "s3Bucket" in message
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ExportFormat="CSV")
    assert error_of(excinfo)[0] == "ValidationException"
    enable(client, name)
    future = datetime.fromtimestamp(clock(endpoint) + 3600, tz=UTC)
    with pytest.raises(client.exceptions.InvalidExportTimeException):
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ExportTime=future)
    past = datetime.fromtimestamp(clock(endpoint) - 3600, tz=UTC)
    with pytest.raises(client.exceptions.InvalidExportTimeException):
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ExportTime=past)
    unknown = f"{arn}/export/01234567890123-0123abcd"
    with pytest.raises(client.exceptions.ExportNotFoundException) as excinfo:
        client.describe_export(ExportArn=unknown)
    assert error_of(excinfo) == ("ExportNotFoundException", f"Export not found: {unknown}")
    for bad in (0, 26):
        with pytest.raises(client.exceptions.ClientError) as excinfo:
            client.list_exports(MaxResults=bad)
        assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.list_exports(NextToken="not-a-token")
    assert error_of(excinfo) == ("ValidationException", "Invalid NextToken: not-a-token")
    with pytest.raises(client.exceptions.ClientError) as excinfo:
        client.export_table_to_point_in_time(TableArn=name, S3Bucket=bucket[0])
    assert error_of(excinfo)[0] == "ValidationException"


def test_client_token(client: Any, make_table: Callable[..., str], bucket: tuple[str, Path]) -> None:
    name = make_table()
    enable(client, name)
    arn = table_arn(client, name)
    first = client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ClientToken="same-token")
    again = client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ClientToken="same-token")
    assert again["ExportDescription"]["ExportArn"] == first["ExportDescription"]["ExportArn"]
    with pytest.raises(client.exceptions.ExportConflictException):
        client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ClientToken="same-token",
                                             ExportFormat="ION")
    other = client.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket[0], ClientToken="other-token")
    assert other["ExportDescription"]["ExportArn"] != first["ExportDescription"]["ExportArn"]
    for started in (first, other):
        assert wait_done(client, started["ExportDescription"]["ExportArn"])["ExportStatus"] == "COMPLETED"


def test_list_exports(client: Any, make_table: Callable[..., str], bucket: tuple[str, Path]) -> None:
    names = [make_table(), make_table()]
    arns = []
    for name in names:
        enable(client, name)
        arns.append(table_arn(client, name))
    mine = [client.export_table_to_point_in_time(TableArn=arns[0], S3Bucket=bucket[0])["ExportDescription"]
            ["ExportArn"] for _ in range(3)]
    theirs = client.export_table_to_point_in_time(TableArn=arns[1], S3Bucket=bucket[0])["ExportDescription"][
        "ExportArn"]
    for export_arn in [*mine, theirs]:
        done = wait_done(client, export_arn)
        assert done["ExportStatus"] == "COMPLETED", done
    listed = client.list_exports(TableArn=arns[0])
    assert [summary["ExportArn"] for summary in listed["ExportSummaries"]] == mine
    assert all(set(summary) == {"ExportArn", "ExportStatus", "ExportType"} for summary in listed["ExportSummaries"])
    assert all(summary["ExportStatus"] == "COMPLETED" for summary in listed["ExportSummaries"])
    assert "NextToken" not in listed
    paged, token = [], None
    while True:
        arguments: dict[str, Any] = {"TableArn": arns[0], "MaxResults": 2}
        if token is not None:
            arguments["NextToken"] = token
        page = client.list_exports(**arguments)
        assert len(page["ExportSummaries"]) <= 2
        paged.extend(summary["ExportArn"] for summary in page["ExportSummaries"])
        token = page.get("NextToken")
        if token is None:
            break
    assert paged == mine
    everything = [summary["ExportArn"] for summary in client.get_paginator("list_exports").paginate().build_full_result()[
        "ExportSummaries"]] if hasattr(client, "get_paginator") and client.can_paginate("list_exports") else None
    if everything is not None:
        assert set(mine) | {theirs} <= set(everything)


def test_progress_route(client: Any, endpoint: str) -> None:
    with urllib.request.urlopen(f"{endpoint}/_dynastore/exports/jobs", timeout=10) as reply:
        answer = json.loads(reply.read())
    assert isinstance(answer["Jobs"], list)
    assert all(job["Kind"] == "export" and {"Items", "Bytes", "TotalItems", "TotalBytes"} <= set(job)
               for job in answer["Jobs"])


def test_aws_cli(endpoint: str, client: Any, make_table: Callable[..., str], bucket: tuple[str, Path]) -> None:
    name = make_table()
    enable(client, name)
    completed = subprocess.run(
        [sys.executable, "-m", "awscli", "dynamodb", "export-table-to-point-in-time", "--table-arn",
         table_arn(client, name), "--s3-bucket", bucket[0], "--export-format", "ION", "--endpoint-url", endpoint,
         "--region", "us-east-1", "--output", "json"],
        capture_output=True, text=True, timeout=60,
        env={"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "PATH": "/usr/bin:/bin"},
    )
    assert completed.returncode == 0, completed.stderr
    description = json.loads(completed.stdout)["ExportDescription"]
    assert description["ExportFormat"] == "ION"
    assert wait_done(client, description["ExportArn"])["ExportStatus"] == "COMPLETED"


# --- several data files (in process: the file size limit made small) -------------------------


def test_several_data_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import dynastore
    from dynastore import limits

    monkeypatch.setattr(limits, "EXPORT_DATA_FILE_BYTES", 2000)
    monkeypatch.setattr(limits, "EXPORT_PAGE_ROWS", 10)
    database = dynastore.open(tmp_path / "data")
    try:
        local = database.client()
        local.create_table(TableName="several", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")
        for n in range(200):
            local.put_item(TableName="several", Item={"pk": {"S": f"k{n}"}, "pad": {"S": "x" * 50}})
        local.update_continuous_backups(TableName="several", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        arn = local.describe_table(TableName="several")["Table"]["TableArn"]
        started = local.export_table_to_point_in_time(TableArn=arn, S3Bucket="many")["ExportDescription"]
        done = wait_done(local, started["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED" and done["ItemCount"] == 200
        folder = tmp_path / "data" / "buckets" / "many"
        _, entries = exported(folder, done["ExportManifest"])
        assert len(entries) > 3
        assert len({entry["dataFileS3Key"] for entry in entries}) == len(entries)
        assert sum(entry["itemCount"] for entry in entries) == 200
    finally:
        database.close()


# --- a real S3-compatible server ---------------------------------------------------------------


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[str]:
    """moto's server on a free port (a real S3 API over HTTP)."""
    port = free_port()
    executable = Path(sys.executable).with_name("moto_server")
    log = tempfile.TemporaryFile()
    process = subprocess.Popen([str(executable), "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    process.log_file = log  # type: ignore[attr-defined]
    wait_for_port(port, process)  # type: ignore[arg-type]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(process)  # type: ignore[arg-type]


S3_ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def test_export_to_s3(moto_s3: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in S3_ENVIRONMENT.items():
        monkeypatch.setenv(variable, value)
    s3 = boto3.client("s3", endpoint_url=moto_s3, region_name="us-east-1")
    s3.create_bucket(Bucket="exports-here")
    process, url = start_server("--in-memory", "--s3-endpoint", moto_s3, environment=S3_ENVIRONMENT)
    try:
        dynamodb = make_client(url)
        dynamodb.create_table(TableName="to-s3", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                              AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                              BillingMode="PAY_PER_REQUEST")
        for n in range(20):
            dynamodb.put_item(TableName="to-s3", Item={"pk": {"S": f"k{n}"}})
        enable(dynamodb, "to-s3")
        arn = table_arn(dynamodb, "to-s3")
        started = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports-here", S3Prefix="p")
        done = wait_done(dynamodb, started["ExportDescription"]["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED", done
        summary = json.loads(s3.get_object(Bucket="exports-here", Key=done["ExportManifest"])["Body"].read())
        assert summary["itemCount"] == 20
        files = s3.get_object(Bucket="exports-here", Key=summary["manifestFilesS3Key"])["Body"].read()
        keys = set()
        for entry in map(json.loads, files.splitlines()):
            data = s3.get_object(Bucket="exports-here", Key=entry["dataFileS3Key"])["Body"].read()
            keys |= {json.loads(line)["Item"]["pk"]["S"] for line in gzip.decompress(data).splitlines()}
        assert keys == {f"k{n}" for n in range(20)}
        failed = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="no-such-bucket")
        failed_done = wait_done(dynamodb, failed["ExportDescription"]["ExportArn"])
        assert failed_done["ExportStatus"] == "FAILED"
        assert failed_done["FailureCode"] == "S3NoSuchBucket" and failed_done["FailureMessage"]
        assert "ExportManifest" not in failed_done
    finally:
        stop_server(process)


# --- kill -9 during an export --------------------------------------------------------------------


def _jobs(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/_dynastore/exports/jobs", timeout=10) as reply:
        jobs: list[dict[str, Any]] = json.loads(reply.read())["Jobs"]
        return jobs


@pytest.mark.slow
def test_kill_9_during_export(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    process, url = start_server("--data-dir", str(data_dir), "--single-process")
    try:
        dynamodb = make_client(url)
        dynamodb.create_table(TableName="killed", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                              AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                              BillingMode="PAY_PER_REQUEST")
        count = 12_000
        pad = "x" * 400
        for start in range(0, count, 25):
            dynamodb.batch_write_item(RequestItems={"killed": [
                {"PutRequest": {"Item": {"pk": {"S": f"k{n:06d}"}, "pad": {"S": pad}}}}
                for n in range(start, min(start + 25, count))]})
        enable(dynamodb, "killed")
        export_arn = dynamodb.export_table_to_point_in_time(
            TableArn=table_arn(dynamodb, "killed"), S3Bucket="crash")["ExportDescription"]["ExportArn"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            jobs = _jobs(url)
            if not jobs or jobs[0]["Items"] > 0:
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        folder = data_dir / "buckets" / "crash"
        manifests = list(folder.rglob("manifest-summary.json"))
        if manifests:  # it had finished before the kill landed: then it is whole
            summary, _ = exported(folder, manifests[0].relative_to(folder).as_posix())
            assert summary["itemCount"] == count
    finally:
        stop_server(process)
    process, url = start_server("--data-dir", str(data_dir), "--single-process")
    try:
        dynamodb = make_client(url)
        done = wait_done(dynamodb, export_arn)
        # It resumes where its last whole data file ended (FAILED with a
        # reason would be DynamoDB-like too; dynastore completes it).
        assert done["ExportStatus"] == "COMPLETED", done
        assert done["ItemCount"] == count
        summary, entries = exported(folder, done["ExportManifest"])
        keys = [json.loads(line)["Item"]["pk"]["S"] for entry in entries
                for line in read_lines(folder, entry["dataFileS3Key"])]
        assert len(keys) == count and set(keys) == {f"k{n:06d}" for n in range(count)}
        assert summary["itemCount"] == count
        in_data = {path.relative_to(folder).as_posix() for path in folder.rglob("data/*.gz")}
        assert in_data == {entry["dataFileS3Key"] for entry in entries}  # no stray data file
    finally:
        stop_server(process)


# --- dynastore export -------------------------------------------------------------------------------


def _command(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dynastore", "export", *arguments],
                          capture_output=True, text=True, timeout=120)


def _files_of(directory: Path) -> list[dict[str, Any]]:
    (summary_path,) = directory.rglob("manifest-summary.json")
    summary, entries = exported(directory, summary_path.relative_to(directory).as_posix())
    assert summary["itemCount"] == sum(entry["itemCount"] for entry in entries)
    return [json.loads(line) for entry in entries for line in read_lines(directory, entry["dataFileS3Key"])]


def test_command_over_data_dir(tmp_path: Path) -> None:
    import dynastore

    data_dir = tmp_path / "data"
    database = dynastore.open(data_dir)
    local = database.client()
    local.create_table(TableName="cmd", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                       BillingMode="PAY_PER_REQUEST")
    for n in range(50):
        local.put_item(TableName="cmd", Item={"pk": {"S": f"k{n}"}, "n": {"N": str(n)}})
    database.close()
    target = tmp_path / "out"
    completed = _command("cmd", str(target), "--data-dir", str(data_dir))
    assert completed.returncode == 0, completed.stderr
    assert "50 items" in completed.stdout
    lines = _files_of(target)
    assert sorted(line["Item"]["pk"]["S"] for line in lines) == sorted(f"k{n}" for n in range(50))
    ion_target = tmp_path / "ion"
    completed = _command("cmd", str(ion_target), "--data-dir", str(data_dir), "--format", "ion")
    assert completed.returncode == 0, completed.stderr
    assert next(ion_target.rglob("*.ion.gz"))
    missing = _command("nope", str(tmp_path / "x"), "--data-dir", str(data_dir))
    assert missing.returncode != 0 and "nope" in missing.stderr
    no_pitr = _command("cmd", str(tmp_path / "y"), "--data-dir", str(data_dir), "--at", "2026-01-01T00:00:00Z")
    assert no_pitr.returncode != 0 and "PointInTimeRecoveryUnavailableException" in no_pitr.stderr


def test_command_at_a_time(tmp_path: Path) -> None:
    """--at: the table as it was then (PITR on), whatever was written after."""
    import dynastore

    data_dir = tmp_path / "data"
    database = dynastore.open(data_dir)
    local = database.client()
    local.create_table(TableName="then", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                       BillingMode="PAY_PER_REQUEST")
    local.update_continuous_backups(TableName="then", PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    for n in range(10):
        local.put_item(TableName="then", Item={"pk": {"S": f"k{n}"}})
    time.sleep(0.05)
    moment = datetime.now(tz=UTC).isoformat()
    time.sleep(0.05)
    for n in range(10, 20):
        local.put_item(TableName="then", Item={"pk": {"S": f"k{n}"}})
    local.delete_item(TableName="then", Key={"pk": {"S": "k0"}})
    database.close()
    completed = _command("then", str(tmp_path / "out"), "--data-dir", str(data_dir), "--at", moment)
    assert completed.returncode == 0, completed.stderr
    lines = _files_of(tmp_path / "out")
    assert sorted(line["Item"]["pk"]["S"] for line in lines) == sorted(f"k{n}" for n in range(10))


def test_table_deleted_during_export(tmp_path: Path) -> None:
    """The export's table goes half-way: the export ends FAILED with a reason,
    no manifest is written and the view is released."""
    import dynastore
    from dynastore.backups import exports

    embedded = dynastore.open(tmp_path / "data")
    try:
        local = embedded.client()
        local.create_table(TableName="doomed", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")
        for n in range(30):
            local.put_item(TableName="doomed", Item={"pk": {"S": f"k{n}"}})
        local.update_continuous_backups(TableName="doomed", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        database = embedded.database
        arn = database.tables["doomed"].arn
        record = exports.start_export(database, {"TableArn": arn, "S3Bucket": "doomed"}, run=False)
        record = exports.export_step(database, record, max_rows=10)
        assert record.status == "IN_PROGRESS" and record.item_count == 10
        local.delete_table(TableName="doomed")
        record = exports.export_step(database, record, max_rows=10)
        assert record.status == "FAILED" and record.failure_code == "TableNotFound"
        assert "deleted" in (record.failure_message or "")
        described = local.describe_export(ExportArn=record.arn)["ExportDescription"]
        assert described["ExportStatus"] == "FAILED" and described["FailureMessage"] == record.failure_message
        assert not list((tmp_path / "data" / "buckets" / "doomed").rglob("manifest-summary.json"))
    finally:
        embedded.close()


def test_command_over_endpoint(client: Any, endpoint: str, make_table: Callable[..., str], tmp_path: Path) -> None:
    name = make_table(sk=None)
    items = put_typed(client, name, 20)
    completed = _command(name, str(tmp_path / "out"), "--endpoint", endpoint)
    assert completed.returncode == 0, completed.stderr
    assert "20 items" in completed.stdout
    lines = _files_of(tmp_path / "out")
    assert len(items) == 20
    assert by_key([line["Item"] for line in lines]) == scanned(client, name)




def test_command_over_endpoint_with_pitr(client: Any, endpoint: str, make_table: Callable[..., str],
                                         tmp_path: Path, embedded_database: Any) -> None:
    """PITR on: the server makes the export (one point in time) and the
    command copies the finished folder; --at picks the time."""
    name = make_table(sk=None)
    enable(client, name)
    for n in range(15):
        client.put_item(TableName=name, Item={"pk": {"S": f"k{n}"}})
    time.sleep(PITR_SETTLE_SECONDS)
    # The server's clock (other tests move it), in whole seconds.
    moment = datetime.fromtimestamp(int(clock(endpoint)), tz=UTC).isoformat()
    time.sleep(PITR_SETTLE_SECONDS)
    client.put_item(TableName=name, Item={"pk": {"S": "later"}})
    bucket_name = f"cmd-{uuid.uuid4().hex[:8]}"
    try:
        completed = _command(name, str(tmp_path / "now"), "--endpoint", endpoint, "--bucket", bucket_name)
        assert completed.returncode == 0, completed.stderr
        assert "16 items" in completed.stdout
        assert len(_files_of(tmp_path / "now")) == 16
        listed = client.list_exports(TableArn=table_arn(client, name))["ExportSummaries"]
        assert len(listed) == 1 and listed[0]["ExportStatus"] == "COMPLETED"
        completed = _command(name, str(tmp_path / "then"), "--endpoint", endpoint, "--bucket", bucket_name,
                             "--at", moment)
        assert completed.returncode == 0, completed.stderr
        assert sorted(line["Item"]["pk"]["S"] for line in _files_of(tmp_path / "then")) == sorted(
            f"k{n}" for n in range(15))
    finally:
        shutil.rmtree(bucket_root(embedded_database) / bucket_name, ignore_errors=True)


def test_writes_during_an_export_are_not_in_it(client: Any, make_table: Callable[..., str],
                                               bucket: tuple[str, Path]) -> None:
    """The export reads one point in time: writes made while it runs (they
    interleave with its pages on the server) do not reach its files."""
    name = make_table(sk=None)
    count = 3000
    for start in range(0, count, 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": f"k{n:05d}"}, "v": {"N": "1"}}}}
            for n in range(start, min(start + 25, count))]})
    enable(client, name)
    started = client.export_table_to_point_in_time(TableArn=table_arn(client, name),
                                                   S3Bucket=bucket[0])["ExportDescription"]
    for n in range(0, count, 7):
        client.put_item(TableName=name, Item={"pk": {"S": f"k{n:05d}"}, "v": {"N": "2"}})
    client.delete_item(TableName=name, Key={"pk": {"S": "k00001"}})
    client.put_item(TableName=name, Item={"pk": {"S": "added"}, "v": {"N": "2"}})
    done = wait_done(client, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED" and done["ItemCount"] == count
    _, entries = exported(bucket[1], done["ExportManifest"])
    lines = [json.loads(line)["Item"] for entry in entries for line in read_lines(bucket[1], entry["dataFileS3Key"])]
    assert sorted(line["pk"]["S"] for line in lines) == [f"k{n:05d}" for n in range(count)]
    assert all(line["v"] == {"N": "1"} for line in lines)


def test_concurrent_exports_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Past EXPORTS_IN_PROGRESS_MAX exports in progress: LimitExceededException."""
    import dynastore
    from dynastore import limits
    from dynastore.backups import exports
    from dynastore.errors import LimitExceededException

    monkeypatch.setattr(limits, "EXPORTS_IN_PROGRESS_MAX", 2)
    embedded = dynastore.open(tmp_path / "data")
    try:
        local = embedded.client()
        local.create_table(TableName="limited", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")
        local.update_continuous_backups(TableName="limited", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        database = embedded.database
        request = {"TableArn": database.tables["limited"].arn, "S3Bucket": "limited"}
        running = [exports.start_export(database, request, run=False) for _ in range(2)]
        with pytest.raises(LimitExceededException):
            exports.start_export(database, request, run=False)
        while running[0].status == "IN_PROGRESS":
            running[0] = exports.export_step(database, running[0])
        assert exports.start_export(database, request, run=False).status == "IN_PROGRESS"
    finally:
        embedded.close()


# --- a property: exports equal a replay of the writes --------------------------------------------

OP_SECONDS = 61.0
"""Time between two writes of the property test (an incremental period of at
least 15 minutes then spans a handful of them)."""


def _replay(writes: list[tuple[float, str, int | None]], before: float) -> dict[str, int]:
    state: dict[str, int] = {}
    for at, key, value in writes:
        if at >= before:
            break
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def _export_lines(local: Any, folder: Path, **request: Any) -> list[dict[str, Any]]:
    started = local.export_table_to_point_in_time(S3Bucket="prop", **request)["ExportDescription"]
    done = wait_done(local, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    _, entries = exported(folder, done["ExportManifest"])
    return [json.loads(line) for entry in entries for line in read_lines(folder, entry["dataFileS3Key"])]


def test_exports_equal_a_replay() -> None:
    """Random puts and deletes of a few keys at known times: a FULL_EXPORT at
    any second equals the replay up to it, an INCREMENTAL_EXPORT of any period
    holds exactly the keys whose state differs between its ends, with both
    images and each key's last write time."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    import dynastore
    from dynastore.backups import buckets as bucket_module
    from dynastore.clock import DatabaseClock

    write = st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.one_of(st.none(), st.integers(0, 3)))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(writes=st.lists(write, min_size=1, max_size=40), full_at=st.integers(0, 40),
           since=st.integers(0, 40), span=st.integers(15, 60))
    def check(writes: list[tuple[str, int | None]], full_at: int, since: int, span: int) -> None:
        now = [1_900_000_000.0]
        embedded = dynastore.open(clock=DatabaseClock(source=lambda: now[0]))
        folder = Path(tempfile.mkdtemp(prefix="dynastore-prop-"))
        try:
            bucket_module.configure(embedded.database.storage, bucket_module.LocalBuckets(folder))
            local = embedded.client()
            local.create_table(TableName="prop", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                               AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                               BillingMode="PAY_PER_REQUEST")
            local.update_continuous_backups(TableName="prop", PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": True})
            start = now[0]
            timed: list[tuple[float, str, int | None]] = []
            for number, (key, value) in enumerate(writes):
                now[0] = start + 0.5 + number * OP_SECONDS  # writes at x.5 s, boundaries at whole seconds
                if value is None:
                    local.delete_item(TableName="prop", Key={"pk": {"S": key}})
                else:
                    local.put_item(TableName="prop", Item={"pk": {"S": key}, "v": {"N": str(value)}})
                timed.append((now[0], key, value))
            now[0] = start + 41 * OP_SECONDS + 61 * 60  # past every period this test asks for
            arn = local.describe_table(TableName="prop")["Table"]["TableArn"]
            at = start + 1 + min(full_at, len(writes)) * OP_SECONDS
            full = _export_lines(local, folder / "prop", TableArn=arn,
                                 ExportTime=datetime.fromtimestamp(at, tz=UTC))
            assert {line["Item"]["pk"]["S"]: int(line["Item"]["v"]["N"]) for line in full} == _replay(timed, at)
            begin = start + 1 + min(since, len(writes)) * OP_SECONDS
            end = begin + span * 60
            changes = _export_lines(local, folder / "prop", TableArn=arn, ExportType="INCREMENTAL_EXPORT",
                                    IncrementalExportSpecification={
                                        "ExportFromTime": datetime.fromtimestamp(begin, tz=UTC),
                                        "ExportToTime": datetime.fromtimestamp(end, tz=UTC)})
            old, new = _replay(timed, begin), _replay(timed, end)
            expected = {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
            assert {line["Keys"]["pk"]["S"] for line in changes} == expected
            for line in changes:
                key = line["Keys"]["pk"]["S"]
                assert ("NewImage" in line) == (key in new) and ("OldImage" in line) == (key in old)
                if key in new:
                    assert int(line["NewImage"]["v"]["N"]) == new[key]
                if key in old:
                    assert int(line["OldImage"]["v"]["N"]) == old[key]
                # Its last write before the end that wrote something (a
                # delete of an absent item writes nothing).
                last = max(at for at, written, value in timed
                           if written == key and at < end and (value is not None or key in _replay(timed, at)))
                assert int(line["Metadata"]["WriteTimestampMicros"]["N"]) == int(last * 1_000_000)
        finally:
            embedded.close()
            shutil.rmtree(folder, ignore_errors=True)

    check()


def test_a_step_that_keeps_failing_ends_the_export(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A bug in a step does not leave the export IN_PROGRESS for ever: after
    STEP_ATTEMPTS failures in a row it ends FAILED with the error."""
    import dynastore
    from dynastore.backups import exports

    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(exports, "_page_lines", broken)
    embedded = dynastore.open(tmp_path / "data")
    try:
        local = embedded.client()
        local.create_table(TableName="broken", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")
        local.update_continuous_backups(TableName="broken", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        arn = local.describe_table(TableName="broken")["Table"]["TableArn"]
        started = local.export_table_to_point_in_time(TableArn=arn, S3Bucket="broken")["ExportDescription"]
        described = local.describe_export(ExportArn=started["ExportArn"])["ExportDescription"]
        assert described["ExportStatus"] == "FAILED"
        assert described["FailureCode"] == "InternalError" and "boom" in described["FailureMessage"]
        table = embedded.database.tables["broken"]
        assert not any(holder.startswith("export/") for holder in exports.pitr.holders(table))
    finally:
        embedded.close()


def test_a_lost_view_is_held_again(tmp_path: Path) -> None:
    """Two holds or releases of one table's view at one moment can overwrite
    each other (a shared store): the export holds its time again while PITR
    keeps it readable, and otherwise ends FAILED saying why."""
    import dynastore
    from dynastore.backups import exports, pitr

    embedded = dynastore.open(tmp_path / "data")
    try:
        local = embedded.client()
        database = embedded.database
        for name in ("kept", "nopitr"):
            local.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                               AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                               BillingMode="PAY_PER_REQUEST")
            for n in range(20):
                local.put_item(TableName=name, Item={"pk": {"S": f"k{n}"}})
        local.update_continuous_backups(TableName="kept", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        kept = exports.start_export(database, {"TableArn": database.tables["kept"].arn, "S3Bucket": "lost"},
                                    run=False)
        unheld = exports.start_export(database, {"TableArn": database.tables["nopitr"].arn, "S3Bucket": "lost"},
                                      run=False, require_pitr=False)
        local.put_item(TableName="kept", Item={"pk": {"S": "after"}})
        for record in (kept, unheld):
            pitr.release(database, record.table_name, record.holder)  # as a lost update would
        while kept.status == "IN_PROGRESS":
            kept = exports.export_step(database, kept)
        assert kept.status == "COMPLETED" and kept.item_count == 20
        unheld = exports.export_step(database, unheld)
        assert unheld.status == "FAILED" and "cannot be held again" in (unheld.failure_message or "")
    finally:
        embedded.close()
