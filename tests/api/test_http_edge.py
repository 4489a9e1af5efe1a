"""The HTTP edge as DynamoDB serves it: compression both ways, the Server
header, CORS, the health answer, refused request heads, DescribeEndpoints.

Raw sockets against the ``endpoint`` fixture's server (every transport),
status, headers and whole bodies asserted. Where the facts come from:

- response compression: ScyllaDB's test_compressed_response.py and
  test_crc.py, which run against DynamoDB: gzip and deflate (zlib format),
  bodies of 4 KB and more, ``x-amz-crc32`` over the compressed bytes (as
  botocore checks it: the CRC32 of the body as received, decode_content off),
  and DynamoDB's reading of 38 Accept-Encoding values (ACCEPT_ENCODINGS);
- request compression: ScyllaDB's test_compressed_request.py (against
  DynamoDB) and PR 27917: gzip and deflate (the zlib format), several gzip
  members are one body, junk after a member is ignored; another coding is a
  500; a broken gzip or deflate body is a 500 (here both are 400
  SerializationException, documented divergences);
- ``Server: Server``, ``Connection: keep-alive``, the preflight answer and
  ``Access-Control-Expose-Headers``: a capture of
  dynamodb.us-east-1.amazonaws.com (AllanZhengYP/cors-test, 2020) and
  ScyllaDB's test_cors.py / test_http_headers.py; x-amz-crc32 is not exposed
  (aws/aws-sdk-js#1614);
- the 16 KB bound on the request target and the headers, answered 400:
  ScyllaDB's issue 23438 and PR 23442 (tests run against DynamoDB).
"""

from __future__ import annotations

import gzip
import json
import re
import socket
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.api.conftest import TEST_CLIENT_CONFIG, start_server, stop_server
from tests.api.helpers import Reply, read_reply, request_bytes

JSON_1_0 = "application/x-amz-json-1.0"
REQUEST_ID = re.compile(r"^[0-9A-Z]{52}$")
EXPOSED = "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
INTERNAL_SERVER_ERROR = {
    "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
    "message": "Internal server error",
}
CORS_HEADERS = (
    "access-control-allow-origin",
    "access-control-expose-headers",
    "access-control-max-age",
    "access-control-allow-methods",
    "access-control-allow-headers",
)


def sigv4(region: str = "us-east-1") -> str:
    """A well-formed SigV4 header (the test servers check presence, not the signature)."""
    return (
        f"AWS4-HMAC-SHA256 Credential=AKIDTEST/20261129/{region}/dynamodb/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64
    )


def api_headers(operation: str = "ListTables", region: str = "us-east-1", **extra: str) -> dict[str, str]:
    headers = {
        "Content-Type": JSON_1_0,
        "X-Amz-Date": "20261129T000000Z",
        "Authorization": sigv4(region),
        "X-Amz-Target": f"DynamoDB_20120810.{operation}",
    }
    headers.update(extra)
    return headers


