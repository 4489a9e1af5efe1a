"""DynamoDB's JSON 1.0 wire protocol, checked over raw sockets.

What DynamoDB answers at the HTTP level (status codes, bodies, CRC32 values)
was taken from dynalite's connection tests, which were recorded against the
real service: e.g. the SerializationException body's CRC32 is 3948637019
there, and the same bytes must give the same checksum here.
"""

from __future__ import annotations

import gzip
import http.client
import json
import re
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import pytest
from botocore.exceptions import ClientError

from tests.api.conftest import free_port, make_client, stop_server, wait_for_port
from tests.api.helpers import SIGV4, Reply, children_of, read_reply, request_bytes

JSON_1_0 = "application/x-amz-json-1.0"
REQUEST_ID = re.compile(r"^[0-9A-Z]{52}$")
BODY_LIMIT = 16 * 1024 * 1024

SERIALIZATION = {"__type": "com.amazon.coral.service#SerializationException"}
UNKNOWN_OPERATION = {"__type": "com.amazon.coral.service#UnknownOperationException"}


# --- a tiny raw HTTP client ----------------------------------------------------


def api_headers(operation: str | None = "ListTables", **extra: str) -> dict[str, str]:
    headers = {"Content-Type": JSON_1_0, "X-Amz-Date": "20261129T000000Z", "Authorization": SIGV4}
    if operation is not None:
        headers["X-Amz-Target"] = f"DynamoDB_20120810.{operation}"
    headers.update(extra)
    return headers


def connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(address: tuple[str, int], raw: bytes) -> Reply:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(raw)
        return read_reply(stream)


def post(address: tuple[str, int], headers: dict[str, str], body: bytes = b"{}") -> Reply:
    return exchange(address, request_bytes("POST", "/", headers, body))


def assert_wire_headers(reply: Reply) -> None:
    """What every DynamoDB response carries."""
    assert REQUEST_ID.match(reply.headers["x-amzn-requestid"])
    assert int(reply.headers["x-amz-crc32"]) == zlib.crc32(reply.body)
    assert int(reply.headers["content-length"]) == len(reply.body)


def assert_error(reply: Reply, status: int, body: dict[str, str], content_type: str = JSON_1_0) -> None:
    assert_wire_headers(reply)
    assert reply.status == status
    assert reply.json() == body
    assert reply.headers["content-type"] == content_type


def server_rss_kib(pid: int) -> int:
    """VmRSS of the server and its children (the HTTP front process is where
    a client's unread replies would pile up)."""
    total = 0
    for process in (pid, *children_of(pid)):
        with open(f"/proc/{process}/status") as status:
            total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return total


@pytest.fixture(scope="module")
def own_server() -> Iterator[tuple[subprocess.Popen[bytes], tuple[str, int]]]:
    """A server of this module's own, for tests that watch its process."""
    from tests.api.conftest import start_server

    process, url = start_server("--in-memory")
    try:
        yield process, ("127.0.0.1", int(url.rsplit(":", 1)[1]))
    finally:
        stop_server(process)
        if process.stderr is not None:
            process.stderr.close()


# --- health check, paths, methods --------------------------------------------------


def test_get_root_is_dynamodbs_health_answer(address: tuple[str, int]) -> None:
    reply = exchange(address, request_bytes("GET"))
    assert reply.status == 200
    assert reply.body == b"healthy: dynamodb.us-east-1.amazonaws.com "
    assert reply.headers["x-amz-crc32"] == "3128867991"  # DynamoDB's, via dynalite
    assert_wire_headers(reply)


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "PATCH"])
def test_other_methods_get_the_unknown_operation_page(address: tuple[str, int], method: str) -> None:
    reply = exchange(address, request_bytes(method))
    assert reply.status == 404
    assert reply.body == b"<UnknownOperationException/>\n"
    assert reply.headers["x-amz-crc32"] == "3552371480"
    assert_wire_headers(reply)


def test_admin_prefix_is_reserved(address: tuple[str, int]) -> None:
    for method in ("GET", "POST"):
        reply = exchange(address, request_bytes(method, "/_dynastore/anything", api_headers()))
        assert reply.status == 404
        assert_wire_headers(reply)
        assert reply.json() == {"message": "Not Found"}


