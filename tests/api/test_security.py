"""The gate: ``dynastore serve --credentials FILE`` verifies every request's
SigV4 signature, keeps each account's tables to itself and each region's
apart, and lets readonly keys read only and admin keys alone reach the admin
routes (docs/security.md). Real server processes, real clients: boto3, the
AWS CLI, the JavaScript SDK v3, and raw HTTP for what no SDK sends.
"""

from __future__ import annotations

import datetime
import http.client
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.auth
import pytest
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from tests.api.conftest import server_log, start_server, stop_server
from tests.api.helpers import JS_DIR, node_with_js_sdk

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONFIG = Config(parameter_validation=False, retries={"total_max_attempts": 1})

ACCOUNT = "111111111111"
OTHER_ACCOUNT = "222222222222"
KEYS = {
    "writer": ("AKIDWRITER", "writer-secret"),
    "reader": ("AKIDREADER", "reader-secret"),
    "admin": ("AKIDADMIN", "admin-secret"),
    "other": ("AKIDOTHER", "other-secret"),
    "temporary": ("ASIATEMPORARY", "temporary-secret"),
    "sdk": ("AKIDTEST", "secret"),  # the key tests/js/smoke.mjs signs with
}
SESSION_TOKEN = "FwoGZXIvYXdzEJr+example/token=="
CREDENTIALS_FILE = f"""\
# dynastore access keys: ACCESS_KEY_ID:SECRET[:ACCOUNT_ID[:FLAGS]]
AKIDWRITER:writer-secret:{ACCOUNT}
AKIDREADER:reader-secret:{ACCOUNT}:readonly
AKIDADMIN:admin-secret:{ACCOUNT}:admin
AKIDOTHER:other-secret:{OTHER_ACCOUNT}   # another account
ASIATEMPORARY:temporary-secret:{ACCOUNT}:session-token={SESSION_TOKEN}
AKIDTEST:secret
"""


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server verifying signatures against CREDENTIALS_FILE."""
    path = tmp_path_factory.mktemp("credentials") / "keys"
    path.write_text(CREDENTIALS_FILE)
    # Every connection through the front process: it must pass the signed headers on unchanged.
    process, url = start_server("--in-memory", "--credentials", str(path),
                                environment={"DYNASTORE_ENGINE_CONNECTIONS": "0"})
    try:
        yield url
    finally:
        stop_server(process)


def client_for(url: str, who: str = "writer", region: str = "us-east-1", secret: str | None = None,
               token: str | None = None, service: str = "dynamodb") -> Any:
    key, real_secret = KEYS.get(who, (who, "no-secret"))
    return boto3.client(
        service, endpoint_url=url, region_name=region, aws_access_key_id=key,
        aws_secret_access_key=secret or real_secret, aws_session_token=token, config=CONFIG,
    )


def new_table(client: Any) -> str:
    name = f"sec-{uuid.uuid4().hex[:10]}"
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    return name


# --- raw signed requests ------------------------------------------------------------------
def signed_request(url: str, target: str, body: dict[str, Any], who: str = "writer",
                   at: datetime.datetime | None = None, path: str = "/", method: str = "POST",
                   region: str = "us-east-1") -> AWSRequest:
    key, secret = KEYS[who]
    data = json.dumps(body).encode() if method == "POST" else b""
    request = AWSRequest(method=method, url=url.rstrip("/") + path, data=data, headers={
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target,
    })
    signer = botocore.auth.SigV4Auth(Credentials(key, secret), "dynamodb", region)
    original = botocore.auth.get_current_datetime
    if at is not None:
        botocore.auth.get_current_datetime = lambda: at  # the client's clock, not the server's
    try:
        signer.add_auth(request)
    finally:
        botocore.auth.get_current_datetime = original
    return request


def send(url: str, request: AWSRequest, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """Send a prepared request as it is (optionally with another body or headers)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        sent_headers = dict(request.headers.items())
        sent_headers.update(headers or {})
        target = urlsplit(request.url)
        path = target.path + (f"?{target.query}" if target.query else "")
        connection.request(request.method, path, body=request.body if body is None else body,
                           headers=sent_headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else {}
    finally:
        connection.close()


def error_of(call: Any) -> dict[str, str]:
    """The error a boto3 call fails with (Code, Message)."""
    try:
        call()
    except ClientError as error:
        return dict(error.response["Error"])
    raise AssertionError("the call succeeded")


def error_type(answer: dict[str, Any]) -> str:
    return str(answer.get("__type", "")).rsplit("#", 1)[-1]


def message(answer: dict[str, Any]) -> str:
    return str(answer.get("message") or answer.get("Message") or "")


LIST_TABLES = "DynamoDB_20120810.ListTables"


# --- signatures --------------------------------------------------------------------------
def test_botocore_signed_requests_are_accepted(secured: str) -> None:
    client = client_for(secured)
    name = new_table(client)
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    assert client.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"]["n"] == {"N": "1"}
    assert name in client.list_tables()["TableNames"]


def test_a_wrong_secret_is_invalid_signature(secured: str) -> None:
    error = error_of(lambda: client_for(secured, secret="not-the-secret").list_tables())
    assert error["Code"] == "InvalidSignatureException"
    assert error["Message"].startswith("The request signature we calculated does not match the signature you provided.")


def test_an_unknown_access_key_is_unrecognized(secured: str) -> None:
    error = error_of(lambda: client_for(secured, who="AKIDNOBODY").list_tables())
    assert error["Code"] == "UnrecognizedClientException"
    assert error["Message"] == "The security token included in the request is invalid."


def test_a_tampered_body_is_refused(secured: str) -> None:
    request = signed_request(secured, LIST_TABLES, {"Limit": 5})
    assert send(secured, request)[0] == 200
    status, answer = send(secured, request, body=json.dumps({"Limit": 6}).encode())
    assert (status, error_type(answer)) == (400, "InvalidSignatureException")


def test_a_tampered_signed_header_is_refused(secured: str) -> None:
    request = signed_request(secured, LIST_TABLES, {})
    status, answer = send(secured, request, headers={"X-Amz-Target": "DynamoDB_20120810.DescribeLimits"})
    assert (status, error_type(answer)) == (400, "InvalidSignatureException")
    # A header the client did not sign may change on the way.
    assert send(secured, request, headers={"User-Agent": "a proxy"})[0] == 200


def test_missing_authorization(secured: str) -> None:
    request = signed_request(secured, LIST_TABLES, {})
    del request.headers["Authorization"]
    status, answer = send(secured, request)
    assert (status, error_type(answer)) == (400, "MissingAuthenticationTokenException")
    assert message(answer) == "Request is missing Authentication Token"


def test_expired_and_future_signatures(secured: str) -> None:
    now = datetime.datetime.now(datetime.UTC)
    status, answer = send(secured, signed_request(secured, LIST_TABLES, {}, at=now - datetime.timedelta(minutes=20)))
    assert (status, error_type(answer)) == (400, "InvalidSignatureException")
    assert message(answer).startswith("Signature expired: ")
    assert message(answer).endswith(" - 15 min.)")
    status, answer = send(secured, signed_request(secured, LIST_TABLES, {}, at=now + datetime.timedelta(minutes=20)))
    assert (status, error_type(answer)) == (400, "InvalidSignatureException")
    assert message(answer).startswith("Signature not yet current: ")
    # Within 15 minutes either way is accepted, as on AWS.
    assert send(secured, signed_request(secured, LIST_TABLES, {}, at=now - datetime.timedelta(minutes=10)))[0] == 200


def test_the_database_clock_does_not_move_the_signature_clock(secured: str) -> None:
    admin = signed_request(secured, "", {"advance_seconds": 3600}, who="admin", path="/_dynastore/clock")
    assert send(secured, admin)[0] == 200
    assert send(secured, signed_request(secured, LIST_TABLES, {}))[0] == 200


def presigned(url: str, expires: int, at: datetime.datetime | None = None) -> AWSRequest:
    key, secret = KEYS["writer"]
    body = b"{}"
    request = AWSRequest(method="POST", url=url.rstrip("/") + "/", data=body, headers={
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST_TABLES,
    })
    signer = botocore.auth.SigV4QueryAuth(Credentials(key, secret), "dynamodb", "us-east-1", expires=expires)
    original = botocore.auth.get_current_datetime
    if at is not None:
        botocore.auth.get_current_datetime = lambda: at
    try:
        signer.add_auth(request)
    finally:
        botocore.auth.get_current_datetime = original
    return request


def test_presigned_requests(secured: str) -> None:
    # botocore's query signer drops the body; the body is sent anyway.
    status, answer = send(secured, presigned(secured, 300), body=b"{}")
    assert status == 200 and "TableNames" in answer
    ten_minutes_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=10)
    status, answer = send(secured, presigned(secured, 60, at=ten_minutes_ago), body=b"{}")
    assert (status, error_type(answer)) == (400, "InvalidSignatureException")
    assert message(answer).startswith("Signature expired: ")


