"""The console's Python side: static files, the JSON proxy (in-process and over
HTTP with SigV4), its cross-site guard, and mounting it in front of a handler."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
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
    assert body == {"endpoint": endpoint, "region": "us-east-1"}


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


def test_remote_calls_are_signed_with_the_credential_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDCONSOLETEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        forward = HttpForwarder(f"http://127.0.0.1:{server.server_port}", region="eu-central-1")
        assert forward("ListTables", b"{}") == (200, b'{"TableNames": []}')
    finally:
        server.shutdown()
        server.server_close()
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