class Connection:
    """One keep-alive connection: ``ask`` sends a request and reads its reply."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.stream = self.sock.makefile("rb")

    def ask(self, raw: bytes) -> Reply:
        self.sock.sendall(raw)
        return read_reply(self.stream)

    def close(self) -> None:
        self.stream.close()
        self.sock.close()


@pytest.fixture
def connection(address: tuple[str, int]) -> Iterator[Connection]:
    opened = Connection(address)
    try:
        yield opened
    finally:
        opened.close()


def post(connection: Connection, headers: dict[str, str], body: bytes = b"{}") -> Reply:
    return connection.ask(request_bytes("POST", "/", headers, body))


def assert_dynamodb_head(reply: Reply, content_type: str | None = JSON_1_0) -> None:
    """What every DynamoDB reply carries: its request id, Server, Date,
    Content-Length, keep-alive, and (but a preflight) its type and CRC32."""
    assert REQUEST_ID.match(reply.headers["x-amzn-requestid"])
    assert reply.headers["server"] == "Server"
    assert reply.headers["connection"] == "keep-alive"
    assert "date" in reply.headers
    assert int(reply.headers["content-length"]) == len(reply.body)
    if content_type is None:
        assert "content-type" not in reply.headers
        assert "x-amz-crc32" not in reply.headers
    else:
        assert reply.headers["content-type"] == content_type
        assert int(reply.headers["x-amz-crc32"]) == zlib.crc32(reply.body)


# --- a large item to ask for --------------------------------------------------------

LARGE_VALUE = "x" * 5000


@pytest.fixture(scope="module")
def large_item(client: Any) -> Iterator[tuple[str, bytes]]:
    """(table, GetItem request body) of an item whose GetItem reply is ~5 KB."""
    import uuid

    name = f"edge-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    client.put_item(TableName=name, Item={"pk": {"S": "big"}, "v": {"S": LARGE_VALUE}})
    client.put_item(TableName=name, Item={"pk": {"S": "small"}, "v": {"S": "tiny"}})
    request = json.dumps({"TableName": name, "Key": {"pk": {"S": "big"}}, "ConsistentRead": True})
    try:
        yield name, request.encode()
    finally:
        client.delete_table(TableName=name)


LARGE_ITEM_JSON = {"Item": {"pk": {"S": "big"}, "v": {"S": LARGE_VALUE}}}


def get_large(connection: Connection, large_item: tuple[str, bytes], **extra: str) -> Reply:
    return post(connection, api_headers("GetItem", **extra), large_item[1])


# --- response compression ------------------------------------------------------------


def test_a_large_reply_is_not_compressed_unless_asked(
    connection: Connection, large_item: tuple[str, bytes]
) -> None:
    for extra in ({}, {"Accept-Encoding": "identity"}):
        reply = get_large(connection, large_item, **extra)
        assert reply.status == 200
        assert_dynamodb_head(reply)
        assert "content-encoding" not in reply.headers
        assert reply.json() == LARGE_ITEM_JSON


@pytest.mark.parametrize(("coding", "decompress"), [("gzip", gzip.decompress), ("deflate", zlib.decompress)])
def test_a_large_reply_is_compressed_when_asked(
    connection: Connection,
    large_item: tuple[str, bytes],
    coding: str,
    decompress: Callable[[bytes], bytes],
) -> None:
    plain = get_large(connection, large_item, **{"Accept-Encoding": "identity"})
    reply = get_large(connection, large_item, **{"Accept-Encoding": coding})
    assert reply.status == 200
    assert reply.headers["content-encoding"] == coding
    # The CRC32 and the length are those of the bytes as sent: the compressed ones.
    assert_dynamodb_head(reply)
    assert len(reply.body) < len(plain.body) // 10
    assert decompress(reply.body) == plain.body
    if coding == "gzip":
        assert reply.body[:2] == b"\x1f\x8b"


def test_a_small_reply_is_never_compressed(connection: Connection, large_item: tuple[str, bytes]) -> None:
    table = large_item[0]
    small = json.dumps({"TableName": table, "Key": {"pk": {"S": "small"}}}).encode()
    reply = post(connection, api_headers("GetItem", **{"Accept-Encoding": "gzip, deflate"}), small)
    assert reply.status == 200
    assert_dynamodb_head(reply)
    assert "content-encoding" not in reply.headers
    assert reply.json() == {"Item": {"pk": {"S": "small"}, "v": {"S": "tiny"}}}


def test_the_threshold_is_4_kb_of_response_body(connection: Connection, large_item: tuple[str, bytes]) -> None:
    """ScyllaDB's DynamoDB run: a ~4,094-byte reply stays plain, one just
    over 4 KB is compressed (dynastore compresses from 4,096 bytes on)."""
    table = large_item[0]
    sizes: dict[int, str | None] = {}
    for length in (4071, 4072, 4073, 4099):
        key = f"len-{length}"
        put = json.dumps({"TableName": table, "Item": {"pk": {"S": key}, "v": {"S": "y" * length}}})
        assert post(connection, api_headers("PutItem"), put.encode()).status == 200
        get = json.dumps({"TableName": table, "Key": {"pk": {"S": key}}, "ProjectionExpression": "v"})
        plain = post(connection, api_headers("GetItem"), get.encode())
        asked = post(connection, api_headers("GetItem", **{"Accept-Encoding": "gzip"}), get.encode())
        sizes[len(plain.body)] = asked.headers.get("content-encoding")
    assert sizes == {4094: None, 4095: None, 4096: "gzip", 4122: "gzip"}


# (Accept-Encoding, the coding DynamoDB answers with): ScyllaDB's
# test_compressed_response_accept_encodings, which passes against DynamoDB.
ACCEPT_ENCODINGS: list[tuple[str, str | None]] = [
    ("identity", None),
    ("", None),
    ("br", None),
    ("zstd", None),
    ("compress", None),
    ("x-gzip", None),
    ("gzip, deflate", "gzip"),
    ("br, identity, deflate, gzip", "deflate"),
    ("GZIP, identity", "gzip"),
    ("dog, gzip ,, cat", "gzip"),
    ("gzip;q=0.8, deflate;q=0.5", "gzip"),
    ("br, gzip;q=0, deflate; q = 0.5 , identity;q=0", "deflate"),
    ("*", "gzip"),
    ("*, deflate;q=0.5", "gzip"),
    ("*, deflate", "deflate"),
    ("*, identity", "gzip"),
    ("*, gzip;q=0.5", "deflate"),
    ("gzip ;q=0", None),
    ("identity;q=0", None),
    ("*;q=0", None),
    ("*;q=0.5,identity", "gzip"),
    ("gzip;q=0.5,identity;q=0.8", "gzip"),
    ("br;q=0.8,identity;q=0.5,*;q=0", None),
    ('"gzip"', None),
    ("gzip br", None),
    ("gzip:q=1", None),
    ("deflate;q=0.5, gzip;q=31", "gzip"),
    ("gzip;q=31,deflate;q=51", "gzip"),
    ("deflate;q=0.5, gzip;q=0.2", "deflate"),
    ("deflate;q=0.5, gzip;q=1;q=0.2", "gzip"),
    ("deflate;q=0.5,gzip;q=0.", "deflate"),
    ("deflate;q=0.5,gzip;q=0.x", "gzip"),
    ("deflate;q=-0.5,gzip;q=0.2", "gzip"),
    ("gzip;nq=1;q=0 ", None),
    ("gzip;q=0, gzip;q=1, gzip;q=0", "gzip"),
    ("br,identity;q=0.5,gzip;q=0.0001", "gzip"),
]


def test_accept_encoding_is_read_as_dynamodb_reads_it(
    connection: Connection, large_item: tuple[str, bytes]
) -> None:
    decompress = {"gzip": gzip.decompress, "deflate": zlib.decompress}
    plain = get_large(connection, large_item).body
    answered = {}
    for accept_encoding, _ in ACCEPT_ENCODINGS:
        reply = get_large(connection, large_item, **{"Accept-Encoding": accept_encoding})
        assert reply.status == 200
        assert_dynamodb_head(reply)
        coding = reply.headers.get("content-encoding")
        answered[accept_encoding] = coding
        assert (decompress[coding](reply.body) if coding else reply.body) == plain
    assert answered == dict(ACCEPT_ENCODINGS)


def test_pipelined_replies_are_each_compressed_as_their_request_asked(
    connection: Connection, large_item: tuple[str, bytes]
) -> None:
    """Replies leave in request order; each is encoded as its own request asked."""
    asked = ["gzip", None, "deflate", "gzip", None, None, "deflate"]
    raw = b"".join(
        request_bytes("POST", "/", api_headers("GetItem", **({"Accept-Encoding": a} if a else {})), large_item[1])
        for a in asked
    )
    connection.sock.sendall(raw)
    replies = [read_reply(connection.stream) for _ in asked]
    assert [reply.headers.get("content-encoding") for reply in replies] == asked
    for reply in replies:
        assert_dynamodb_head(reply)


# --- request bodies ------------------------------------------------------------------------


def test_a_gzip_body_of_several_members_is_one_body(connection: Connection) -> None:
    body = gzip.compress(b'{"Lim') + gzip.compress(b'it": 5}')
    reply = post(connection, api_headers(**{"Content-Encoding": "gzip"}), body)
    assert reply.status == 200
    assert_dynamodb_head(reply)
    assert isinstance(reply.json()["TableNames"], list)


def test_bytes_after_a_gzip_member_are_ignored(connection: Connection) -> None:
    """DynamoDB accepts a gzip body followed by junk (ScyllaDB files it as a
    DynamoDB bug, test_gzip_request_with_extra_junk); so does dynastore."""
    body = gzip.compress(b'{"Limit": 5}') + b"junk"
    reply = post(connection, api_headers(**{"Content-Encoding": "gzip"}), body)
    assert reply.status == 200
    assert isinstance(reply.json()["TableNames"], list)


def test_a_deflate_body_is_one_zlib_stream(connection: Connection) -> None:
    """DynamoDB takes Content-Encoding: deflate, the zlib format (ScyllaDB's
    test_deflate_request_valid, which passes on the service: PR 27917)."""
    reply = post(connection, api_headers(**{"Content-Encoding": "deflate"}), zlib.compress(b'{"Limit": 5}'))
    assert reply.status == 200
    assert_dynamodb_head(reply)
    assert isinstance(reply.json()["TableNames"], list)
    reply = post(connection, api_headers(**{"Content-Encoding": "Deflate"}), zlib.compress(b"{}"))
    assert reply.status == 200


def test_two_deflate_streams_are_not_one_body(connection: Connection) -> None:
    """DynamoDB does not join two zlib streams (ScyllaDB's
    test_deflate_request_two_deflates fails there): the first is the body."""
    body = zlib.compress(b'{"Lim') + zlib.compress(b'it": 5}')
    reply = post(connection, api_headers(**{"Content-Encoding": "deflate"}), body)
    assert reply.status == 400
    assert reply.json() == SERIALIZATION


SERIALIZATION = {"__type": "com.amazon.coral.service#SerializationException"}
UNKNOWN_CODINGS = ["br", "compress", "zstd", "garbage", "identity", "gzip, gzip", "gzip,deflate", "x-gzip"]
BROKEN_BODIES = {
    "gzip-empty": ("gzip", b""),
    "gzip-not-gzip": ("gzip", b"{}"),
    "gzip-truncated": ("gzip", gzip.compress(b"{}")[:-1]),
    "deflate-empty": ("deflate", b""),
    "deflate-not-deflate": ("deflate", b"{}"),
    "deflate-raw": ("deflate", zlib.compress(b"{}")[2:-4]),
    "deflate-truncated": ("deflate", zlib.compress(b"{}")[:-1]),
}


def coded_body(content_encoding: str) -> bytes:
    if content_encoding in ("gzip, gzip", "gzip,deflate"):
        return gzip.compress(gzip.compress(b"{}"))
    return b"{}"


@pytest.mark.parametrize("content_encoding", UNKNOWN_CODINGS)
def test_a_coding_dynamodb_does_not_take_is_a_serialization_exception(
    connection: Connection, content_encoding: str
) -> None:
    """Answered as a broken body is (the house rule: no 5xx for bad input),
    on a connection that stays open."""
    reply = post(connection, api_headers(**{"Content-Encoding": content_encoding}), coded_body(content_encoding))
    assert reply.status == 400
    assert_dynamodb_head(reply)
    assert reply.json() == SERIALIZATION
    assert post(connection, api_headers()).status == 200


@pytest.mark.parametrize("body", list(BROKEN_BODIES.values()), ids=list(BROKEN_BODIES))
def test_a_broken_compressed_body_is_a_serialization_exception(
    connection: Connection, body: tuple[str, bytes]
) -> None:
    content_encoding, data = body
    reply = post(connection, api_headers(**{"Content-Encoding": content_encoding}), data)
    assert reply.status == 400
    assert_dynamodb_head(reply)
    assert reply.json() == SERIALIZATION
    assert post(connection, api_headers()).status == 200


def test_a_refused_coding_writes_nothing(connection: Connection, client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    for content_encoding in ("br", "gzip", "deflate"):
        put = json.dumps({"TableName": table, "Item": {"pk": {"S": content_encoding}}}).encode()
        reply = post(connection, api_headers("PutItem", **{"Content-Encoding": content_encoding}), put)
        assert reply.status == 400
    assert client.scan(TableName=table)["Items"] == []


@pytest.mark.xfail(strict=True, reason="docs/compatibility.md: a coding DynamoDB does not take is a 400 SerializationException")
@pytest.mark.parametrize("content_encoding", UNKNOWN_CODINGS)
def test_a_coding_dynamodb_does_not_take_is_an_internal_server_error(
    connection: Connection, content_encoding: str
) -> None:
    """DynamoDB's answer (ScyllaDB's test_garbage_content_encoding, run
    against the service, for "garbage"; assumed for the other names)."""
    reply = post(connection, api_headers(**{"Content-Encoding": content_encoding}), coded_body(content_encoding))
    assert reply.status == 500
    assert reply.json() == INTERNAL_SERVER_ERROR


@pytest.mark.xfail(strict=True, reason="docs/compatibility.md: a broken gzip or deflate body is a 400 SerializationException")
@pytest.mark.parametrize("body", list(BROKEN_BODIES.values()), ids=list(BROKEN_BODIES))
def test_a_broken_compressed_body_is_an_internal_server_error(connection: Connection, body: tuple[str, bytes]) -> None:
    """DynamoDB's answer (ScyllaDB's test_broken_gzip_content,
    test_gzip_request_empty, test_deflate_request_empty and
    test_deflate_request_not_deflated, run against the service)."""
    content_encoding, data = body
    reply = post(connection, api_headers(**{"Content-Encoding": content_encoding}), data)
    assert reply.status == 500
    assert reply.json() == INTERNAL_SERVER_ERROR


# --- Server, CORS ------------------------------------------------------------------


def test_every_reply_says_server_server(connection: Connection) -> None:
    replies = [
        post(connection, api_headers()),
        post(connection, api_headers("NoSuchOperation")),
        connection.ask(request_bytes("GET")),
        connection.ask(request_bytes("PUT", body=b"x")),
    ]
    assert [reply.status for reply in replies] == [200, 400, 200, 404]
    assert_dynamodb_head(replies[0])
    assert_dynamodb_head(replies[1])
    assert_dynamodb_head(replies[2], "text/plain")
    assert_dynamodb_head(replies[3], "text/plain")


def test_no_cors_headers_without_an_origin(connection: Connection) -> None:
    for raw in (request_bytes("OPTIONS"), request_bytes("GET"), request_bytes("POST", "/", api_headers(), b"{}")):
        reply = connection.ask(raw)
        assert not set(CORS_HEADERS) & set(reply.headers)


def test_a_request_with_an_origin_gets_allow_origin_and_the_exposed_headers(connection: Connection) -> None:
    origin = {"Origin": "http://example.com", "Access-Control-Request-Method": "dog"}
    replies = [
        post(connection, api_headers(**origin)),
        post(connection, api_headers("NoSuchOperation", **origin)),
        connection.ask(request_bytes("GET", headers=origin)),
    ]
    for reply in replies:
        assert reply.headers["access-control-allow-origin"] == "*"
        assert reply.headers["access-control-expose-headers"] == EXPOSED
        assert "access-control-max-age" not in reply.headers
        assert "access-control-allow-methods" not in reply.headers
        assert "access-control-allow-headers" not in reply.headers


def test_the_preflight_answer_is_dynamodbs(connection: Connection) -> None:
    asked = "Content-Type,X-Amz-Target,user-agent,content-length,host,Authorization,amz-sdk-invocation-id"
    reply = connection.ask(
        request_bytes(
            "OPTIONS",
            "/",
            {
                "Origin": "https://foo.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": asked,
            },
        )
    )
    assert reply.status == 200
    assert reply.body == b""
    assert_dynamodb_head(reply, content_type=None)
    cors = {name: value for name, value in reply.headers.items() if name.startswith("access-control-")}
    assert cors == {
        "access-control-allow-origin": "*",
        "access-control-allow-headers": asked,
        "access-control-allow-methods": "POST",
        "access-control-expose-headers": EXPOSED,
        "access-control-max-age": "172800",
    }


def test_a_preflight_without_requested_headers(connection: Connection) -> None:
    reply = connection.ask(request_bytes("OPTIONS", headers={"Origin": "http://example.com"}))
    assert reply.status == 200
    assert_dynamodb_head(reply, content_type=None)
    cors = {name: value for name, value in reply.headers.items() if name.startswith("access-control-")}
    assert cors == {
        "access-control-allow-origin": "*",
        "access-control-expose-headers": EXPOSED,
        "access-control-max-age": "172800",
    }


# --- the health answer ------------------------------------------------------------------------


def test_the_health_answer_names_the_default_region(connection: Connection) -> None:
    reply = connection.ask(request_bytes("GET"))
    assert reply.status == 200
    assert_dynamodb_head(reply, "text/plain")
    assert reply.body == b"healthy: dynamodb.us-east-1.amazonaws.com "


def test_the_health_answer_names_the_regional_endpoint_asked(connection: Connection) -> None:
    reply = connection.ask(request_bytes("GET", host="dynamodb.eu-west-1.amazonaws.com"))
    assert reply.body == b"healthy: dynamodb.eu-west-1.amazonaws.com "
    reply = connection.ask(request_bytes("GET", host="DYNAMODB.ap-south-1.amazonaws.com:443"))
    assert reply.body == b"healthy: dynamodb.ap-south-1.amazonaws.com "
    reply = connection.ask(request_bytes("GET", host="dynamodb.us-west-2.example.com"))
    assert reply.body == b"healthy: dynamodb.us-east-1.amazonaws.com "


def test_a_signed_health_check_names_its_credential_scope_region(connection: Connection) -> None:
    headers = {"Authorization": sigv4("eu-central-1"), "X-Amz-Date": "20261129T000000Z"}
    reply = connection.ask(request_bytes("GET", headers=headers))
    assert reply.status == 200
    assert reply.body == b"healthy: dynamodb.eu-central-1.amazonaws.com "


# --- refused request heads ------------------------------------------------------------------------


def test_an_over_long_request_line_is_a_bad_request(address: tuple[str, int]) -> None:
    with socket.create_connection(address, timeout=10) as sock, sock.makefile("rb") as stream:
        sock.sendall(request_bytes("POST", "/" + "x" * 17000, api_headers(), b"{}"))
        reply = read_reply(stream)
        assert reply.status == 400
        assert reply.headers["connection"] == "close"
        assert reply.body == b"Bad request"
        assert stream.read() == b""


def test_a_request_line_within_16_kb_is_served(connection: Connection) -> None:
    reply = connection.ask(request_bytes("POST", "/" + "x" * 16000, api_headers(), b"{}"))
    assert reply.status == 200
    assert isinstance(reply.json()["TableNames"], list)


def refused_head(address: tuple[str, int], raw: bytes) -> Reply:
    """The reply to ``raw`` on a connection of its own, which must then close."""
    with socket.create_connection(address, timeout=10) as sock, sock.makefile("rb") as stream:
        sock.sendall(raw)
        reply = read_reply(stream)
        assert stream.read() == b""
        return reply


def padded_headers(header_block_bytes: int) -> dict[str, str]:
    """api_headers() with an X-Padding header that makes the header block
    (each line's name, ': ', value and CRLF; Host and Content-Length as
    request_bytes adds them) exactly ``header_block_bytes`` long."""
    headers = api_headers()
    raw = request_bytes("POST", "/", {**headers, "X-Padding": ""}, b"{}")
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n", 1)[1]
    block_bytes = len(head) + 2  # the last line's CRLF
    return {**headers, "X-Padding": "a" * (header_block_bytes - block_bytes)}


def test_headers_over_16_kb_are_a_bad_request(address: tuple[str, int]) -> None:
    reply = refused_head(address, request_bytes("POST", "/", api_headers(**{"X-Padding": "a" * 17000}), b"{}"))
    assert reply.status == 400
    assert reply.headers["connection"] == "close"
    assert reply.headers["server"] == "Server"
    assert reply.body == b"Bad request"


def test_the_header_bound_is_16_kb_of_header_lines(connection: Connection, address: tuple[str, int]) -> None:
    reply = connection.ask(request_bytes("POST", "/", padded_headers(16 * 1024), b"{}"))
    assert reply.status == 200
    assert isinstance(reply.json()["TableNames"], list)
    reply = refused_head(address, request_bytes("POST", "/", padded_headers(16 * 1024 + 1), b"{}"))
    assert reply.status == 400
    assert reply.body == b"Bad request"


def test_many_small_headers_count_toward_the_bound(address: tuple[str, int]) -> None:
    many = {f"X-H{number}": "v" for number in range(2000)}  # ~20 KB of header lines
    reply = refused_head(address, request_bytes("POST", "/", api_headers(**many), b"{}"))
    assert reply.status == 400
    assert reply.body == b"Bad request"


def test_a_refused_head_after_pipelined_requests_comes_after_their_replies(address: tuple[str, int]) -> None:
    good = request_bytes("POST", "/", api_headers(), b"{}")
    bad = request_bytes("POST", "/", api_headers(**{"X-Padding": "a" * 17000}), b"{}")
    with socket.create_connection(address, timeout=10) as sock, sock.makefile("rb") as stream:
        sock.sendall(good + good + bad)
        replies = [read_reply(stream) for _ in range(3)]
        assert [reply.status for reply in replies] == [200, 200, 400]
        assert replies[2].body == b"Bad request"
        assert stream.read() == b""


# --- DescribeEndpoints ------------------------------------------------------------------------


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-1", "ap-southeast-2"])
def test_describe_endpoints_names_the_region_asked(connection: Connection, region: str) -> None:
    reply = post(connection, api_headers("DescribeEndpoints", region=region))
    assert reply.status == 200
    assert_dynamodb_head(reply)
    assert reply.json() == {
        "Endpoints": [{"Address": f"dynamodb.{region}.amazonaws.com", "CachePeriodInMinutes": 1440}]
    }


def describe_endpoints_in(endpoint_url: str, region: str, key: tuple[str, str] = ("AKIDTEST", "secret")) -> Any:
    import boto3

    client = boto3.client(
        "dynamodb", endpoint_url=endpoint_url, region_name=region,
        aws_access_key_id=key[0], aws_secret_access_key=key[1], config=TEST_CLIENT_CONFIG,
    )
    return client.describe_endpoints()["Endpoints"]


SINGLE_REGION_SERVERS = {
    "front": ((), {"DYNASTORE_ENGINE_CONNECTIONS": "0"}),
    "engine": ((), {"DYNASTORE_ENGINE_CONNECTIONS": "64"}),
    "single-process": (("--single-process",), {}),
}


@pytest.mark.parametrize("mode", list(SINGLE_REGION_SERVERS))
def test_describe_endpoints_names_the_region_asked_under_single_region(mode: str) -> None:
    """``--single-region`` keeps every region's tables in one namespace, but
    DescribeEndpoints still names the region of the request, as DynamoDB's
    regional endpoint does."""
    arguments, environment = SINGLE_REGION_SERVERS[mode]
    process, url = start_server("--in-memory", "--single-region", *arguments, environment=environment)
    try:
        for region in ("eu-west-1", "us-east-1", "ap-northeast-3"):
            assert describe_endpoints_in(url, region) == [
                {"Address": f"dynamodb.{region}.amazonaws.com", "CachePeriodInMinutes": 1440}
            ]
    finally:
        stop_server(process)


def test_describe_endpoints_names_the_signed_region_with_credentials(tmp_path: Any) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text("AKIDSIGNED:signing-secret\n")
    process, url = start_server("--in-memory", "--single-region", "--credentials", str(credentials))
    try:
        assert describe_endpoints_in(url, "sa-east-1", ("AKIDSIGNED", "signing-secret")) == [
            {"Address": "dynamodb.sa-east-1.amazonaws.com", "CachePeriodInMinutes": 1440}
        ]
    finally:
        stop_server(process)


def test_describe_endpoints_of_an_embedded_single_region_database() -> None:
    """The embedded database's in-process client and its ``serve()`` server."""
    import dynastore
    from dynastore.namespaces import Namespaces

    with dynastore.open() as database:
        Namespaces.of(database.database).single_region = True
        client = database.client(region_name="eu-north-1")
        assert client.describe_endpoints()["Endpoints"] == [
            {"Address": "dynamodb.eu-north-1.amazonaws.com", "CachePeriodInMinutes": 1440}
        ]
        served = database.serve()
        assert describe_endpoints_in(served.endpoint_url, "me-south-1") == [
            {"Address": "dynamodb.me-south-1.amazonaws.com", "CachePeriodInMinutes": 1440}
        ]
