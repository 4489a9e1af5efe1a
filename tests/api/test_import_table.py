"""ImportTable, DescribeImport, ListImports over boto3 on every store
(dynastore/backups/imports.py, docs/import.md).

The servers read S3 buckets as folders: ``./dynastore-buckets/<bucket>``
for the in-memory and PostgreSQL servers (started in this directory), and
``<data-dir>/buckets/<bucket>`` for the embedded database. Each test writes
its objects into a bucket of its own and removes it at the end.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.conftest import make_client, start_server, stop_server
from tests.api.helpers import error_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
AWS_EXPORT = FIXTURES / "aws-export"
AWS_EXPORT_ID = "01764747600000-5c2a9e1f"
IMPORT_ARN = re.compile(r"arn:aws:dynamodb:us-east-1:\d{12}:table/(?P<table>[^/]+)/import/\d{14}-[0-9a-f]{8}")
WAIT_SECONDS = 60.0


class Bucket:
    """A bucket of the server under test, as a folder."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.path = root / name

    def put(self, key: str, data: bytes) -> None:
        path = self.path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def buckets_root(embedded_database: Any) -> Path:
    if embedded_database is not None:
        return Path(embedded_database.database.storage.directory) / "buckets"
    return Path("dynastore-buckets").resolve()


@pytest.fixture
def bucket(embedded_database: Any, endpoint: str, request: pytest.FixtureRequest) -> Iterator[Bucket]:
    if request.config.getoption("--endpoint"):
        pytest.skip("the buckets of another endpoint are not folders here")
    made = Bucket(buckets_root(embedded_database), f"imports-{uuid.uuid4().hex[:10]}")
    made.path.mkdir(parents=True)
    try:
        yield made
    finally:
        shutil.rmtree(made.path, ignore_errors=True)


@pytest.fixture
def imported(client: Any) -> Iterator[list[str]]:
    """Tables the test's imports create, deleted at the end."""
    names: list[str] = []
    yield names
    for name in names:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                client.delete_table(TableName=name)
            except client.exceptions.ResourceNotFoundException:
                pass
            except client.exceptions.ResourceInUseException:  # still CREATING: its import runs
                if time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise
            break


def creation(name: str, pk: tuple[str, str] = ("pk", "S"), sk: tuple[str, str] | None = None,
             **extra: Any) -> dict[str, Any]:
    key_schema = [{"AttributeName": pk[0], "KeyType": "HASH"}]
    definitions = [{"AttributeName": pk[0], "AttributeType": pk[1]}]
    if sk is not None:
        key_schema.append({"AttributeName": sk[0], "KeyType": "RANGE"})
        definitions.append({"AttributeName": sk[0], "AttributeType": sk[1]})
    for definition in extra.pop("ExtraDefinitions", ()):
        definitions.append(definition)
    return {"TableName": name, "KeySchema": key_schema, "AttributeDefinitions": definitions,
            "BillingMode": "PAY_PER_REQUEST", **extra}


def start_import(client: Any, bucket: Bucket, table: str, imported: list[str], *, prefix: str = "",
                 input_format: str = "DYNAMODB_JSON", compression: str = "NONE", **extra: Any) -> str:
    imported.append(table)
    parameters = {"S3BucketSource": {"S3Bucket": bucket.name, "S3KeyPrefix": prefix},
                  "InputFormat": input_format, "InputCompressionType": compression}
    parameters.setdefault("TableCreationParameters", creation(table))
    parameters.update(extra)
    description = client.import_table(**parameters)["ImportTableDescription"]
    assert description["ImportStatus"] in ("IN_PROGRESS", "COMPLETED")
    match = IMPORT_ARN.fullmatch(description["ImportArn"])
    assert match is not None and match["table"] == table
    return str(description["ImportArn"])


def wait_import(client: Any, arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        description: dict[str, Any] = client.describe_import(ImportArn=arn)["ImportTableDescription"]
        if description["ImportStatus"] != "IN_PROGRESS":
            return description
        assert time.monotonic() < deadline, description
        time.sleep(0.1)


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**arguments)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return by_key(items)
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def json_lines(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps({"Item": item}) + "\n" for item in items).encode()


def sample_items(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"pk": {"S": f"k{i:05d}"}, "n": {"N": str(i)}, "s": {"S": "x" * (i % 7)},
             "tags": {"SS": ["a", f"t{i}"]}} for i in range(start, start + count)]


def by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=repr))


# --- DYNAMODB_JSON in every compression -----------------------------------------------------


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "NONE": lambda data: data,
    "GZIP": gzip.compress,
    "ZSTD": lambda data: zstandard.ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_dynamodb_json_in_every_compression(client: Any, bucket: Bucket, imported: list[str],
                                            unique_name: Callable[[str], str], compression: str) -> None:
    items = sample_items(2300)  # more than one background step's page
    compress = COMPRESSORS[compression]
    bucket.put("in/part-1", compress(json_lines(items[:1500])))
    bucket.put("in/part-2", compress(json_lines(items[1500:])))
    bucket.put("elsewhere/ignored", compress(json_lines(sample_items(5, 9000))))
    table = unique_name("imp")
    arn = start_import(client, bucket, table, imported, prefix="in/", compression=compression)
    described = wait_import(client, arn)
    assert described["ImportStatus"] == "COMPLETED"
    assert described["ProcessedItemCount"] == 2300
    assert described["ImportedItemCount"] == 2300
    assert described["ErrorCount"] == 0
    sizes = sum(path.stat().st_size for path in (bucket.path / "in").iterdir())
    assert described["ProcessedSizeBytes"] == sizes
    assert described["InputCompressionType"] == compression
    assert described["EndTime"] >= described["StartTime"]
    assert described["CloudWatchLogGroupArn"].startswith("arn:aws:logs:us-east-1:")
    table_description = client.describe_table(TableName=table)["Table"]
    assert table_description["TableStatus"] == "ACTIVE"
    assert table_description["TableArn"] == described["TableArn"]
    assert table_description["TableId"] == described["TableId"]
    assert table_description["ItemCount"] == 2300
    assert scan_all(client, table) == by_key(items)


def test_zstd_frames_and_gzip_members_concatenated(client: Any, bucket: Bucket, imported: list[str],
                                                   unique_name: Callable[[str], str]) -> None:
    items = sample_items(20)
    bucket.put("g/x.gz", gzip.compress(json_lines(items[:10])) + gzip.compress(json_lines(items[10:])))
    table = unique_name("imp")
    described = wait_import(client, start_import(client, bucket, table, imported, prefix="g/", compression="GZIP"))
    assert described["ImportedItemCount"] == 20
    compressor = zstandard.ZstdCompressor()
    bucket.put("z/x.zst", compressor.compress(json_lines(items[:10])) + compressor.compress(json_lines(items[10:])))
    table2 = unique_name("imp")
    described = wait_import(client, start_import(client, bucket, table2, imported, prefix="z/", compression="ZSTD"))
    assert described["ImportedItemCount"] == 20
    assert scan_all(client, table2) == by_key(items)


