"""daxs://: with --tls-cert/--tls-key the DAX endpoint speaks TLS (the same
certificate as HTTPS), and the DAX clients verify it."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.api.test_tls import make_certificate
from tests.dax.conftest import DaxServerProcess, create_table, dax_client, unique
from tests.dax.test_dax_javascript import JS_DIR, node_with_dax_client


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaxServerProcess, Path]]:
    cert, key = make_certificate(tmp_path_factory.mktemp("dax-tls"))
    server = DaxServerProcess("--tls-cert", str(cert), "--tls-key", str(key))
    yield server, cert
    server.stop()


def https_client(server: DaxServerProcess, cert: Path) -> Any:
    return boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id="any", aws_secret_access_key="any", verify=str(cert),
                        config=Config(retries={"max_attempts": 0}))


def test_the_python_client_over_daxs(tls_server: tuple[DaxServerProcess, Path],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    server, cert = tls_server
    assert server.dax_url.startswith("daxs://")
    ddb = https_client(server, cert)
    name = create_table(ddb, sort_type=None)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client verifies with the default CA store
    dax = dax_client(server.dax_url)
    try:
        key = {"pk": {"S": unique()}}
        dax.put_item(TableName=name, Item={**key, "v": {"S": "secret"}})
        assert dax.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "secret"}
        assert ddb.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "secret"}
    finally:
        dax.close()


def test_plain_bytes_on_the_tls_port_are_refused(tls_server: tuple[DaxServerProcess, Path]) -> None:
    server, cert = tls_server
    import socket

    with socket.create_connection(("127.0.0.1", server.dax_port), timeout=5) as sock:
        sock.sendall(b"gJ7yne5G\x00\xf6\xa0\x00")
        sock.settimeout(5)
        try:
            while sock.recv(4096):
                pass
        except (ConnectionResetError, TimeoutError):
            pass
    context = ssl.create_default_context(cafile=str(cert))
    with socket.create_connection(("127.0.0.1", server.dax_port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.version() is not None


def test_the_javascript_client_over_daxs(tls_server: tuple[DaxServerProcess, Path]) -> None:
    node = node_with_dax_client()
    server, cert = tls_server
    name = create_table(https_client(server, cert))
    completed = subprocess.run([node, str(JS_DIR / "dax.mjs"), server.dax_url, name], cwd=JS_DIR,
                               capture_output=True, text=True, timeout=120,
                               env={**os.environ, "NODE_EXTRA_CA_CERTS": str(cert)})
    assert completed.returncode == 0, completed.stderr
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    assert results.get("unexpected") is None, results.get("unexpected")
    assert results["got"]["Item"]["name"] == {"S": "Ada"}
