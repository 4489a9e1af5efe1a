"""The console's Python side: static files, the JSON proxy (in-process and over
HTTP with SigV4), its cross-site guard, and mounting it in front of a handler."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from dynastore.console import ConsoleApp, start_console, with_console
from dynastore.console.proxy import HttpForwarder, _region_for

API_HEADERS = {b"x-dynastore-console": b"1", b"content-type": b"application/json", b"host": b"127.0.0.1:8000"}


@pytest.fixture()
def app(embedded: Any) -> ConsoleApp:
    return ConsoleApp(embedded.handle_locked)


def post(app: ConsoleApp, operation: str, body: dict[str, Any], **extra: bytes) -> tuple[int, Any]:
    headers = dict(API_HEADERS)
    headers.update({name.encode(): value for name, value in extra.items()})
    status, content_type, reply, _ = app.handle(
        b"POST", f"/console/api/{operation}".encode(), headers, json.dumps(body).encode()
    )
    assert content_type == b"application/json"
    return status, json.loads(reply)


def test_serves_the_page_with_a_strict_content_security_policy(app: ConsoleApp) -> None:
    for url in (b"/console", b"/console/", b"/console/?x=1"):
        status, content_type, body, extra = app.handle(b"GET", url, {}, b"")
        assert status == 200
        assert content_type.startswith(b"text/html")
        assert b'<script type="module" src="/console/js/main.js">' in body
        assert b"default-src 'self'" in extra
    assert b"http" not in app.handle(b"GET", b"/console/", {}, b"")[2].replace(b"http-equiv", b"")


def test_serves_static_files_with_their_types(app: ConsoleApp) -> None:
    assert app.handle(b"GET", b"/console/js/main.js", {}, b"")[1].startswith(b"text/javascript")
    assert app.handle(b"GET", b"/console/app.css", {}, b"")[1].startswith(b"text/css")
    status, _, body, _ = app.handle(b"HEAD", b"/console/app.css", {}, b"")
    assert (status, body) == (200, b"")


@pytest.mark.parametrize("url", [
    b"/console/nope.js", b"/console/../app.py", b"/console/%2e%2e/app.py", b"/console/js/../../app.py",
    b"/console//etc/passwd",
])
def test_only_files_of_the_static_folder_are_served(app: ConsoleApp, url: bytes) -> None:
    assert app.handle(b"GET", url, {}, b"")[0] == 404


def test_static_files_reference_nothing_on_the_internet() -> None:
    from dynastore.console.app import STATIC_ROOT

    for file in STATIC_ROOT.rglob("*"):
        if file.suffix in (".html", ".css", ".js"):
            text = file.read_text()
            assert "https://" not in text and "//cdn" not in text, file


def test_proxy_forwards_an_operation(app: ConsoleApp, client: Any) -> None:
    client.create_table(
        TableName="proxied", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
    )
    status, reply = post(app, "PutItem", {"TableName": "proxied", "Item": {"id": {"S": "a"}, "n": {"N": "1" * 38}}})
    assert status == 200
    status, reply = post(app, "GetItem", {"TableName": "proxied", "Key": {"id": {"S": "a"}}})
    assert reply["Item"]["n"] == {"N": "1" * 38}


def test_proxy_passes_dynamodb_errors_through(app: ConsoleApp) -> None:
    status, reply = post(app, "DescribeTable", {"TableName": "missing-table"})
    assert status == 400
    assert reply["__type"].endswith("ResourceNotFoundException")


def test_proxy_refuses_requests_without_the_console_header(app: ConsoleApp) -> None:
    status, _, _, _ = app.handle(b"POST", b"/console/api/ListTables", {b"host": b"h"}, b"{}")
    assert status == 403


def test_proxy_refuses_cross_origin_requests(app: ConsoleApp) -> None:
    assert post(app, "ListTables", {}, origin=b"http://evil.example")[0] == 403
    assert post(app, "ListTables", {}, origin=b"http://127.0.0.1:8000")[0] == 200


def test_proxy_checks_method_and_operation_name(app: ConsoleApp) -> None:
    assert app.handle(b"GET", b"/console/api/ListTables", API_HEADERS, b"")[0] == 405
    assert app.handle(b"POST", b"/console/api/../x", API_HEADERS, b"{}")[0] == 400
    status, reply = post(app, "NoSuchOperation", {})
    assert status == 400 and reply["__type"].endswith("UnknownOperationException")


def test_config_names_the_endpoint(endpoint: str) -> None:
    remote = ConsoleApp(endpoint)
    body = json.loads(remote.handle(b"GET", b"/console/config.json", {}, b"")[2])
    assert body == {"endpoint": endpoint, "region": "us-east-1", "signin": False, "buckets": None,
                    "fileImportMaxBytes": 4 * 1024 * 1024}


def test_with_console_routes_console_paths_and_delegates_the_rest(embedded: Any) -> None:
    class Inner:
        def __init__(self) -> None:
            self.calls: list[bytes] = []

        def handle(self, method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Any:
            self.calls.append(url)
            return embedded.handle_locked(method, url, headers, body)

    inner = Inner()
    mounted = with_console(inner)
    assert mounted.handle(b"GET", b"/console/", {}, b"")[1].startswith(b"text/html")
    assert mounted.handle(b"GET", b"/consoles", {}, b"")[0] == 200  # the health check, not the console
    status, _, reply, _ = mounted.handle(b"POST", b"/console/api/ListTables", API_HEADERS, b"{}")
    assert status == 200 and "TableNames" in json.loads(reply)
    assert inner.calls == [b"/consoles", b"/"]


def test_standalone_console_over_http(console: Any) -> None:
    with urllib.request.urlopen(console.url) as response:
        assert response.status == 200
        assert b"dynastore console" in response.read()
    request = urllib.request.Request(
        console.url + "api/ListTables", data=b"{}", method="POST",
        headers={"x-dynastore-console": "1", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        assert "TableNames" in json.loads(response.read())


def test_unreachable_endpoint_is_reported() -> None:
    status, body = HttpForwarder("http://127.0.0.1:9")("ListTables", b"{}")
    assert status == 502
    assert "Cannot reach" in json.loads(body)["message"]


def test_region_comes_from_an_aws_host_name() -> None:
    assert _region_for("https://dynamodb.eu-west-1.amazonaws.com", None) == "eu-west-1"
    assert _region_for("http://localhost:8000", None) == "us-east-1"


class _Recorder(BaseHTTPRequestHandler):
    seen: dict[str, str] = {}

    def do_POST(self) -> None:  # noqa: N802
        _Recorder.seen = dict(self.headers.items())
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"TableNames": []}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        return


@pytest.fixture
def recorder_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A local endpoint recording what it is sent (_Recorder), with the
    credential chain set to a known key."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDCONSOLETEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_remote_calls_are_signed_with_the_credential_chain(recorder_url: str) -> None:
    forward = HttpForwarder(recorder_url, region="eu-central-1")
    assert forward("ListTables", b"{}") == (200, b'{"TableNames": []}')
    authorization = _Recorder.seen["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDCONSOLETEST/")
    assert "/eu-central-1/dynamodb/aws4_request" in authorization
    assert _Recorder.seen["X-Amz-Target"] == "DynamoDB_20120810.ListTables"


def test_console_server_redirects_the_root(endpoint: str) -> None:
    with start_console(endpoint) as server:
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/")
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as raised:
            opener.open(request)
        with raised.value as error:
            assert error.code == 302
            assert error.headers["Location"] == "/console/"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_: Any, **__: Any) -> None:
        return None


def test_mounted_on_a_real_dynastore_server(embedded: Any) -> None:
    """What ``dynastore serve`` does once wired: the same port answers the API and /console."""
    background = embedded.serve()
    try:
        server = background._server
        server.application = with_console(server.application)
        with urllib.request.urlopen(background.endpoint_url + "/console/") as response:
            assert "default-src 'self'" in response.headers["Content-Security-Policy"]
            assert b"dynastore console" in response.read()
        request = urllib.request.Request(
            background.endpoint_url + "/console/api/ListTables", data=b"{}", method="POST",
            headers={"x-dynastore-console": "1", "content-type": "application/json",
                     "origin": background.endpoint_url},
        )
        with urllib.request.urlopen(request) as response:
            assert "TableNames" in json.loads(response.read())
        import boto3

        client = boto3.client(
            "dynamodb", endpoint_url=background.endpoint_url, region_name="us-east-1",
            aws_access_key_id="x", aws_secret_access_key="x",
        )
        assert "TableNames" in client.list_tables()  # the API itself still answers
    finally:
        background.stop()


# --- regions and signing in (issue 16) -------------------------------------------------------
SIGNED = {
    b"authorization": b"AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/dynamodb/aws4_request, "
                      b"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=abc",
    b"x-amz-date": b"20260101T000000Z",
    b"x-amz-security-token": b"token",
    b"x-amz-content-sha256": b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    b"x-amz-target": b"DynamoDB_20120810.ListTables",
    b"content-type": b"application/x-amz-json-1.0",
}


class _Recording:
    """A forwarder that records what it is asked to send."""

    region = "us-east-1"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, operation: str, body: bytes, region: str | None = None) -> tuple[int, bytes]:
        self.calls.append(("call", operation, body, region))
        return 200, b"{}"

    def admin(self, method: str, path: str, body: bytes = b"", region: str | None = None) -> tuple[int, bytes]:
        self.calls.append(("admin", method, path, body, region))
        return 200, b"{}"

    def signed(self, method: bytes, path: bytes, headers: dict[bytes, bytes], body: bytes) -> tuple[int, bytes]:
        self.calls.append(("signed", method, path, headers, body))
        return 200, b"{}"


def _headers(**extra: bytes) -> dict[bytes, bytes]:
    headers = {**API_HEADERS, **SIGNED, b"origin": b"http://127.0.0.1:8000", b"cookie": b"c=1",
               b"user-agent": b"Chromium"}
    headers.update({name.replace("_", "-").encode(): value for name, value in extra.items()})
    return headers


def test_signed_calls_pass_through_with_their_signature_headers() -> None:
    recording = _Recording()
    app = ConsoleApp(forwarder=recording, require_signature=True)
    body = b'{"Limit": 5}'
    status, _, reply, extra = app.handle(b"POST", b"/console/api/ListTables", _headers(), body)
    assert (status, reply) == (200, b"{}") and b"X-Frame-Options: DENY" in extra
    kind, method, path, headers, sent = recording.calls[-1]
    assert (kind, method, path, sent) == ("signed", b"POST", b"/", body)  # the body byte for byte
    assert headers == {**SIGNED, b"host": b"127.0.0.1:8000"}  # nothing of the console's or the browser's

    status, _, _, _ = app.handle(b"GET", b"/console/admin/identity", _headers(content_type=b"application/json"), b"")
    assert status == 200
    kind, method, path, headers, sent = recording.calls[-1]
    assert (kind, method, path, sent) == ("signed", b"GET", b"/_dynastore/identity", b"")
    assert headers[b"authorization"] == SIGNED[b"authorization"] and headers[b"host"] == b"127.0.0.1:8000"
    assert b"x-amz-target" not in headers  # an admin route has no target


def test_signed_mode_keeps_the_cross_site_guard_and_checks_the_target() -> None:
    recording = _Recording()
    app = ConsoleApp(forwarder=recording, require_signature=True)
    evil = _headers(origin=b"http://evil.example")
    assert app.handle(b"POST", b"/console/api/ListTables", evil, b"{}")[0] == 403
    assert app.handle(b"GET", b"/console/admin/identity", evil, b"")[0] == 403
    bare = {name: value for name, value in _headers().items() if name != b"x-dynastore-console"}
    assert app.handle(b"POST", b"/console/api/ListTables", bare, b"{}")[0] == 403
    status, _, reply, _ = app.handle(b"POST", b"/console/api/DeleteTable", _headers(), b"{}")
    assert status == 400 and b"X-Amz-Target" in reply  # signed for ListTables, sent as DeleteTable
    assert recording.calls == []
    config = json.loads(app.handle(b"GET", b"/console/config.json", {}, b"")[2])
    assert config["signin"] is True


def test_the_region_header_goes_to_the_forwarder() -> None:
    recording = _Recording()
    app = ConsoleApp(forwarder=recording)
    headers = {**API_HEADERS, b"x-dynastore-region": b"eu-central-2"}
    assert app.handle(b"POST", b"/console/api/ListTables", headers, b"{}")[0] == 200
    assert recording.calls[-1] == ("call", "ListTables", b"{}", "eu-central-2")
    assert app.handle(b"GET", b"/console/admin/identity", headers, b"")[0] == 200
    assert recording.calls[-1] == ("admin", "GET", "/_dynastore/identity", b"", "eu-central-2")
    assert app.handle(b"POST", b"/console/api/ListTables", API_HEADERS, b"{}")[0] == 200
    assert recording.calls[-1] == ("call", "ListTables", b"{}", None)


@pytest.mark.parametrize("region", [
    b"EU-WEST-1", b"eu-west", b"euwest1", b"eu-west-1\n", b"eu-west-1/x", b"../eu-west-1", b"e-west-1",
    b"eu-" + b"a" * 80 + b"-1", b"eu-west-1 ", "eu-wést-1".encode(),
])
def test_a_bad_region_header_is_refused(region: bytes) -> None:
    recording = _Recording()
    app = ConsoleApp(forwarder=recording)
    headers = {**API_HEADERS, b"x-dynastore-region": region}
    status, _, reply, _ = app.handle(b"POST", b"/console/api/ListTables", headers, b"{}")
    assert status == 400 and json.loads(reply)["__type"].endswith("BadRegion")
    assert app.handle(b"GET", b"/console/admin/identity", headers, b"")[0] == 400
    assert recording.calls == []


@pytest.mark.parametrize("region", [b"us-east-1", b"eu-central-2", b"us-gov-west-1", b"ap-southeast-4"])
def test_region_names_are_accepted(region: bytes) -> None:
    recording = _Recording()
    headers = {**API_HEADERS, b"x-dynastore-region": region}
    assert ConsoleApp(forwarder=recording).handle(b"POST", b"/console/api/ListTables", headers, b"{}")[0] == 200


def test_in_process_calls_are_scoped_to_the_chosen_region() -> None:
    seen: list[tuple[bytes, dict[bytes, bytes]]] = []

    def handle(method: bytes, url: bytes, headers: dict[bytes, bytes], body: bytes) -> Any:
        seen.append((url, headers))
        return (200, b"application/json", b"{}", b"")

    app = ConsoleApp(handle, region="eu-west-1")
    app.handle(b"POST", b"/console/api/ListTables", API_HEADERS, b"{}")
    app.handle(b"POST", b"/console/api/ListTables", {**API_HEADERS, b"x-dynastore-region": b"ap-south-1"}, b"{}")
    app.handle(b"GET", b"/console/admin/identity", {**API_HEADERS, b"x-dynastore-region": b"sa-east-1"}, b"")
    scopes = [headers[b"authorization"].split(b"/")[2] for _url, headers in seen]
    assert scopes == [b"eu-west-1", b"ap-south-1", b"sa-east-1"]
    assert [url for url, _headers in seen] == [b"/", b"/", b"/_dynastore/identity"]


def test_remote_calls_are_signed_for_the_chosen_region(recorder_url: str) -> None:
    forward = HttpForwarder(recorder_url, region="eu-central-1")
    assert forward("ListTables", b"{}", "ap-northeast-3")[0] == 200
    assert "/ap-northeast-3/dynamodb/aws4_request" in _Recorder.seen["Authorization"]
    forward.admin("POST", "/_dynastore/throughput", b'{"Mode": "observe"}', "us-west-2")
    assert "/us-west-2/dynamodb/aws4_request" in _Recorder.seen["Authorization"]


def test_a_browser_signed_request_keeps_its_host_over_http() -> None:
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        forward = HttpForwarder(f"http://127.0.0.1:{server.server_port}")
        headers = {b"host": b"console.example:8001", b"authorization": SIGNED[b"authorization"],
                   b"x-amz-date": SIGNED[b"x-amz-date"], b"content-type": SIGNED[b"content-type"]}
        assert forward.signed(b"POST", b"/", headers, b"{}")[0] == 200
    finally:
        server.shutdown()
        server.server_close()
    assert _Recorder.seen["Host"] == "console.example:8001"
    assert _Recorder.seen["Authorization"] == SIGNED[b"authorization"].decode()
    assert _Recorder.seen["Content-Type"] == "application/x-amz-json-1.0"


def test_another_region_of_an_aws_endpoint_is_another_host() -> None:
    forward = HttpForwarder("https://dynamodb.eu-west-1.amazonaws.com")
    assert forward._url_for(None) == "https://dynamodb.eu-west-1.amazonaws.com/"
    assert forward._url_for("eu-west-1") == "https://dynamodb.eu-west-1.amazonaws.com/"
    assert forward._url_for("us-east-2") == "https://dynamodb.us-east-2.amazonaws.com/"
    assert HttpForwarder("http://127.0.0.1:9")._url_for("us-east-2") == "http://127.0.0.1:9/"


# --- against the real Application with a signature verifier ----------------------------------
KEYS_FILE = (
    "AKIDCONSOLEADMIN:admin-secret:111111111111:admin\n"
    "AKIDCONSOLEREAD:read-secret:111111111111:readonly\n"
    "AKIDCONSOLETOKEN:token-secret:222222222222:session-token=tok123\n"
)
HOST = "127.0.0.1:8000"


@pytest.fixture()
def verified() -> Iterator[Any]:
    """The server's own Application, verifying SigV4, with the console mounted in
    sign-in mode — what ``dynastore serve --credentials FILE`` runs."""
    from dynastore.database import Database
    from dynastore.protocol.app import Application
    from dynastore.protocol.credentials import parse_credentials
    from dynastore.protocol.sigv4 import SignatureVerifier

    database = Database.open()
    try:
        application = Application(database, SignatureVerifier(parse_credentials(KEYS_FILE)))
        yield with_console(application, region="us-east-1", require_signature=True)
    finally:
        database.close()


def browser_signed(
    method: str, path: str, body: bytes, key: tuple[str, str], region: str = "us-east-1",
    target: str | None = None, token: str | None = None,
) -> dict[bytes, bytes]:
    """The headers the page sends: signed as the server will see the request."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    headers = {"Content-Type": "application/x-amz-json-1.0" if target else "application/json"}
    if target:
        headers["X-Amz-Target"] = target
    request = AWSRequest(method=method, url=f"http://{HOST}{path}", data=body, headers=headers)
    SigV4Auth(Credentials(*key, token), "dynamodb", region).add_auth(request)
    sent = {name.lower().encode(): value.encode() for name, value in request.headers.items()}
    return {**sent, b"x-dynastore-console": b"1", b"host": HOST.encode(), b"origin": f"http://{HOST}".encode()}