# --- CSV ---------------------------------------------------------------------------------


def test_csv_with_header_line(client: Any, bucket: Bucket, imported: list[str],
                              unique_name: Callable[[str], str]) -> None:
    bucket.put("c/one.csv", b'pk,sk,count,note\nalpha,1,10,"hello, world"\nalpha,2,020,\nbeta,1.5,x,"say ""hi"""\n')
    table = unique_name("imp")
    arn = start_import(client, bucket, table, imported, prefix="c/", input_format="CSV",
                       TableCreationParameters=creation(table, ("pk", "S"), ("sk", "N")))
    described = wait_import(client, arn)
    assert (described["ImportStatus"], described["ImportedItemCount"], described["ErrorCount"]) == ("COMPLETED", 3, 0)
    assert scan_all(client, table) == by_key([
        # Every value a string except the key attributes (typed by the key
        # schema); an empty cell is no attribute.
        {"pk": {"S": "alpha"}, "sk": {"N": "1"}, "count": {"S": "10"}, "note": {"S": "hello, world"}},
        {"pk": {"S": "alpha"}, "sk": {"N": "2"}, "count": {"S": "020"}},
        {"pk": {"S": "beta"}, "sk": {"N": "1.5"}, "count": {"S": "x"}, "note": {"S": 'say "hi"'}},
    ])


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_csv_header_list_and_delimiter(client: Any, bucket: Bucket, imported: list[str],
                                       unique_name: Callable[[str], str], delimiter: str) -> None:
    rows = [["7", "a", "b"], ["8", "c", "d"]]
    text = "".join(delimiter.join(row) + "\n" for row in rows)
    bucket.put("c/1.csv.gz", gzip.compress(text.encode()))
    bucket.put("c/2.csv.gz", gzip.compress(f"9{delimiter}e{delimiter}f\n".encode()))
    table = unique_name("imp")
    arn = start_import(client, bucket, table, imported, prefix="c/", input_format="CSV", compression="GZIP",
                       InputFormatOptions={"Csv": {"Delimiter": delimiter, "HeaderList": ["id", "x", "y"]}},
                       TableCreationParameters=creation(table, ("id", "N")))
    described = wait_import(client, arn)
    assert described["InputFormatOptions"] == {"Csv": {"Delimiter": delimiter, "HeaderList": ["id", "x", "y"]}}
    assert described["ImportedItemCount"] == 3  # with HeaderList, every first line is data
    assert scan_all(client, table) == by_key([
        {"id": {"N": n}, "x": {"S": x}, "y": {"S": y}} for n, x, y in (("7", "a", "b"), ("8", "c", "d"), ("9", "e", "f"))
    ])


def test_csv_errors_are_counted(client: Any, bucket: Bucket, imported: list[str],
                                unique_name: Callable[[str], str]) -> None:
    bucket.put("c/x.csv", b"id,v\n1,a\nnot-a-number,b\n,c\n2,d,extra\n3,e\n")
    table = unique_name("imp")
    described = wait_import(client, start_import(
        client, bucket, table, imported, prefix="c/", input_format="CSV",
        TableCreationParameters=creation(table, ("id", "N"))))
    assert described["ImportStatus"] == "COMPLETED"
    assert (described["ProcessedItemCount"], described["ImportedItemCount"], described["ErrorCount"]) == (5, 2, 3)
    assert scan_all(client, table) == by_key([{"id": {"N": "1"}, "v": {"S": "a"}}, {"id": {"N": "3"}, "v": {"S": "e"}}])


# --- ION ---------------------------------------------------------------------------------


ION_DATA = b"""$ion_1_0
{Item:{pk:"a",n:12,d:1.50,f:2.5e0,b:{{aGVsbG8=}},t:true,z:null,l:[1,"s",null],m:{k:false,deep:{x:"y"}},
ss:$dynamodb_SS::["x","y"],ns:$dynamodb_NS::[1,2.5],bs:$dynamodb_BS::[{{AAE=}}]}}
{Item:{pk:"b",empty:""}}
"""


@pytest.mark.parametrize("compression", ["NONE", "GZIP"])
def test_ion(client: Any, bucket: Bucket, imported: list[str], unique_name: Callable[[str], str],
             compression: str) -> None:
    bucket.put("i/data.ion", COMPRESSORS[compression](ION_DATA))
    table = unique_name("imp")
    described = wait_import(client, start_import(client, bucket, table, imported, prefix="i/",
                                                 input_format="ION", compression=compression))
    assert (described["ImportStatus"], described["ImportedItemCount"], described["ErrorCount"]) == ("COMPLETED", 2, 0)
    items = {item["pk"]["S"]: item for item in scan_all(client, table)}
    assert items["a"] == {
        "pk": {"S": "a"}, "n": {"N": "12"}, "d": {"N": "1.5"}, "f": {"N": "2.5"}, "b": {"B": b"hello"},
        "t": {"BOOL": True}, "z": {"NULL": True}, "l": {"L": [{"N": "1"}, {"S": "s"}, {"NULL": True}]},
        "m": {"M": {"k": {"BOOL": False}, "deep": {"M": {"x": {"S": "y"}}}}},
        "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b"\x00\x01"]},
    }
    assert items["b"] == {"pk": {"S": "b"}, "empty": {"S": ""}}


# --- errors in the data ---------------------------------------------------------------------