def test_session_tokens(secured: str) -> None:
    assert "TableNames" in client_for(secured, who="temporary", token=SESSION_TOKEN).list_tables()
    for token in ("another-token", None):
        error = error_of(lambda token=token: client_for(secured, who="temporary", token=token).list_tables())
        assert error["Code"] == "UnrecognizedClientException"
        assert error["Message"] == "The security token included in the request is invalid."
    error = error_of(lambda: client_for(secured, token="a-token-for-no-temporary-key").list_tables())
    assert error["Code"] == "UnrecognizedClientException"


# --- rights ------------------------------------------------------------------------------
def test_a_readonly_key_reads_but_cannot_write(secured: str) -> None:
    name = new_table(client_for(secured))
    client_for(secured).put_item(TableName=name, Item={"pk": {"S": "a"}})
    reader = client_for(secured, who="reader")
    assert reader.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert reader.scan(TableName=name)["Count"] == 1
    assert reader.describe_table(TableName=name)["Table"]["TableName"] == name
    assert name in reader.list_tables()["TableNames"]
    streams = client_for(secured, who="reader", service="dynamodbstreams")
    assert [s["TableName"] for s in streams.list_streams(TableName=name)["Streams"]] == [name]
    for write in (
        lambda: reader.put_item(TableName=name, Item={"pk": {"S": "b"}}),
        lambda: reader.delete_table(TableName=name),
        lambda: reader.transact_write_items(TransactItems=[{"Put": {"TableName": name, "Item": {"pk": {"S": "c"}}}}]),
    ):
        error = error_of(write)
        assert error["Code"] == "AccessDeniedException"
        assert error["Message"].startswith(f"User: arn:aws:iam::{ACCOUNT}:user/AKIDREADER is not authorized to perform: dynamodb:")
        assert f"on resource: arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{name} because no identity-based policy allows" in error["Message"]
    assert client_for(secured).scan(TableName=name)["Count"] == 1