def test_path_does_not_matter_for_api_calls(address: tuple[str, int]) -> None:
    reply = exchange(address, request_bytes("POST", "/some/path?x=1", api_headers("NoSuchThing"), b"{}"))
    assert_error(reply, 400, UNKNOWN_OPERATION)


# --- content types ---------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [None, "whatever", "application/x-amz-json-1.1", "application/jsonasdf", "text/plain"],
)
def test_body_with_unaccepted_content_type_is_404(
    address: tuple[str, int], content_type: str | None
) -> None:
    headers = api_headers()
    del headers["Content-Type"]
    if content_type is not None:
        headers["Content-Type"] = content_type
    reply = post(address, headers, b"hi")
    assert reply.status == 404
    assert reply.body == b"<UnknownOperationException/>\n"
    assert_wire_headers(reply)


@pytest.mark.parametrize(
    ("content_type", "answered_with"),
    [
        (JSON_1_0, JSON_1_0),
        ("application/json", "application/json"),
        ("application/json;", "application/json"),
        ("  application/json  ;   asfd", "application/json"),
        ("application/x-amz-json-1.0;blahblah", JSON_1_0),
    ],
)
def test_malformed_json_is_serialization_exception(
    address: tuple[str, int], content_type: str, answered_with: str
) -> None:
    reply = post(address, {"Content-Type": content_type}, b"hi")
    assert_error(reply, 400, SERIALIZATION, answered_with)
    assert reply.headers["x-amz-crc32"] == "3948637019"  # DynamoDB's, via dynalite


def test_application_json_with_charset_is_accepted(address: tuple[str, int]) -> None:
    reply = post(address, {"Content-Type": "application/json;charset=utf-8"}, b"{}")
    assert_error(reply, 400, UNKNOWN_OPERATION, "application/json")
    assert reply.headers["x-amz-crc32"] == "1368724161"


# --- targets -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        None,
        "whatever",
        "DynamoDB_20120810.ListTable",
        "DynamoDB_20120810.",
        "DynamoDB_20111205.ListTables",
        "DynamoDBStreams_20120810.ListStream",
        "DynamoDBStreams_20120810.ListTables",
        "dynamodb_20120810.ListTables",
    ],
)
def test_missing_or_unknown_target_is_unknown_operation(
    address: tuple[str, int], target: str | None
) -> None:
    headers = api_headers(None)
    if target is not None:
        headers["X-Amz-Target"] = target
    assert_error(post(address, headers), 400, UNKNOWN_OPERATION)


def test_unknown_target_is_checked_after_json_syntax(address: tuple[str, int]) -> None:
    assert_error(post(address, api_headers("NoSuchOperation"), b"{"), 400, SERIALIZATION)


def test_dispatch_reaches_a_known_operation(address: tuple[str, int]) -> None:
    reply = post(address, api_headers("ListTables"), b"{}")
    assert_wire_headers(reply)
    assert reply.status == 200, reply.body
    assert isinstance(reply.json()["TableNames"], list)


# --- credentials --------------------------------------------------------------------


def test_missing_authorization(address: tuple[str, int]) -> None:
    headers = api_headers()
    del headers["Authorization"]
    reply = post(address, headers)
    assert_error(
        reply,
        400,
        {
            "__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
            "message": "Request is missing Authentication Token",
        },
    )
    assert reply.headers["x-amz-crc32"] == "2088342776"


def test_authorization_that_is_not_sigv4(address: tuple[str, int]) -> None:
    reply = post(address, api_headers(Authorization="AWS4"))
    assert reply.json()["__type"].endswith("#MissingAuthenticationTokenException")


def test_incomplete_sigv4_header(address: tuple[str, int]) -> None:
    headers = api_headers(Authorization="AWS4- Signature=b, Credential=a")
    reply = post(address, headers)
    assert_error(
        reply,
        400,
        {
            "__type": "com.amazon.coral.service#IncompleteSignatureException",
            "message": "Authorization header requires 'SignedHeaders' parameter. "
            "Authorization=AWS4- Signature=b, Credential=a",
        },
    )