def test_errors_in_the_data_are_counted_and_logged(client: Any, endpoint: str, bucket: Bucket,
                                                   imported: list[str], unique_name: Callable[[str], str]) -> None:
    good = sample_items(3)
    lines = [json.dumps({"Item": item}) for item in good] + [
        json.dumps({"Item": {"other": {"S": "no key"}}}),
        json.dumps({"Item": {"pk": {"N": "1"}}}),  # the key of the wrong type
        json.dumps({"Item": {"pk": {"S": "big"}, "v": {"S": "x" * (400 * 1024)}}}),  # over 400 KB
        "{not json",
        json.dumps({"NotItem": {}}),
    ]
    bucket.put("e/data.json", ("\n".join(lines) + "\n").encode())
    table = unique_name("imp")
    arn = start_import(client, bucket, table, imported, prefix="e/")
    described = wait_import(client, arn)
    assert described["ImportStatus"] == "COMPLETED"
    assert (described["ProcessedItemCount"], described["ImportedItemCount"], described["ErrorCount"]) == (8, 3, 5)
    assert scan_all(client, table) == by_key(good)
    with urllib.request.urlopen(f"{endpoint}/_dynastore/backups/imports", timeout=10) as answer:
        jobs = json.loads(answer.read())["Imports"]
    job = next(job for job in jobs if job["Arn"] == arn)
    assert job["Status"] == "COMPLETED" and job["Errors"] == 5
    samples = job["ErrorSamples"]
    assert len(samples) == 5
    assert all(f"s3://{bucket.name}/e/data.json line" in sample for sample in samples)
    assert "Missing the key pk" in samples[0]
    assert "Type mismatch for key pk" in samples[1]
    assert "Item size has exceeded the maximum allowed size" in samples[2]