def test_admin_routes_need_an_admin_key(secured: str) -> None:
    status, answer = send(secured, signed_request(secured, "", {}, who="admin", path="/_dynastore/metrics", method="GET"))
    assert status == 200 and "Mode" in answer
    status, answer = send(secured, signed_request(secured, "", {}, who="writer", path="/_dynastore/metrics", method="GET"))
    assert (status, error_type(answer)) == (400, "AccessDeniedException")
    unsigned = signed_request(secured, "", {}, who="admin", path="/_dynastore/metrics", method="GET")
    del unsigned.headers["Authorization"]
    status, answer = send(secured, unsigned)
    assert (status, error_type(answer)) == (400, "MissingAuthenticationTokenException")


def test_admin_routes_refuse_other_sites(secured: str) -> None:
    request = signed_request(secured, "", {}, who="admin", path="/_dynastore/metrics", method="GET")
    status, answer = send(secured, request, headers={"Origin": "https://evil.example"})
    assert status == 403 and answer == {"message": "cross-origin request refused"}
    host = urlsplit(secured).netloc
    assert send(secured, request, headers={"Origin": f"http://{host}"})[0] == 200


def test_the_identity_route(secured: str) -> None:
    client_for(secured, region="eu-west-1").list_tables()  # any region may be asked
    new_table(client_for(secured, region="ap-south-1"))
    status, answer = send(secured, signed_request(secured, "", {}, who="reader", path="/_dynastore/identity",
                                                  method="GET", region="eu-west-1"))
    assert status == 200
    assert answer["account"] == ACCOUNT and answer["accessKeyId"] == "AKIDREADER"
    assert answer["readonly"] is True and answer["admin"] is False
    assert answer["region"] == "eu-west-1"
    assert "ap-south-1" in answer["regions"] and "eu-west-1" in answer["regions"]