def test_both_header_and_query_credentials(address: tuple[str, int]) -> None:
    raw = request_bytes("POST", "/?X-Amz-Algorithm", api_headers(Authorization="X"), b"{}")
    reply = exchange(address, raw)
    assert reply.json()["__type"] == "com.amazon.coral.service#InvalidSignatureException"


def test_any_well_formed_sigv4_header_is_accepted(address: tuple[str, int]) -> None:
    reply = post(address, api_headers(Authorization=SIGV4.replace("0" * 64, "f" * 64)))
    assert reply.status == 200, reply.body


# --- bodies --------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"", b"[]", b"null", b'"text"', b"42", b"true"])
def test_body_that_is_not_a_json_object(address: tuple[str, int], body: bytes) -> None:
    assert_error(post(address, api_headers(), body), 400, SERIALIZATION)


def test_gzip_request_body_is_accepted(address: tuple[str, int]) -> None:
    reply = post(address, api_headers(**{"Content-Encoding": "gzip"}), gzip.compress(b'{"Limit": 5}'))
    assert reply.status == 200, reply.body
    assert "TableNames" in reply.json()


def test_corrupt_gzip_body_is_serialization_exception(address: tuple[str, int]) -> None:
    body = gzip.compress(b'{"Limit": 5}')[:-6]
    reply = post(address, api_headers(**{"Content-Encoding": "gzip"}), body)
    assert_error(reply, 400, SERIALIZATION)


def test_gzip_bomb_is_refused(own_server: tuple[subprocess.Popen[bytes], tuple[str, int]]) -> None:
    process, address = own_server
    bomb = gzip.compress(b" " * (BODY_LIMIT + 1024), compresslevel=9)
    assert len(bomb) < 100_000
    reply = post(address, api_headers(**{"Content-Encoding": "gzip"}), bomb)
    assert reply.status == 413
    assert reply.json()["__type"] == "com.amazon.coral.service#RequestEntityTooLargeException"
    assert_wire_headers(reply)


def test_an_sdk_sending_an_oversized_request_gets_request_entity_too_large(
    endpoint: str, make_table: Any
) -> None:
    """The refusal reaches an SDK that is still sending its body (the server
    answers before reading it, then hangs up)."""
    table = make_table(sk=None)
    client = make_client(endpoint)
    with pytest.raises(ClientError) as refused:
        client.put_item(TableName=table, Item={"pk": {"S": "x"}, "d": {"S": "a" * (BODY_LIMIT + 1)}})
    assert refused.value.response["Error"]["Code"] == "RequestEntityTooLargeException"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413


def test_huge_content_length_is_refused_before_the_body_is_sent(
    own_server: tuple[subprocess.Popen[bytes], tuple[str, int]],
) -> None:
    process, address = own_server
    headers = api_headers(**{"Content-Length": str(BODY_LIMIT + 1)})
    raw = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    # A first refusal warms a fresh server up (what it loads and allocates on
    # its first requests is not what this test measures).
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode())
        assert read_reply(stream).status == 413
    rss_before = server_rss_kib(process.pid)
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode())
        sock.sendall(b"{" * 65536)  # the start of a body that is never finished
        reply = read_reply(stream)
        assert reply.status == 413
        assert reply.headers.get("connection") == "close"
        assert reply.json() == {
            "__type": "com.amazon.coral.service#RequestEntityTooLargeException",
            "message": "Request must be smaller than 16777216 bytes for the operation",
        }
        assert_wire_headers(reply)
        assert hung_up(stream)
    assert server_rss_kib(process.pid) - rss_before < 8 * 1024


def hung_up(stream: BinaryIO) -> bool:
    """Whether the server closed the connection: end of stream, or a reset
    (closing a socket with unread body bytes in it makes the kernel send RST,
    which may overtake the FIN)."""
    try:
        return stream.read() == b""
    except ConnectionResetError:
        return True


def test_expect_continue_with_huge_length_is_refused(
    own_server: tuple[subprocess.Popen[bytes], tuple[str, int]],
) -> None:
    _, address = own_server
    headers = api_headers(**{"Content-Length": str(BODY_LIMIT + 1), "Expect": "100-continue"})
    raw = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode())
        assert read_reply(stream).status == 413