@pytest.mark.parametrize("compression", ["GZIP", "ZSTD"])
def test_a_corrupt_object_counts_one_error_and_the_rest_is_skipped(
        client: Any, bucket: Bucket, imported: list[str], unique_name: Callable[[str], str], compression: str) -> None:
    compress = COMPRESSORS[compression]
    bucket.put("x/1-good", compress(json_lines(sample_items(5))))
    whole = compress(json_lines(sample_items(500, 100)))
    bucket.put("x/2-truncated", whole[: len(whole) // 2])
    bucket.put("x/3-garbage", b"\x00 this is not compressed at all " * 10)
    bucket.put("x/4-good", compress(json_lines(sample_items(5, 1000))))
    table = unique_name("imp")
    described = wait_import(client, start_import(client, bucket, table, imported, prefix="x/", compression=compression))
    assert described["ImportStatus"] == "COMPLETED"
    assert described["ErrorCount"] == 2
    imported_keys = {item["pk"]["S"] for item in scan_all(client, table)}
    assert {f"k{i:05d}" for i in [*range(5), *range(1000, 1005)]} <= imported_keys
    assert described["ImportedItemCount"] == len(imported_keys) < 510  # some of the truncated object, not all


def test_gsi_created_and_filled(client: Any, endpoint: str, bucket: Bucket, imported: list[str],
                                unique_name: Callable[[str], str]) -> None:
    items = [{"pk": {"S": f"p{i}"}, "group": {"S": f"g{i % 3}"}, "rank": {"N": str(i)}} for i in range(30)]
    items.append({"pk": {"S": "nogroup"}})  # not in the index
    items.append({"pk": {"S": "badgroup"}, "group": {"N": "1"}})  # an index key of the wrong type: an error
    bucket.put("g/d.json.gz", gzip.compress(json_lines(items)))
    bucket.put("g/e.json.gz", gzip.compress(json_lines([{"pk": {"S": "p0"}, "group": {"S": "g9"}, "rank": {"N": "0"}}])))
    table = unique_name("imp")
    gsi = {"IndexName": "by-group", "KeySchema": [{"AttributeName": "group", "KeyType": "HASH"},
                                                  {"AttributeName": "rank", "KeyType": "RANGE"}],
           "Projection": {"ProjectionType": "ALL"}}
    parameters = creation(table, ExtraDefinitions=[{"AttributeName": "group", "AttributeType": "S"},
                                                   {"AttributeName": "rank", "AttributeType": "N"}],
                          GlobalSecondaryIndexes=[gsi])
    described = wait_import(client, start_import(client, bucket, table, imported, prefix="g/",
                                                 compression="GZIP", TableCreationParameters=parameters))
    assert (described["ImportedItemCount"], described["ErrorCount"]) == (32, 1)
    with urllib.request.urlopen(f"{endpoint}/_dynastore/backups/imports", timeout=10) as answer:
        job = next(job for job in json.loads(answer.read())["Imports"] if job["Table"] == table)
    assert job["ErrorSamples"][0].startswith(f"s3://{bucket.name}/g/d.json.gz line 32: ")
    description = client.describe_table(TableName=table)["Table"]
    assert [index["IndexName"] for index in description["GlobalSecondaryIndexes"]] == ["by-group"]
    assert description["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    found = client.query(TableName=table, IndexName="by-group", KeyConditionExpression="#g = :g",
                         ExpressionAttributeNames={"#g": "group"}, ExpressionAttributeValues={":g": {"S": "g0"}})
    # p0 moved to g9 in the later object: the later item wins, and its old index entry goes.
    assert [item["rank"]["N"] for item in found["Items"]] == ["3", "6", "9", "12", "15", "18", "21", "24", "27"]
    moved = client.query(TableName=table, IndexName="by-group", KeyConditionExpression="#g = :g",
                         ExpressionAttributeNames={"#g": "group"}, ExpressionAttributeValues={":g": {"S": "g9"}})
    assert [item["pk"]["S"] for item in moved["Items"]] == ["p0"]


def test_provisioned_billing_and_sse(client: Any, bucket: Bucket, imported: list[str],
                                     unique_name: Callable[[str], str]) -> None:
    bucket.put("p/d.json", json_lines(sample_items(2)))
    table = unique_name("imp")
    parameters = creation(table, BillingMode="PROVISIONED",
                          ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
                          SSESpecification={"Enabled": False})
    wait_import(client, start_import(client, bucket, table, imported, prefix="p/", TableCreationParameters=parameters))
    description = client.describe_table(TableName=table)["Table"]
    assert description.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED") == "PROVISIONED"
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert description["ProvisionedThroughput"]["WriteCapacityUnits"] == 7
    # SSE with a KMS key: what CreateTable answers (dynastore keeps no KMS keys).
    kms = {"Enabled": True, "SSEType": "KMS"}
    with pytest.raises(client.exceptions.ClientError) as by_import:
        client.import_table(S3BucketSource={"S3Bucket": bucket.name}, InputFormat="CSV",
                            TableCreationParameters=creation(unique_name("imp"), SSESpecification=kms))
    with pytest.raises(client.exceptions.ClientError) as by_create:
        client.create_table(**creation(unique_name("imp"), SSESpecification=kms))
    assert error_of(by_import) == error_of(by_create)


# --- an export made by AWS ----------------------------------------------------------------------


def copy_aws_export(bucket: Bucket, under: str) -> None:
    shutil.copytree(AWS_EXPORT, bucket.path / under / "AWSDynamoDB" / AWS_EXPORT_ID)


def aws_export_items() -> list[dict[str, Any]]:
    items = []
    for path in sorted((AWS_EXPORT / "data").iterdir()):
        items.extend(json.loads(line)["Item"] for line in gzip.decompress(path.read_bytes()).splitlines())
    return items


def wire_to_boto(item: dict[str, Any]) -> dict[str, Any]:
    """What boto3 answers for a wire item (B and BS come back as bytes)."""
    def value(attribute: dict[str, Any]) -> dict[str, Any]:
        (kind, inner), = attribute.items()
        if kind == "B":
            return {"B": base64.b64decode(inner)}
        if kind == "BS":
            return {"BS": [base64.b64decode(member) for member in inner]}
        if kind == "L":
            return {"L": [value(member) for member in inner]}
        if kind == "M":
            return {"M": {name: value(member) for name, member in inner.items()}}
        if kind == "N":
            from decimal import Decimal

            return {"N": str(Decimal(inner).normalize()) if "e" in inner.lower() else inner}
        return {kind: inner}
    return {name: value(attribute) for name, attribute in item.items()}


@pytest.mark.parametrize("prefix", ["exports/AWSDynamoDB/" + AWS_EXPORT_ID + "/data/",
                                    "exports/AWSDynamoDB/" + AWS_EXPORT_ID + "/", "exports/"])
def test_an_aws_export_imports_unchanged(client: Any, bucket: Bucket, imported: list[str],
                                         unique_name: Callable[[str], str], prefix: str) -> None:
    copy_aws_export(bucket, "exports")
    table = unique_name("music")
    arn = start_import(client, bucket, table, imported, prefix=prefix, compression="GZIP",
                       TableCreationParameters=creation(table, ("Artist", "S"), ("SongTitle", "S")))
    described = wait_import(client, arn)
    assert described["ImportStatus"] == "COMPLETED", described
    summary = json.loads((AWS_EXPORT / "manifest-summary.json").read_text())
    assert described["ImportedItemCount"] == summary["itemCount"] == 5
    assert described["ErrorCount"] == 0
    got = {(item["Artist"]["S"], item["SongTitle"]["S"]): item for item in scan_all(client, table)}
    expected = {(item["Artist"]["S"], item["SongTitle"]["S"]): item for item in map(wire_to_boto, aws_export_items())}
    assert got.keys() == expected.keys()
    for key, item in expected.items():
        assert {name: got[key][name] for name in item if name != "Year"} == {
            name: item[name] for name in item if name != "Year"}
    assert got[("The Acme Quartet", "Unicode ☃ 歌")]["Year"] == {"N": "-12500"}


# --- ClientToken, ListImports ------------------------------------------------------------------


def test_client_token_is_idempotent(client: Any, bucket: Bucket, imported: list[str],
                                    unique_name: Callable[[str], str]) -> None:
    bucket.put("t/d.json", json_lines(sample_items(3)))
    table = unique_name("imp")
    token = uuid.uuid4().hex
    arn = start_import(client, bucket, table, imported, prefix="t/", ClientToken=token)
    again = start_import(client, bucket, table, imported, prefix="t/", ClientToken=token)
    assert again == arn
    assert client.describe_import(ImportArn=arn)["ImportTableDescription"]["ClientToken"] == token
    wait_import(client, arn)
    assert start_import(client, bucket, table, imported, prefix="t/", ClientToken=token) == arn
    with pytest.raises(client.exceptions.ImportConflictException) as raised:
        start_import(client, bucket, unique_name("other"), imported, prefix="t/", ClientToken=token)
    code, message = error_of(raised)
    assert code == "ImportConflictException"
    assert "same client token" in message
    assert len(scan_all(client, table)) == 3


def test_list_imports_filter_and_pages(client: Any, bucket: Bucket, imported: list[str],
                                       unique_name: Callable[[str], str]) -> None:
    bucket.put("l/d.json", json_lines(sample_items(1)))
    arns = []
    tables = [unique_name("imp") for _ in range(3)]
    for table in tables:
        arns.append(start_import(client, bucket, table, imported, prefix="l/"))
    for arn in arns:
        wait_import(client, arn)
    table_arn = client.describe_table(TableName=tables[1])["Table"]["TableArn"]
    only = client.list_imports(TableArn=table_arn)["ImportSummaryList"]
    assert [summary["ImportArn"] for summary in only] == [arns[1]]
    assert set(only[0]) >= {"ImportArn", "ImportStatus", "TableArn", "S3BucketSource", "CloudWatchLogGroupArn",
                            "InputFormat", "StartTime", "EndTime"}
    assert only[0]["ImportStatus"] == "COMPLETED"
    seen: list[str] = []
    arguments: dict[str, Any] = {"PageSize": 1}
    while True:
        page = client.list_imports(**arguments)
        assert len(page["ImportSummaryList"]) <= 1
        seen.extend(summary["ImportArn"] for summary in page["ImportSummaryList"])
        if "NextToken" not in page:
            break
        assert re.fullmatch(r"([0-9a-f]{16})+", page["NextToken"]) and len(page["NextToken"]) >= 112
        arguments["NextToken"] = page["NextToken"]
    assert [arn for arn in seen if arn in arns] == arns  # oldest first
    with pytest.raises(client.exceptions.ClientError) as raised:
        client.list_imports(PageSize=26)
    assert error_of(raised)[0] == "ValidationException"


# --- errors of the calls ---------------------------------------------------------------------------


def test_existing_table_is_resource_in_use(client: Any, bucket: Bucket, imported: list[str],
                                           make_table: Callable[..., str]) -> None:
    table = make_table()
    with pytest.raises(client.exceptions.ResourceInUseException) as raised:
        client.import_table(S3BucketSource={"S3Bucket": bucket.name}, InputFormat="CSV",
                            TableCreationParameters=creation(table))
    assert error_of(raised) == ("ResourceInUseException", f"Table already exists: {table}")


def test_describe_unknown_import(client: Any) -> None:
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/nothing/import/01764747600000-0000abcd"
    with pytest.raises(client.exceptions.ImportNotFoundException) as raised:
        client.describe_import(ImportArn=arn)
    assert error_of(raised)[0] == "ImportNotFoundException"


@pytest.mark.parametrize("change, fragment", [
    ({"InputFormat": "XML"}, "inputFormat"),
    ({"InputCompressionType": "BZIP2"}, "inputCompressionType"),
    ({"InputFormatOptions": {"Csv": {"Delimiter": "#"}}, "InputFormat": "CSV"}, "delimiter"),
    ({"InputFormatOptions": {"Csv": {"Delimiter": ","}}}, "InputFormatOptions"),
    ({"TableCreationParameters": None}, "tableCreationParameters"),
])
def test_invalid_requests(client: Any, bucket: Bucket, unique_name: Callable[[str], str],
                          change: dict[str, Any], fragment: str) -> None:
    table = unique_name("imp")
    request: dict[str, Any] = {"S3BucketSource": {"S3Bucket": bucket.name}, "InputFormat": "DYNAMODB_JSON",
                               "TableCreationParameters": creation(table)}
    request.update(change)
    request = {key: value for key, value in request.items() if value is not None}
    with pytest.raises(client.exceptions.ClientError) as raised:
        client.import_table(**request)
    code, message = error_of(raised)
    assert code == "ValidationException"
    assert fragment in message
    assert table not in client.list_tables()["TableNames"]


def test_bad_table_definition_is_create_tables_error(client: Any, bucket: Bucket,
                                                     unique_name: Callable[[str], str]) -> None:
    table = unique_name("imp")
    parameters = creation(table)
    parameters["KeySchema"] = [{"AttributeName": "missing", "KeyType": "HASH"}]
    with pytest.raises(client.exceptions.ClientError) as raised:
        client.import_table(S3BucketSource={"S3Bucket": bucket.name}, InputFormat="CSV",
                            TableCreationParameters=parameters)
    assert error_of(raised)[0] == "ValidationException"


def test_missing_bucket_and_no_objects_fail(client: Any, bucket: Bucket, imported: list[str],
                                            unique_name: Callable[[str], str]) -> None:
    table = unique_name("imp")
    imported.append(table)
    arn = client.import_table(S3BucketSource={"S3Bucket": "no-such-bucket-" + uuid.uuid4().hex[:8]},
                              InputFormat="CSV", TableCreationParameters=creation(table)
                              )["ImportTableDescription"]["ImportArn"]
    described = wait_import(client, arn)
    assert described["ImportStatus"] == "FAILED"
    assert described["FailureCode"] == "NoSuchBucket"
    assert described["FailureMessage"]
    assert table not in client.list_tables()["TableNames"]
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.describe_table(TableName=table)
    empty = wait_import(client, start_import(client, bucket, unique_name("imp"), imported, prefix="nothing-here/"))
    assert empty["ImportStatus"] == "FAILED"
    assert empty["FailureCode"] == "NoSuchKey"


def test_the_table_is_creating_until_complete(client: Any, transport: str, bucket: Bucket,
                                            imported: list[str], unique_name: Callable[[str], str]) -> None:
    """While an import runs, its table exists CREATING, as on DynamoDB
    (dynastore/backups/visible.py): DescribeTable and ListTables show it,
    CreateTable, another import, a restore and DeleteTable of its name are
    refused, and reads and writes do not find it. COMPLETED: ACTIVE."""
    if transport == "embedded":
        pytest.skip("the embedded database runs an import to its end before ImportTable answers")
    bucket.put("big/d.json.gz", gzip.compress(json_lines(
        [{"pk": {"S": f"k{i:06d}"}, "v": {"S": "x" * 100}} for i in range(40_000)])))
    table = unique_name("imp")
    gsi = {"IndexName": "by-v", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "KEYS_ONLY"}}
    parameters = creation(table, ExtraDefinitions=[{"AttributeName": "v", "AttributeType": "S"}],
                          GlobalSecondaryIndexes=[gsi])
    arn = start_import(client, bucket, table, imported, prefix="big/", compression="GZIP",
                       TableCreationParameters=parameters)
    started = client.describe_import(ImportArn=arn)["ImportTableDescription"]
    assert started["ImportStatus"] == "IN_PROGRESS", "the import ended before it could be looked at"
    described = client.describe_table(TableName=table)["Table"]
    assert (described["TableName"], described["TableStatus"], described["ItemCount"]) == (table, "CREATING", 0)
    assert described["TableId"] == started["TableId"] and described["TableArn"] == started["TableArn"]
    assert [index["IndexStatus"] for index in described["GlobalSecondaryIndexes"]] == ["CREATING"]
    assert "RestoreSummary" not in described
    assert table in client.list_tables(ExclusiveStartTableName=table[:-1], Limit=5)["TableNames"]
    with pytest.raises(client.exceptions.ResourceInUseException) as raised:
        client.create_table(**creation(table))
    assert error_of(raised) == ("ResourceInUseException", f"Table already exists: {table}")
    with pytest.raises(client.exceptions.ResourceInUseException) as raised:
        start_import(client, bucket, table, imported, prefix="big/", compression="GZIP")
    assert error_of(raised) == ("ResourceInUseException", f"Table already exists: {table}")
    with pytest.raises(client.exceptions.ResourceInUseException) as raised:
        client.delete_table(TableName=table)
    assert error_of(raised) == ("ResourceInUseException",
                                f"Attempt to change a resource which is still in use: Table is being created: {table}")
    key = {"pk": {"S": "k000001"}}
    for call in (lambda: client.put_item(TableName=table, Item={**key, "v": {"S": "early"}}),
                 lambda: client.get_item(TableName=table, Key=key),
                 lambda: client.scan(TableName=table)):
        with pytest.raises(client.exceptions.ResourceNotFoundException) as raised:
            call()
        assert error_of(raised) == ("ResourceNotFoundException", "Requested resource not found")
    if client.describe_import(ImportArn=arn)["ImportTableDescription"]["ImportStatus"] == "IN_PROGRESS":
        source = unique_name("src")
        client.create_table(**creation(source))
        try:
            backup = client.create_backup(TableName=source, BackupName="bak")["BackupDetails"]["BackupArn"]
            with pytest.raises(client.exceptions.ClientError) as raised:
                client.restore_table_from_backup(BackupArn=backup, TargetTableName=table)
            assert error_of(raised) in (("TableAlreadyExistsException", f"Table already exists: {table}"),
                                        ("BackupInUseException", f"Backup is being created: {backup}"))
        finally:
            client.delete_table(TableName=source)
    described = wait_import(client, arn)
    assert described["ImportStatus"] == "COMPLETED"
    table_now = client.describe_table(TableName=table)["Table"]
    assert (table_now["TableStatus"], table_now["ItemCount"]) == ("ACTIVE", 40_000)
    assert table_now["TableId"] == started["TableId"]


def test_a_failed_imports_table_is_gone(client: Any, bucket: Bucket, imported: list[str],
                                        unique_name: Callable[[str], str]) -> None:
    """FAILED: the CREATING table goes, and its name is free again."""
    table = unique_name("imp")
    arn = start_import(client, bucket, table, imported, prefix="nothing-here/")
    assert wait_import(client, arn)["ImportStatus"] == "FAILED"
    assert table not in client.list_tables(ExclusiveStartTableName=table[:-1], Limit=5)["TableNames"]
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.describe_table(TableName=table)
    client.create_table(**creation(table))
    assert client.describe_table(TableName=table)["Table"]["TableStatus"] in ("CREATING", "ACTIVE")


# --- the AWS CLI ------------------------------------------------------------------------------------


def test_aws_cli(endpoint: str, client: Any, bucket: Bucket, imported: list[str],
                 unique_name: Callable[[str], str]) -> None:
    bucket.put("cli/d.csv", b"pk,v\na,1\nb,2\n")
    table = unique_name("cli")
    imported.append(table)

    def aws(*arguments: str) -> Any:
        completed = subprocess.run(
            [sys.executable, "-m", "awscli", "dynamodb", *arguments, "--endpoint-url", endpoint,
             "--region", "us-east-1", "--output", "json"],
            capture_output=True, text=True, timeout=60,
            env={"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "PATH": "/usr/bin:/bin"},
        )
        assert completed.returncode == 0, completed.stderr
        return json.loads(completed.stdout)

    started = aws("import-table", "--s3-bucket-source", f"S3Bucket={bucket.name},S3KeyPrefix=cli/",
                  "--input-format", "CSV", "--table-creation-parameters", json.dumps(creation(table)))
    arn = started["ImportTableDescription"]["ImportArn"]
    assert wait_import(client, arn)["ImportedItemCount"] == 2
    assert aws("describe-import", "--import-arn", arn)["ImportTableDescription"]["ImportStatus"] == "COMPLETED"
    table_arn = client.describe_table(TableName=table)["Table"]["TableArn"]
    listed = aws("list-imports", "--table-arn", table_arn)["ImportSummaryList"]
    assert [summary["ImportArn"] for summary in listed] == [arn]


# --- kill -9 during an import ------------------------------------------------------------------------


def http_only(transport: str) -> None:
    if transport != "http":
        pytest.skip("starts servers of its own: once, not per store")


def test_kill_9_during_an_import_leaves_no_table_and_resumes(transport: str, tmp_path: Path) -> None:
    http_only(transport)
    data_dir, buckets_dir = tmp_path / "data", tmp_path / "buckets"
    count = 60_000
    items = [{"pk": {"S": f"k{i:06d}"}, "v": {"S": "x" * 200}} for i in range(count)]
    source = Bucket(buckets_dir, "kill")
    for part in range(3):
        source.put(f"d/{part}.json.gz", gzip.compress(json_lines(items[part * 20_000:(part + 1) * 20_000])))
    arguments = ("--data-dir", str(data_dir), "--buckets-dir", str(buckets_dir), "--single-process")
    process, url = start_server(*arguments)
    try:
        client = make_client(url)
        arn = client.import_table(S3BucketSource={"S3Bucket": "kill", "S3KeyPrefix": "d/"},
                                  InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                                  TableCreationParameters=creation("killed"))["ImportTableDescription"]["ImportArn"]
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            before_kill = client.describe_import(ImportArn=arn)["ImportTableDescription"]
            if before_kill["ProcessedItemCount"] >= 3000:
                break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        stop_server(process)
    assert before_kill["ImportStatus"] == "IN_PROGRESS"
    assert before_kill["ProcessedItemCount"] < count
    # Restart with the table's name taken over by nobody: the import goes on from its record.
    process, url = start_server(*arguments)
    try:
        client = make_client(url)
        described = client.describe_import(ImportArn=arn)["ImportTableDescription"]
        if described["ImportStatus"] == "IN_PROGRESS":  # CREATING, never half usable
            assert client.describe_table(TableName="killed")["Table"]["TableStatus"] == "CREATING"
            with pytest.raises(client.exceptions.ResourceNotFoundException):
                client.scan(TableName="killed", Select="COUNT")
        described = wait_import(client, arn)
        assert described["ImportStatus"] == "COMPLETED"
        assert (described["ProcessedItemCount"], described["ImportedItemCount"]) == (count, count)
        assert client.describe_table(TableName="killed")["Table"]["ItemCount"] == count
        assert client.scan(TableName="killed", Select="COUNT")["Count"] > 0
        total = 0
        arguments_scan: dict[str, Any] = {"TableName": "killed", "Select": "COUNT"}
        while True:
            page = client.scan(**arguments_scan)
            total += page["Count"]
            if "LastEvaluatedKey" not in page:
                break
            arguments_scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        assert total == count
    finally:
        stop_server(process)


def test_kill_9_mid_import_shows_nothing_before_restart(transport: str, tmp_path: Path) -> None:
    """Between the kill and the end, nobody can use the table: the store
    holds it under a name of dynastore's own until the import completes, and
    it shows CREATING."""
    http_only(transport)
    data_dir, buckets_dir = tmp_path / "data", tmp_path / "buckets"
    Bucket(buckets_dir, "kill").put("d/0.json.gz", gzip.compress(json_lines(
        [{"pk": {"S": f"k{i:06d}"}, "v": {"S": "x" * 200}} for i in range(40_000)])))
    process, url = start_server("--data-dir", str(data_dir), "--buckets-dir", str(buckets_dir), "--single-process")
    try:
        client = make_client(url)
        arn = client.import_table(S3BucketSource={"S3Bucket": "kill"}, InputFormat="DYNAMODB_JSON",
                                  InputCompressionType="GZIP",
                                  TableCreationParameters=creation("half"))["ImportTableDescription"]["ImportArn"]
        deadline = time.monotonic() + WAIT_SECONDS
        while client.describe_import(ImportArn=arn)["ImportTableDescription"]["ProcessedItemCount"] < 2000:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert client.describe_table(TableName="half")["Table"]["TableStatus"] == "CREATING"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        stop_server(process)
    import dynastore

    # The data directory as the kill left it, opened without running its jobs.
    database = dynastore.open(data_dir)
    try:
        opened = database.client()
        assert opened.describe_table(TableName="half")["Table"]["TableStatus"] == "CREATING"
        with pytest.raises(opened.exceptions.ResourceNotFoundException):
            opened.scan(TableName="half")
    finally:
        database.close()


def test_kill_9_then_the_source_gone_ends_failed(transport: str, tmp_path: Path) -> None:
    """A restarted import whose bucket went away ends FAILED with the reason,
    and its half-made table goes with it."""
    http_only(transport)
    data_dir, buckets_dir = tmp_path / "data", tmp_path / "buckets"
    Bucket(buckets_dir, "gone").put("d/0.json.gz", gzip.compress(json_lines(
        [{"pk": {"S": f"k{i:06d}"}, "v": {"S": "x" * 200}} for i in range(40_000)])))
    arguments = ("--data-dir", str(data_dir), "--buckets-dir", str(buckets_dir), "--single-process")
    process, url = start_server(*arguments)
    try:
        client = make_client(url)
        arn = client.import_table(S3BucketSource={"S3Bucket": "gone"}, InputFormat="DYNAMODB_JSON",
                                  InputCompressionType="GZIP",
                                  TableCreationParameters=creation("gone"))["ImportTableDescription"]["ImportArn"]
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            described = client.describe_import(ImportArn=arn)["ImportTableDescription"]
            if described["ProcessedItemCount"] >= 2000:
                break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        stop_server(process)
    assert described["ImportStatus"] == "IN_PROGRESS"
    shutil.rmtree(buckets_dir / "gone")
    process, url = start_server(*arguments)
    try:
        client = make_client(url)
        described = wait_import(client, arn)
        assert described["ImportStatus"] == "FAILED"
        assert described["FailureCode"] == "NoSuchBucket"
        assert "gone" in described["FailureMessage"]
        assert "gone" not in client.list_tables()["TableNames"]
        with urllib.request.urlopen(f"{url}/_dynastore/backups/imports", timeout=10) as answer:
            job = json.loads(answer.read())["Imports"][0]
        assert (job["Status"], job["FailureCode"]) == ("FAILED", "NoSuchBucket")
    finally:
        stop_server(process)


# --- the command --------------------------------------------------------------------------------------


def run_command(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dynastore", "import", *arguments],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret",
                               "COLUMNS": "120"})


def test_command_against_a_server(endpoint: str, client: Any, transport: str, imported: list[str],
                                  unique_name: Callable[[str], str], tmp_path: Path) -> None:
    if transport == "embedded":
        pytest.skip("the command is a client of a server process")
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "a.csv").write_text("pk,sk,v\nx,1,one\nx,2,two\ny,1,three\n")
    (folder / "b.csv").write_text("pk,sk,v\nz,9,nine\nbad,notanumber,v\n")
    table = unique_name("cmd")
    imported.append(table)
    completed = run_command(str(folder), table, "--format", "csv", "--key", "pk:S,sk:N", "--endpoint", endpoint,
                            "--region", "us-east-1")
    assert completed.returncode == 0, completed.stderr + completed.stdout
    assert "4 items imported" in completed.stdout
    assert "1 error" in completed.stdout
    assert scan_all(client, table) == by_key([
        {"pk": {"S": "x"}, "sk": {"N": "1"}, "v": {"S": "one"}}, {"pk": {"S": "x"}, "sk": {"N": "2"}, "v": {"S": "two"}},
        {"pk": {"S": "y"}, "sk": {"N": "1"}, "v": {"S": "three"}}, {"pk": {"S": "z"}, "sk": {"N": "9"}, "v": {"S": "nine"}},
    ])
    again = run_command(str(folder), table, "--format", "csv", "--key", "pk:S,sk:N", "--endpoint", endpoint)
    assert again.returncode == 1
    assert "Table already exists" in again.stderr


