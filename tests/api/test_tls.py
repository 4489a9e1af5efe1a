"""HTTPS: ``dynastore serve --tls-cert FILE --tls-key FILE`` (ADR 0007).

Every serving path speaks TLS: the HTTP front process (its reactor's TLS
transport; ``DYNASTORE_ENGINE_CONNECTIONS=0`` sends every connection there),
the engine's own connections (its loop's SSL transport) and
``--single-process``. Each test starts a real server on a self-signed
certificate for 127.0.0.1 and localhost, made in a temporary directory.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import select
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.api.helpers import (
    JS_DIR,
    children_of,
    node_with_js_sdk,
    raw_request,
    read_replies,
    request_id_prefix,
    server_side_inode,
    socket_inodes_of,
)

FRONT_MODULE = "dynastore.protocol.front"

MODES = {
    # every connection through the front process
    "front": ((), {"DYNASTORE_ENGINE_CONNECTIONS": "0"}),
    # every connection served by the engine itself
    "engine": ((), {"DYNASTORE_ENGINE_CONNECTIONS": "64"}),
    "single-process": (("--single-process",), {}),
}


# --- a certificate ------------------------------------------------------------------
def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


# --- a server -----------------------------------------------------------------------
class TlsServer:
    """``python -m dynastore serve --in-memory --port 0`` over TLS."""

    def __init__(self, cert: Path, key: Path, *arguments: str,
                 environment: dict[str, str] | None = None, use_environment: bool = False) -> None:
        tls = [] if use_environment else ["--tls-cert", str(cert), "--tls-key", str(key)]
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0",
             *tls, *arguments],
            stdout=subprocess.PIPE, stderr=self.log,
            env={**os.environ, **(environment or {})},
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 15)
        line = self.process.stdout.readline().decode() if ready else ""
        if " listening on https://127.0.0.1:" not in line:
            self.stop()
            raise AssertionError(f"no https listen line: {line!r}\n{self.stderr()}")
        self.port = int(line.split("https://127.0.0.1:")[1].split()[0])
        self.url = f"https://127.0.0.1:{self.port}"
        self.cert = cert

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def connect(self, **options: Any) -> ssl.SSLSocket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        for level_name, value in options.items():
            sock.setsockopt(socket.SOL_SOCKET, getattr(socket, level_name), value)
        return self.client_context().wrap_socket(sock, server_hostname="127.0.0.1")

    def front_pid(self) -> int | None:
        for pid in children_of(self.process.pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if FRONT_MODULE.encode() in cmdline.read():
                        return pid
            except OSError:
                continue
        return None

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.log.close()


@pytest.fixture(params=list(MODES))
def server(request: pytest.FixtureRequest, certificate: tuple[Path, Path]) -> Iterator[TlsServer]:
    arguments, environment = MODES[request.param]
    started = TlsServer(*certificate, *arguments, environment=environment)
    started.mode = request.param  # type: ignore[attr-defined]
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def front_server(certificate: tuple[Path, Path]) -> Iterator[TlsServer]:
    started = TlsServer(*certificate, environment=MODES["front"][1])
    try:
        yield started
    finally:
        started.stop()


def boto3_client(server: TlsServer) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=server.url, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        verify=str(server.cert),
        config=Config(parameter_validation=False, retries={"total_max_attempts": 1}),
    )


def create_table(client: Any, name: str) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def assert_served_where_expected(server: TlsServer, sock: ssl.SSLSocket) -> None:
    """The connection is held by the process its mode says (from /proc)."""
    mode = getattr(server, "mode", "front")
    inode = server_side_inode(server.port, sock)
    if mode == "front":
        front = server.front_pid()
        assert front is not None and inode in socket_inodes_of(front)
    else:
        assert inode in socket_inodes_of(server.process.pid)


# --- the SDKs -----------------------------------------------------------------------
def test_boto3_round_trip_over_https(server: TlsServer) -> None:
    client = boto3_client(server)
    create_table(client, "tls")
    client.put_item(TableName="tls", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    got = client.get_item(TableName="tls", Key={"pk": {"S": "a"}}, ConsistentRead=True)
    assert got["Item"] == {"pk": {"S": "a"}, "n": {"N": "1"}}
    client.close()


def test_aws_cli_lists_tables_over_https(front_server: TlsServer) -> None:
    create_table(boto3_client(front_server), "cli")
    completed = subprocess.run(
        [sys.executable, "-m", "awscli", "dynamodb", "list-tables",
         "--endpoint-url", front_server.url, "--ca-bundle", str(front_server.cert),
         "--output", "json"],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, AWS_ACCESS_KEY_ID="AKIDTEST", AWS_SECRET_ACCESS_KEY="secret",
                 AWS_DEFAULT_REGION="us-east-1", AWS_MAX_ATTEMPTS="1"),
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["TableNames"] == ["cli"]


def test_javascript_sdk_v3_over_https(front_server: TlsServer) -> None:
    node = node_with_js_sdk()
    completed = subprocess.run(
        [node, str(JS_DIR / "smoke.mjs"), front_server.url, "js_over_tls"],
        capture_output=True, text=True, timeout=60, cwd=JS_DIR,
        env=dict(os.environ, NODE_EXTRA_CA_CERTS=str(front_server.cert)),
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["status"] == "ACTIVE" and result["name"] == "Ada"
    assert result["conditionError"] == "ConditionalCheckFailedException"


# --- HTTP over one TLS connection ---------------------------------------------------
def test_keep_alive_serves_many_requests_over_one_tls_connection(server: TlsServer) -> None:
    with server.connect() as sock:
        assert sock.version() in ("TLSv1.2", "TLSv1.3")
        assert sock.selected_alpn_protocol() in (None, "http/1.1")
        prefixes = {request_id_prefix(sock) for _ in range(5)}
        assert len(prefixes) == 1
        assert_served_where_expected(server, sock)


def test_pipelined_requests_are_answered_in_order(server: TlsServer) -> None:
    with server.connect() as sock:
        describe = json.dumps({"TableName": "nowhere"}).encode()
        sock.sendall(raw_request("DescribeTable", describe) + raw_request("ListTables", b"{}")
                     + raw_request("DescribeTable", describe))
        replies = read_replies(sock, 3)
        assert [status for status, _, _ in replies] == [400, 200, 400]
        assert b"ResourceNotFoundException" in replies[0][2]
        assert json.loads(replies[1][2]) == {"TableNames": []}


def test_headers_over_16_kb_are_a_bad_request_over_tls(server: TlsServer) -> None:
    """DynamoDB's 400 for a header block over 16 KB (test_http_edge.py) on
    every TLS path; the replies to the requests before it come first."""
    padded = raw_request("ListTables", b"{}").replace(b"Host: x\r\n", b"Host: x\r\nX-Padding: " + b"a" * 17000 + b"\r\n")
    with server.connect() as sock:
        sock.sendall(raw_request("ListTables", b"{}") + padded)
        replies = read_replies(sock, 2)
        assert [(status, body) for status, _, body in replies] == [(200, b'{"TableNames":[]}'), (400, b"Bad request")]
        assert replies[1][1][b"connection"] == b"close"


def test_large_bodies_cross_tls_both_ways(server: TlsServer) -> None:
    """Bodies of many TLS records each way: six pipelined Scans of a megabyte
    each, read only after a pause on a small receive buffer, so the server's
    SSL writes find the socket full and finish later, in order."""
    client = boto3_client(server)
    create_table(client, "big")
    payload = "x" * 350_000
    for key in "abc":
        client.put_item(TableName="big", Item={"pk": {"S": key}, "v": {"S": payload}})
    with server.connect(SO_RCVBUF=32768) as sock:
        sock.sendall(raw_request("Scan", b'{"TableName": "big"}') * 6)
        time.sleep(0.3)
        replies = read_replies(sock, 6)
        for status, _, body in replies:
            assert status == 200
            items = json.loads(body)["Items"]
            assert sorted(item["pk"]["S"] for item in items) == ["a", "b", "c"]
            assert all(item["v"]["S"] == payload for item in items)
        # And the connection goes on.
        assert request_id_prefix(sock)


def test_the_server_closes_with_close_notify(server: TlsServer) -> None:
    """``Connection: close`` is answered, then TLS is closed properly: the
    client sees close_notify, not a bare end of stream (which a client that
    does not suppress ragged EOFs reports as an error)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    with server.client_context().wrap_socket(
        sock, server_hostname="127.0.0.1", suppress_ragged_eofs=False
    ) as tls:
        request = raw_request("ListTables", b"{}").replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
        tls.sendall(request)
        received = b""
        while chunk := tls.recv(65536):  # SSLEOFError without close_notify
            received += chunk
        assert received.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in received