def test_expect_continue_is_honoured(address: tuple[str, int]) -> None:
    body = b'{"Limit": 3}'
    headers = api_headers(**{"Content-Length": str(len(body)), "Expect": "100-continue"})
    raw = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode())
        assert stream.readline().startswith(b"HTTP/1.1 100")
        assert stream.readline() == b"\r\n"
        sock.sendall(body)
        assert read_reply(stream).status == 200


def test_chunked_body_over_the_limit_is_refused_while_streaming(
    own_server: tuple[subprocess.Popen[bytes], tuple[str, int]],
) -> None:
    _, address = own_server
    headers = api_headers(**{"Transfer-Encoding": "chunked"})
    raw = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    chunk = b" " * (1024 * 1024)
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode())
        try:
            for _ in range(BODY_LIMIT // len(chunk) + 4):
                sock.sendall(framed)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused and hung up mid-stream, as it should
        reply = read_reply(stream)
    assert reply.status == 413


def test_chunked_body_within_the_limit_is_accepted(address: tuple[str, int]) -> None:
    headers = api_headers(**{"Transfer-Encoding": "chunked"})
    raw = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    body = b"4\r\n{\"Li\r\n8\r\nmit\": 2}\r\n0\r\n\r\n"
    reply = exchange(address, f"POST / HTTP/1.1\r\nHost: x\r\n{raw}\r\n".encode() + body)
    assert reply.status == 200, reply.body


# --- connection handling ---------------------------------------------------------------


def test_every_response_has_a_unique_request_id_and_a_correct_crc(address: tuple[str, int]) -> None:
    connection = http.client.HTTPConnection(*address, timeout=10)
    seen: set[str] = set()
    bodies = [b"{}", b"{", b"[]", b'{"Limit": 1}']
    for index in range(200):
        connection.request("POST", "/", bodies[index % len(bodies)], api_headers())
        response = connection.getresponse()
        body = response.read()
        assert int(response.headers["x-amz-crc32"]) == zlib.crc32(body)
        assert response.headers["Content-Type"] == JSON_1_0
        seen.add(response.headers["x-amzn-RequestId"])
    connection.close()
    assert len(seen) == 200


def test_keep_alive_serves_many_requests_on_one_connection(address: tuple[str, int]) -> None:
    connection = http.client.HTTPConnection(*address, timeout=10)
    connection.connect()
    sock = connection.sock
    for _ in range(1000):
        connection.request("POST", "/", b"{}", api_headers())
        response = connection.getresponse()
        response.read()
        assert response.status == 200
    assert connection.sock is sock  # never reconnected
    connection.close()


def test_pipelined_requests_are_answered_in_order(address: tuple[str, int]) -> None:
    kinds = ["health", "unknown", "malformed", "list"] * 25
    requests = {
        "health": request_bytes("GET"),
        "unknown": request_bytes("POST", "/", api_headers("Nope"), b"{}"),
        "malformed": request_bytes("POST", "/", api_headers(), b"{"),
        "list": request_bytes("POST", "/", api_headers(), b"{}"),
    }
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"".join(requests[kind] for kind in kinds))
        replies = [read_reply(stream) for _ in kinds]
    for kind, reply in zip(kinds, replies, strict=True):
        assert_wire_headers(reply)
        if kind == "health":
            assert reply.body.startswith(b"healthy:")
        elif kind == "unknown":
            assert reply.json() == UNKNOWN_OPERATION
        elif kind == "malformed":
            assert reply.json() == SERIALIZATION
        else:
            assert reply.status == 200


def test_a_client_that_never_reads_is_bounded(
    own_server: tuple[subprocess.Popen[bytes], tuple[str, int]],
) -> None:
    """Pipelining without reading replies must not make the server buffer
    without bound: it stops reading, or hangs up past the pipelining limit."""
    process, address = own_server
    rss_before = server_rss_kib(process.pid)
    batch = request_bytes("GET") * 1000
    with connect(address) as sock:
        sock.settimeout(2)
        try:
            for _ in range(2000):  # up to ~40 MB of requests
                sock.sendall(batch)
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            pass
    assert server_rss_kib(process.pid) - rss_before < 32 * 1024
    assert exchange(address, request_bytes("GET")).status == 200