def test_command_from_the_servers_bucket(endpoint: str, client: Any, transport: str, bucket: Bucket,
                                        imported: list[str], unique_name: Callable[[str], str]) -> None:
    if transport == "embedded":
        pytest.skip("the command is a client of a server process")
    bucket.put("ion/a.ion.gz", gzip.compress(ION_DATA))
    table = unique_name("cmd")
    imported.append(table)
    completed = run_command(f"s3://{bucket.name}/ion/", table, "--format", "ion", "--compression", "gzip",
                            "--key", "pk:S", "--endpoint", endpoint)
    assert completed.returncode == 0, completed.stderr + completed.stdout
    assert "2 items imported" in completed.stdout
    assert len(scan_all(client, table)) == 2
    failed = run_command(f"s3://{bucket.name}/nothing/", unique_name("cmd"), "--format", "ion", "--key", "pk:S",
                         "--endpoint", endpoint)
    assert failed.returncode == 1
    assert "NoSuchKey" in failed.stderr


def test_command_on_a_data_directory(transport: str, tmp_path: Path) -> None:
    http_only(transport)
    folder = tmp_path / "export"
    shutil.copytree(AWS_EXPORT, folder / "AWSDynamoDB" / AWS_EXPORT_ID)
    data_dir = tmp_path / "data"
    completed = run_command(str(folder), "Music", "--format", "dynamodb-json", "--compression", "gzip",
                            "--key", "Artist:S,SongTitle:S", "--data-dir", str(data_dir))
    assert completed.returncode == 0, completed.stderr + completed.stdout
    assert "5 items imported" in completed.stdout
    import dynastore

    database = dynastore.open(data_dir)
    try:
        assert database.client().scan(TableName="Music", Select="COUNT")["Count"] == 5
    finally:
        database.close()