def test_idle_tls_connections_do_not_hold_up_shutdown(server: TlsServer) -> None:
    """An idle keep-alive client never answers the server's close_notify:
    stopping must not wait the grace period for it."""
    held = [server.connect() for _ in range(3)]
    try:
        for sock in held:
            assert request_id_prefix(sock)
        started = time.monotonic()
        server.process.terminate()
        assert server.process.wait(timeout=15) == 0
        assert time.monotonic() - started < 5
        for sock in held:
            assert sock.recv(1) == b""
    finally:
        for sock in held:
            sock.close()


# --- what is not TLS ------------------------------------------------------------------
def closes_without_answering(sock: socket.socket) -> bool:
    """The server hangs up (or resets); never sends an HTTP reply in clear text."""
    try:
        data = sock.recv(65536)
        while data and not data.startswith(b"HTTP/"):
            data = sock.recv(65536)
    except (ConnectionResetError, TimeoutError):
        return True
    return not data


def test_plain_http_to_the_tls_port_is_dropped_and_tls_goes_on(server: TlsServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as plain:
        plain.sendall(raw_request("ListTables", b"{}"))
        assert closes_without_answering(plain)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as garbage:
        garbage.sendall(b"\x16\x03\x01\x00\x05hello")  # a broken ClientHello
        assert closes_without_answering(garbage)
    socket.create_connection(("127.0.0.1", server.port), timeout=10).close()  # hangs up at once
    with server.connect() as sock:
        assert request_id_prefix(sock)
    assert server.process.poll() is None
    assert "Traceback" not in server.stderr()
    assert "ERROR" not in server.stderr() and "WARNING" not in server.stderr()


def test_a_client_that_does_not_trust_the_certificate_fails_cleanly(server: TlsServer) -> None:
    untrusting = ssl.create_default_context()  # the system's CAs only
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            untrusting.wrap_socket(raw, server_hostname="127.0.0.1")
    with server.connect() as sock:
        assert request_id_prefix(sock)
    assert server.process.poll() is None


def test_tls_1_1_is_refused(front_server: TlsServer) -> None:
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.load_verify_locations(str(front_server.cert))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0 and 1.1 are
        old.minimum_version = ssl.TLSVersion.TLSv1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
    with socket.create_connection(("127.0.0.1", front_server.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            old.wrap_socket(raw, server_hostname="127.0.0.1")


# --- settings -----------------------------------------------------------------------
def test_the_environment_variables_configure_tls(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    started = TlsServer(cert, key, "--single-process", use_environment=True, environment={
        "DYNASTORE_TLS_CERT": str(cert), "DYNASTORE_TLS_KEY": str(key),
    })
    try:
        with started.connect() as sock:
            assert request_id_prefix(sock)
    finally:
        started.stop()


def refused(*arguments: str, environment: dict[str, str] | None = None) -> str:
    """Run serve with ``arguments``; it must exit non-zero with one line on stderr."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("DYNASTORE_TLS_")} | (environment or {})
    completed = subprocess.run(
        [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0", *arguments],
        capture_output=True, text=True, timeout=30, env=environment,
    )
    assert completed.returncode != 0
    assert completed.stdout == ""
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dynastore: "), completed.stderr
    return lines[0]


def test_a_certificate_without_a_key_is_refused(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    assert "--tls-key" in refused("--tls-cert", str(cert))
    assert "--tls-cert" in refused("--tls-key", str(key))
    assert "DYNASTORE_TLS_KEY" in refused(environment={"DYNASTORE_TLS_CERT": str(cert)})


def test_unreadable_or_invalid_files_are_refused_before_listening(
    certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    missing = tmp_path / "missing.pem"
    line = refused("--tls-cert", str(cert), "--tls-key", str(missing))
    assert str(missing) in line and "No such file" in line
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n")
    assert "invalid TLS certificate or key" in refused("--tls-cert", str(not_pem), "--tls-key", str(key))
    other_cert, _ = make_certificate(tmp_path)
    assert "invalid" in refused("--tls-cert", str(other_cert), "--tls-key", str(key))


def test_the_front_needs_both_files() -> None:
    from dynastore.protocol.front import parse_arguments

    options = parse_arguments(["--link-fd", "3", "--handoff-fd", "4",
                               "--tls-cert", "c.pem", "--tls-key", "k.pem"])
    assert options["--tls-cert"] == "c.pem" and options["--tls-key"] == "k.pem"
    with pytest.raises(SystemExit):
        parse_arguments(["--link-fd", "3", "--handoff-fd", "4", "--tls-cert", "c.pem"])


def test_a_plain_http_front_does_not_import_ssl() -> None:
    """ssl (libssl, libcrypto) is loaded in the front only when TLS is on."""
    code = "import sys, dynastore.protocol.front; print('ssl' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=30, check=True)
    assert completed.stdout.strip() == "False"