def test_http_1_0_closes_after_the_reply(address: tuple[str, int]) -> None:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        reply = read_reply(stream)
        assert reply.status == 200
        assert stream.read() == b""


def test_connection_close_is_honoured(address: tuple[str, int]) -> None:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(request_bytes("POST", "/", api_headers(Connection="close"), b"{}"))
        reply = read_reply(stream)
        assert reply.headers["connection"] == "close"
        assert stream.read() == b""


def test_oversized_headers_are_refused(address: tuple[str, int]) -> None:
    """Far past DynamoDB's 16 KB (test_http_edge.py holds the boundary):
    a 400, and the connection closed."""
    headers = api_headers(**{"X-Padding": "a" * (70 * 1024)})
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(request_bytes("POST", "/", headers, b"{}"))
        reply = read_reply(stream)
        assert reply.status == 400
        assert reply.body == b"Bad request"
        assert stream.read() == b""


def test_headers_trickling_in_are_bounded_too(address: tuple[str, int]) -> None:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nX-Padding: ")
        try:
            for _ in range(200):
                sock.sendall(b"a" * 1024)
                time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = read_reply(stream)
        assert reply.status == 400
        assert reply.body == b"Bad request"


def test_malformed_http_gets_400_and_the_server_lives_on(address: tuple[str, int]) -> None:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"THIS IS NOT HTTP\r\n\r\n")
        assert read_reply(stream).status == 400
    assert exchange(address, request_bytes("GET")).status == 200


def test_cors_headers_for_browsers(address: tuple[str, int]) -> None:
    reply = post(address, api_headers("Nope", Origin="http://example.com"))
    assert reply.headers["access-control-allow-origin"] == "*"
    preflight = exchange(
        address,
        request_bytes(
            "OPTIONS",
            "/",
            {
                "Origin": "http://example.com",
                "Access-Control-Request-Headers": "a, b, c",
                "Access-Control-Request-Method": "POST",
            },
        ),
    )
    assert preflight.status == 200
    assert preflight.body == b""
    assert preflight.headers["access-control-allow-headers"] == "a, b, c"
    assert preflight.headers["access-control-allow-methods"] == "POST"
    assert preflight.headers["access-control-max-age"] == "172800"


def test_boto3_round_trip(endpoint: str) -> None:
    client = make_client(endpoint)
    assert isinstance(client.list_tables()["TableNames"], list)


# --- an internal error never kills the connection or the server ---------------------------