def signed_call(
    app: Any, operation: str, params: dict[str, Any], key: tuple[str, str], **options: Any
) -> tuple[int, Any]:
    body = json.dumps(params).encode()
    headers = browser_signed("POST", "/", body, key, target=f"DynamoDB_20120810.{operation}", **options)
    status, _, reply, _ = app.handle(b"POST", f"/console/api/{operation}".encode(), headers, body)
    return status, json.loads(reply)


ADMIN_KEY = ("AKIDCONSOLEADMIN", "admin-secret")
READ_KEY = ("AKIDCONSOLEREAD", "read-secret")


def test_signed_calls_reach_a_verifying_server(verified: Any) -> None:
    table = {
        "TableName": "signed", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    }
    assert signed_call(verified, "CreateTable", table, ADMIN_KEY)[0] == 200
    assert signed_call(verified, "ListTables", {}, ADMIN_KEY) == (200, {"TableNames": ["signed"]})
    # another region of the same account is another namespace
    assert signed_call(verified, "ListTables", {}, ADMIN_KEY, region="eu-west-1") == (200, {"TableNames": []})
    status, reply = signed_call(verified, "ListTables", {}, ("AKIDCONSOLEADMIN", "wrong"))
    assert status == 400 and reply["__type"].endswith("InvalidSignatureException")
    status, reply = signed_call(verified, "ListTables", {}, ("AKIDNOSUCHKEY", "x"))
    assert status == 400 and reply["__type"].endswith("UnrecognizedClientException")
    assert signed_call(verified, "ListTables", {}, READ_KEY)[0] == 200
    status, reply = signed_call(verified, "PutItem", {"TableName": "signed", "Item": {"id": {"S": "a"}}}, READ_KEY)
    assert status == 400 and reply["__type"].endswith("AccessDeniedException")
    token_key = ("AKIDCONSOLETOKEN", "token-secret")
    assert signed_call(verified, "ListTables", {}, token_key, token="tok123")[0] == 200
    assert signed_call(verified, "ListTables", {}, token_key)[0] != 200