# --- namespaces --------------------------------------------------------------------------
def test_accounts_are_isolated(secured: str) -> None:
    mine, theirs = client_for(secured), client_for(secured, who="other")
    name = new_table(mine)
    assert name not in theirs.list_tables()["TableNames"]
    error = error_of(lambda: theirs.describe_table(TableName=name))
    assert error["Code"] == "ResourceNotFoundException"
    arn = mine.describe_table(TableName=name)["Table"]["TableArn"]
    assert arn == f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{name}"
    assert error_of(lambda: theirs.describe_table(TableName=arn))["Code"] == "ResourceNotFoundException"
    assert error_of(lambda: theirs.get_item(TableName=name, Key={"pk": {"S": "a"}}))["Code"] == "ResourceNotFoundException"
    # Another account may have a table of the same name: a table of its own.
    theirs.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    theirs.put_item(TableName=name, Item={"pk": {"S": "theirs"}})
    assert mine.scan(TableName=name)["Count"] == 0
    assert theirs.describe_table(TableName=name)["Table"]["TableArn"].split(":")[4] == OTHER_ACCOUNT
    streams = client_for(secured, who="other", service="dynamodbstreams")
    assert all(stream["TableName"] != name or OTHER_ACCOUNT in stream["StreamArn"]
               for stream in streams.list_streams()["Streams"])
    stream_arn = mine.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert f":{ACCOUNT}:table/" in stream_arn
    error = error_of(lambda: streams.describe_stream(StreamArn=stream_arn))
    assert error["Code"] == "ResourceNotFoundException"


def test_regions_are_isolated(secured: str) -> None:
    east, west = client_for(secured), client_for(secured, region="us-west-2")
    name = new_table(west)
    assert name in west.list_tables()["TableNames"]
    assert name not in east.list_tables()["TableNames"]
    assert error_of(lambda: east.describe_table(TableName=name))["Code"] == "ResourceNotFoundException"
    described = west.describe_table(TableName=name)["Table"]
    assert described["TableArn"] == f"arn:aws:dynamodb:us-west-2:{ACCOUNT}:table/{name}"
    assert described["LatestStreamArn"].startswith(f"arn:aws:dynamodb:us-west-2:{ACCOUNT}:table/{name}/stream/")


def test_without_credentials_regions_are_still_apart_and_single_region_folds_them() -> None:
    process, url = start_server("--in-memory")
    try:
        name = new_table(client_for(url, who="anybody", region="eu-central-1"))
        assert name not in client_for(url, who="anybody").list_tables()["TableNames"]
        arn = client_for(url, who="x", region="eu-central-1").describe_table(TableName=name)["Table"]["TableArn"]
        assert arn == f"arn:aws:dynamodb:eu-central-1:000000000000:table/{name}"
    finally:
        stop_server(process)
    process, url = start_server("--in-memory", "--single-region")
    try:
        name = new_table(client_for(url, who="anybody", region="eu-central-1"))
        assert name in client_for(url, who="anybody", region="us-east-1").list_tables()["TableNames"]
        assert name in client_for(url, who="anybody", region="local").list_tables()["TableNames"]
    finally:
        stop_server(process)