FAULTY_SERVER = """
import sys
import dynastore.protocol.app as app

real_dispatch = app.dispatch

def dispatch(database, operation, request, *rest):
    if request.get("Boom"):
        raise RuntimeError("injected fault")
    return real_dispatch(database, operation, request, *rest)

app.dispatch = dispatch
from dynastore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_internal_error_is_a_500_and_the_server_lives_on() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", FAULTY_SERVER, "serve", "--in-memory", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        address = ("127.0.0.1", port)
        connection = http.client.HTTPConnection(*address, timeout=10)
        for _ in range(3):
            connection.request("POST", "/", b'{"Boom": true}', api_headers())
            response = connection.getresponse()
            body = response.read()
            assert response.status == 500
            assert json.loads(body) == {
                "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
                "message": "Internal server error",
            }
            assert int(response.headers["x-amz-crc32"]) == zlib.crc32(body)
            # ...and the same connection still serves the next request.
            connection.request("POST", "/", b"{}", api_headers())
            healthy = connection.getresponse()
            healthy.read()
            assert healthy.status == 200
        connection.close()
    finally:
        stop_server(process)
    assert process.stderr is not None
    with process.stderr:
        logged = process.stderr.read()
    assert process.returncode == 0, logged
    assert b"injected fault" in logged  # the traceback was logged


def test_head_has_no_body_and_keeps_the_connection_usable(address: tuple[str, int]) -> None:
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n" + request_bytes("GET"))
        head_reply = read_reply(stream)
        assert head_reply.status == 200
        assert head_reply.body == b""
        assert read_reply(stream).body.startswith(b"healthy:")


def test_protocol_upgrade_is_not_followed(address: tuple[str, int]) -> None:
    """The request is answered in HTTP/1.1, and the connection ends there."""
    raw = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    with connect(address) as sock, sock.makefile("rb") as stream:
        sock.sendall(raw + b"\x81\x05hello")
        assert read_reply(stream).status == 200
        assert stream.read() == b""


def test_faults_admin_api_is_routed(
    own_server: tuple[subprocess.Popen[bytes], tuple[str, int]],
) -> None:
    """``/_dynastore/faults`` (dynastore.faults), one of the admin routes (docs/admin.md)."""
    _, address = own_server
    rule = json.dumps({"Error": "ThrottlingException", "Operation": "ListTables", "Count": 1})
    armed = exchange(address, request_bytes("POST", "/_dynastore/faults", {}, rule.encode()))
    assert armed.status == 200, armed.body
    assert_wire_headers(armed)
    assert armed.json()["Rule"]["Error"] == "ThrottlingException"
    throttled = post(address, api_headers("ListTables"))
    assert throttled.status == 400
    assert throttled.json()["__type"] == "com.amazon.coral.service#ThrottlingException"
    assert post(address, api_headers("ListTables")).status == 200  # Count 1: used up
    listed = exchange(address, request_bytes("GET", "/_dynastore/faults"))
    assert listed.json()["Rules"][0]["Hits"] == 1
    cleared = exchange(address, request_bytes("DELETE", "/_dynastore/faults"))
    assert cleared.json() == {"Cleared": 1}
    assert exchange(address, request_bytes("PUT", "/_dynastore/faults")).status == 405


# --- connection bounds (an in-process server with tiny limits) ----------------------------


@pytest.fixture
def strict_server() -> Iterator[tuple[str, int]]:
    """A Server on its own loop thread: idle 2 s, stalled 2 s, at most 3 connections."""
    import asyncio
    import threading

    from dynastore.database import Database
    from dynastore.protocol.server import Server

    database = Database.open(None)
    server = Server(
        database, "127.0.0.1", 0, idle_connection_seconds=2, stalled_request_seconds=2,
        max_connections=3,
    )
    loop = asyncio.new_event_loop()
    bound = loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield bound
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(1.0), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        database.close()


def test_idle_and_stalled_connections_are_closed(strict_server: tuple[str, int]) -> None:
    with connect(strict_server) as idle, connect(strict_server) as stalled:
        idle.sendall(request_bytes("GET"))
        with idle.makefile("rb") as stream:
            assert read_reply(stream).status == 200
            stalled.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
            started = time.monotonic()
            idle.settimeout(6)
            stalled.settimeout(6)
            assert idle.recv(1) == b""  # closed by the server...
            assert stalled.recv(1) == b""
            assert time.monotonic() - started < 5  # ...after about 2 s


def test_connections_beyond_the_bound_are_refused(strict_server: tuple[str, int]) -> None:
    held = [connect(strict_server) for _ in range(3)]
    try:
        for sock in held:  # make sure the server has accepted all three
            sock.sendall(request_bytes("GET"))
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        with connect(strict_server) as extra:
            extra.settimeout(5)
            try:
                extra.sendall(request_bytes("GET"))
                assert extra.recv(4096) == b""
            except ConnectionResetError:
                pass  # refused with a reset: as good
    finally:
        for sock in held:
            sock.close()
    # Once the server has seen those close, new connections are served again.
    deadline = time.monotonic() + 5
    while True:
        try:
            assert exchange(strict_server, request_bytes("GET")).status == 200
            break
        except (ConnectionError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_large_response_is_intact(client: Any, make_table: Any) -> None:
    """A reply over 64 KB is written without copying; botocore checks its CRC32."""
    table = make_table(sk=None)
    payload = "x" * (350 * 1024)
    keys = [{"pk": {"S": f"big-{index}"}} for index in range(4)]
    for key in keys:
        client.put_item(TableName=table, Item={**key, "payload": {"S": payload}})
    answer = client.batch_get_item(RequestItems={table: {"Keys": keys}})
    items = answer["Responses"][table]
    assert sorted(item["pk"]["S"] for item in items) == [f"big-{index}" for index in range(4)]
    assert all(item["payload"]["S"] == payload for item in items)