def test_command_usage_errors(tmp_path: Path) -> None:
    completed = run_command(str(tmp_path), "Tbl", "--format", "csv", "--key", "pk:X", "--data-dir",
                            str(tmp_path / "d"))
    assert completed.returncode == 2
    assert "--key" in completed.stderr
    missing = run_command(str(tmp_path / "nope"), "Tbl", "--format", "csv", "--key", "pk:S", "--data-dir",
                          str(tmp_path / "d"))
    assert missing.returncode == 2
    assert "not a folder" in missing.stderr



# --- a real S3-compatible store (moto's server) -----------------------------------------------------


def test_import_from_an_s3_compatible_store(transport: str, tmp_path: Path) -> None:
    http_only(transport)
    pytest.importorskip("moto.server")
    import boto3

    from tests.api.conftest import free_port, wait_for_port

    port = free_port()
    credentials = {"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret",
                   "AWS_DEFAULT_REGION": "us-east-1"}
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **credentials})
    server = None
    try:
        wait_for_port(port, moto)
        s3_url = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=s3_url, region_name="us-east-1",
                          aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
        s3.create_bucket(Bucket="exports")
        for path in AWS_EXPORT.rglob("*"):
            if path.is_file():
                key = f"AWSDynamoDB/{AWS_EXPORT_ID}/{path.relative_to(AWS_EXPORT).as_posix()}"
                s3.put_object(Bucket="exports", Key=key, Body=path.read_bytes())
        s3.put_object(Bucket="exports", Key="csv/a.csv.zst",
                      Body=zstandard.ZstdCompressor().compress(b"id,v\n1,a\n2,b\n"))
        server, url = start_server("--in-memory", "--s3-endpoint", s3_url, environment=credentials)
        client = make_client(url)
        arn = client.import_table(S3BucketSource={"S3Bucket": "exports", "S3KeyPrefix": "AWSDynamoDB/"},
                                  InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                                  TableCreationParameters=creation("Music", ("Artist", "S"), ("SongTitle", "S"))
                                  )["ImportTableDescription"]["ImportArn"]
        described = wait_import(client, arn)
        assert (described["ImportStatus"], described["ImportedItemCount"], described["ErrorCount"]) == (
            "COMPLETED", 5, 0)
        assert described["ProcessedSizeBytes"] == sum(path.stat().st_size for path in (AWS_EXPORT / "data").iterdir())
        arn = client.import_table(S3BucketSource={"S3Bucket": "exports", "S3KeyPrefix": "csv/"},
                                  InputFormat="CSV", InputCompressionType="ZSTD",
                                  TableCreationParameters=creation("Csv", ("id", "N")))["ImportTableDescription"][
            "ImportArn"]
        assert wait_import(client, arn)["ImportedItemCount"] == 2
        assert scan_all(client, "Csv") == by_key([{"id": {"N": "1"}, "v": {"S": "a"}}, {"id": {"N": "2"}, "v": {"S": "b"}}])
        missing = client.import_table(S3BucketSource={"S3Bucket": "no-such-bucket"}, InputFormat="CSV",
                                      TableCreationParameters=creation("Never"))["ImportTableDescription"]["ImportArn"]
        failed = wait_import(client, missing)
        assert (failed["ImportStatus"], failed["FailureCode"]) == ("FAILED", "NoSuchBucket")
    finally:
        if server is not None:
            stop_server(server)
        moto.terminate()
        moto.wait(timeout=10)