def test_the_first_request_of_a_region_is_logged() -> None:
    process, url = start_server("--in-memory")
    try:
        client_for(url, who="anybody", region="sa-east-1").list_tables()
        client_for(url, who="anybody", region="sa-east-1").list_tables()
        log = server_log(process)
    finally:
        stop_server(process)
    assert log.count("first request in region sa-east-1") == 1, log


def test_a_data_directory_of_an_earlier_release_opens_in_the_default_namespace(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "data-dir-0.1.0", data)
    process, url = start_server("--data-dir", str(data))
    try:
        east = client_for(url, who="anybody")
        assert east.list_tables()["TableNames"] == ["Legacy"]
        table = east.describe_table(TableName="Legacy")["Table"]
        assert table["TableArn"] == "arn:aws:dynamodb:us-east-1:000000000000:table/Legacy"
        assert table["ItemCount"] == 2 or east.scan(TableName="Legacy")["Count"] == 2
        found = east.query(TableName="Legacy", IndexName="byG", KeyConditionExpression="g = :g",
                           ExpressionAttributeValues={":g": {"S": "x"}})
        assert found["Count"] == 2
        assert client_for(url, who="anybody", region="eu-west-1").list_tables()["TableNames"] == []
    finally:
        stop_server(process)


# --- other clients -----------------------------------------------------------------------
def aws_cli(url: str, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    key, secret = KEYS.get(who, (who, "wrong"))
    environment = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
                       AWS_DEFAULT_REGION="us-east-1", AWS_MAX_ATTEMPTS="1")
    return subprocess.run(
        [sys.executable, "-m", "awscli", "dynamodb", *args, "--endpoint-url", url, "--output", "json"],
        capture_output=True, text=True, env=environment, timeout=60,
    )


def test_the_aws_cli_signs_as_the_server_expects(secured: str) -> None:
    name = new_table(client_for(secured))
    listed = aws_cli(secured, "writer", "list-tables")
    assert listed.returncode == 0, listed.stderr
    assert name in json.loads(listed.stdout)["TableNames"]
    refused = aws_cli(secured, "reader", "delete-table", "--table-name", name)
    assert refused.returncode != 0 and "AccessDeniedException" in refused.stderr
    unknown = aws_cli(secured, "AKIDNOBODY", "list-tables")
    assert unknown.returncode != 0 and "UnrecognizedClientException" in unknown.stderr


def test_the_javascript_sdk_signs_as_the_server_expects(secured: str) -> None:
    node = node_with_js_sdk()
    completed = subprocess.run(
        [node, str(JS_DIR / "smoke.mjs"), secured, f"js-{uuid.uuid4().hex[:8]}"],
        capture_output=True, text=True, timeout=60, cwd=JS_DIR,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1])["status"] == "ACTIVE"
    refused = subprocess.run(
        [node, str(JS_DIR / "list_tables.mjs"), secured, "AKIDWRITER", "not-the-secret"],
        capture_output=True, text=True, timeout=60, cwd=JS_DIR,
    )
    assert json.loads(refused.stdout.strip().splitlines()[-1]) == {"error": "InvalidSignatureException"}


# --- start-up ----------------------------------------------------------------------------
def test_a_bad_credentials_file_stops_the_server_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("AKIDGOOD:secret\nAKIDBAD:secret:12345:admin\n")
    completed = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0", "--credentials", str(path)],
        capture_output=True, text=True, timeout=30,
    )
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 2" in lines[0] and "secret" not in lines[0]


def test_a_server_open_to_the_network_without_credentials_warns() -> None:
    process, _ = start_server("--in-memory", "--host", "0.0.0.0")
    try:
        log = server_log(process)
    finally:
        stop_server(process)
    assert "warning: listening on 0.0.0.0 without --credentials" in log