def test_unsigned_console_calls_are_refused_by_a_verifying_server(verified: Any) -> None:
    headers = {**API_HEADERS, b"x-amz-target": b"DynamoDB_20120810.ListTables"}
    status, _, reply, _ = verified.handle(b"POST", b"/console/api/ListTables", headers, b"{}")
    assert status == 400 and json.loads(reply)["__type"].endswith("MissingAuthenticationTokenException")
    status, _, reply, _ = verified.handle(b"GET", b"/console/admin/identity", API_HEADERS, b"")
    assert status == 400 and json.loads(reply)["__type"].endswith("MissingAuthenticationTokenException")


def test_signed_identity(verified: Any) -> None:
    headers = browser_signed("GET", "/_dynastore/identity", b"", READ_KEY, region="eu-west-1")
    status, _, reply, _ = verified.handle(b"GET", b"/console/admin/identity", headers, b"")
    identity = json.loads(reply)
    assert status == 200, identity
    assert identity["account"] == "111111111111" and identity["accessKeyId"] == "AKIDCONSOLEREAD"
    assert identity["readonly"] is True and identity["region"] == "eu-west-1"
    assert "eu-west-1" in identity["regions"]
    headers = browser_signed("GET", "/_dynastore/identity", b"", ("AKIDCONSOLEREAD", "nope"))
    status, _, reply, _ = verified.handle(b"GET", b"/console/admin/identity", headers, b"")
    assert status == 400 and json.loads(reply)["__type"].endswith("InvalidSignatureException")


def test_unsigned_identity_names_the_chosen_region(embedded: Any) -> None:
    app = ConsoleApp(embedded.handle_locked)
    headers = {**API_HEADERS, b"x-dynastore-region": b"ap-south-2"}
    status, _, reply, _ = app.handle(b"GET", b"/console/admin/identity", headers, b"")
    identity = json.loads(reply)
    assert status == 200, identity
    assert identity["region"] == "ap-south-2" and "ap-south-2" in identity["regions"]
    assert identity["accessKeyId"] is None and identity["readonly"] is False