# --- a property: whatever the items, each format imports them as they were ------------------------


def _ion_text(attribute: dict[str, Any]) -> str:
    """One wire AttributeValue as Ion text, with DynamoDB's mapping."""
    from decimal import Decimal

    (kind, value), = attribute.items()
    if kind == "S":
        return json.dumps(value)
    if kind == "N":
        return str(Decimal(value)).replace("E", "d") if any(c in value for c in ".eE") else value
    if kind == "B":
        return "{{" + value + "}}"
    if kind == "BOOL":
        return "true" if value else "false"
    if kind == "NULL":
        return "null"
    if kind == "L":
        return "[" + ",".join(_ion_text(member) for member in value) + "]"
    if kind == "M":
        return "{" + ",".join(f"{json.dumps(name)}:{_ion_text(member)}" for name, member in value.items()) + "}"
    inner = kind[0]
    return f"$dynamodb_{kind}::[" + ",".join(_ion_text({inner: member}) for member in value) + "]"


def _canonical(attribute: dict[str, Any]) -> Any:
    """An AttributeValue as boto3 answers it or as written, in one form (numbers by value, sets unordered)."""
    from decimal import Decimal

    (kind, value), = attribute.items()
    if kind == "N":
        return ("N", Decimal(value).normalize())
    if kind == "NS":
        return ("NS", frozenset(Decimal(member).normalize() for member in value))
    if kind == "B":
        return ("B", _bytes_of(value))
    if kind == "BS":
        return ("BS", frozenset(_bytes_of(member) for member in value))
    if kind == "SS":
        return ("SS", frozenset(value))
    if kind == "L":
        return ("L", tuple(_canonical(member) for member in value))
    if kind == "M":
        return ("M", frozenset((name, _canonical(member)) for name, member in value.items()))
    return (kind, value)


def _bytes_of(value: bytes | str) -> bytes:
    """boto3 answers bytes; the items written hold base64."""
    return value if isinstance(value, bytes) else base64.b64decode(value)


def _canonical_item(item: dict[str, Any]) -> frozenset[Any]:
    return frozenset((name, _canonical(value)) for name, value in item.items())


def _attribute_values() -> Any:
    texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
    numbers = st.one_of(st.integers(-10**20, 10**20).map(str),
                        st.decimals(min_value=-10**9, max_value=10**9, places=4, allow_nan=False,
                                    allow_infinity=False).map(lambda d: str(d.normalize())))
    blobs = st.binary(min_size=1, max_size=8).map(lambda b: base64.b64encode(b).decode())
    scalars = st.one_of(texts.map(lambda s: {"S": s}), numbers.map(lambda n: {"N": n}),
                        blobs.map(lambda b: {"B": b}), st.booleans().map(lambda b: {"BOOL": b}),
                        st.just({"NULL": True}),
                        st.sets(texts, min_size=1, max_size=3).map(lambda s: {"SS": sorted(s)}),
                        st.sets(st.integers(-999, 999), min_size=1, max_size=3).map(
                            lambda s: {"NS": [str(n) for n in sorted(s)]}),
                        st.sets(st.binary(min_size=1, max_size=4), min_size=1, max_size=3).map(
                            lambda s: {"BS": [base64.b64encode(b).decode() for b in sorted(s)]}))
    names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6)
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda values: {"L": values}),
        st.dictionaries(names, inner, max_size=3).map(lambda values: {"M": values})), max_leaves=6)


def _items_strategy() -> Any:
    names = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6).filter(lambda n: n != "pk")
    item = st.dictionaries(names, _attribute_values(), max_size=4)
    return st.lists(item, min_size=1, max_size=8).map(
        lambda items: [{"pk": {"S": f"k{i}"}, **attributes} for i, attributes in enumerate(items)])


@settings(max_examples=12, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(items=_items_strategy(), input_format=st.sampled_from(["DYNAMODB_JSON", "ION"]))
def test_any_items_import_as_they_were(client: Any, bucket: Bucket, imported: list[str],
                                       items: list[dict[str, Any]], input_format: str) -> None:
    table = f"prop-{uuid.uuid4().hex[:12]}"
    prefix = f"{table}/"
    if input_format == "DYNAMODB_JSON":
        bucket.put(prefix + "d.json.gz", gzip.compress(json_lines(items)))
    else:
        text = "".join("{Item:{" + ",".join(f"{json.dumps(n)}:{_ion_text(v)}" for n, v in item.items()) + "}}\n"
                       for item in items)
        bucket.put(prefix + "d.ion.gz", gzip.compress(text.encode()))
    described = wait_import(client, start_import(client, bucket, table, imported, prefix=prefix,
                                                 input_format=input_format, compression="GZIP"))
    assert (described["ImportStatus"], described["ErrorCount"]) == ("COMPLETED", 0), described
    got = {item["pk"]["S"]: _canonical_item(item) for item in scan_all(client, table)}
    assert got == {item["pk"]["S"]: _canonical_item(item) for item in items}
    client.delete_table(TableName=table)
    imported.remove(table)
